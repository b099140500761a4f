package io.gantry.placement.backend;

import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.PlacedTask;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What every execution backend promises placement, as one suite each backend's test class extends (the Flink
 * autoscaler's habit: one abstract contract test per port, run against every implementation). The subclass
 * provides the world the backend runs in and the means to play it: finishing a task with an exit code, losing a
 * node, counting what runs.
 *
 * <p>A backend that cannot do something (the simulated one has no exit codes; the local one has a single node that
 * cannot be lost) declares it in {@link #cannot()}: those cases are skipped with the reason, visibly.
 */
public abstract class ExecutionBackendContract<B extends ExecutionBackend> {

    /** What a backend may be unable to do, by its nature. */
    public enum Capability {
        /** Tasks end with an exit code of their own choosing (the simulated backend only ever succeeds). */
        EXIT_CODES,
        /** A node can be lost while a run is on it. */
        NODE_LOSS
    }

    private final List<B> opened = new ArrayList<>();

    /** A new backend on a fresh world (nodes ready, nothing running). */
    protected abstract B newBackend();

    /**
     * The backend after placement restarted: the same instance where runs live and die with the placement
     * process's backend object (simulated, local), a new one on the same world where they outlive it (kubernetes).
     */
    protected abstract B restarted(B before);

    /** At least one node id the backend serves; tasks are spread over the first two. */
    protected abstract List<String> nodeIds(B backend);

    /** The plan of a run, such that its tasks run until {@link #finish} ends them. */
    protected abstract RunPlan plan(Allocation allocation);

    /** The plan a restarted placement recovers for a live run (from its own topic; null when none). */
    protected RunPlan restoredPlan(Allocation allocation) {
        return null;
    }

    /** Makes one task end with {@code exitCode} (0: success). */
    protected abstract void finish(B backend, Allocation allocation, PlacedTask task, int exitCode);

    /** How many of the run's tasks are running (launched and not stopped) right now. */
    protected abstract int running(B backend, Allocation allocation);

    /** Makes the node fail (stop answering, NotReady, ...). Only called when {@link Capability#NODE_LOSS}. */
    protected void loseNode(B backend, String nodeId) {
        throw new UnsupportedOperationException();
    }

    /** What this backend cannot do. */
    protected Set<Capability> cannot() {
        return Set.of();
    }

    /** The time handed to the backend (a simulated backend's virtual clock may run ahead). */
    protected Instant now() {
        return Instant.now();
    }

    /** How long anything observable may take (real processes and watches are not instant). */
    protected Duration patience() {
        return Duration.ofSeconds(20);
    }

    /** Ends a backend after its test (default: close it). */
    protected void dispose(B backend) {
        backend.close();
    }

    @AfterEach
    void closeBackends() {
        opened.forEach(this::dispose);
        opened.clear();
    }

    private B open() {
        B b = newBackend();
        opened.add(b);
        return b;
    }

    /** Two replicas of one task, on the first two nodes (or twice on the only one), one GPU each. */
    protected Allocation gang(B backend, String job) {
        List<String> nodes = nodeIds(backend);
        List<PlacedTask> tasks = List.of(
                new PlacedTask("worker", 0, nodes.get(0), "H100", List.of(0), 1000, 256),
                new PlacedTask("worker", 1, nodes.get(Math.min(1, nodes.size() - 1)), "H100",
                        List.of(nodes.size() > 1 ? 0 : 1), 1000, 256));
        String id = UUID.nameUUIDFromBytes(("contract/" + job + "/" + System.nanoTime()).getBytes()).toString();
        return new Allocation(id, job, "contract", 1, tasks, now(), backend.name());
    }

    /**
     * A launcher and two workers (JobSet's leader/worker shape), the launcher on the first node, the workers on the
     * second (or all on the only one).
     */
    protected Allocation leaderAndWorkers(B backend, String job) {
        List<String> nodes = nodeIds(backend);
        String second = nodes.get(Math.min(1, nodes.size() - 1));
        List<PlacedTask> tasks = List.of(
                new PlacedTask("launcher", 0, nodes.get(0), null, List.of(), 1000, 256),
                new PlacedTask("worker", 0, second, "H100", List.of(0), 1000, 256),
                new PlacedTask("worker", 1, second, "H100", List.of(1), 1000, 256));
        String id = UUID.nameUUIDFromBytes(("contract/" + job + "/" + System.nanoTime()).getBytes()).toString();
        return new Allocation(id, job, "contract", 1, tasks, now(), backend.name());
    }

    /** What the backend reported so far; every wait polls, as placement's loop does on every tick. */
    private final List<RunOutcome> reported = new ArrayList<>();

    private void tick(B backend) {
        reported.addAll(backend.poll(now()));
    }

    /** Waits until {@code count} outcomes were reported in all, and hands them over. */
    private List<RunOutcome> awaitOutcomes(B backend, int count) {
        await().atMost(patience()).until(() -> {
            tick(backend);
            return reported.size() >= count;
        });
        List<RunOutcome> got = List.copyOf(reported);
        reported.clear();
        return got;
    }

    /** Nothing more is reported for a while (a moment of polling, not a sleep). */
    private void assertQuiet(B backend) {
        reported.clear();
        await().during(Duration.ofMillis(600)).atMost(Duration.ofSeconds(3)).until(() -> {
            tick(backend);
            return reported.isEmpty();
        });
        assertThat(reported).isEmpty();
    }

    private void awaitRunning(B backend, Allocation a, int n) {
        await().atMost(patience()).until(() -> {
            tick(backend);
            return running(backend, a) == n;
        });
    }

    @Test
    void aStartedGangRunsEveryTaskAndSucceedsOnceWhenAllTasksSucceed() {
        B b = open();
        Allocation a = gang(b, "succeeds");

        assertThat(b.start(a, plan(a), now())).isEmpty();
        awaitRunning(b, a, 2);
        a.placements().forEach(t -> finish(b, a, t, 0));
        List<RunOutcome> outcomes = awaitOutcomes(b, 1);

        assertThat(outcomes).singleElement().satisfies(o -> {
            assertThat(o.allocationId()).isEqualTo(a.allocationId());
            assertThat(o.result().succeeded()).isTrue();
        });
        b.stop(a.allocationId());
        awaitRunning(b, a, 0);
        assertQuiet(b);
    }

    @Test
    void aTaskExitingNonZeroFailsTheRunWithItsExitCodeAndStopLeavesNothingRunning() {
        assumeTrue(!cannot().contains(Capability.EXIT_CODES), "this backend's tasks have no exit codes");
        B b = open();
        Allocation a = gang(b, "fails");
        b.start(a, plan(a), now());
        awaitRunning(b, a, 2);

        finish(b, a, a.placements().get(1), 7);
        List<RunOutcome> outcomes = awaitOutcomes(b, 1);

        assertThat(outcomes).singleElement().satisfies(o -> {
            assertThat(o.result().succeeded()).isFalse();
            assertThat(o.result().exitCode()).isEqualTo(7);
        });
        b.stop(a.allocationId());
        awaitRunning(b, a, 0);
        assertQuiet(b);
    }

    @Test
    void cancellingWithGraceEndsEveryTaskAndNothingIsReportedAfterTheStop() {
        B b = open();
        Allocation a = gang(b, "cancelled");
        b.start(a, plan(a), now());
        awaitRunning(b, a, 2);

        b.terminate(a.allocationId());
        // asked to stop, the tasks may end by themselves (e.g. exit 143 on SIGTERM): at most one outcome, this run's
        tick(b);
        List<RunOutcome> early = List.copyOf(reported);
        b.stop(a.allocationId());
        reported.clear();
        awaitRunning(b, a, 0);

        assertThat(early).hasSizeLessThanOrEqualTo(1).allSatisfy(o -> assertThat(o.allocationId())
                .isEqualTo(a.allocationId()));
        assertThat(reported).as("reported after the stop").isEmpty();
        assertQuiet(b);
    }

    @Test
    void everyNodeHeartbeatsAndALostNodeStopsHeartbeating() {
        B b = open();
        assertThat(nodeIds(b)).isNotEmpty().allSatisfy(n -> assertThat(b.heartbeating(n)).as(n).isTrue());
        assertThat(b.nodes()).extracting(n -> n.nodeId()).containsAll(nodeIds(b));
        assertThat(b.nodes()).allSatisfy(n -> assertThat(n.backend()).isEqualTo(b.name()));
        assumeTrue(!cannot().contains(Capability.NODE_LOSS), "this backend's nodes cannot be lost");
        Allocation a = gang(b, "on-lost-node");
        b.start(a, plan(a), now());
        awaitRunning(b, a, 2);
        reported.clear();
        String lost = a.placements().get(0).nodeId();

        loseNode(b, lost);
        await().atMost(patience()).until(() -> !b.heartbeating(lost));

        // recovery declares the node failed and placement releases the run: nothing comes back afterwards
        b.stop(a.allocationId());
        awaitRunning(b, a, 0);
        assertQuiet(b);
    }

    @Test
    void aRestartInTheMiddleLaunchesNothingTwiceAndLeavesNoOrphan() {
        B b = open();
        Allocation live = gang(b, "live");
        Allocation orphan = gang(b, "orphan");
        b.start(live, plan(live), now());
        b.start(orphan, plan(orphan), now());
        awaitRunning(b, live, 2);
        awaitRunning(b, orphan, 2);

        assertThat(reported).isEmpty();
        B after = restarted(b);
        if (after != b) {
            opened.add(after);
        }
        List<RunOutcome> lost = after.adopt(List.of(new ExecutionBackend.LiveRun(live, restoredPlan(live))), now());

        assertThat(lost).as("a live run whose tasks still run is not lost").isEmpty();
        awaitRunning(after, orphan, 0);
        assertThat(running(after, live)).isEqualTo(2);
        assertThat(reported).as("nothing is reported for the live run while it runs, nor for the orphan").isEmpty();
        live.placements().forEach(t -> finish(after, live, t, 0));
        List<RunOutcome> outcomes = awaitOutcomes(after, 1);
        assertThat(outcomes).singleElement().satisfies(o -> {
            assertThat(o.allocationId()).isEqualTo(live.allocationId());
            assertThat(o.result().succeeded()).isTrue();
        });
        assertQuiet(after);
    }

    @Test
    void underASuccessPolicyTheRunSucceedsWhenTheLeaderSucceedsWhileItsWorkersStillRun() {
        B b = open();
        Allocation a = leaderAndWorkers(b, "leader-succeeds");
        b.start(a, plan(a).withSuccessLeader("launcher"), now());
        awaitRunning(b, a, 3);

        finish(b, a, a.placements().get(0), 0);
        List<RunOutcome> outcomes = awaitOutcomes(b, 1);

        assertThat(outcomes).singleElement().satisfies(o -> {
            assertThat(o.allocationId()).isEqualTo(a.allocationId());
            assertThat(o.result().succeeded()).as(o.toString()).isTrue();
        });
        // placement releases the run: whatever the backend did not stop by itself ends now
        b.stop(a.allocationId());
        awaitRunning(b, a, 0);
        assertQuiet(b);
    }

    @Test
    void underASuccessPolicyAWorkerFailingBeforeTheLeaderEndsFailsTheRun() {
        assumeTrue(!cannot().contains(Capability.EXIT_CODES), "this backend's tasks have no exit codes");
        B b = open();
        Allocation a = leaderAndWorkers(b, "worker-fails");
        b.start(a, plan(a).withSuccessLeader("launcher"), now());
        awaitRunning(b, a, 3);

        finish(b, a, a.placements().get(2), 5);
        List<RunOutcome> outcomes = awaitOutcomes(b, 1);

        assertThat(outcomes).singleElement().satisfies(o -> {
            assertThat(o.result().succeeded()).isFalse();
            assertThat(o.result().exitCode()).isEqualTo(5);
        });
        b.stop(a.allocationId());
        awaitRunning(b, a, 0);
        assertQuiet(b);
    }
}
