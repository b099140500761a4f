package io.gantry.queue.core;

import java.util.Map;
import java.util.TreeMap;

/**
 * Free whole GPUs per model as placement reported them with a release. The queue cannot tell whether a gang fits
 * (topology, CPU, memory are placement's business), but it can tell when it certainly does not: that is all this
 * is used for, so a parked job is only woken when it might fit.
 */
public record FreeCapacity(Map<String, Model> byModel) {
    /** One model: free GPUs on all healthy nodes, and the most free on any one of them. */
    public record Model(int free, int largestOnNode) {
    }

    public FreeCapacity {
        byModel = java.util.Collections.unmodifiableMap(new TreeMap<>(byModel));
    }

    /**
     * Whether a gang of {@code gangGpus} whose largest task needs {@code largestTask} GPUs on one node could fit on
     * the models it accepts ({@code models} empty: any model). Placement puts a whole gang on one model, so one model
     * must have room for all of it; with {@code mixedModels} (task groups requiring different models) the models are
     * pooled instead. A necessary condition, never a sufficient one.
     */
    public boolean mightFit(java.util.List<String> models, int gangGpus, int largestTask, boolean mixedModels) {
        long pooled = 0;
        int pooledLargest = 0;
        for (Map.Entry<String, Model> e : byModel.entrySet()) {
            if (!models.isEmpty() && !models.contains(e.getKey())) {
                continue;
            }
            Model m = e.getValue();
            if (!mixedModels && m.free() >= gangGpus && m.largestOnNode() >= largestTask) {
                return true;
            }
            pooled += m.free();
            pooledLargest = Math.max(pooledLargest, m.largestOnNode());
        }
        return mixedModels && pooled >= gangGpus && pooledLargest >= largestTask;
    }
}
