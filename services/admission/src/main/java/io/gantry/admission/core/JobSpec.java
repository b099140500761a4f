package io.gantry.admission.core;

import java.util.List;

/**
 * A validated job spec: a gang of task groups that is placed whole or not at all.
 *
 * @param queue         the tenant queue asked for, or null for the tenant's default queue
 * @param priorityClass a priority class of the queue configuration, or null for the default class
 * @param topology      where the gang's tasks must / should sit relative to each other, or null for no constraint
 * @param placementPolicy {@code binpack} or {@code spread} for this job, or null for the pool's policy
 * @param checkpoint    where the job saves its state and how often, or null when it declares no checkpoints
 * @param successPolicy when the gang succeeds before all its tasks ended, or null: when every task exited 0
 * @param retry         how often a run failed by the job's own fault is tried again, or null: never
 * @param dependencies  jobs of the same tenant this one waits for (the queue decides when they are met); empty: none
 * @param suspend       submitted suspended: it waits until resumed (Kubernetes Job {@code spec.suspend})
 * @param pool          the placement pool to run in, or null: the queue's flavour -> pool map chooses
 * @param interactive   whether a queue with an idle timeout may stop its runs when their GPUs stay idle (absent:
 *                      true); false declares batch work, never stopped for idling
 */
public record JobSpec(String name, int priority, Long timeLimitSeconds, List<TaskSpec> tasks, String queue,
                      String priorityClass, Topology topology, String placementPolicy, Checkpoint checkpoint,
                      SuccessPolicy successPolicy, Retry retry, List<Dependency> dependencies, boolean suspend,
                      String pool, boolean interactive) {

    /**
     * A job this one waits for: {@code condition} is {@code afterok} (it succeeded), {@code afterany} (it ended) or
     * {@code afternotok} (it failed or was cancelled), as Slurm's {@code --dependency} names them.
     */
    public record Dependency(String jobId, String condition) {
    }

    /** Dependency conditions, as job files write them; the first is the default. */
    public static final List<String> DEPENDENCY_CONDITIONS = List.of("afterok", "afterany", "afternotok");

    /** Without dependencies, not suspended, interactive, in the pool the queue chooses. */
    public JobSpec(String name, int priority, Long timeLimitSeconds, List<TaskSpec> tasks, String queue,
                   String priorityClass, Topology topology, String placementPolicy, Checkpoint checkpoint,
                   SuccessPolicy successPolicy, Retry retry) {
        this(name, priority, timeLimitSeconds, tasks, queue, priorityClass, topology, placementPolicy, checkpoint,
                successPolicy, retry, List.of(), false, null, true);
    }

    /** With dependencies or suspended, interactive, in the pool the queue chooses. */
    public JobSpec(String name, int priority, Long timeLimitSeconds, List<TaskSpec> tasks, String queue,
                   String priorityClass, Topology topology, String placementPolicy, Checkpoint checkpoint,
                   SuccessPolicy successPolicy, Retry retry, List<Dependency> dependencies, boolean suspend) {
        this(name, priority, timeLimitSeconds, tasks, queue, priorityClass, topology, placementPolicy, checkpoint,
                successPolicy, retry, dependencies, suspend, null, true);
    }

    /**
     * Up to {@code maxRetries} more runs after a run failed by the job's own fault (a non-zero exit), the first
     * after {@code backoffSeconds}, each further one after twice as long (at most an hour).
     */
    public record Retry(int maxRetries, int backoffSeconds) {
    }

    public JobSpec(String name, int priority, Long timeLimitSeconds, List<TaskSpec> tasks, String queue,
                   String priorityClass, Topology topology, String placementPolicy, Checkpoint checkpoint,
                   SuccessPolicy successPolicy) {
        this(name, priority, timeLimitSeconds, tasks, queue, priorityClass, topology, placementPolicy, checkpoint,
                successPolicy, null);
    }

    /**
     * The run succeeds as soon as every replica of the task group {@code leader} exited 0 (the other tasks are then
     * stopped); any task exiting non-zero before that fails it.
     */
    public record SuccessPolicy(String leader) {
    }

    public JobSpec(String name, int priority, Long timeLimitSeconds, List<TaskSpec> tasks, String queue,
                   String priorityClass, Topology topology, String placementPolicy, Checkpoint checkpoint) {
        this(name, priority, timeLimitSeconds, tasks, queue, priorityClass, topology, placementPolicy, checkpoint,
                null);
    }

    /** The job's checkpoint directory (absolute) and how often it expects to save (seconds), or null. */
    public record Checkpoint(String dir, Long intervalSeconds) {
    }

    public JobSpec(String name, int priority, Long timeLimitSeconds, List<TaskSpec> tasks, String queue,
                   String priorityClass, Topology topology, String placementPolicy) {
        this(name, priority, timeLimitSeconds, tasks, queue, priorityClass, topology, placementPolicy, null);
    }

    /** Placement policies a job may ask for, overriding the pool's. */
    public static final List<String> PLACEMENT_POLICIES = List.of("binpack", "spread");

    /** With the pool's placement policy. */
    public JobSpec(String name, int priority, Long timeLimitSeconds, List<TaskSpec> tasks, String queue,
                   String priorityClass, Topology topology) {
        this(name, priority, timeLimitSeconds, tasks, queue, priorityClass, topology, null);
    }

    /** Topology levels, tightest first, as the contract names them. */
    public static final List<String> TOPOLOGY_LEVELS = List.of("NVLINK", "NODE", "RACK", "SPINE", "CLUSTER");

    /** A topology constraint: {@code preferred} is never looser than {@code required}. */
    public record Topology(String required, String preferred) {
    }

    public JobSpec(String name, int priority, Long timeLimitSeconds, List<TaskSpec> tasks) {
        this(name, priority, timeLimitSeconds, tasks, null, null, null);
    }

    public JobSpec {
        tasks = List.copyOf(tasks);
        dependencies = dependencies == null ? List.of() : List.copyOf(dependencies);
    }

    /** GPUs the whole gang holds while it runs. */
    public int totalGpus() {
        return tasks.stream().mapToInt(t -> t.gpus() * t.replicas()).sum();
    }
}
