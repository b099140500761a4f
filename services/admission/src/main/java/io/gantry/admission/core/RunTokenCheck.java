package io.gantry.admission.core;

/**
 * Whether a run token presented for a job belongs to that job's current run: the one thing a run token proves. A
 * wrong token and an unknown job look alike, so a token reveals nothing about other jobs; a run may present its
 * token before its start has reached the read model (the grant travels through Kafka), and is then asked to retry.
 */
public final class RunTokenCheck {
    private RunTokenCheck() {
    }

    public enum Verdict {
        /** The token is the current run's, and the job has not ended. */
        CURRENT_RUN,
        /** The token is the current run's, but the job has ended: its runs say nothing more. */
        RUN_FINISHED,
        /** No job, another job's token, or an earlier run's, or the job ended: 403. */
        NOT_THIS_RUN,
        /** A newer run's token (by its claim) while the job lives: its start may not be here yet, retry (503). */
        NOT_KNOWN_YET
    }

    /**
     * @param jobExists       the job is in the read model
     * @param current         the token hashes to the current attempt's recorded token
     * @param ended           the job is in a terminal state
     * @param ofAnEarlierRun  the token hashes to an earlier attempt's token (asked only when not {@code current})
     * @param claimsNewerRun  the token says it is of this job and of an attempt after the one known here (a claim, not
     *                        proof: it only tells a run whose grant is late from a wrong token)
     */
    public static Verdict decide(boolean jobExists, boolean current, boolean ended, boolean ofAnEarlierRun,
                                 boolean claimsNewerRun) {
        if (!jobExists) {
            return Verdict.NOT_THIS_RUN;
        }
        if (current) {
            return ended ? Verdict.RUN_FINISHED : Verdict.CURRENT_RUN;
        }
        return ended || ofAnEarlierRun || !claimsNewerRun ? Verdict.NOT_THIS_RUN : Verdict.NOT_KNOWN_YET;
    }
}
