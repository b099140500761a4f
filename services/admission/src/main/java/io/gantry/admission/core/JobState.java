package io.gantry.admission.core;

/**
 * The state of a job as a tenant sees it. The non-terminal states are ordered by {@link #rank()}: within one
 * attempt a job only moves forward, so the highest (attempt, rank) seen is the current one, whatever order the
 * events arrived in. Terminal states end the job and win over everything else.
 */
public enum JobState {
    SUBMITTED(0),
    QUEUED(1),
    DISPATCHED(2),
    RUNNING(3),
    INTERRUPTED(4),
    SUCCEEDED(-1),
    FAILED(-1),
    CANCELLED(-1);

    private final int rank;

    JobState(int rank) {
        this.rank = rank;
    }

    /** Progress within an attempt; -1 for terminal states, which are not ranked against the others. */
    public int rank() {
        return rank;
    }

    public boolean isTerminal() {
        return rank < 0;
    }
}
