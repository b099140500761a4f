package io.gantry.simulator;

import io.gantry.events.QuotaWait;
import io.gantry.events.WaitReason;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where the first-grant waits went: each job's time from submission to its first grant, split by what it was waiting
 * for as the services said it at the time (the queue's {@code JobWaiting} reason and sentence, placement's deferral
 * cause, the dispatch itself), and summed by cause and by job size. A wait is attributed to the last cause heard
 * until the next one; the time before any was said is "in line, no reason yet".
 */
final class WaitCauses {
    /** Job sizes the table has a column for: GPUs of at most this many (the last one: any more). */
    static final List<Integer> SIZES = List.of(1, 4, 8, Integer.MAX_VALUE);
    static final String NO_REASON = "in line, no reason yet";
    static final String PLACING = "dispatched, being placed";

    private final Map<String, String> cause = new HashMap<>();
    private final Map<String, Long> since = new HashMap<>();
    /** Milliseconds waited, by cause, then by size column. */
    private final Map<String, long[]> waited = new TreeMap<>();

    /** A job was submitted at {@code t}. */
    void submitted(String jobId, long t) {
        cause.put(jobId, NO_REASON);
        since.put(jobId, t);
    }

    /** The cause of {@code jobId}'s wait from {@code t} on; nothing once it was granted. */
    void heard(String jobId, int gpus, String newCause, long t) {
        String before = cause.get(jobId);
        if (before == null) {
            return;
        }
        add(before, gpus, t - since.get(jobId));
        cause.put(jobId, newCause);
        since.put(jobId, t);
    }

    /** The job's first grant at {@code t}: its wait ends. */
    void granted(String jobId, int gpus, long t) {
        String before = cause.remove(jobId);
        if (before != null) {
            add(before, gpus, t - since.remove(jobId));
        }
    }

    private void add(String c, int gpus, long ms) {
        waited.computeIfAbsent(c, k -> new long[SIZES.size()])[column(gpus)] += Math.max(0, ms);
    }

    /** The size column of a job of {@code gpus} GPUs. */
    static int column(int gpus) {
        int col = 0;
        while (gpus > SIZES.get(col)) {
            col++;
        }
        return col;
    }

    /** Milliseconds waited by cause, each a row of per-size sums. */
    Map<String, long[]> table() {
        return waited;
    }

    /** The queue's typed quota waits as causes; any other (or none: a record older than the type) is its own quota. */
    private static final Map<QuotaWait, String> QUOTA_CAUSES = Map.of(
            QuotaWait.TURN, "QUOTA: its turn in its queue",
            QuotaWait.HELD_FOR_STARVING_JOB, "QUOTA: held for a starving job",
            QuotaWait.HELD_FOR_PREEMPTOR, "QUOTA: held for a preemptor",
            QuotaWait.PREEMPTING, "QUOTA: preempting, its victims stopping",
            QuotaWait.STARVING, "QUOTA: starving, holds the reservation",
            QuotaWait.NOMINAL_LENT, "QUOTA: own nominal lent to others",
            QuotaWait.BORROWING_LIMIT, "QUOTA: borrowing limit",
            QuotaWait.COHORT_FULL, "QUOTA: cohort full");

    /** The queue's wait reason as a cause: quota waits split by what holds the quota (the wait's typed cause). */
    static String ofQueue(WaitReason reason, QuotaWait quota) {
        if (reason != WaitReason.QUOTA) {
            return reason.name();
        }
        String cause = quota == null ? null : QUOTA_CAUSES.get(quota);
        return cause != null ? cause : "QUOTA: its queue's own quota";
    }
}
