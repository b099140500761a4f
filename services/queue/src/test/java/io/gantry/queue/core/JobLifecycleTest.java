package io.gantry.queue.core;

import io.gantry.queue.core.QueueFact.JobCancelled;
import io.gantry.queue.core.QueueFact.JobDispatched;
import io.gantry.queue.core.QueueFact.JobFailed;
import io.gantry.queue.core.QueueFact.JobQueued;
import io.gantry.queue.core.QueueFact.JobSucceeded;
import io.gantry.queue.core.QueueFact.JobWaiting;
import io.gantry.queue.core.QueueFact.QuotaReleased;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What the queue writes as a job goes through its life, including the awkward orders of events. */
class JobLifecycleTest {

    record Case(String name, Consumer<QueueDriver> scenario, Consumer<QueueDriver> then) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static final String DEFERRAL = "needs 8 GPUs on one node, largest free block is 4";

    static Stream<Case> lifecycle() {
        return Stream.of(
                new Case("a submitted job is queued as attempt 1 with its gang's GPUs and submit time",
                        q -> q.submit(aJob("j1").gang(2, 4).submittedAt(7)),
                        q -> assertThat(q.all(JobQueued.class, "j1")).containsExactly(new JobQueued("j1", "a", 1,
                                aJob("j1").gang(2, 4).spec(), JobBuilder.EPOCH.plusSeconds(7), 8_000))),
                new Case("a queued job that fits is dispatched at once with its spec",
                        q -> q.submit(aJob("j1").gpus(8)),
                        q -> assertThat(q.all(JobDispatched.class, "j1"))
                                .containsExactly(new JobDispatched("j1", "a", 1, aJob("j1").gpus(8).spec(), 8_000, null, FairShareConfig.ANY_GPU))),
                new Case("a duplicate submission is ignored, even after the job finished",
                        q -> q.submit(aJob("j1").gpus(8)).submit(aJob("j1").gpus(8))
                                .succeeded("j1", 1).released("j1", 1, ReleaseCause.RUN_SUCCEEDED).submit(aJob("j1").gpus(8)),
                        q -> {
                            assertThat(q.all(JobQueued.class, "j1")).hasSize(1);
                            assertThat(q.dispatchCount("j1")).isEqualTo(1);
                        }),
                new Case("the head blocked by quota says how much is reserved and how much it needs",
                        q -> q.submit(aJob("a1").gpus(30), aJob("a2").gpus(8)),
                        q -> assertThat(q.all(JobWaiting.class, "a2")).containsExactly(new JobWaiting("a2", "a", 1,
                                WaitReason.QUOTA, "waiting for quota: tenant a has 30 of 32 GPUs reserved, job needs 8",
                                QuotaWait.OWN_QUOTA, null))),
                new Case("the same wait reason is written once, not on every cycle",
                        q -> q.submit(aJob("a1").gpus(30), aJob("a2").gpus(8))
                                .submit(aJob("b1").tenant("b")).granted("a1", 1).capacityChanged(),
                        q -> assertThat(q.all(JobWaiting.class, "a2")).hasSize(1)),
                new Case("a job larger than the quota is told it never fits",
                        q -> q.submit(aJob("big").gang(5, 8)),
                        q -> assertThat(q.all(JobWaiting.class, "big")).containsExactly(new JobWaiting("big", "a", 1,
                                WaitReason.NEVER_FITS, "never fits: job needs 40 GPUs, tenant a's quota is 32"))),
                new Case("a deferral gives the quota back and parks the job with placement's message",
                        q -> q.submit(aJob("j1").gpus(8)).deferred("j1", 1),
                        q -> {
                            assertThat(q.last).containsExactly(new QuotaReleased("j1", "a", 1, 8_000, "deferred"),
                                    new JobWaiting("j1", "a", 1, WaitReason.CAPACITY, DEFERRAL, null,
                                            DeferralCause.INSUFFICIENT_FREE_GPUS));
                            assertThat(q.core.queue("a", q.now(), false).parked()).isEqualTo(1);
                            assertThat(q.core.reservedMilli("a")).isZero();
                        }),
                new Case("a parked job is not dispatched again by inputs that do not change capacity",
                        q -> q.submit(aJob("j1").gpus(8)).deferred("j1", 1).submit(aJob("b1").tenant("b"))
                                .granted("b1", 1).succeeded("b1", 1).deferred("j1", 1),
                        q -> assertThat(q.dispatchCount("j1")).isEqualTo(1)),
                new Case("each capacity change redispatches a parked job exactly once",
                        q -> q.submit(aJob("j1").gpus(8)).deferred("j1", 1)
                                .capacityChanged().deferred("j1", 1)
                                .released("other", 1, ReleaseCause.RUN_SUCCEEDED).deferred("j1", 1)
                                .submit(aJob("j2").tenant("b")),
                        q -> {
                            assertThat(q.dispatchCount("j1")).isEqualTo(3);
                            assertThat(q.all(JobDispatched.class, "j1")).extracting(JobDispatched::attempt)
                                    .containsOnly(1);
                        }),
                new Case("an unparked job that finds the quota full waits for quota, and stays unparked after a restart",
                        q -> q.submit(aJob("a1").gpus(16).submittedAt(1), aJob("a2").gpus(16).submittedAt(2))
                                .deferred("a2", 1)
                                .submit(aJob("a3").gpus(16).submittedAt(3))
                                .capacityChanged(),
                        q -> {
                            assertThat(q.last).containsExactly(new JobWaiting("a2", "a", 1, WaitReason.QUOTA,
                                    "waiting for quota: tenant a has 32 of 32 GPUs reserved, job needs 16",
                                    QuotaWait.OWN_QUOTA, null));
                            QueueCore restarted = q.rebuilt();
                            assertThat(restarted.pending("a")).singleElement()
                                    .satisfies(p -> assertThat(p.parked()).isFalse());
                            List<QueueFact> next = restarted.apply(new Input.Released("a1", "a", 1, ReleaseCause.RUN_SUCCEEDED),
                                    JobBuilder.EPOCH);
                            assertThat(next).contains(new JobDispatched("a2", "a", 1, aJob("a2").gpus(16).spec(), 16_000, null, FairShareConfig.ANY_GPU));
                        }),
                new Case("a successful run ends the job and frees the quota when the allocation is released",
                        q -> q.submit(aJob("a1").gpus(32).submittedAt(1), aJob("a2").gpus(32).submittedAt(2))
                                .granted("a1", 1).succeeded("a1", 1).released("a1", 1, ReleaseCause.RUN_SUCCEEDED),
                        q -> {
                            assertThat(q.all(JobSucceeded.class, "a1")).containsExactly(new JobSucceeded("a1", "a", 1));
                            assertThat(q.last).containsExactly(new QuotaReleased("a1", "a", 1, 32_000, "RUN_SUCCEEDED"),
                                    new JobDispatched("a2", "a", 1, aJob("a2").gpus(32).spec(), 32_000, null, FairShareConfig.ANY_GPU));
                            assertThat(q.core.status("a1")).isEqualTo(JobState.SUCCEEDED);
                        }),
                new Case("a failed run fails the job with the backend's message",
                        q -> q.submit(aJob("a1")).granted("a1", 1).failed("a1", 1, "task worker/1 exited with 3"),
                        q -> assertThat(q.last).containsExactly(
                                new JobFailed("a1", "a", 1, "task worker/1 exited with 3"))),
                new Case("a node failure interrupts the job and a requeue runs it again as attempt 2 with its original submit time",
                        q -> q.submit(aJob("a1").gpus(8).submittedAt(4)).granted("a1", 1)
                                .released("a1", 1, ReleaseCause.NODE_FAILED).requeued("a1", 1),
                        q -> {
                            assertThat(q.all(QuotaReleased.class, "a1"))
                                    .containsExactly(new QuotaReleased("a1", "a", 1, 8_000, ReleaseCause.NODE_FAILED.name()));
                            assertThat(q.all(JobQueued.class, "a1")).extracting(JobQueued::attempt, JobQueued::submittedAt)
                                    .containsExactly(org.assertj.core.groups.Tuple.tuple(1, JobBuilder.EPOCH.plusSeconds(4)),
                                            org.assertj.core.groups.Tuple.tuple(2, JobBuilder.EPOCH.plusSeconds(4)));
                            assertThat(q.all(JobDispatched.class, "a1")).extracting(JobDispatched::attempt)
                                    .containsExactly(1, 2);
                        }),
                new Case("a run stopped by a device's hardware fault waits for recovery like a node failure, and its "
                                + "requeue runs it again",
                        q -> q.submit(aJob("a1").gpus(8)).granted("a1", 1).released("a1", 1, ReleaseCause.DEVICE_FAULT)
                                .capacityChanged(),
                        q -> {
                            assertThat(q.core.status("a1")).isEqualTo(JobState.INTERRUPTED);
                            assertThat(q.dispatchCount("a1")).isEqualTo(1);
                            q.requeued("a1", 1);
                            assertThat(q.all(JobDispatched.class, "a1")).extracting(JobDispatched::attempt)
                                    .containsExactly(1, 2);
                        }),
                new Case("an interrupted job waits for recovery and is not dispatched on its own",
                        q -> q.submit(aJob("a1")).released("a1", 1, ReleaseCause.NODE_FAILED).capacityChanged(),
                        q -> {
                            assertThat(q.core.status("a1")).isEqualTo(JobState.INTERRUPTED);
                            assertThat(q.dispatchCount("a1")).isEqualTo(1);
                        }),
                new Case("abandoned recovery fails the job",
                        q -> q.submit(aJob("a1")).released("a1", 1, ReleaseCause.NODE_FAILED).abandoned("a1", 1),
                        q -> assertThat(q.last).containsExactly(new JobFailed("a1", "a", 1, "restart limit 3 reached", FailureReason.RECOVERY_ABANDONED))),
                new Case("a requeue that arrives before the allocation is released keeps the old attempt's GPUs reserved until then",
                        q -> q.submit(aJob("a1").gpus(32)).granted("a1", 1).requeued("a1", 1),
                        q -> {
                            assertThat(q.dispatchCount("a1")).isEqualTo(1);
                            assertThat(q.core.reservedMilli("a")).isEqualTo(32_000);
                            q.released("a1", 1, ReleaseCause.NODE_FAILED);
                            assertThat(q.last).containsExactly(new QuotaReleased("a1", "a", 1, 32_000, "NODE_FAILED"),
                                    new JobDispatched("a1", "a", 2, aJob("a1").gpus(32).spec(), 32_000, null, FairShareConfig.ANY_GPU));
                        }),
                new Case("events about an attempt that is no longer current are ignored",
                        q -> q.submit(aJob("a1")).released("a1", 1, ReleaseCause.NODE_FAILED).requeued("a1", 1)
                                .succeeded("a1", 1).failed("a1", 1, "late").deferred("a1", 1).requeued("a1", 1)
                                .abandoned("a1", 1).released("a1", 1, ReleaseCause.RUN_FAILED),
                        q -> {
                            assertThat(q.core.status("a1")).isEqualTo(JobState.DISPATCHED);
                            assertThat(q.all(JobQueued.class, "a1")).hasSize(2);
                            assertThat(q.all(QuotaReleased.class, "a1")).hasSize(1);
                            assertThat(q.core.reservedMilli("a")).isEqualTo(1_000);
                        }),
                new Case("a repeated release frees the quota once",
                        q -> q.submit(aJob("a1").gpus(8)).succeeded("a1", 1)
                                .released("a1", 1, ReleaseCause.RUN_SUCCEEDED).released("a1", 1, ReleaseCause.RUN_SUCCEEDED),
                        q -> assertThat(q.all(QuotaReleased.class, "a1")).hasSize(1)),
                new Case("events about unknown jobs are ignored",
                        q -> q.succeeded("ghost", 1).deferred("ghost", 1).requeued("ghost", 1).cancel("ghost"),
                        q -> assertThat(q.facts).isEmpty()));
    }

