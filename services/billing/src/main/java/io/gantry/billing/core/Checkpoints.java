package io.gantry.billing.core;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The checkpoints each run committed (job and attempt), as far as billing has seen them. */
public final class Checkpoints {
    private final Map<String, List<Instant>> byRun = new HashMap<>();

    public static Checkpoints none() {
        return new Checkpoints();
    }

    public Checkpoints add(String jobId, int attempt, Instant committedAt) {
        byRun.computeIfAbsent(jobId + "#" + attempt, k -> new ArrayList<>()).add(committedAt);
        return this;
    }

    /**
     * Where the run's lost work starts: its last checkpoint committed within {@code [startedAt, endedAt]}, or
     * {@code startedAt} when it committed none (a checkpoint reported on admission's clock outside the run's held
     * interval says nothing about the work in it).
     */
    public Instant lostFrom(String jobId, int attempt, Instant startedAt, Instant endedAt) {
        Instant best = startedAt;
        for (Instant t : byRun.getOrDefault(jobId + "#" + attempt, List.of())) {
            if (!t.isBefore(startedAt) && !t.isAfter(endedAt) && t.isAfter(best)) {
                best = t;
            }
        }
        return best;
    }
}
