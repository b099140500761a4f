package io.gantry.placement.core;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Invariants of reservations, drains and cordons over random clusters and random streams of dispatches (with and
 * without time limits), reservation requests and cancellations, cordons and passing time.
 */
class ReservationProperties {

    enum Kind { DISPATCH, RESERVE, CANCEL_RESERVATION, CORDON, UNCORDON, CANCEL_JOB }

    record Step(Kind kind, int job, int replicas, int gpus, Long limit, TopologyLevel required, int node,
                int advanceSeconds) {
    }

    record World(int racks, int nodesPerRack, List<Step> steps, PlacementPolicy policy) {
    }

    @Provide
    Arbitrary<World> worlds() {
        Arbitrary<Step> step = Combinators.combine(
                Arbitraries.of(Kind.DISPATCH, Kind.DISPATCH, Kind.DISPATCH, Kind.RESERVE, Kind.RESERVE,
                        Kind.CANCEL_RESERVATION, Kind.CORDON, Kind.UNCORDON, Kind.CANCEL_JOB),
                Arbitraries.integers().between(0, 11), Arbitraries.integers().between(1, 3),
                Arbitraries.of(1, 2, 4, 8),
                Arbitraries.of(60L, 300L, 900L, 3600L).injectNull(0.3),
                Arbitraries.of(TopologyLevel.NODE, TopologyLevel.RACK, TopologyLevel.CLUSTER),
                Arbitraries.integers().between(0, 5), Arbitraries.of(0, 0, 30, 120, 600))
                .as(Step::new);
        return Combinators.combine(Arbitraries.integers().between(1, 2), Arbitraries.integers().between(1, 3),
                step.list().ofMinSize(1).ofMaxSize(40), Arbitraries.of(PlacementPolicy.class)).as(World::new);
    }

    static List<NodeSpec> nodes(World w) {
        List<NodeSpec> nodes = new ArrayList<>();
        for (int r = 0; r < w.racks(); r++) {
            for (int n = 0; n < w.nodesPerRack(); n++) {
                nodes.add(TraceClusters.eightGpuServer("n" + r + n, "simulated", "H100", 1, 96_000, 1 << 20,
                        Map.of(NodeSpec.SPINE_LABEL, "s", NodeSpec.RACK_LABEL, "r" + r)));
            }
        }
        return nodes;
    }

    private static GangRequest gang(Step s) {
        return new GangRequest("j" + s.job(), "t", 1, List.of(new TaskGroup("w", s.replicas(), s.gpus(), null,
                1_000, 1_024)), Topology.required(s.required()), s.limit());
    }

    /** Runs the world, checking every invariant after every step; returns every fact in order. */
    static List<PlacementFact> run(World w) {
        ClusterState state = new ClusterState("simulated", new TopologyPlacer(w.policy(), Map.of()));
        List<PlacementFact> all = new ArrayList<>();
        List<NodeSpec> nodes = nodes(w);
        nodes.forEach(n -> apply(state, state.register(n), all));
        Instant now = Fixtures.T0;
        for (Step s : w.steps()) {
            now = now.plusSeconds(s.advanceSeconds());
            apply(state, state.expire(now), all);
            String node = nodes.get(s.node() % nodes.size()).nodeId();
            switch (s.kind()) {
                case DISPATCH -> dispatch(state, gang(s), now, all);
                case RESERVE -> {
                    List<PlacementFact> facts = state.reserve(gang(s), now);
                    Set<String> unavailable = new TreeSet<>();
                    state.reservations().forEach(r -> unavailable.addAll(r.nodes()));
                    nodes.stream().map(NodeSpec::nodeId).filter(state::isCordoned).forEach(unavailable::add);
                    for (PlacementFact f : facts) {
                        String id = ((PlacementFact.NodeRegistered) f).node().nodeId();
                        assertThat(unavailable).as("a drain takes no cordoned or already reserved node")
                                .doesNotContain(id);
                    }
                    apply(state, facts, all);
                }
                case CANCEL_RESERVATION -> apply(state, state.cancelReservation("j" + s.job(), 1), all);
                case CORDON -> apply(state, state.cordon(node, true), all);
                case UNCORDON -> apply(state, state.cordon(node, false), all);
                case CANCEL_JOB -> apply(state, state.cancel("j" + s.job(), 1, now), all);
            }
            TopologyProperties.assertNoDeviceTwice(state);
        }
        return all;
    }

