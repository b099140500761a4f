package io.gantry.placement.core;

import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;

import static io.gantry.placement.core.Fixtures.T0;
import static io.gantry.placement.core.Fixtures.aGang;
import static io.gantry.placement.core.Fixtures.anH100Node;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Any number that reaches placement on its input topic, however large, is either placed with time arithmetic
 * that saturates (a limit past the end of time is no limit in practice) or refused before anything changes.
 */
class OverflowSafeTimeTest {
    private static final long ONE_E17 = 100_000_000_000_000_000L;

    static Stream<Arguments> hugeLimits() {
        return Stream.of(
                Arguments.of(Named.of("Long.MAX_VALUE seconds", Long.MAX_VALUE)),
                Arguments.of(Named.of("1e17 seconds", ONE_E17)),
                Arguments.of(Named.of("the last second an Instant can hold", Instant.MAX.getEpochSecond())),
                Arguments.of(Named.of("one second less than would overflow from T0",
                        Instant.MAX.getEpochSecond() - T0.getEpochSecond())));
    }

    private static Allocation started(Fixtures.Cluster c, Fixtures.GangBuilder gang) {
        Allocation a = c.granted(gang);
        c.apply(c.state.runStarted(a.allocationId(), T0));
        return a;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hugeLimits")
    void aRunWithAHugeTimeLimitIsPlacedStartedAndNeverStoppedByItsLimit(long limit) {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));

        Allocation a = started(c, aGang("j").task("w", 1, 8).timeLimit(limit));

        assertThat(a.timeLimitSeconds()).as("the grant says what the job asked for").isEqualTo(limit);
        assertThat(c.state.expire(T0.plus(Duration.ofDays(365L * 10_000)))).as("ten thousand years on").isEmpty();
        List<PlacementFact> ended = c.apply(c.state.runEnded(a.allocationId(), RunResult.succeeded(T0.plusSeconds(30))));
        assertThat(ended).containsExactly(new PlacementFact.RunSucceeded(a, T0.plusSeconds(30)),
                new PlacementFact.AllocationReleased(a, ReleaseCause.RUN_SUCCEEDED, T0.plusSeconds(30)));
        assertThat(c.held()).isEmpty();
        assertThat(c.state.pendingDeadlines()).as("the limit's deadline went with the release").isZero();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hugeLimits")
    void aRunWithAHugeTimeLimitIsStillPreemptedAtTheEndOfItsGracePeriod(long limit) {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));
        Allocation a = started(c, aGang("j").task("w", 1, 8).timeLimit(limit));

        c.apply(c.state.preempt("j", 1, Integer.MAX_VALUE, T0));
        c.apply(c.state.preempt("j", 1, 30, T0)); // the first deadline stands; a huge grace must not throw either
        assertThat(c.state.expire(T0.plusSeconds(1_000_000))).isEmpty();
        List<PlacementFact> ended = c.apply(c.state.cancel("j", 1, T0.plusSeconds(40)));

        assertThat(ended).containsExactly(new PlacementFact.AllocationReleased(a, ReleaseCause.CANCELLED, T0.plusSeconds(40)));
        assertThat(c.state.pendingDeadlines()).isZero();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hugeLimits")
    void aDrainNextToAHugeTimeLimitIsCostedWithoutOverflowAndTakesNoBackfillWithAHugeLimit(long limit) {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"), anH100Node("n2"));
        started(c, aGang("open").task("w", 1, 8));
        started(c, aGang("a").task("w", 1, 4).timeLimit(limit));

        List<PlacementFact> reserved = c.apply(c.state.reserve(aGang("R").task("w", 1, 8).build(), T0));

        assertThat(reserved).as("one node is drained for R").singleElement()
                .isInstanceOfSatisfying(PlacementFact.NodeRegistered.class, f -> assertThat(f.node().reservedFor()).isEqualTo("R"));
        assertThat(c.state.estimate("R", T0)).as("a limit past the end of time is none in practice: unknown")
                .isNull();
        List<PlacementFact> backfill = c.apply(c.state.dispatch(aGang("huge").task("w", 1, 4).timeLimit(limit).build(), T0));
        assertThat(backfill).singleElement().isInstanceOfSatisfying(PlacementFact.PlacementDeferred.class,
                d -> assertThat(d.reason()).isEqualTo(DeferralCause.RESERVED));
    }

    @Test
    void aGangOfMoreReplicasThanPlacementCanCountIsRefusedBeforeAnythingChanges() {
        assertThatThrownBy(() -> aGang("j").task("w", Integer.MAX_VALUE, 8).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("replicas");
        assertThatThrownBy(() -> aGang("j").task("a", Integer.MAX_VALUE / 2, 0).task("b", Integer.MAX_VALUE / 2, 0)
                .task("c", 10, 0).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("replicas");
    }

    @Test
    void aHugeTaskMemoryIsDeferredAsLargerThanAnyNodeNotThrown() {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n1"));

        PlacementDecision.Deferred d = c.deferred(aGang("j").task("w", 2, 1).memoryMiB(Long.MAX_VALUE));

        assertThat(d.reason()).isEqualTo(DeferralCause.TASK_LARGER_THAN_ANY_NODE);
        assertThat(c.held()).isEmpty();
    }
}
