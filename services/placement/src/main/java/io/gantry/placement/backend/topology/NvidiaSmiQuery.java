package io.gantry.placement.backend.topology;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What {@code nvidia-smi -q} says about each GPU, in index order (the order it prints them): product name, UUID,
 * PCI bus id, total framebuffer memory and the current MIG mode. Nested sections ({@code FB Memory Usage},
 * {@code MIG Mode}) are read by indentation.
 */
public final class NvidiaSmiQuery {
    private static final Pattern GPU_SECTION = Pattern.compile("^GPU\\s+([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\\.[0-9A-Fa-f]+)\\s*$");
    private static final Pattern MIB = Pattern.compile("^(\\d+)\\s*MiB$");

    /**
     * One GPU as the driver reports it.
     *
     * @param migMode {@code Enabled}, {@code Disabled} or {@code N/A} (the GPU cannot do MIG)
     */
    public record GpuInfo(int index, String product, String uuid, String pciBusId, long memoryMiB, String migMode) {
        /** Whether MIG instances can be made on it now (MIG mode is on; turning it on needs a GPU reset). */
        public boolean migEnabled() {
            return "Enabled".equalsIgnoreCase(migMode);
        }
    }

    private NvidiaSmiQuery() {
    }

    public static List<GpuInfo> parse(String text) {
        List<Map<String, String>> sections = new ArrayList<>();
        List<String> busIds = new ArrayList<>();
        Map<String, String> current = null;
        Deque<int[]> indents = new ArrayDeque<>();
        Deque<String> names = new ArrayDeque<>();
        for (String line : text.split("\\R")) {
            Matcher m = GPU_SECTION.matcher(line);
            if (m.matches()) {
                current = new LinkedHashMap<>();
                sections.add(current);
                busIds.add(m.group(1));
                indents.clear();
                names.clear();
                continue;
            }
            if (current == null || line.isBlank()) {
                continue;
            }
            int indent = line.length() - line.stripLeading().length();
            if (indent == 0) {
                current = null; // a top-level line after the GPUs (e.g. a footer): the section is over
                continue;
            }
            while (!indents.isEmpty() && indents.peek()[0] >= indent) {
                indents.pop();
                names.pop();
            }
            int colon = line.indexOf(':');
            String key = (colon < 0 ? line : line.substring(0, colon)).trim();
            String value = colon < 0 ? "" : line.substring(colon + 1).trim();
            if (colon < 0 || value.isEmpty()) {
                indents.push(new int[] {indent});
                names.push(key);
                continue;
            }
            List<String> path = new ArrayList<>(names);
            java.util.Collections.reverse(path);
            path.add(key);
            current.putIfAbsent(String.join("/", path), value);
        }
        List<GpuInfo> gpus = new ArrayList<>();
        for (int i = 0; i < sections.size(); i++) {
            Map<String, String> s = sections.get(i);
            gpus.add(new GpuInfo(i, s.getOrDefault("Product Name", "generic"), s.get("GPU UUID"),
                    s.getOrDefault("Bus Id", busIds.get(i)), mib(s.get("FB Memory Usage/Total")),
                    s.getOrDefault("MIG Mode/Current", "N/A")));
        }
        return gpus;
    }

    private static long mib(String value) {
        if (value == null) {
            return 0;
        }
        Matcher m = MIB.matcher(value.trim());
        return m.matches() ? Long.parseLong(m.group(1)) : 0;
    }
}
