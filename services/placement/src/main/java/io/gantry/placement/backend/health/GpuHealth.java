package io.gantry.placement.backend.health;

import io.gantry.placement.backend.DeviceFault;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads what the NVIDIA driver says about GPU health.
 *
 * <ul>
 *   <li>{@code nvidia-smi} with {@link #QUERY_ARGS}: one CSV line per GPU, {@code index, pci.bus_id,
 *       ecc.errors.uncorrected.volatile.total, clocks_throttle_reasons.hw_thermal_slowdown}; a GPU the driver lost
 *       shows as {@code [GPU requires reset]} / {@code Unknown Error}, or is missing.</li>
 *   <li>The kernel log: {@code NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus.}</li>
 * </ul>
 */
public final class GpuHealth {
    /** The arguments of the health query (after the nvidia-smi binary). */
    public static final List<String> QUERY_ARGS = List.of("--query-gpu=index,pci.bus_id,"
            + "ecc.errors.uncorrected.volatile.total,clocks_throttle_reasons.hw_thermal_slowdown",
            "--format=csv,noheader,nounits");
    private static final Pattern XID = Pattern.compile("NVRM: Xid \\(PCI:([0-9A-Fa-f:.]+)\\): (\\d+),\\s*(.*)$");
    private static final Pattern BUS = Pattern.compile("([0-9a-f]{2}):([0-9a-f]{2})(\\.[0-9a-f])?$");

    private GpuHealth() {
    }

    /** One GPU of a query sample. {@code doubleBitErrors} null when the GPU has no ECC ({@code [N/A]}). */
    public record GpuState(Integer index, String busId, Long doubleBitErrors, boolean thermalSlowdown, boolean lost) {
    }

    /** An Xid line of the kernel log. */
    public record XidLine(String busId, int xid, String text) {
    }

    /** The GPUs of a query sample; lines it cannot read are skipped (a driver message, a blank line). */
    public static List<GpuState> parseQuery(String csv) {
        List<GpuState> out = new ArrayList<>();
        for (String line : csv.split("\\R")) {
            String[] f = line.split(",");
            if (f.length < 2) {
                continue;
            }
            Integer index = integer(f[0].trim());
            String bus = busId(f[1].trim());
            boolean lost = line.contains("requires reset") || line.contains("Unknown Error") || line.contains("GPU is lost");
            if (index == null && bus == null) {
                continue;
            }
            Long dbe = f.length > 2 ? longOrNull(f[2].trim()) : null;
            boolean thermal = f.length > 3 && f[3].trim().equalsIgnoreCase("Active");
            out.add(new GpuState(index, bus, dbe, thermal, lost));
        }
        return out;
    }

    /** The Xid lines of a stretch of kernel log, in order. */
    public static List<XidLine> parseKernelLog(String text) {
        List<XidLine> out = new ArrayList<>();
        for (String line : text.split("\\R")) {
            Matcher m = XID.matcher(line);
            if (m.find()) {
                out.add(new XidLine(busId(m.group(1)), Integer.parseInt(m.group(2)), m.group(3).trim()));
            }
        }
        return out;
    }

    /** {@code 00000000:3B:00.0} and {@code 0000:3b:00} both as {@code 3b:00} (bus and device: what both logs share). */
    static String busId(String raw) {
        Matcher m = BUS.matcher(raw.toLowerCase(Locale.ROOT));
        return m.find() ? m.group(1) + ":" + m.group(2) : null;
    }

    private static Integer integer(String s) {
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static Long longOrNull(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * Turns successive samples of one node into faults, each condition when it appears: double-bit ECC errors when
     * their count grows (a count already above zero at the first sample counts: the errors are since the driver
     * loaded), thermal slowdown when it starts, a GPU lost when it goes missing or unreadable (again only after it
     * came back), and every Xid line. Not thread-safe: one reader thread owns it.
     */
    public static final class Monitor {
        private final String nodeId;
        private final Set<Integer> expected;
        private final Map<Integer, Long> dbe = new HashMap<>();
        private final Set<Integer> thermal = new HashSet<>();
        private final Set<Integer> lost = new HashSet<>();
        private final Map<String, Integer> indexByBus = new HashMap<>();

        /** @param expectedGpus the node's GPU indices: one missing from a sample is lost */
        public Monitor(String nodeId, Set<Integer> expectedGpus) {
            this.nodeId = nodeId;
            this.expected = new TreeSet<>(expectedGpus);
        }

        public List<DeviceFault> onQuery(String csv) {
            List<DeviceFault> out = new ArrayList<>();
            Set<Integer> seen = new TreeSet<>();
            for (GpuState g : parseQuery(csv)) {
                Integer index = g.index() != null ? g.index() : indexByBus.get(g.busId());
                if (index == null) {
                    continue;
                }
                if (g.busId() != null) {
                    indexByBus.put(g.busId(), index);
                }
                if (g.lost()) {
                    if (lost.add(index)) {
                        out.add(fault(index, DeviceFault.Kind.GPU_LOST, null, "nvidia-smi: GPU " + index
                                + " requires reset or is unreadable"));
                    }
                    seen.add(index);
                    continue;
                }
                seen.add(index);
                lost.remove(index);
                if (g.doubleBitErrors() != null) {
                    long before = dbe.getOrDefault(index, 0L);
                    if (g.doubleBitErrors() > before) {
                        out.add(fault(index, DeviceFault.Kind.ECC_DOUBLE_BIT, null, "nvidia-smi: "
                                + (g.doubleBitErrors() - before) + " uncorrectable ECC error(s) on GPU " + index));
                    }
                    dbe.put(index, g.doubleBitErrors());
                }
                if (g.thermalSlowdown() && thermal.add(index)) {
                    out.add(fault(index, DeviceFault.Kind.THERMAL, null, "nvidia-smi: hardware thermal slowdown on GPU "
                            + index));
                } else if (!g.thermalSlowdown()) {
                    thermal.remove(index);
                }
            }
            for (int index : expected) {
                if (!seen.contains(index) && lost.add(index)) {
                    out.add(fault(index, DeviceFault.Kind.GPU_LOST, null, "nvidia-smi: GPU " + index + " is missing"));
                }
            }
            return out;
        }

        /** Every Xid line of new kernel log text; a GPU whose bus id no query has shown is reported node-wide. */
        public List<DeviceFault> onKernelLog(String text) {
            List<DeviceFault> out = new ArrayList<>();
            for (XidLine x : parseKernelLog(text)) {
                Integer index = indexByBus.get(x.busId());
                out.add(new DeviceFault(nodeId, index, DeviceFault.Kind.XID, x.xid(), "kernel-log",
                        "Xid " + x.xid() + (index == null ? " on PCI " + x.busId() + " of " + nodeId
                                : " on GPU " + index + " of " + nodeId) + ": " + x.text()));
            }
            return out;
        }

        private DeviceFault fault(int index, DeviceFault.Kind kind, Integer xid, String message) {
            return new DeviceFault(nodeId, index, kind, xid, "nvidia-smi", message);
        }
    }
}
