package io.gantry.placement.core;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Map.Entry;
import java.util.Set;

import static io.gantry.placement.core.Fixtures.T0;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Invariants of GPU fractions and MIG over random clusters (H100 / A100, some MIG-capable) and random streams of
 * whole, fractional and MIG gangs and cancels, with and without an overcommit factor.
 */
class GpuShareProperties {

    sealed interface Op {
    }

    record Dispatch(String jobId, TaskGroup task) implements Op {
    }

    record Cancel(String jobId) implements Op {
    }

    record Scenario(double overcommit, List<NodeSpec> nodes, List<Op> ops) {
    }

    @Provide
    Arbitrary<Scenario> scenarios() {
        Arbitrary<List<Gpu>> gpus = Combinators.combine(Arbitraries.integers().between(1, 4),
                Arbitraries.of("H100", "A100"), Arbitraries.of(true, false)).as((count, model, mig) -> {
            List<Gpu> list = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                list.add(new Gpu(i, model, model.equals("H100") ? 81_920 : 40_960, 0, 0, 0, mig));
            }
            return list;
        });
        Arbitrary<List<NodeSpec>> nodes = gpus.list().ofMinSize(1).ofMaxSize(3).map(list -> {
            List<NodeSpec> out = new ArrayList<>();
            for (int i = 0; i < list.size(); i++) {
                out.add(new NodeSpec("n" + i, "simulated", list.get(i), 64_000, 262_144, null));
            }
            return out;
        });
        Arbitrary<String> jobs = Arbitraries.of("j0", "j1", "j2", "j3", "j4", "j5", "j6", "j7");
        Arbitrary<TaskGroup> whole = Arbitraries.integers().between(1, 2)
                .map(g -> new TaskGroup("w", 1, g, null, 1_000, 1_024));
        Arbitrary<TaskGroup> fraction = Combinators.combine(Arbitraries.integers().between(1, 3),
                Arbitraries.integers().between(1, 999), Arbitraries.of(0L, 5_000L, 30_000L))
                .as((replicas, milli, mem) -> new TaskGroup("w", replicas, 0, null, 1_000, 1_024)
                        .withFraction(milli, mem == 0 ? null : mem));
        Arbitrary<TaskGroup> mig = Combinators.combine(Arbitraries.integers().between(1, 3),
                        Arbitraries.of("1g.5gb", "1g.10gb", "2g.20gb", "3g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"))
                .as((replicas, profile) -> new TaskGroup("w", replicas, 0, null, 1_000, 1_024).withMig(profile));
        Arbitrary<Op> dispatch = Combinators.combine(jobs, Arbitraries.frequencyOf(Tuple.of(2, whole),
                Tuple.of(4, fraction), Tuple.of(3, mig))).as(Dispatch::new);
        Arbitrary<Op> op = Arbitraries.frequencyOf(Tuple.of(5, dispatch), Tuple.of(2, jobs.map(Cancel::new)));
        return Combinators.combine(Arbitraries.of(1.0, 1.5), nodes, op.list().ofMaxSize(40)).as(Scenario::new);
    }

    private static ClusterState start(Scenario s) {
        ClusterState state = new ClusterState("simulated", new TopologyPlacer(PlacementPolicy.BINPACK, Map.of(),
                new GpuSharing(s.overcommit(), MigProfiles.standard())));
        s.nodes().forEach(n -> state.register(n).forEach(state::replay));
        return state;
    }

    private static List<PlacementFact> run(ClusterState state, Op op, int step) {
        List<PlacementFact> facts;
        if (op instanceof Dispatch d) {
            facts = state.dispatch(new GangRequest(d.jobId(), "t", 1 + step, List.of(d.task())), T0.plusSeconds(step));
        } else {
            String job = ((Cancel) op).jobId();
            facts = state.liveAllocation(job).map(a -> state.cancel(job, a.attempt(), T0)).orElse(List.of());
        }
        facts.forEach(state::replay);
        return facts;
    }

    /** Checks every device of the live allocations: whole or fraction-shared or MIG, within its capacity. */
    private static void assertDevicesSound(Scenario s, ClusterState state) {
        Map<String, Integer> milli = new HashMap<>();
        Map<String, Long> memory = new HashMap<>();
        Map<String, Integer> slots = new HashMap<>();
        Set<String> whole = new HashSet<>();
        Set<String> fractionDevices = new HashSet<>();
        for (Allocation a : state.liveAllocations()) {
            for (PlacedTask p : a.placements()) {
                NodeSpec node = s.nodes().stream().filter(n -> n.nodeId().equals(p.nodeId())).findFirst().orElseThrow();
                for (int i : p.gpuIndices()) {
                    assertThat(whole.add(p.nodeId() + "#" + i)).as("GPU %s#%s held whole twice", p.nodeId(), i).isTrue();
                }
                for (GpuShare sh : p.gpuShares()) {
                    String dev = p.nodeId() + "#" + sh.index();
                    Gpu gpu = node.gpus().get(sh.index());
                    if (sh.isMig()) {
                        MigProfile profile = MigProfiles.standard().profile(gpu, sh.migProfile());
                        assertThat(profile).as("MIG only on a MIG-capable GPU offering %s", sh.migProfile()).isNotNull();
                        assertThat(profile.starts()).contains(sh.migSlice());
                        int mask = profile.slots(sh.migSlice());
                        assertThat(slots.getOrDefault(dev, 0) & mask).as("MIG slots of %s overlap", dev).isZero();
                        slots.merge(dev, mask, (x, y) -> x | y);
                    } else {
                        fractionDevices.add(dev);
                        milli.merge(dev, sh.milli(), Integer::sum);
                        memory.merge(dev, sh.memoryMiB(), Long::sum);
                        assertThat(memory.get(dev)).isLessThanOrEqualTo((long) Math.floor(gpu.memoryMiB() * s.overcommit()));
                    }
                }
            }
        }
        for (Entry<String, Integer> e : milli.entrySet()) {
            assertThat(e.getValue()).as("milli on %s", e.getKey()).isLessThanOrEqualTo((int) Math.floor(1000 * s.overcommit()));
        }
        for (String dev : whole) {
            assertThat(fractionDevices).as("%s is held whole and shared", dev).doesNotContain(dev);
            assertThat(slots).doesNotContainKey(dev);
        }
        for (String dev : fractionDevices) {
            assertThat(slots).as("%s has both fractions and MIG instances", dev).doesNotContainKey(dev);
        }
    }

    @Property(tries = 300)
    void aDeviceOrAShareIsNeverGrantedTwiceAndPerDeviceMilliNeverExceedsTheOvercommit(@ForAll("scenarios") Scenario s) {
        ClusterState state = start(s);
        for (int i = 0; i < s.ops().size(); i++) {
            run(state, s.ops().get(i), i);
            assertDevicesSound(s, state);
        }
    }

    @Property(tries = 200)
    void releasingAnAllocationWithSharesRestoresTheInventoryExactly(@ForAll("scenarios") Scenario s) {
        ClusterState state = start(s);
        for (int i = 0; i < s.ops().size(); i++) {
            InventorySnapshot before = state.snapshot();
            List<PlacementFact> facts = run(state, s.ops().get(i), i);
            if (facts.size() == 1 && facts.get(0) instanceof PlacementFact.AllocationGranted g) {
                state.cancel(g.allocation().jobId(), g.allocation().attempt(), T0).forEach(state::replay);
                assertThat(state.snapshot()).isEqualTo(before);
                assertThat(state.freeCapacity())
                        .isEqualTo(Inventory.of(before, "simulated", state.inventory().sharing()).freeCapacity());
                facts.forEach(state::replay);
            }
        }
    }

    @Property(tries = 200)
    void theSameInputsGiveTheSameSharesAndReplayingThemRebuildsTheState(@ForAll("scenarios") Scenario s) {
        ClusterState first = start(s);
        ClusterState second = start(s);
        List<PlacementFact> all = new ArrayList<>();
        for (int i = 0; i < s.ops().size(); i++) {
            List<PlacementFact> facts = run(first, s.ops().get(i), i);
            assertThat(run(second, s.ops().get(i), i)).isEqualTo(facts);
            all.addAll(facts);
        }
        ClusterState replayed = start(s);
        all.forEach(replayed::replay);
        assertThat(replayed.snapshot()).isEqualTo(first.snapshot());
        assertThat(replayed.freeCapacity()).isEqualTo(first.freeCapacity());
    }
}
