package io.gantry.placement.core;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * The gangs placement deferred and has not placed since, the longest-deferred first: what a release checks again
 * ({@link ClusterState#checkDeferred}). Not rebuilt after a restart: until such a gang is dispatched again it is
 * simply not checked.
 */
public final class DeferredGangs {
    private final LinkedHashMap<String, GangRequest> byJob = new LinkedHashMap<>();

    /** After a dispatch decision: a deferred gang is remembered (keeping its place), a granted one forgotten. */
    public void afterDispatch(GangRequest gang, List<PlacementFact> facts) {
        for (PlacementFact f : facts) {
            if (f instanceof PlacementFact.PlacementDeferred) {
                GangRequest known = byJob.get(gang.jobId());
                if (known == null || known.attempt() != gang.attempt()) {
                    byJob.remove(gang.jobId());
                    byJob.put(gang.jobId(), gang);
                }
            } else if (f instanceof PlacementFact.AllocationGranted) {
                byJob.remove(gang.jobId());
            }
        }
    }

    /** The job ended or was cancelled. */
    public void forget(String jobId) {
        byJob.remove(jobId);
    }

    public Collection<GangRequest> oldestFirst() {
        return Collections.unmodifiableCollection(byJob.values());
    }
}
