package io.gantry.placement.backend.health;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads how busy the GPUs are from {@code nvidia-smi} with {@link #QUERY_ARGS}: one CSV line per GPU,
 * {@code index, utilization.gpu} (percent of the last sample period in which a kernel ran). A GPU that cannot tell
 * ({@code [N/A]}, e.g. one in MIG mode, or {@code [GPU requires reset]}) is left out, as is any line that is not a
 * GPU's (a driver message, a blank line).
 */
public final class GpuUtilisation {
    /** The arguments of the utilisation query (after the nvidia-smi binary). */
    public static final List<String> QUERY_ARGS = List.of("--query-gpu=index,utilization.gpu",
            "--format=csv,noheader,nounits");

    private GpuUtilisation() {
    }

    /** GPU index -> percent busy (0-100), of the GPUs the sample reports readably. */
    public static Map<Integer, Integer> parse(String csv) {
        Map<Integer, Integer> out = new TreeMap<>();
        for (String line : csv.split("\\R")) {
            String[] f = line.split(",");
            if (f.length != 2) {
                continue;
            }
            try {
                int index = Integer.parseInt(f[0].trim());
                int pct = Integer.parseInt(f[1].trim());
                if (index >= 0 && pct >= 0 && pct <= 100) {
                    out.put(index, pct);
                }
            } catch (NumberFormatException e) {
                // not a GPU line, or a GPU that cannot tell
            }
        }
        return Collections.unmodifiableMap(out);
    }
}
