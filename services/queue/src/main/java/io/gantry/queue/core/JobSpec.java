package io.gantry.queue.core;

import java.util.List;
import java.util.Objects;

/**
 * What the queue decides on of what a tenant asked to run: its tasks' shapes (for quota and flavour), priority,
 * queue and priority class, time limit. Everything else of the spec (commands, run times, topology, checkpoint
 * policy, placement policy) is placement's and the tasks' business: the queue's adapter forwards the spec as it was
 * submitted, with the flavour the queue chose. Constructing one validates it, so a malformed spec is rejected before
 * the core changes any state (the adapter then dead-letters the record).
 *
 * @param queue         the tenant queue asked for, or null for the default one
 * @param priorityClass the priority class asked for, or null for the default one
 * @param retry         the job's retry policy for its own failures, or null: a failed run fails the job
 * @param dependencies  jobs this one waits for (all must be met before it is offered to placement); empty: none
 * @param suspend       whether it was submitted suspended (it waits until resumed)
 * @param pool          the placement pool it asked for, or null: its flavour's pool (the configuration's map)
 * @param interactive   whether a queue with an idle timeout may stop its runs when their GPUs stay idle (false: batch
 *                      work, never stopped for idling)
 */
public record JobSpec(String name, int priority, Long timeLimitSeconds, List<TaskGroup> tasks, String queue,
                      String priorityClass, RetryPolicy retry, List<Dependency> dependencies, boolean suspend,
                      String pool, boolean interactive) {

    public JobSpec(String name, int priority, Long timeLimitSeconds, List<TaskGroup> tasks, String queue,
                   String priorityClass, RetryPolicy retry, List<Dependency> dependencies, boolean suspend) {
        this(name, priority, timeLimitSeconds, tasks, queue, priorityClass, retry, dependencies, suspend, null, true);
    }

    public JobSpec(String name, int priority, Long timeLimitSeconds, List<TaskGroup> tasks, String queue,
                   String priorityClass, RetryPolicy retry) {
        this(name, priority, timeLimitSeconds, tasks, queue, priorityClass, retry, List.of(), false);
    }

    public JobSpec(String name, int priority, Long timeLimitSeconds, List<TaskGroup> tasks) {
        this(name, priority, timeLimitSeconds, tasks, null, null);
    }

    public JobSpec(String name, int priority, Long timeLimitSeconds, List<TaskGroup> tasks, String queue,
                   String priorityClass) {
        this(name, priority, timeLimitSeconds, tasks, queue, priorityClass, null);
    }

    public JobSpec {
        Objects.requireNonNull(name, "spec.name");
        tasks = List.copyOf(Objects.requireNonNull(tasks, "spec.tasks"));
        dependencies = dependencies == null ? List.of() : List.copyOf(dependencies);
        if (tasks.isEmpty()) {
            throw new IllegalArgumentException("spec.tasks must not be empty");
        }
        if (timeLimitSeconds != null && timeLimitSeconds <= 0) {
            throw new IllegalArgumentException("spec.timeLimitSeconds must be > 0, was " + timeLimitSeconds);
        }
        gangMilli(tasks);
    }

    /** The same spec with other tasks (the queue pins a flavour onto them). */
    JobSpec withTasks(List<TaskGroup> newTasks) {
        return new JobSpec(name, priority, timeLimitSeconds, newTasks, queue, priorityClass, retry, dependencies,
                suspend, pool, interactive);
    }

    /**
     * What the whole gang is charged to the quota, in thousandths of a GPU: the sum over groups of replicas x
     * {@link TaskGroup#quotaMilli}.
     */
    public long gangMilli() {
        return gangMilli(tasks);
    }

    private static long gangMilli(List<TaskGroup> tasks) {
        try {
            long total = 0;
            for (TaskGroup t : tasks) {
                total = Math.addExact(total, Math.multiplyExact((long) t.replicas(), t.quotaMilli()));
            }
            return total;
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("spec.tasks: total GPUs overflow", e);
        }
    }
}
