package io.gantry.queue.core;

import java.util.Objects;

/**
 * A job another job waits for, and when it counts as met (Slurm's {@code --dependency=afterok:...}). A dependency's
 * verdict follows only from how the job it names ended, so once met or never met it stays so.
 */
public record Dependency(String jobId, Condition condition) {

    public Dependency {
        if (jobId == null || jobId.isBlank()) {
            throw new IllegalArgumentException("spec.dependencies: jobId must not be blank");
        }
        Objects.requireNonNull(condition, "spec.dependencies: condition");
    }

    /** When a dependency is met; mirrors the wire enum {@code DependencyCondition}. */
    public enum Condition {
        /** The job succeeded. */
        AFTER_OK("succeed"),
        /** The job ended, in any way. */
        AFTER_ANY("end"),
        /** The job failed or was cancelled. */
        AFTER_NOT_OK("fail or be cancelled");

        private final String verb;

        Condition(String verb) {
            this.verb = verb;
        }

        /** Whether a job that ended in {@code end} meets this condition. */
        boolean metBy(JobState end) {
            return switch (this) {
                case AFTER_OK -> end == JobState.SUCCEEDED;
                case AFTER_ANY -> true;
                case AFTER_NOT_OK -> end == JobState.FAILED || end == JobState.CANCELLED;
            };
        }

        /** What the job waited for must do, for a sentence: "waits for j1 to succeed". */
        String verb() {
            return verb;
        }
    }

    /** Met, not yet decided, or never to be met, given the state of the job named ({@code null}: not known yet). */
    Verdict verdict(JobState state) {
        if (state == null || !state.terminal()) {
            return Verdict.PENDING;
        }
        return condition.metBy(state) ? Verdict.MET : Verdict.NEVER;
    }

    enum Verdict { MET, PENDING, NEVER }
}
