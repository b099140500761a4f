package io.gantry.queue.core;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The checkpoints jobs' runs reported (learned from admission's checkpoint topic, and rebuilt from it at a restart):
 * how much work a preemption would lose, and where a preempted run resumes.
 */
final class Checkpoints {
    private record Newest(long step, String path, long atMillis) {
    }

    private final Map<String, TreeMap<Integer, Newest>> byJob = new HashMap<>();

    void record(String jobId, int attempt, long step, String path, long atMillis) {
        byJob.computeIfAbsent(jobId, id -> new TreeMap<>()).merge(attempt, new Newest(step, path, atMillis),
                (old, now) -> now.step() >= old.step() ? now : old);
    }

    /** When {@code attempt} of the job last saved, or {@link Long#MIN_VALUE} when it has not. */
    long lastSavedMillis(String jobId, int attempt) {
        TreeMap<Integer, Newest> attempts = byJob.get(jobId);
        Newest n = attempts == null ? null : attempts.get(attempt);
        return n == null ? Long.MIN_VALUE : n.atMillis();
    }

    /**
     * Where an interruption of {@code attempt} resumes: the newest checkpoint of the latest attempt up to it that
     * saved one, or null. Never another job's, never a later attempt's.
     */
    String resumePoint(String jobId, int attempt) {
        TreeMap<Integer, Newest> attempts = byJob.get(jobId);
        Map.Entry<Integer, Newest> e = attempts == null ? null : attempts.floorEntry(attempt);
        return e == null ? null : e.getValue().path();
    }

    void forget(String jobId) {
        byJob.remove(jobId);
    }
}