    static Stream<Case> cancellation() {
        return Stream.of(
                new Case("cancelling a queued job that never ran reports attempt 0",
                        q -> q.submit(aJob("a1").gpus(32), aJob("a2").gpus(8)).cancel("a2"),
                        q -> {
                            assertThat(q.last).containsExactly(new JobCancelled("a2", "a", 0, "a-user"));
                            assertThat(q.core.pending("a")).isEmpty();
                        }),
                new Case("cancelling a parked job reports the attempt placement deferred",
                        q -> q.submit(aJob("a1")).deferred("a1", 1).cancel("a1").capacityChanged(),
                        q -> {
                            assertThat(q.all(JobCancelled.class, "a1")).containsExactly(new JobCancelled("a1", "a", 1, "a-user"));
                            assertThat(q.dispatchCount("a1")).isEqualTo(1);
                        }),
                new Case("cancelling a dispatched job ends it at once but keeps its GPUs reserved until released",
                        q -> q.submit(aJob("a1").gpus(32).submittedAt(1), aJob("a2").gpus(8).submittedAt(2))
                                .granted("a1", 1).cancel("a1"),
                        q -> {
                            assertThat(q.last).containsExactly(new JobCancelled("a1", "a", 1, "a-user"));
                            assertThat(q.core.status("a1")).isEqualTo(JobState.CANCELLED);
                            assertThat(q.dispatchCount("a2")).isZero();
                            q.released("a1", 1, ReleaseCause.CANCELLED);
                            assertThat(q.last).containsExactly(new QuotaReleased("a1", "a", 1, 32_000, "CANCELLED"),
                                    new JobDispatched("a2", "a", 1, aJob("a2").gpus(8).spec(), 8_000, null, FairShareConfig.ANY_GPU));
                        }),
                new Case("a cancelled job that placement then defers gives its quota back and is not parked",
                        q -> q.submit(aJob("a1").gpus(8)).cancel("a1").deferred("a1", 1).capacityChanged(),
                        q -> {
                            assertThat(q.all(QuotaReleased.class, "a1"))
                                    .containsExactly(new QuotaReleased("a1", "a", 1, 8_000, "deferred"));
                            assertThat(q.all(JobWaiting.class, "a1")).isEmpty();
                            assertThat(q.core.reservedMilli("a")).isZero();
                            assertThat(q.dispatchCount("a1")).isEqualTo(1);
                        }),
                new Case("cancelling an interrupted job stops a later requeue",
                        q -> q.submit(aJob("a1")).released("a1", 1, ReleaseCause.NODE_FAILED).cancel("a1").requeued("a1", 1),
                        q -> {
                            assertThat(q.all(JobCancelled.class, "a1")).containsExactly(new JobCancelled("a1", "a", 1, "a-user"));
                            assertThat(q.all(JobQueued.class, "a1")).hasSize(1);
                        }),
                new Case("cancelling a requeued job before its new attempt runs reports the attempt that ran",
                        q -> q.submit(aJob("a1").gpus(32), aJob("a0").gpus(32).submittedAt(-1))
                                .released("a1", 1, ReleaseCause.NODE_FAILED).requeued("a1", 1).cancel("a1"),
                        q -> assertThat(q.all(JobCancelled.class, "a1"))
                                .containsExactly(new JobCancelled("a1", "a", 1, "a-user"))),
                new Case("cancelling a finished job changes nothing",
                        q -> q.submit(aJob("a1")).succeeded("a1", 1).cancel("a1").cancel("a1"),
                        q -> {
                            assertThat(q.last).isEmpty();
                            assertThat(q.core.status("a1")).isEqualTo(JobState.SUCCEEDED);
                        }));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("lifecycle")
    void lifecycle(Case c) {
        run(c);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cancellation")
    void cancellation(Case c) {
        run(c);
    }

    private static void run(Case c) {
        QueueDriver q = QueueDriver.withQuota(32);
        c.scenario().accept(q);
        c.then().accept(q);
        assertThat(q.rebuilt().state()).as("state rebuilt from the facts").isEqualTo(q.core.state());
    }

    @Test
    void aJobWithNegativeGpusIsRejectedBeforeItReachesTheCore() {
        assertThatThrownBy(() -> aJob("bad").gpus(-1).spec())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("gpus");
    }

    @Test
    void anEventNamingTheWrongTenantIsRejectedAndChangesNothing() {
        QueueDriver q = QueueDriver.withQuota(32).submit(aJob("a1").tenant("a"));
        QueueState before = q.core.state();
        assertThatThrownBy(() -> q.core.apply(new Input.CancelRequested("a1", "b", "b"), JobBuilder.EPOCH))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tenant");
        assertThat(q.core.state()).isEqualTo(before);
    }

    @Test
    void aGangWhoseGpuCountOverflowsIsRejected() {
        // thousandths of a GPU in a long: only a gang beyond any int x int of whole GPUs x 1000 overflows
        assertThatThrownBy(() -> aJob("bad").gang(Integer.MAX_VALUE, Integer.MAX_VALUE).spec())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("overflow");
    }
}
