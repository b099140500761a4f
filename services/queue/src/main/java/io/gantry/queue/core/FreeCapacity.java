package io.gantry.queue.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Free whole GPUs per model as placement reported them with a release. The queue cannot tell whether a gang fits
 * (topology, CPU and memory are placement's business), but it can tell when it certainly does not: that is all
 * this is used for, so a parked job is only woken when it might fit.
 */
public record FreeCapacity(Map<String, Model> byModel) {
    /**
     * One model: free GPUs on all healthy nodes, the most free on any one of them, {@code nodesWithFree.get(k)} = how
     * many nodes have exactly k free (empty when not reported), and the most thousandths of one GPU free on a single
     * device ({@code largestFreeMilli}, 1000 when a whole GPU is free; -1 when not reported).
     */
    public record Model(int free, int largestOnNode, List<Integer> nodesWithFree, int largestFreeMilli,
                        long largestFreeCpuMillis, long largestFreeMemoryMiB) {
        public Model {
            nodesWithFree = List.copyOf(nodesWithFree);
        }

        public Model(int free, int largestOnNode, List<Integer> nodesWithFree, int largestFreeMilli) {
            this(free, largestOnNode, nodesWithFree, largestFreeMilli, -1, -1);
        }

        public Model(int free, int largestOnNode, List<Integer> nodesWithFree) {
            this(free, largestOnNode, nodesWithFree, -1, -1, -1);
        }

        public Model(int free, int largestOnNode) {
            this(free, largestOnNode, List.of(), -1, -1, -1);
        }

        /** Whether one task of {@code cpuMillis} and {@code memoryMiB} could sit next to a free GPU of the model. */
        boolean roomBeside(long cpuMillis, long memoryMiB) {
            return (largestFreeCpuMillis < 0 || cpuMillis <= largestFreeCpuMillis)
                    && (largestFreeMemoryMiB < 0 || memoryMiB <= largestFreeMemoryMiB);
        }
    }

    public FreeCapacity {
        byModel = Collections.unmodifiableMap(new TreeMap<>(byModel));
    }

    /** A copy that parked jobs are woken against one after the other, each taking what it would use. */
    public Budget budget() {
        return new Budget(byModel);
    }

    /**
     * What is left of the reported capacity while parked jobs are woken in order: a job that might fit takes its
     * tasks from the nodes with the fewest free GPUs that hold them (as placement's binpacking would), so the jobs
     * woken by one release are those that might fit together, not every parked job.
     */
    public static final class Budget {
        private final Map<String, int[]> counts = new TreeMap<>();
        private final Map<String, int[]> totals = new HashMap<>();
        /** Per model: the largest free part of one device (-1 unknown), and what shares may still take of it. */
        private final Map<String, int[]> shares = new HashMap<>();
        private final Map<String, Model> reported;

        private Budget(Map<String, Model> byModel) {
            this.reported = byModel;
            byModel.forEach((m, c) -> {
                counts.put(m, c.nodesWithFree().stream().mapToInt(Integer::intValue).toArray());
                totals.put(m, new int[] {c.free(), c.largestOnNode()});
                shares.put(m, new int[] {c.largestFreeMilli(), c.largestFreeMilli() < 0 ? -1
                        : c.largestFreeMilli() + 1000 * c.free()});
            });
        }

        /**
         * Whether a task group of {@code replicas} parts of {@code milli} thousandths might fit on a model it accepts,
         * and if so takes them: it needs a device with that much free, and the parts together must stay within the
         * largest free part plus the whole free GPUs. Unknown (not reported): always.
         */
        public boolean takeShares(List<String> models, int replicas, int milli, long cpuMillis, long memoryMiB) {
            boolean unknown = shares.isEmpty();
            for (Map.Entry<String, int[]> e : shares.entrySet()) {
                if (!models.isEmpty() && !models.contains(e.getKey())
                        || !reported.get(e.getKey()).roomBeside(cpuMillis, memoryMiB)) {
                    continue;
                }
                int[] s = e.getValue();
                if (s[0] < 0) {
                    unknown = true;
                    continue;
                }
                long need = (long) replicas * milli;
                if (s[0] >= milli && s[1] >= need) {
                    s[1] -= (int) need;
                    // conservative: later parts are checked against what is left, never against the same device twice
                    s[0] = Math.min(s[0], s[1] >= 1000 ? 1000 : s[1]);
                    return true;
                }
            }
            return unknown;
        }

        /**
         * Whether a gang might fit in what is left, and if so takes it.
         *
         * @param tasks    per task group: {replicas, GPUs per task, CPU millicores per task, memory MiB per task}
         * @param gangGpus all GPUs of the gang
         */
        public boolean take(List<String> models, List<long[]> tasks, int gangGpus, boolean mixedModels) {
            if (mixedModels) {
                long free = 0;
                int largest = 0;
                int need = 0;
                for (Map.Entry<String, int[]> e : totals.entrySet()) {
                    if (models.isEmpty() || models.contains(e.getKey())) {
                        free += e.getValue()[0];
                        largest = Math.max(largest, e.getValue()[1]);
                    }
                }
                for (long[] t : tasks) {
                    need = (int) Math.max(need, t[1]);
                }
                return free >= gangGpus && largest >= need;
            }
            List<String> candidates = new ArrayList<>(models.isEmpty() ? counts.keySet() : models);
            for (String m : candidates) {
                int[] total = totals.get(m);
                if (total == null || total[0] < gangGpus) {
                    continue;
                }
                boolean roomy = true;
                for (long[] t : tasks) {
                    roomy &= reported.get(m).roomBeside(t[2], t[3]);
                }
                if (!roomy) {
                    continue; // GPUs free, but no node next to them has the CPU or memory of a task
                }
                int[] hist = counts.get(m);
                if (hist.length == 0) {
                    int need = 0;
                    for (long[] t : tasks) {
                        need = (int) Math.max(need, t[1]);
                    }
                    if (total[1] >= need) {
                        total[0] -= gangGpus;
                        return true;
                    }
                    continue;
                }
                int[] left = hist.clone();
                if (place(left, tasks)) {
                    counts.put(m, left);
                    total[0] -= gangGpus;
                    return true;
                }
            }
            return false;
        }

        /** Binpacks the tasks (largest first) onto the per-node free counts; false if one does not fit. */
        private static boolean place(int[] nodesWithFree, List<long[]> tasks) {
            List<long[]> bySize = new ArrayList<>(tasks);
            bySize.sort((a, b) -> Long.compare(b[1], a[1]));
            for (long[] t : bySize) {
                int size = (int) t[1];
                if (size <= 0) {
                    continue;
                }
                for (int r = 0; r < t[0]; r++) {
                    int k = size;
                    while (k < nodesWithFree.length && nodesWithFree[k] == 0) {
                        k++;
                    }
                    if (k >= nodesWithFree.length) {
                        return false;
                    }
                    nodesWithFree[k]--;
                    nodesWithFree[k - size]++;
                }
            }
            return true;
        }
    }
}