    private static void dispatch(ClusterState state, GangRequest gang, Instant now, List<PlacementFact> all) {
        InventorySnapshot before = state.snapshot();
        Map<String, CapacityReservation> reservedOn = new HashMap<>();
        Map<String, Instant> estimates = new HashMap<>();
        for (CapacityReservation r : state.reservations()) {
            r.nodes().forEach(n -> reservedOn.put(n, r));
            estimates.put(r.jobId(), state.estimate(r.jobId(), now));
        }
        Set<String> cordoned = new TreeSet<>();
        before.nodes().stream().map(NodeView::nodeId).filter(state::isCordoned).forEach(cordoned::add);
        List<PlacementFact> facts = state.dispatch(gang, now);
        apply(state, facts, all);
        if (facts.isEmpty()) {
            return;
        }
        if (facts.get(0) instanceof PlacementFact.AllocationGranted g) {
            state.runStarted(g.allocation().allocationId(), now).forEach(state::replay);
            all.addAll(state.runStarted(g.allocation().allocationId(), now));
            for (PlacedTask p : g.allocation().placements()) {
                assertThat(cordoned).as("a cordoned node gets no new work").doesNotContain(p.nodeId());
                CapacityReservation r = reservedOn.get(p.nodeId());
                if (r != null && !r.jobId().equals(gang.jobId())) {
                    Instant estimate = estimates.get(r.jobId());
                    assertThat(gang.timeLimitSeconds()).as("%s on %s, drained for %s: needs a time limit",
                            gang.jobId(), p.nodeId(), r.jobId()).isNotNull();
                    assertThat(estimate).as("no backfill onto a drain of unknown length").isNotNull();
                    assertThat(now.plusSeconds(gang.timeLimitSeconds()))
                            .as("backfill on %s must end by the drain estimate", p.nodeId())
                            .isBeforeOrEqualTo(estimate);
                }
            }
            assertThat(state.reservation(gang.jobId())).as("a grant ends the job's own reservation").isEmpty();
        } else {
            assertThat(state.snapshot()).as("a deferral leaves the index exactly as it was").isEqualTo(before);
        }
    }

    private static void apply(ClusterState state, List<PlacementFact> facts, List<PlacementFact> all) {
        facts.forEach(state::replay);
        all.addAll(facts);
    }

    @Property(tries = 300)
    void aReservationNeverLetsAnotherJobWithoutAFittingTimeLimitOntoDrainedCapacityNorAnyJobOntoACordonedNode(
            @ForAll("worlds") World w) {
        run(w);
    }

    @Property(tries = 100)
    void theSameInputsGiveTheSameFactsAndReplayInAnyCrossTopicOrderRebuildsReservationsAndCordons(
            @ForAll("worlds") World w) {
        List<PlacementFact> facts = run(w);
        assertThat(run(w)).isEqualTo(facts);

        ClusterState live = new ClusterState("simulated", new TopologyPlacer(w.policy(), Map.of()));
        facts.forEach(live::replay);
        ClusterState restored = new ClusterState("simulated", new TopologyPlacer(w.policy(), Map.of()));
        facts.stream().filter(f -> !(f instanceof PlacementFact.NodeRegistered)).forEach(restored::replay);
        facts.stream().filter(f -> f instanceof PlacementFact.NodeRegistered).forEach(restored::replay);
        // the backend re-registers every node at start without control labels
        nodes(w).forEach(n -> restored.register(n).forEach(restored::replay));

        assertThat(restored.reservations()).isEqualTo(live.reservations());
        assertThat(restored.snapshot()).isEqualTo(live.snapshot());
        for (NodeSpec n : nodes(w)) {
            assertThat(restored.isCordoned(n.nodeId())).isEqualTo(live.isCordoned(n.nodeId()));
        }
    }
}
