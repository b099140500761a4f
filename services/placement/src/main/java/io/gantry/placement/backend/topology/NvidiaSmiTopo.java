package io.gantry.placement.backend.topology;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The connection matrix of {@code nvidia-smi topo -m}: for every pair of devices (GPUs and NICs) how they talk
 * ({@code NV18}: 18 bonded NVLinks; {@code PIX}/{@code PXB}: through PCIe bridges below one host bridge, i.e.
 * the same PCIe switch; {@code PHB}/{@code NODE}: through the CPU's host bridges on one NUMA node; {@code SYS}:
 * across sockets), plus each GPU's CPU and NUMA affinity and the NIC legend ({@code NIC0: mlx5_0}).
 *
 * <p>Cells are separated by tabs (what the driver prints) or by runs of two or more spaces (what survives a copy
 * and paste); both are read.
 */
public record NvidiaSmiTopo(List<String> devices, Map<String, String> nicNames, Map<String, Map<String, String>> links,
                            Map<String, String> cpuAffinity, Map<String, String> numaAffinity) {
    private static final Pattern DEVICE = Pattern.compile("(GPU\\d+|NIC\\d+|mlx\\S+)");
    private static final Pattern NIC_LEGEND = Pattern.compile("^\\s*(NIC\\d+)\\s*:\\s*(\\S+)\\s*$");
    private static final Pattern CELLS = Pattern.compile("\\t|\\s{2,}");

    public NvidiaSmiTopo {
        devices = List.copyOf(devices);
        nicNames = Map.copyOf(nicNames);
        links = Map.copyOf(links);
        cpuAffinity = Map.copyOf(cpuAffinity);
        numaAffinity = Map.copyOf(numaAffinity);
    }

    /** Parses the whole output; refuses text that has no matrix header naming {@code GPU0}. */
    public static NvidiaSmiTopo parse(String text) {
        List<String> header = null;
        List<String> devices = new ArrayList<>();
        Map<String, Map<String, String>> links = new LinkedHashMap<>();
        Map<String, String> cpu = new LinkedHashMap<>();
        Map<String, String> numa = new LinkedHashMap<>();
        Map<String, String> nics = new LinkedHashMap<>();
        boolean legend = false;
        for (String raw : text.split("\\R")) {
            String line = raw.replace("\u001B[4m", "").replace("\u001B[0m", "");
            Matcher nic = NIC_LEGEND.matcher(line);
            if (nic.matches()) {
                nics.put(nic.group(1), nic.group(2));
                continue;
            }
            if (line.trim().startsWith("Legend")) {
                legend = true;
            }
            if (legend || line.isBlank()) {
                continue;
            }
            List<String> cells = cells(line);
            if (header == null) {
                if (cells.contains("GPU0")) {
                    header = cells;
                    for (String c : cells) {
                        if (DEVICE.matcher(c).matches()) {
                            devices.add(c);
                        }
                    }
                }
                continue;
            }
            String name = cells.get(0);
            if (!devices.contains(name)) {
                continue;
            }
            Map<String, String> row = new LinkedHashMap<>();
            for (int i = 0; i < devices.size() && i + 1 < cells.size(); i++) {
                row.put(devices.get(i), cells.get(i + 1));
            }
            links.put(name, row);
            List<String> extra = header.subList(devices.size(), header.size());
            for (int i = 0; i < extra.size(); i++) {
                int at = devices.size() + 1 + i;
                if (at >= cells.size()) {
                    break;
                }
                if (extra.get(i).equalsIgnoreCase("CPU Affinity")) {
                    cpu.put(name, cells.get(at));
                } else if (extra.get(i).equalsIgnoreCase("NUMA Affinity")) {
                    numa.put(name, cells.get(at));
                }
            }
        }
        if (header == null) {
            throw new IllegalArgumentException("not the output of `nvidia-smi topo -m`: no header naming GPU0");
        }
        return new NvidiaSmiTopo(devices, nics, links, cpu, numa);
    }

    private static List<String> cells(String line) {
        List<String> out = new ArrayList<>();
        Arrays.stream(CELLS.split(line)).map(String::trim).filter(s -> !s.isEmpty()).forEach(out::add);
        return out;
    }

    /** The GPU columns in index order ({@code GPU0}, {@code GPU1}, ...). */
    public List<String> gpus() {
        return devices.stream().filter(d -> d.startsWith("GPU")).toList();
    }

    /** The NIC columns in order. */
    public List<String> nics() {
        return devices.stream().filter(d -> !d.startsWith("GPU")).toList();
    }

    /** How {@code a} reaches {@code b} ({@code X} for itself); empty when the matrix does not say. */
    public String link(String a, String b) {
        String l = links.getOrDefault(a, Map.of()).get(b);
        if (l == null) {
            l = links.getOrDefault(b, Map.of()).get(a);
        }
        return l == null ? "" : l;
    }

    public static boolean nvlink(String link) {
        return link.startsWith("NV") && link.length() > 2;
    }

    /** Through PCIe bridges only, below one host bridge: behind the same PCIe switch. */
    public static boolean sameSwitch(String link) {
        return link.equals("PIX") || link.equals("PXB");
    }

    /** On the same NUMA node (a switch, a host bridge or the node's interconnect between host bridges). */
    public static boolean sameNuma(String link) {
        return sameSwitch(link) || link.equals("PHB") || link.equals("NODE");
    }

    /** The NIC's device name ({@code mlx5_0}) from the legend, or the column name itself (older drivers). */
    public String nicName(String column) {
        return nicNames.getOrDefault(column, column);
    }
}
