package io.gantry.recovery.core;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

class RecoveryProperties {
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    /** A heartbeat gap and where, inside it, ticks happen (as a fraction in per mille of the gap). */
    record Gap(int millis, List<Integer> tickPerMille) {
    }

    @Provide
    Arbitrary<List<Gap>> gapsWithinTimeout() {
        Arbitrary<Integer> perMille = Arbitraries.integers().between(0, 1000);
        return Combinators.combine(Arbitraries.integers().between(1, 1000), perMille.list().ofMaxSize(4))
                .as(Gap::new).list().ofMinSize(1).ofMaxSize(40);
    }

    @Property
    void aNodeIsNeverDeclaredFailedWhileItsHeartbeatsArriveWithinTheTimeout(
            @ForAll @IntRange(min = 1, max = 30_000) int timeoutMillis,
            @ForAll("gapsWithinTimeout") List<Gap> gaps) {
        Recovery core = new Recovery(new RecoveryPolicy(Duration.ofMillis(timeoutMillis), 3));
        Instant last = T0;
        core.replayAll(core.onSignOfLife("sim-1", last));
        for (Gap gap : gaps) {
            // the gap is scaled into [1 ms, timeout]: the next heartbeat is never later than the timeout
            long gapMillis = Math.max(1, (long) gap.millis() * timeoutMillis / 1000);
            for (int perMille : gap.tickPerMille()) {
                List<RecoveryFact> facts = core.tick(last.plusMillis(gapMillis * perMille / 1000));
                assertThat(facts).isEmpty();
            }
            last = last.plusMillis(gapMillis);
            core.replayAll(core.onSignOfLife("sim-1", last));
        }
        assertThat(core.state("sim-1")).isEqualTo(NodeState.HEALTHY);
    }

    /** One input to the core: a heartbeat, a tick or a node-failure release, each some seconds after the last. */
    record Op(int kind, int node, int job, int attempt, int advanceMillis) {
    }

    @Provide
    Arbitrary<List<Op>> operations() {
        return Combinators.combine(
                        Arbitraries.integers().between(0, 2),
                        Arbitraries.integers().between(0, 3),
                        Arbitraries.integers().between(0, 3),
                        Arbitraries.integers().between(1, 6),
                        Arbitraries.integers().between(0, 8_000))
                .as(Op::new).list().ofMaxSize(60);
    }

    @Property
    void replayingThePublishedFactsRebuildsFailedNodesAndRestartCounts(
            @ForAll("operations") List<Op> ops, @ForAll @IntRange(min = 0, max = 4) int maxRestarts) {
        RecoveryPolicy policy = new RecoveryPolicy(Duration.ofSeconds(5), maxRestarts);
        Recovery live = new Recovery(policy);
        List<RecoveryFact> published = new ArrayList<>();
        Instant now = T0;
        for (Op op : ops) {
            now = now.plusMillis(op.advanceMillis());
            List<RecoveryFact> facts = switch (op.kind()) {
                case 0 -> live.onSignOfLife("sim-" + op.node(), now);
                case 1 -> live.tick(now);
                default -> live.onNodeFailureRelease(
                        new InterruptedRun("job-" + op.job(), "vision", op.attempt(), List.of("sim-" + op.node())));
            };
            for (RecoveryFact f : facts) {
                live.replay(f);
                if (RecoveryScenario.isPublished(f)) {
                    published.add(f);
                }
            }
        }

        Recovery restored = new Recovery(policy);
        published.forEach(restored::replay);

        assertThat(failedNodes(restored)).isEqualTo(failedNodes(live));
        for (int job = 0; job < 4; job++) {
            assertThat(restored.restarts("job-" + job)).isEqualTo(live.restarts("job-" + job));
            for (int attempt = 1; attempt <= 7; attempt++) {
                InterruptedRun run = new InterruptedRun("job-" + job, "vision", attempt, List.of());
                assertThat(restored.onNodeFailureRelease(run)).isEqualTo(live.onNodeFailureRelease(run));
            }
        }
    }

    private static Map<String, Instant> failedNodes(Recovery core) {
        Map<String, Instant> failed = new TreeMap<>();
        core.nodes().stream().filter(n -> n.state() == NodeState.FAILED)
                .forEach(n -> failed.put(n.nodeId(), n.failedAt()));
        return failed;
    }

    /** A reported checkpoint: job (of 3), attempt (1-4), step. */
    record Reported(int job, int attempt, int step) {
    }

    @Property
    void aRunIsNeverResumedFromACheckpointOfAnotherJobOrALaterAttemptAndAlwaysFromTheNewestAllowed(
            @ForAll("reports") List<Reported> reports, @ForAll @IntRange(min = 0, max = 2) int job,
            @ForAll @IntRange(min = 1, max = 4) int interrupted) {
        Recovery core = new Recovery(new RecoveryPolicy(Duration.ofSeconds(10), 100));
        for (Reported r : reports) {
            core.onCheckpoint("job-" + r.job(), r.attempt(), r.step(), path(r)).forEach(core::replay);
        }

        List<RecoveryFact> decided = core.onNodeFailureRelease(new InterruptedRun("job-" + job, "t", interrupted,
                List.of("n1")));

        String resumed = ((RecoveryFact.JobRequeued) decided.get(0)).resumeFrom();
        java.util.Optional<Reported> expected = reports.stream()
                .filter(r -> r.job() == job && r.attempt() <= interrupted)
                .max(java.util.Comparator.comparingInt(Reported::attempt).thenComparingInt(Reported::step));
        assertThat(resumed).isEqualTo(expected.map(RecoveryProperties::path).orElse(null));
    }

    private static String path(Reported r) {
        return "/ckpt/job-" + r.job() + "/a" + r.attempt() + "/s" + r.step();
    }

    @Provide
    Arbitrary<List<Reported>> reports() {
        return Combinators.combine(Arbitraries.integers().between(0, 2), Arbitraries.integers().between(1, 4),
                Arbitraries.integers().between(0, 1000)).as(Reported::new).list().ofMaxSize(30);
    }
}
