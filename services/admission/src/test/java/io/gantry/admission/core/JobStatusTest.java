package io.gantry.admission.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

class JobStatusTest {

    static Stream<Arguments> derivations() {
        return Stream.of(
                derive("a job nobody has picked up yet is SUBMITTED", f -> List.of(f.submitted()),
                        JobState.SUBMITTED, 0),
                derive("a queued job is QUEUED in attempt 1", f -> List.of(f.submitted(), f.queued(1)),
                        JobState.QUEUED, 1),
                derive("a queue event arriving before the submission still shows QUEUED",
                        f -> reversed(List.of(f.submitted(), f.queued(1))), JobState.QUEUED, 1),
                derive("a dispatched job is DISPATCHED", f -> List.of(f.queued(1), f.dispatched(1)),
                        JobState.DISPATCHED, 1),
                derive("a deferred job is parked back in its queue: QUEUED, waiting for capacity",
                        f -> List.of(f.queued(1), f.dispatched(1), f.deferred(1, "INSUFFICIENT_FREE_GPUS")), JobState.QUEUED, 1),
                derive("a run start seen before its dispatch is RUNNING",
                        f -> reversed(List.of(f.queued(1), f.dispatched(1), f.granted(1, "n1", 0), f.runStarted(1))),
                        JobState.RUNNING, 1),
                derive("a node failure interrupts the running attempt",
                        f -> List.of(f.queued(1), f.dispatched(1), f.runStarted(1), f.released(1, "NODE_FAILED")),
                        JobState.INTERRUPTED, 1),
                derive("a release for a finished run does not interrupt it",
                        f -> List.of(f.dispatched(1), f.runStarted(1), f.runSucceeded(1), f.released(1, "RUN_SUCCEEDED")),
                        JobState.RUNNING, 1),
                derive("a requeue starts the next attempt as QUEUED",
                        f -> List.of(f.runStarted(1), f.released(1, "NODE_FAILED"), f.requeued(1)),
                        JobState.QUEUED, 2),
                derive("a late interruption of the old attempt does not undo the new one",
                        f -> List.of(f.requeued(1), f.queued(2), f.dispatched(2), f.runStarted(2),
                                f.released(1, "NODE_FAILED")),
                        JobState.RUNNING, 2),
                derive("abandoned recovery leaves the job INTERRUPTED until the queue fails it",
                        f -> List.of(f.runStarted(3), f.released(3, "NODE_FAILED"), f.abandoned(3)),
                        JobState.INTERRUPTED, 3),
                derive("success is final", f -> List.of(f.runStarted(1), f.succeeded(1)), JobState.SUCCEEDED, 1),
                derive("success stays final when a run start of the same attempt arrives after it",
                        f -> reversed(List.of(f.runStarted(1), f.succeeded(1))), JobState.SUCCEEDED, 1),
                derive("failure is final even against a later attempt's progress",
                        f -> List.of(f.failed(1), f.queued(2)), JobState.FAILED, 2),
                derive("a cancel request alone does not change the state",
                        f -> List.of(f.queued(1), f.cancelRequested()), JobState.QUEUED, 1),
                derive("the queue's cancellation is final", f -> List.of(f.queued(1), f.cancelRequested(),
                        f.cancelled(1)), JobState.CANCELLED, 1),
                derive("a job cancelled before it was dispatched reports attempt 0 from the queue",
                        f -> List.of(f.submitted(), f.cancelled(0)), JobState.CANCELLED, 0));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("derivations")
    void derivesTheStateAUserSees(String description, List<AdmissionFact> facts, JobState state, int attempt) {
        JobStatus status = Facts.fold(facts);

        assertThat(status.state()).isEqualTo(state);
        assertThat(status.attempt()).isEqualTo(attempt);
    }

    @Test
    void aWaitingJobShowsWhyUntilItIsDispatched() {
        Facts f = new Facts();
        AdmissionFact said = f.waiting(1, "QUOTA", "tenant vision uses 16 of 16 GPUs").withCause("OWN_QUOTA");
        JobStatus waiting = Facts.fold(List.of(f.queued(1), said));

        assertThat(waiting.waitReason()).isEqualTo("QUOTA");
        assertThat(waiting.waitMessage()).isEqualTo("tenant vision uses 16 of 16 GPUs");
        assertThat(waiting.waitCause()).isEqualTo("OWN_QUOTA");
        assertThat(waiting.waitSince()).as("its figures are as of then").isEqualTo(said.occurredAt());

        JobStatus dispatched = waiting.apply(f.dispatched(1));
        assertThat(dispatched.waitReason()).isNull();
        assertThat(dispatched.waitMessage()).isNull();
        assertThat(dispatched.waitCause()).isNull();
        assertThat(dispatched.waitSince()).isNull();
    }

    @Test
    void aDeferredPlacementShowsAsACapacityWaitEvenBeforeTheQueueParksTheJob() {
        Facts f = new Facts();
        JobStatus status = Facts.fold(List.of(f.queued(1), f.dispatched(1), f.deferred(1, "INSUFFICIENT_FREE_GPUS")));

        assertThat(status.waitReason()).isEqualTo("CAPACITY");
        assertThat(status.waitMessage()).contains("INSUFFICIENT_FREE_GPUS").contains("needs 16 GPUs");
        assertThat(status.waitCause()).isEqualTo("INSUFFICIENT_FREE_GPUS");
    }

    @Test
    void aDeferralInTheSameMillisecondAsItsDispatchStillShows() {
        Facts f = new Facts();
        AdmissionFact dispatched = f.dispatched(1);
        AdmissionFact deferred = new AdmissionFact("a-small-id", dispatched.occurredAt(), AdmissionFact.Kind.PLACEMENT_DEFERRED, 1,
                "INSUFFICIENT_FREE_GPUS", "no room", List.of());

        assertThat(Facts.fold(List.of(deferred, dispatched)).waitReason()).isEqualTo("CAPACITY");
        assertThat(Facts.fold(List.of(dispatched, deferred)).waitReason()).isEqualTo("CAPACITY");
    }

    @Test
    void aRedispatchAfterADeferralClearsTheWait() {
        Facts f = new Facts();
        JobStatus status = Facts.fold(List.of(f.dispatched(1), f.deferred(1, "INSUFFICIENT_FREE_GPUS"),
                f.waiting(1, "CAPACITY", "parked"), f.dispatched(1)));

        assertThat(status.waitReason()).isNull();
    }

    @Test
    void aRunningJobShowsNoWaitEvenIfAStaleWaitArrivesLate() {
        Facts f = new Facts();
        AdmissionFact wait = f.waiting(1, "QUOTA", "over quota");
        JobStatus status = Facts.fold(List.of(f.dispatched(1), f.runStarted(1), wait));

        assertThat(status.state()).isEqualTo(JobState.RUNNING);
        assertThat(status.waitReason()).isNull();
    }

    @Test
    void aRunBeingPreemptedShowsItsNoticeUntilItEndsOrTheJobIsQueuedAgain() {
        Facts f = new Facts();
        AdmissionFact stop = f.stopRequested(1, "queue vision reclaims 8 x H100", 30);
        JobStatus running = Facts.fold(List.of(f.dispatched(1), f.granted(1, "n1", 0), f.runStarted(1)));
        assertThat(running.preemption()).isNull();

        JobStatus noticed = running.apply(stop);
        assertThat(noticed.state()).isEqualTo(JobState.RUNNING);
        assertThat(noticed.preemption()).satisfies(n -> {
            assertThat(n.attempt()).isEqualTo(1);
            assertThat(n.reason()).isEqualTo("PREEMPTED");
            assertThat(n.message()).isEqualTo("queue vision reclaims 8 x H100");
            assertThat(n.deadline()).isEqualTo(stop.occurredAt().plusSeconds(30));
        });
        assertThat(Facts.fold(List.of(stop, f.runStarted(1))).preemption()).as("in any order").isNotNull();

        assertThat(noticed.apply(f.queued(2)).preemption()).as("requeued: the next attempt has no notice").isNull();
        assertThat(noticed.apply(f.cancelled(1)).preemption()).as("ended").isNull();
        assertThat(Facts.fold(List.of(f.queued(2), f.dispatched(2), f.runStarted(2), stop)).preemption())
                .as("an earlier attempt's notice, arriving late").isNull();
    }

    @Test
    void thePoolIsTheCurrentAttemptsGrants() {
        Facts f = new Facts();
        JobStatus first = Facts.fold(List.of(f.dispatched(1), f.granted(1, "node-a", 0).withReason("k8s")));
        assertThat(first.pool()).isEqualTo("k8s");
        assertThat(first.apply(f.runStarted(1)).apply(f.released(1, "NODE_FAILED")).apply(f.requeued(1)).pool())
                .as("the next attempt has no grant yet").isNull();
    }

    @Test
    void aRunWarnedForIdlingShowsTheWarningUntilItIsClearedEndsOrTheJobRunsAgain() {
        Facts f = new Facts();
        AdmissionFact warned = f.idleWarned(1, "GPUs idle for 15 min; the run is stopped at 2030-01-01T00:30:00Z"
                + " (idle timeout 30 min of queue vision) unless they become busy");
        JobStatus running = Facts.fold(List.of(f.dispatched(1), f.granted(1, "n1", 0), f.runStarted(1)));
        assertThat(running.idleWarning()).isNull();

        JobStatus shown = running.apply(warned);
        assertThat(shown.state()).isEqualTo(JobState.RUNNING);
        assertThat(shown.idleWarning()).satisfies(w -> {
            assertThat(w.attempt()).isEqualTo(1);
            assertThat(w.reason()).isEqualTo("IDLE");
            assertThat(w.message()).startsWith("GPUs idle for 15 min; the run is stopped at");
        });
        assertThat(Facts.fold(List.of(warned, f.runStarted(1), f.dispatched(1))).idleWarning()).as("in any order")
                .isNotNull();

        AdmissionFact cleared = f.idleCleared(1);
        assertThat(shown.apply(cleared).idleWarning()).as("busy again").isNull();
        assertThat(Facts.fold(List.of(cleared, f.runStarted(1), warned)).idleWarning()).as("the later one stands")
                .isNull();
        assertThat(shown.apply(f.idleWarned(1, "GPUs idle for 15 min again")).idleWarning().message())
                .as("a new stretch warned again").isEqualTo("GPUs idle for 15 min again");
        assertThat(shown.apply(f.failed(1)).idleWarning()).as("ended").isNull();
        assertThat(shown.apply(f.queued(2)).idleWarning()).as("another run").isNull();
    }

    @Test
    void placementsAreThoseOfTheLatestGrantOfTheCurrentAttempt() {
        Facts f = new Facts();
        JobStatus first = Facts.fold(List.of(f.dispatched(1), f.granted(1, "node-a", 0, 1), f.runStarted(1)));
        assertThat(first.placements()).extracting(Placement::nodeId).containsExactly("node-a");

        JobStatus requeued = first.apply(f.released(1, "NODE_FAILED")).apply(f.requeued(1));
        assertThat(requeued.placements()).as("a new attempt has no placement yet").isEmpty();

        JobStatus second = requeued.apply(f.dispatched(2)).apply(f.granted(2, "node-b", 2, 3));
        assertThat(second.placements()).singleElement().satisfies(p -> {
            assertThat(p.nodeId()).isEqualTo("node-b");
            assertThat(p.gpuIndices()).containsExactly(2, 3);
        });
    }

    @Test
    void updatedAtIsTheLatestEventTime() {
        Facts f = new Facts();
        AdmissionFact early = f.queued(1);
        AdmissionFact late = f.dispatched(1);

        assertThat(Facts.fold(List.of(late, early)).updatedAt()).isEqualTo(late.occurredAt());
    }

    private static Arguments derive(String description, Function<Facts, List<AdmissionFact>> facts, JobState state,
                                    int attempt) {
        return arguments(description, facts.apply(new Facts()), state, attempt);
    }

    private static List<AdmissionFact> reversed(List<AdmissionFact> facts) {
        List<AdmissionFact> copy = new ArrayList<>(facts);
        java.util.Collections.reverse(copy);
        return copy;
    }
}
