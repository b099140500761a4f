package io.gantry.queue.core;

import java.util.List;
import java.util.Objects;

/**
 * What a tenant asked to run. Constructing one validates it, so a malformed spec is rejected before the core
 * changes any state (the adapter then dead-letters the record).
 *
 * @param queue         the tenant queue asked for, or null for the default one
 * @param priorityClass the priority class asked for, or null for the default one
 * @param topology      the gang's topology constraint as placement reads it (the queue only carries it), or null
 * @param placementPolicy {@code binpack} or {@code spread} for placement (the queue only carries it), or null
 * @param checkpoint    where and how often the job saves its state (the queue only carries it), or null
 */
public record JobSpec(String name, int priority, Long timeLimitSeconds, List<TaskGroup> tasks, String queue,
                      String priorityClass, Topology topology, String placementPolicy, Checkpoint checkpoint) {

    public JobSpec(String name, int priority, Long timeLimitSeconds, List<TaskGroup> tasks, String queue,
                   String priorityClass, Topology topology, String placementPolicy) {
        this(name, priority, timeLimitSeconds, tasks, queue, priorityClass, topology, placementPolicy, null);
    }

    public JobSpec(String name, int priority, Long timeLimitSeconds, List<TaskGroup> tasks, String queue,
                   String priorityClass, Topology topology) {
        this(name, priority, timeLimitSeconds, tasks, queue, priorityClass, topology, null);
    }

    /** The job's checkpoint directory and expected interval (seconds, or null), carried through to placement. */
    public record Checkpoint(String dir, Long intervalSeconds) {
        public Checkpoint {
            Objects.requireNonNull(dir, "spec.checkpoint.dir");
        }
    }

    /** A gang's topology constraint, carried through to placement: level names such as {@code RACK}. */
    public record Topology(String required, String preferred) {
        public Topology {
            Objects.requireNonNull(required, "spec.topology.required");
            Objects.requireNonNull(preferred, "spec.topology.preferred");
        }
    }

    public JobSpec(String name, int priority, Long timeLimitSeconds, List<TaskGroup> tasks) {
        this(name, priority, timeLimitSeconds, tasks, null, null, null);
    }

    public JobSpec {
        Objects.requireNonNull(name, "spec.name");
        tasks = List.copyOf(Objects.requireNonNull(tasks, "spec.tasks"));
        if (tasks.isEmpty()) {
            throw new IllegalArgumentException("spec.tasks must not be empty");
        }
        if (timeLimitSeconds != null && timeLimitSeconds <= 0) {
            throw new IllegalArgumentException("spec.timeLimitSeconds must be > 0, was " + timeLimitSeconds);
        }
        gangGpus(tasks);
    }

    /**
     * GPUs of the whole gang: the sum over groups of replicas x GPUs per task (a part of a GPU counts as one, see
     * {@link TaskGroup#quotaGpus}), the amount charged to the quota.
     */
    public int gangGpus() {
        return gangGpus(tasks);
    }

    private static int gangGpus(List<TaskGroup> tasks) {
        try {
            int total = 0;
            for (TaskGroup t : tasks) {
                total = Math.addExact(total, Math.multiplyExact(t.replicas(), t.quotaGpus()));
            }
            return total;
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("spec.tasks: total GPUs overflow an int", e);
        }
    }
}
