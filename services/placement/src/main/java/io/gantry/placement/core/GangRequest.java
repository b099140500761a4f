package io.gantry.placement.core;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Everything a dispatched run asks for: every replica of every task group, all or nothing, and where;
 * {@code timeLimitSeconds} (null: none) is carried onto the allocation; {@code policy} (null: the pool's) overrides
 * the placer's binpack / spread for this gang; {@code checkpoints}: the job declares that it saves checkpoints
 * (JobSpec.checkpoint), so a stop costs it only the work since its last one — what lets it borrow GPUs that drain
 * for a starving gang (it is stopped when that gang is due).
 */
public record GangRequest(String jobId, String tenant, int attempt, List<TaskGroup> tasks, Topology topology,
                          Long timeLimitSeconds, PlacementPolicy policy, boolean checkpoints) {
    /** The most replicas (over all task groups) one gang may have. */
    public static final int MAX_REPLICAS = 100_000;

    public GangRequest {
        Objects.requireNonNull(jobId, "jobId");
        Objects.requireNonNull(tenant, "tenant");
        if (jobId.isBlank()) {
            throw new IllegalArgumentException("jobId must not be blank");
        }
        if (attempt < 1) {
            throw new IllegalArgumentException("attempt must be >= 1, was " + attempt);
        }
        if (tasks == null || tasks.isEmpty()) {
            throw new IllegalArgumentException("a gang needs at least one task");
        }
        Set<String> names = new HashSet<>();
        long replicas = 0;
        for (TaskGroup t : tasks) {
            if (!names.add(t.name())) {
                throw new IllegalArgumentException("task name " + t.name() + " appears twice");
            }
            replicas += t.replicas();
        }
        // every replica is fitted one by one, and GPU counts are ints: a bound keeps both finite
        if (replicas > MAX_REPLICAS) {
            throw new IllegalArgumentException("a gang may have at most " + MAX_REPLICAS + " replicas, has " + replicas);
        }
        tasks = List.copyOf(tasks);
        topology = topology == null ? Topology.ANYWHERE : topology;
        if (timeLimitSeconds != null && timeLimitSeconds <= 0) {
            throw new IllegalArgumentException("timeLimitSeconds must be > 0, was " + timeLimitSeconds);
        }
    }

    /** A job that declares no checkpoints. */
    public GangRequest(String jobId, String tenant, int attempt, List<TaskGroup> tasks, Topology topology,
                       Long timeLimitSeconds, PlacementPolicy policy) {
        this(jobId, tenant, attempt, tasks, topology, timeLimitSeconds, policy, false);
    }

    /** With the pool's placement policy. */
    public GangRequest(String jobId, String tenant, int attempt, List<TaskGroup> tasks, Topology topology,
                       Long timeLimitSeconds) {
        this(jobId, tenant, attempt, tasks, topology, timeLimitSeconds, null);
    }

    public GangRequest withPolicy(PlacementPolicy p) {
        return new GangRequest(jobId, tenant, attempt, tasks, topology, timeLimitSeconds, p, checkpoints);
    }

    public GangRequest(String jobId, String tenant, int attempt, List<TaskGroup> tasks, Topology topology) {
        this(jobId, tenant, attempt, tasks, topology, null);
    }

    public GangRequest(String jobId, String tenant, int attempt, List<TaskGroup> tasks) {
        this(jobId, tenant, attempt, tasks, Topology.ANYWHERE, null);
    }

    public int totalGpus() {
        return tasks.stream().mapToInt(TaskGroup::totalGpus).sum();
    }

    public int replicaCount() {
        return tasks.stream().mapToInt(TaskGroup::replicas).sum();
    }

    /** The gang's shape for messages, e.g. {@code 5 x 8} or {@code 1 x 8 + 4 x 2}. */
    public String shape() {
        String s = tasks.stream().filter(t -> t.gpus() > 0)
                .map(t -> t.replicas() + " x " + t.gpus()).collect(Collectors.joining(" + "));
        return s.isEmpty() ? "no GPUs" : s;
    }
}
