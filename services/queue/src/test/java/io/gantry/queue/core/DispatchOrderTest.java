package io.gantry.queue.core;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static io.gantry.queue.core.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

/** Which jobs reach placement, and in what order. */
class DispatchOrderTest {

    record Case(String name, Quotas quotas, Consumer<QueueDriver> scenario, List<String> expectedDispatchOrder) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("a tenant's jobs dispatch in submit order as quota frees", Quotas.uniform(8), q -> q
                        .submit(aJob("a1").gpus(8).submittedAt(1), aJob("a2").gpus(8).submittedAt(2),
                                aJob("a3").gpus(8).submittedAt(3))
                        .released("a1", 1, ReleaseCause.RUN_SUCCEEDED)
                        .released("a2", 1, ReleaseCause.RUN_SUCCEEDED),
                        List.of("a1", "a2", "a3")),
                new Case("order within a tenant is by submit time, not by arrival", Quotas.uniform(8), q -> q
                        .given(aJob("x").gpus(8).submittedAt(0).queued())
                        .given(aJob("late").gpus(8).submittedAt(9).queued(), aJob("early").gpus(8).submittedAt(5).queued())
                        .restored()
                        .released("x", 1, ReleaseCause.RUN_SUCCEEDED),
                        List.of("x", "early")),
                new Case("jobs submitted at the same instant go by job id", Quotas.uniform(8), q -> q
                        .given(aJob("j-b").gpus(8).submittedAt(5).queued(), aJob("j-a").gpus(8).submittedAt(5).queued())
                        .restored(),
                        List.of("j-a")),
                new Case("tenants take turns, one job per turn", Quotas.uniform(64), q -> q
                        .given(aJob("a1").tenant("a").submittedAt(1).queued(), aJob("a2").tenant("a").submittedAt(2).queued(),
                                aJob("a3").tenant("a").submittedAt(3).queued(), aJob("b1").tenant("b").submittedAt(4).queued(),
                                aJob("c1").tenant("c").submittedAt(5).queued(), aJob("c2").tenant("c").submittedAt(6).queued())
                        .restored(),
                        List.of("a1", "b1", "c1", "a2", "c2", "a3")),
                new Case("a tenant that already runs a job goes after tenants that run nothing (lower share first)",
                        Quotas.uniform(64), q -> q
                        .given(aJob("b0").tenant("b").submittedAt(0).queued(),
                                new QueueFact.JobDispatched("b0", "b", 1, aJob("b0").spec(), 1_000))
                        .given(aJob("a1").tenant("a").submittedAt(1).queued(), aJob("b1").tenant("b").submittedAt(2).queued(),
                                aJob("c1").tenant("c").submittedAt(3).queued())
                        .restored(),
                        List.of("b0", "a1", "c1", "b1")),
                new Case("a tenant at its quota does not hold up other tenants",
                        Quotas.uniform(8), q -> q
                        .submit(aJob("a1").tenant("a").gpus(8).submittedAt(1), aJob("a2").tenant("a").gpus(4).submittedAt(2),
                                aJob("b1").tenant("b").gpus(4).submittedAt(3), aJob("b2").tenant("b").gpus(4).submittedAt(4)),
                        List.of("a1", "b1", "b2")),
                new Case("a smaller job behind a head blocked on quota backfills (no head-of-line blocking)",
                        Quotas.uniform(8), q -> q
                        .submit(aJob("a1").gpus(6).submittedAt(1), aJob("a2").gpus(4).submittedAt(2),
                                aJob("a3").gpus(2).submittedAt(3)),
                        List.of("a1", "a3")),
                new Case("a job larger than the whole quota is skipped and blocks nobody", Quotas.uniform(8), q -> q
                        .submit(aJob("huge").gang(2, 8).submittedAt(1), aJob("a2").gpus(8).submittedAt(2)),
                        List.of("a2")),
                new Case("a parked job does not block the jobs behind it", Quotas.uniform(8), q -> q
                        .submit(aJob("a1").gpus(8).submittedAt(1), aJob("a2").gpus(8).submittedAt(2))
                        .deferred("a1", 1),
                        List.of("a1", "a2")),
                new Case("a requeued job goes back ahead of later submissions", Quotas.uniform(8), q -> q
                        .submit(aJob("a1").gpus(8).submittedAt(1), aJob("a2").gpus(8).submittedAt(2))
                        .released("a1", 1, ReleaseCause.NODE_FAILED)
                        .requeued("a1", 1)
                        .submit(aJob("a3").gpus(8).submittedAt(3))
                        .released("a2", 1, ReleaseCause.RUN_SUCCEEDED),
                        List.of("a1", "a2", "a1")),
                new Case("per-tenant quotas from configuration apply", Quotas.ofGpus(4, Map.of("big", 16)), q -> q
                        .submit(aJob("s1").tenant("small").gpus(4).submittedAt(1), aJob("s2").tenant("small").gpus(4).submittedAt(2),
                                aJob("b1").tenant("big").gpus(8).submittedAt(3), aJob("b2").tenant("big").gpus(8).submittedAt(4)),
                        List.of("s1", "b1", "b2")),
                new Case("CPU-only jobs need no quota", Quotas.uniform(0), q -> q
                        .submit(aJob("cpu1").gpus(0).submittedAt(1), aJob("gpu1").gpus(1).submittedAt(2),
                                aJob("cpu2").tenant("b").gpus(0).submittedAt(3)),
                        List.of("cpu1", "cpu2")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void dispatchOrder(Case c) {
        QueueDriver q = QueueDriver.withQuotas(c.quotas());
        c.scenario().accept(q);
        assertThat(q.dispatchOrder()).as(c.name()).isEqualTo(c.expectedDispatchOrder());
    }
}
