package io.gantry.placement.core;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Invariants of the topology placer over random Clos clusters and random gang sequences with constraints (and,
 * for half the jobs, a placement policy of their own).
 */
class TopologyProperties {

    /** {@code policy}: the job's own placement policy, null for the pool's. */
    record Job(int replicas, int gpus, TopologyLevel required, boolean release, PlacementPolicy policy) {
    }

    record World(int spines, int racksPerSpine, int nodesPerRack, List<Job> jobs, PlacementPolicy policy) {
    }

    @Provide
    Arbitrary<World> worlds() {
        Arbitrary<Job> job = Combinators.combine(Arbitraries.integers().between(1, 6),
                Arbitraries.of(0, 1, 2, 4, 8), Arbitraries.of(TopologyLevel.class), Arbitraries.of(true, false, false),
                Arbitraries.of(PlacementPolicy.class).injectNull(0.5))
                .as(Job::new);
        return Combinators.combine(Arbitraries.integers().between(1, 2), Arbitraries.integers().between(1, 3),
                Arbitraries.integers().between(1, 3), job.list().ofMinSize(1).ofMaxSize(30),
                Arbitraries.of(PlacementPolicy.class)).as(World::new);
    }

    static List<NodeSpec> nodes(World w) {
        List<NodeSpec> nodes = new ArrayList<>();
        for (int s = 0; s < w.spines(); s++) {
            for (int r = 0; r < w.racksPerSpine(); r++) {
                for (int n = 0; n < w.nodesPerRack(); n++) {
                    nodes.add(TraceClusters.eightGpuServer("n" + s + r + n, "simulated", "H100", 1, 96_000, 1 << 20,
                            Map.of(NodeSpec.SPINE_LABEL, "s" + s, NodeSpec.RACK_LABEL, "r" + r)));
                }
            }
        }
        return nodes;
    }

    /** Runs the world, checking after every step; returns every fact in order. */
    static List<PlacementFact> run(World w) {
        ClusterState state = new ClusterState("simulated", new TopologyPlacer(w.policy(), Map.of()));
        List<PlacementFact> all = new ArrayList<>();
        Map<String, NodeSpec> byId = new HashMap<>();
        for (NodeSpec n : nodes(w)) {
            byId.put(n.nodeId(), n);
            apply(state, state.register(n), all);
        }
        int i = 0;
        for (Job j : w.jobs()) {
            String id = "j" + i++;
            InventorySnapshot before = state.snapshot();
            GangRequest gang = new GangRequest(id, "t", 1, List.of(new TaskGroup("w", j.replicas(), j.gpus(), null,
                    1_000, 1_024)), Topology.required(j.required()), null, j.policy());
            List<PlacementFact> facts = state.dispatch(gang, Fixtures.T0);
            apply(state, facts, all);
            PlacementFact f = facts.get(0);
            if (f instanceof PlacementFact.AllocationGranted g) {
                Allocation a = g.allocation();
                assertThat(a.placements()).hasSize(j.replicas()); // all
                assertThat(a.totalGpus()).isEqualTo(j.replicas() * j.gpus());
                assertWithin(a, j.required(), byId);
                if (j.release()) {
                    apply(state, state.cancel(id, 1, Fixtures.T0), all);
                    assertThat(state.snapshot()).isEqualTo(before); // release restores exactly
                }
            } else {
                assertThat(state.snapshot()).isEqualTo(before); // ... or nothing
            }
            assertNoDeviceTwice(state);
        }
        return all;
    }

    private static void apply(ClusterState state, List<PlacementFact> facts, List<PlacementFact> all) {
        facts.forEach(state::replay);
        all.addAll(facts);
    }

    static void assertWithin(Allocation a, TopologyLevel level, Map<String, NodeSpec> nodes) {
        Set<String> domains = new HashSet<>();
        for (PlacedTask p : a.placements()) {
            if (p.gpuIndices().isEmpty() && level == TopologyLevel.NVLINK) {
                domains.add(p.nodeId() + "/cpu");
                continue;
            }
            NodeSpec n = nodes.get(p.nodeId());
            for (int g : p.gpuIndices()) {
                domains.add(switch (level) {
                    case NVLINK -> p.nodeId() + "/" + n.gpus().get(g).nvlinkDomain();
                    case NODE -> p.nodeId();
                    case RACK -> n.spine() + "/" + n.rack();
                    case SPINE -> n.spine();
                    case CLUSTER -> "all";
                });
            }
            if (p.gpuIndices().isEmpty() && level != TopologyLevel.NVLINK) {
                domains.add(switch (level) {
                    case NODE -> p.nodeId();
                    case RACK -> n.spine() + "/" + n.rack();
                    case SPINE -> n.spine();
                    default -> "all";
                });
            }
        }
        assertThat(domains).as("domains of %s at %s", a.jobId(), level).hasSizeLessThanOrEqualTo(1);
    }

    static void assertNoDeviceTwice(ClusterState state) {
        Set<String> held = new HashSet<>();
        for (Allocation a : state.liveAllocations()) {
            for (PlacedTask p : a.placements()) {
                for (int g : p.gpuIndices()) {
                    assertThat(held.add(p.nodeId() + "#" + g)).as("GPU %d of %s held twice", g, p.nodeId()).isTrue();
                }
            }
        }
        for (NodeView n : state.snapshot().nodes()) {
            n.freeSocketCpuMillis().forEach(c -> assertThat(c).isGreaterThanOrEqualTo(0));
        }
    }

    @Property(tries = 200)
    void aDeviceIsNeverHeldTwiceAGangIsAllOrNothingAndARequiredLevelIsNeverViolated(@ForAll("worlds") World w) {
        run(w);
    }

    @Property(tries = 100)
    void theSameInputsGiveTheSameFacts(@ForAll("worlds") World w) {
        assertThat(run(w)).isEqualTo(run(w));
    }

    @Property(tries = 100)
    void theIncrementalIndexAgreesWithOneRebuiltFromTheSnapshot(@ForAll("worlds") World w) {
        ClusterState state = new ClusterState("simulated", new TopologyPlacer(w.policy(), Map.of()));
        nodes(w).forEach(n -> state.register(n).forEach(state::replay));
        int i = 0;
        for (Job j : w.jobs()) {
            GangRequest gang = new GangRequest("j" + i++, "t", 1, List.of(new TaskGroup("w", j.replicas(), j.gpus(),
                    null, 1_000, 1_024)), Topology.required(j.required()), null, j.policy());
            PlacementDecision full = state.placer().place(state.snapshot(), gang);
            List<PlacementFact> facts = state.dispatch(gang, Fixtures.T0);
            if (facts.get(0) instanceof PlacementFact.AllocationGranted g) {
                assertThat(full).isInstanceOf(PlacementDecision.Placed.class);
                assertThat(((PlacementDecision.Placed) full).placements().stream().map(PlacedTask::gpuIndices).toList())
                        .isEqualTo(g.allocation().placements().stream().map(PlacedTask::gpuIndices).toList());
            } else {
                assertThat(full).isInstanceOf(PlacementDecision.Deferred.class);
            }
            facts.forEach(state::replay);
        }
    }
}
