package io.gantry.placement.backend;

import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * GPUs of one Gantry node held by workloads Gantry did not start (another scheduler's pod, a Slurm job outside
 * Gantry's partition), as a backend counted them.
 *
 * @param gpus    how many GPUs they hold together
 * @param holders who, for operators, e.g. {@code pod team-x/notebook (2 GPUs); pod team-x/eval (1 GPU)}
 */
public record ForeignLoad(int gpus, String holders) {

    /** Sums what each backend finds per node into one {@link ForeignLoad} per node (holders sorted, each once). */
    public static final class Tally {
        private final Map<String, Integer> gpus = new TreeMap<>();
        private final Map<String, TreeSet<String>> holders = new TreeMap<>();

        /** {@code holder} holds {@code count} GPUs of {@code node}. */
        public Tally add(String node, int count, String holder) {
            if (count > 0) {
                gpus.merge(node, count, Integer::sum);
                holders.computeIfAbsent(node, n -> new TreeSet<>()).add(holder + " (" + count + " GPU"
                        + (count == 1 ? "" : "s") + ")");
            }
            return this;
        }

        public Map<String, ForeignLoad> build() {
            Map<String, ForeignLoad> out = new TreeMap<>();
            gpus.forEach((node, n) -> out.put(node, new ForeignLoad(n, String.join("; ", holders.get(node)))));
            return Map.copyOf(out);
        }
    }
}
