package io.gantry.placement.backend.topology;

import io.gantry.placement.core.Gpu;
import io.gantry.placement.core.RdmaNic;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * A node's GPUs and RDMA NICs with where they sit, from what the driver reports: models, memory and MIG mode from
 * {@code nvidia-smi -q}; NVLink domains, PCIe switches and NUMA sockets from {@code nvidia-smi topo -m}; the CPUs of
 * each NUMA node from sysfs ({@code /sys/devices/system/node/node<N>/cpulist}). Pure: the caller reads the text.
 *
 * <ul>
 *   <li>NVLink domain: GPUs joined by NVLink ({@code NV#}), transitively; numbered by their lowest GPU. A GPU with no
 *       NVLink peer has {@link Gpu#NO_NVLINK}.</li>
 *   <li>PCIe switch: GPUs and NICs joined by {@code PIX}/{@code PXB}, transitively (NVLink hides the PCIe path
 *       between GPUs, so on NVSwitch systems the NIC next to each GPU shows it); numbered by their lowest GPU. A GPU
 *       alone has a switch of its own; a NIC with no GPU behind its switch has {@link RdmaNic#NO_SWITCH}.</li>
 *   <li>NUMA socket: the GPU's NUMA affinity, numbered densely in the order of the NUMA node ids (sysfs's when
 *       given, so nodes without GPUs count too). A NIC's socket: that of a GPU on its switch or NUMA node.</li>
 * </ul>
 */
public final class NodeTopology {

    /** What was found; {@code numaCpuMillis} is empty for one socket (whole cores × 1000 otherwise). */
    public record Discovered(List<Gpu> gpus, List<RdmaNic> nics, List<Integer> numaCpuMillis,
                             Map<String, String> labels) {
        public Discovered {
            gpus = List.copyOf(gpus);
            nics = List.copyOf(nics);
            numaCpuMillis = List.copyOf(numaCpuMillis);
            labels = Map.copyOf(labels);
        }

        public int sockets() {
            return Math.max(1, numaCpuMillis.size());
        }

        /** {@code numaCpuMillis} shared out in proportion so it adds up to {@code cpuMillis} (the rest to socket 0). */
        public List<Integer> numaCpuMillis(int cpuMillis) {
            if (numaCpuMillis.isEmpty()) {
                return List.of();
            }
            long total = numaCpuMillis.stream().mapToLong(Integer::longValue).sum();
            List<Integer> out = new ArrayList<>();
            int given = 0;
            for (int share : numaCpuMillis) {
                int part = total == 0 ? cpuMillis / numaCpuMillis.size() : (int) (share * (long) cpuMillis / total);
                out.add(part);
                given += part;
            }
            out.set(0, out.get(0) + cpuMillis - given);
            return out;
        }
    }

    private NodeTopology() {
    }

    /**
     * @param gpus      {@code nvidia-smi -q}, empty when unknown
     * @param topo      {@code nvidia-smi topo -m}, null when unknown
     * @param numaCpus  NUMA node id to its CPU list (sysfs), empty when unknown
     */
    public static Discovered discover(List<NvidiaSmiQuery.GpuInfo> gpus, NvidiaSmiTopo topo, Map<Integer, String> numaCpus) {
        List<String> gpuCols = topo == null ? List.of() : topo.gpus();
        int count = !gpus.isEmpty() ? gpus.size() : gpuCols.size();
        Map<String, Integer> gpuNuma = new HashMap<>();
        TreeSet<Integer> numaIds = new TreeSet<>(numaCpus.keySet());
        if (topo != null) {
            for (String g : gpuCols) {
                Integer n = number(topo.numaAffinity().get(g));
                if (n != null) {
                    gpuNuma.put(g, n);
                    if (numaCpus.isEmpty()) {
                        numaIds.add(n);
                    }
                }
            }
        }
        List<Integer> order = new ArrayList<>(numaIds);
        // NVLink domains and PCIe switches: connected components, numbered by their lowest GPU
        UnionFind nv = new UnionFind();
        UnionFind pcie = new UnionFind();
        if (topo != null) {
            for (String a : topo.devices()) {
                for (String b : topo.devices()) {
                    String link = topo.link(a, b);
                    if (a.startsWith("GPU") && b.startsWith("GPU") && NvidiaSmiTopo.nvlink(link)) {
                        nv.union(a, b);
                    }
                    if (NvidiaSmiTopo.sameSwitch(link)) {
                        pcie.union(a, b);
                    }
                }
            }
        }
        Map<String, Integer> nvIds = new LinkedHashMap<>();
        Map<String, Integer> switchIds = new LinkedHashMap<>();
        Map<String, Integer> switchSocket = new HashMap<>();
        List<Gpu> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String col = "GPU" + i;
            NvidiaSmiQuery.GpuInfo info = i < gpus.size() ? gpus.get(i) : null;
            int socket = Math.max(0, order.indexOf(gpuNuma.getOrDefault(col, -1)));
            int domain = Gpu.NO_NVLINK;
            if (nv.size(col) > 1) {
                domain = nvIds.computeIfAbsent(nv.find(col), k -> nvIds.size());
            } else if (topo == null) {
                domain = 0; // nothing known: one domain, as a node registered without topology
            }
            String sw = pcie.find(col);
            int pcieSwitch = switchIds.computeIfAbsent(sw, k -> switchIds.size());
            switchSocket.putIfAbsent(sw, socket);
            out.add(new Gpu(i, GpuModels.shortName(info == null ? null : info.product()),
                    info == null ? 0 : info.memoryMiB(), socket, pcieSwitch, domain,
                    info != null && info.migEnabled()));
        }
        List<RdmaNic> nics = new ArrayList<>();
        if (topo != null) {
            for (String n : topo.nics()) {
                String sw = pcie.find(n);
                Integer pcieSwitch = switchIds.get(sw);
                int socket = pcieSwitch != null ? switchSocket.get(sw) : 0;
                if (pcieSwitch == null) {
                    for (int i = 0; i < count; i++) {
                        if (NvidiaSmiTopo.sameNuma(topo.link("GPU" + i, n))) {
                            socket = out.get(i).numaNode();
                            break;
                        }
                    }
                }
                nics.add(new RdmaNic(topo.nicName(n), socket, pcieSwitch == null ? RdmaNic.NO_SWITCH : pcieSwitch, 0));
            }
        }
        List<Integer> numaCpuMillis = new ArrayList<>();
        if (order.size() > 1) {
            for (int id : order) {
                String cpus = numaCpus.get(id);
                if (cpus == null && topo != null) {
                    cpus = gpuNuma.entrySet().stream().filter(e -> e.getValue() == id)
                            .map(e -> topo.cpuAffinity().get(e.getKey())).filter(c -> c != null).findFirst().orElse(null);
                }
                numaCpuMillis.add(CpuList.parse(cpus).size() * 1000);
            }
        }
        Map<String, String> labels = new LinkedHashMap<>();
        if (!gpus.isEmpty()) {
            labels.put(GpuModels.PRODUCT_LABEL, gpus.get(0).product());
        }
        return new Discovered(out, nics, numaCpuMillis, labels);
    }

    private static Integer number(String s) {
        if (s == null) {
            return null;
        }
        try {
            return Integer.parseInt(s.trim());
        } catch (NumberFormatException e) {
            return null; // N/A
        }
    }

    private static final class UnionFind {
        private final Map<String, String> parent = new HashMap<>();
        private final Map<String, Integer> size = new HashMap<>();

        String find(String x) {
            String p = parent.computeIfAbsent(x, k -> k);
            if (!p.equals(x)) {
                p = find(p);
                parent.put(x, p);
            }
            return p;
        }

        void union(String a, String b) {
            String ra = find(a);
            String rb = find(b);
            if (!ra.equals(rb)) {
                // the lower-numbered device stays the root, so numbering follows GPU order
                String root = ra.compareTo(rb) <= 0 ? ra : rb;
                String other = root.equals(ra) ? rb : ra;
                parent.put(other, root);
                size.put(root, size(root) + size(other));
            }
        }

        int size(String x) {
            return size.getOrDefault(find(x), 1);
        }
    }
}
