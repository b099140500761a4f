package io.gantry.placement.backend.kubernetes;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gantry.placement.backend.topology.GpuModels;
import io.gantry.placement.backend.topology.NodeTopology;
import io.gantry.placement.backend.topology.NvidiaSmiQuery;
import io.gantry.placement.backend.topology.NvidiaSmiTopo;
import io.gantry.placement.core.Gpu;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.RdmaNic;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A Kubernetes node as placement registers it. GPUs: the allocatable count of the GPU resource ({@code
 * nvidia.com/gpu}, what the device plugin advertises), their model from the product label of GPU feature discovery
 * (shortened, {@link GpuModels}), their memory and MIG capability from its labels. Where each GPU sits, best first:
 * <ol>
 *   <li>the node's {@code nvidia-smi topo -m} output in the topology annotation, read like the local backend's;</li>
 *   <li>labels {@code topology.gantry.io/gpu-numa}, {@code gpu-pcie}, {@code gpu-nvlink}: one value per GPU index,
 *       dot-separated ({@code 0.0.0.0.1.1.1.1}; {@code n} for no NVLink);</li>
 *   <li>none: every GPU on socket 0, PCIe switch 0, NVLink domain 0.</li>
 * </ol>
 * CPU and memory are the node's allocatable; its rack and spine come from the configured labels.
 */
public final class NodeInventory {
    public static final String GPU_NUMA_LABEL = "topology.gantry.io/gpu-numa";
    public static final String GPU_PCIE_LABEL = "topology.gantry.io/gpu-pcie";
    public static final String GPU_NVLINK_LABEL = "topology.gantry.io/gpu-nvlink";

    private NodeInventory() {
    }

    /** Whether the node's {@code Ready} condition is {@code True} (NotReady and Unknown are a failure signal). */
    public static boolean ready(Node node) {
        if (node.getStatus() == null || node.getStatus().getConditions() == null) {
            return false;
        }
        for (NodeCondition c : node.getStatus().getConditions()) {
            if ("Ready".equals(c.getType())) {
                return "True".equals(c.getStatus());
            }
        }
        return false;
    }

    /** @throws IllegalArgumentException when the node cannot be described (e.g. a malformed topology label) */
    public static NodeSpec spec(Node node, String backend, KubernetesSettings s) {
        String name = node.getMetadata().getName();
        Map<String, String> labels = node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
        Map<String, String> annotations = node.getMetadata().getAnnotations() == null ? Map.of()
                : node.getMetadata().getAnnotations();
        Map<String, Quantity> alloc = node.getStatus() == null ? null : node.getStatus().getAllocatable();
        if (alloc == null || alloc.isEmpty()) {
            alloc = node.getStatus() == null || node.getStatus().getCapacity() == null ? Map.of()
                    : node.getStatus().getCapacity();
        }
        int gpus = s.gpuResource().isEmpty() || !alloc.containsKey(s.gpuResource()) ? 0
                : amount(alloc.get(s.gpuResource())).intValue();
        String product = labels.get(s.modelLabel());
        long memory = parseLong(labels.get(s.memoryLabel()));
        boolean mig = "true".equalsIgnoreCase(labels.get(s.migLabel()));
        int cpuMillis = alloc.containsKey("cpu") ? amount(alloc.get("cpu")).multiply(BigDecimal.valueOf(1000)).intValue() : 0;
        long memoryMiB = alloc.containsKey("memory")
                ? amount(alloc.get("memory")).divide(BigDecimal.valueOf(1024L * 1024)).longValue() : 0;

        List<Gpu> devices = new ArrayList<>();
        List<RdmaNic> nics = List.of();
        List<Integer> numaCpuMillis = List.of();
        String topoText = annotations.get(s.topologyAnnotation());
        if (topoText != null && !topoText.isBlank() && gpus > 0) {
            List<NvidiaSmiQuery.GpuInfo> infos = new ArrayList<>();
            for (int i = 0; i < gpus; i++) {
                infos.add(new NvidiaSmiQuery.GpuInfo(i, product, null, null, memory, mig ? "Enabled" : "N/A"));
            }
            NodeTopology.Discovered d = NodeTopology.discover(infos, NvidiaSmiTopo.parse(topoText), Map.of());
            devices.addAll(d.gpus());
            nics = d.nics();
            numaCpuMillis = d.numaCpuMillis(cpuMillis);
        } else {
            List<Integer> numa = perGpu(labels.get(GPU_NUMA_LABEL), gpus, 0, GPU_NUMA_LABEL);
            List<Integer> pcie = perGpu(labels.get(GPU_PCIE_LABEL), gpus, 0, GPU_PCIE_LABEL);
            List<Integer> nvlink = perGpu(labels.get(GPU_NVLINK_LABEL), gpus, 0, GPU_NVLINK_LABEL);
            for (int i = 0; i < gpus; i++) {
                devices.add(new Gpu(i, GpuModels.shortName(product), memory, numa.get(i), pcie.get(i), nvlink.get(i), mig));
            }
            int sockets = numa.stream().mapToInt(Integer::intValue).max().orElse(0) + 1;
            if (sockets > 1) {
                List<Integer> even = new ArrayList<>();
                for (int k = 0; k < sockets; k++) {
                    even.add(cpuMillis / sockets + (k == 0 ? cpuMillis % sockets : 0));
                }
                numaCpuMillis = even;
            }
        }
        Map<String, String> specLabels = new TreeMap<>();
        specLabels.put("host", name);
        if (product != null) {
            specLabels.put(GpuModels.PRODUCT_LABEL, product);
        }
        putIfPresent(specLabels, NodeSpec.RACK_LABEL, labels.get(s.rackLabel()));
        putIfPresent(specLabels, NodeSpec.SPINE_LABEL, labels.get(s.spineLabel()));
        return new NodeSpec(name, backend, devices, cpuMillis, memoryMiB, specLabels, numaCpuMillis, nics);
    }

    private static void putIfPresent(Map<String, String> m, String k, String v) {
        if (v != null && !v.isBlank()) {
            m.put(k, v);
        }
    }

    private static BigDecimal amount(Quantity q) {
        return Quantity.getAmountInBytes(q);
    }

    private static long parseLong(String s) {
        if (s == null) {
            return 0;
        }
        try {
            return Math.max(0, Long.parseLong(s.trim()));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static List<Integer> perGpu(String value, int gpus, int missing, String label) {
        List<Integer> out = new ArrayList<>();
        String[] parts = value == null || value.isBlank() ? new String[0] : value.trim().split("\\.");
        if (parts.length != 0 && parts.length != gpus) {
            throw new IllegalArgumentException("label " + label + " names " + parts.length + " GPUs, the node has " + gpus);
        }
        for (int i = 0; i < gpus; i++) {
            if (parts.length == 0) {
                out.add(missing);
            } else if (parts[i].equals("n")) {
                out.add(Gpu.NO_NVLINK);
            } else {
                try {
                    out.add(Integer.parseInt(parts[i]));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("label " + label + ": `" + parts[i] + "` is not a number");
                }
            }
        }
        return out;
    }
}
