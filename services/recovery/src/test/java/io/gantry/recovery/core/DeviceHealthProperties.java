package io.gantry.recovery.core;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class DeviceHealthProperties {
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    private static final List<String> NODES = List.of("n0", "n1", "n2");
    private static final int[] XIDS = {13, 31, 43, 48, 63, 74, 79, 94, 95, 999};

    /** A fault report (kind 0) or a registration returning some GPUs to service (kind 1), some seconds later. */
    record Op(int kind, int node, int gpu, int xid, int cordonedMask, int advanceSeconds) {
    }

    @Provide
    Arbitrary<List<Op>> operations() {
        return Combinators.combine(Arbitraries.integers().between(0, 4), Arbitraries.integers().between(0, 2),
                        Arbitraries.integers().between(0, 7), Arbitraries.integers().between(0, XIDS.length - 1),
                        Arbitraries.integers().between(0, 255), Arbitraries.integers().between(0, 900))
                .as(Op::new).list().ofMaxSize(60);
    }

    /** Runs the operations live, replaying every decision; returns the facts, in order. */
    private static List<RecoveryFact> live(Recovery core, List<Op> ops) {
        List<RecoveryFact> facts = new ArrayList<>();
        Instant t = T0;
        int id = 0;
        for (Op op : ops) {
            t = t.plusSeconds(op.advanceSeconds());
            List<RecoveryFact> out;
            if (op.kind() == 0) {
                java.util.Set<Integer> cordoned = new java.util.TreeSet<>();
                for (int g = 0; g < 8; g++) {
                    if ((op.cordonedMask() & (1 << g)) != 0) {
                        cordoned.add(g);
                    }
                }
                out = core.onNodeControl(NODES.get(op.node()), t, false, cordoned, Set.of(0, 1, 2, 3, 4, 5, 6, 7));
            } else {
                out = core.onDeviceFault(new DeviceFaultReport("f" + id++, NODES.get(op.node()), op.gpu(),
                        FaultKind.XID, XIDS[op.xid()], "", t));
            }
            out.forEach(core::replay);
            facts.addAll(out);
        }
        return facts;
    }

    @Property
    void restoringTheDecisionsAndRegistrationsInAnyOrderRebuildsWhatIsOutOfService(
            @ForAll("operations") List<Op> ops, @ForAll long seed) {
        RecoveryPolicy policy = RecoveryPolicy.defaults();
        Recovery core = new Recovery(policy);
        List<RecoveryFact> facts = live(core, ops);
        List<RecoveryFact> shuffled = new ArrayList<>(facts);
        Collections.shuffle(shuffled, new java.util.Random(seed));
        Recovery restored = new Recovery(policy);
        shuffled.forEach(restored::replay);
        for (String n : NODES) {
            assertThat(restored.cordonedGpus(n)).as(n).isEqualTo(core.cordonedGpus(n));
            assertThat(restored.drained(n)).as(n).isEqualTo(core.drained(n));
        }
        // and the next fault of every device is decided alike: nothing is decided twice after a restart
        Instant later = T0.plus(Duration.ofDays(2));
        for (String n : NODES) {
            for (int g = 0; g < 8; g++) {
                DeviceFaultReport next = new DeviceFaultReport("next-" + n + g, n, g, FaultKind.XID, 79, "", later);
                assertThat(restored.onDeviceFault(next)).isEqualTo(core.onDeviceFault(next));
            }
        }
    }

    @Property
    void aDeviceOutOfServiceIsNeverActedUponTwiceHoweverOftenItFaults(@ForAll("operations") List<Op> ops) {
        // faults only: no registration ever returns a device to service
        List<Op> faults = ops.stream().map(o -> new Op(1 + o.kind() % 4, o.node(), o.gpu(), o.xid(), 0,
                o.advanceSeconds())).toList();
        List<RecoveryFact> facts = live(new Recovery(RecoveryPolicy.defaults()), faults);
        Map<String, Integer> hardware = new HashMap<>();
        for (RecoveryFact f : facts) {
            if (f instanceof RecoveryFact.DeviceFaultDecided d && d.category() == FaultCategory.HARDWARE) {
                hardware.merge(d.nodeId() + "#" + d.gpuIndex(), 1, Integer::sum);
            }
        }
        assertThat(hardware.values()).allMatch(n -> n == 1);
        // bounded work under a flood: at most one hardware decision per device, whatever the number of reports
        assertThat(hardware.size()).isLessThanOrEqualTo(NODES.size() * 8);
    }

    @Property
    void aSilenceOfThreeTimeoutsAlwaysFailsANodeWhateverItsHeartbeatHistory(
            @ForAll("gapHistories") List<Integer> gapMillis) {
        // a node alone in its pool: without the hold a pool gets when all its nodes fall silent
        Recovery core = new Recovery(RecoveryPolicy.defaults().withDisruptionHold(Duration.ZERO));
        Instant t = T0;
        core.replayAll(core.onSignOfLife("sim-1", t));
        for (int g : gapMillis) {
            t = t.plusMillis(g);
            core.replayAll(core.onSignOfLife("sim-1", t));
        }
        assertThat(core.tick(t.plusSeconds(30).plusMillis(1))).hasSize(1);
    }

    @Provide
    Arbitrary<List<Integer>> gapHistories() {
        return Arbitraries.integers().between(0, 10_000).list().ofMaxSize(40);
    }
}
