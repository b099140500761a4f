package io.gantry.queue.core;

import io.gantry.model.GpuShares;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The nodes a release left room on that parked gangs fit on and nowhere else, as placement's checks named them
 * ({@link Input.DeferredCheck#onlyPlace()}), for the one dispatch cycle after the release. Such gangs compete for what
 * is free there: the cycle dispatches one only while its place still holds it after the ones dispatched before it,
 * in the cycle's own order (standing, quota), so a gang quota holds back leaves the place to the next. A gang that no
 * longer fits stays parked: placement would defer it, and the next release checks it again.
 *
 * <p>Totals per node, not per socket or device: a "yes" may still be deferred (as before), a "no" is exact for what
 * the place has free.
 */
final class OnlyPlaces {
    /** Per node: {whole GPUs, CPU millicores, memory MiB} left, and the free thousandths of each partly shared GPU. */
    private final Map<String, long[]> left = new HashMap<>();
    private final Map<String, List<Integer>> parts = new HashMap<>();
    private final Map<String, String> placeOf = new HashMap<>();

    /** Records that {@code jobId}, woken now, fits only on {@code place}. */
    void add(String jobId, Input.Place place) {
        placeOf.put(jobId, place.node());
        if (!left.containsKey(place.node())) {
            left.put(place.node(), new long[] {place.freeGpus(), place.freeCpuMillis(), place.freeMemoryMiB()});
            parts.put(place.node(), new ArrayList<>(place.partFreeMilli()));
        }
    }

    boolean isEmpty() {
        return placeOf.isEmpty();
    }

    void clear() {
        left.clear();
        parts.clear();
        placeOf.clear();
    }

    /**
     * Whether the job may be dispatched now: true when it has no only place, or its place still holds it (which it
     * then takes); false when the gangs dispatched before it in this cycle left too little there.
     */
    boolean take(String jobId, JobSpec spec) {
        String node = placeOf.remove(jobId);
        if (node == null) {
            return true;
        }
        long[] room = left.get(node).clone();
        List<Integer> shared = new ArrayList<>(parts.get(node));
        for (TaskGroup t : spec.tasks()) {
            for (int r = 0; r < t.replicas(); r++) {
                if (t.gpuMilli() != null) {
                    if (!takeShare(room, shared, t.gpuMilli())) {
                        return false;
                    }
                } else {
                    room[0] -= t.gpus();
                }
                room[1] -= t.cpuMillis();
                room[2] -= t.memoryMiB();
            }
        }
        if (room[0] < 0 || room[1] < 0 || room[2] < 0) {
            return false;
        }
        left.put(node, room);
        parts.put(node, shared);
        return true;
    }

    /** A share goes to the partly shared GPU with the least room that holds it, else to a whole free GPU. */
    private static boolean takeShare(long[] room, List<Integer> shared, int milli) {
        int best = -1;
        for (int i = 0; i < shared.size(); i++) {
            if (shared.get(i) >= milli && (best < 0 || shared.get(i) < shared.get(best))) {
                best = i;
            }
        }
        if (best >= 0) {
            shared.set(best, shared.get(best) - milli);
            return true;
        }
        if (room[0] <= 0) {
            return false;
        }
        room[0]--;
        shared.add(GpuShares.WHOLE - milli);
        return true;
    }
}
