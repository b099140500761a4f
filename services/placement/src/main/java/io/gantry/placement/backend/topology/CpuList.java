package io.gantry.placement.backend.topology;

import java.util.ArrayList;
import java.util.List;

/** The Linux CPU list format ({@code 0-55,112-167}) of sysfs, taskset and {@code nvidia-smi topo -m}. */
public final class CpuList {
    private CpuList() {
    }

    /** The CPU ids of {@code text}, in order; empty for blank or {@code N/A}; refuses anything else malformed. */
    public static List<Integer> parse(String text) {
        List<Integer> cpus = new ArrayList<>();
        if (text == null || text.isBlank() || text.trim().equalsIgnoreCase("N/A")) {
            return cpus;
        }
        for (String part : text.trim().split(",")) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            try {
                int dash = p.indexOf('-');
                int from = Integer.parseInt(dash < 0 ? p : p.substring(0, dash));
                int to = dash < 0 ? from : Integer.parseInt(p.substring(dash + 1));
                if (from < 0 || to < from || to - from > 1 << 16) {
                    throw new IllegalArgumentException("bad CPU range `" + p + "` in `" + text.trim() + "`");
                }
                for (int c = from; c <= to; c++) {
                    cpus.add(c);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad CPU list `" + text.trim() + "`", e);
            }
        }
        return cpus;
    }

    /** {@code [0,1,2,3,8,9]} as {@code 0-3,8-9}. */
    public static String format(List<Integer> cpus) {
        List<Integer> sorted = cpus.stream().sorted().distinct().toList();
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < sorted.size(); i++) {
            int start = sorted.get(i);
            int end = start;
            while (i + 1 < sorted.size() && sorted.get(i + 1) == end + 1) {
                end = sorted.get(++i);
            }
            out.append(out.length() == 0 ? "" : ",").append(start == end ? "" + start : start + "-" + end);
        }
        return out.toString();
    }
}
