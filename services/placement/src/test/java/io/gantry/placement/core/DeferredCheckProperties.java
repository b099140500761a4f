package io.gantry.placement.core;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.gantry.placement.core.Fixtures.T0;
import static io.gantry.placement.core.Fixtures.aGang;
import static io.gantry.placement.core.Fixtures.anH100Node;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Placement's check of the gangs it deferred, with every shortcut it takes (a shape tried once, a gang needing more
 * than one that did not fit, a one-replica gang looked at again only on the nodes changed since), answers exactly what
 * placing each gang now, on its own, would.
 */
class DeferredCheckProperties {
    /**
     * 0-2: dispatch gang {@code shape}; 3: a run ends; 4: a node fails; 5: it recovers; 6: foreign GPUs on a node;
     * 7: a node registers.
     */
    record Op(int kind, int shape, int node, int pick, boolean check) {
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        return Combinators.combine(Arbitraries.integers().between(0, 7), Arbitraries.integers().between(0, 11),
                Arbitraries.integers().between(0, 4), Arbitraries.integers().between(0, 20), Arbitraries.of(true, false))
                .as(Op::new).list().ofMinSize(1).ofMaxSize(60);
    }

    private static Fixtures.GangBuilder shape(String id, int shape) {
        return switch (shape) {
            case 0 -> aGang(id).task("w", 1, 1);
            case 1 -> aGang(id).task("w", 1, 2);
            case 2 -> aGang(id).task("w", 1, 4);
            case 3 -> aGang(id).task("w", 1, 8);
            case 4 -> aGang(id).task("w", 1, 1).cpuMillis(40_000);
            case 5 -> aGang(id).task("w", 1, 2).cpuMillis(60_000);
            case 6 -> aGang(id).task("w", 1, 1).memoryMiB(900_000);
            case 7 -> aGang(id).task("w", 2, 4);
            case 8 -> aGang(id).task("w", 3, 8);
            case 9 -> aGang(id).task("w", 1, 0).fraction(500);
            case 10 -> aGang(id).task("w", 1, 0).fraction(300).cpuMillis(50_000);
            default -> aGang(id).task("w", 1, 0).cpuMillis(90_000);
        };
    }

    @Property(tries = 300)
    void theCheckOfDeferredGangsAnswersWhatPlacingEachWould(@ForAll("ops") List<Op> ops,
                                                                             @ForAll boolean fewTrials) {
        Fixtures.Cluster c = Fixtures.Cluster.topology(anH100Node("n0"), anH100Node("n1"), anH100Node("n2"));
        Map<String, GangRequest> deferred = new LinkedHashMap<>();
        int job = 0;
        int extra = 3;
        for (Op op : ops) {
            String node = "n" + op.node();
            boolean known = c.state.node(node).isPresent();
            switch (op.kind()) {
                case 0, 1, 2 -> {
                    GangRequest g = shape("j" + job++, op.shape()).build();
                    for (PlacementFact f : c.apply(c.state.dispatch(g, T0))) {
                        if (f instanceof PlacementFact.PlacementDeferred) {
                            deferred.put(g.jobId(), g);
                        }
                    }
                }
                case 3 -> {
                    List<Allocation> live = c.state.liveAllocations();
                    if (!live.isEmpty()) {
                        Allocation a = live.get(op.pick() % live.size());
                        c.apply(c.state.runEnded(a.allocationId(), RunResult.succeeded(T0)));
                    }
                }
                case 4 -> {
                    if (known) {
                        c.apply(c.state.nodeFailed(node, T0));
                    }
                }
                case 5 -> {
                    if (known) {
                        c.apply(c.state.nodeRecovered(node));
                    }
                }
                case 6 -> {
                    if (known) {
                        c.apply(c.state.foreignLoad(node, op.pick() % 5, "pod x/y"));
                    }
                }
                default -> c.apply(c.state.register(anH100Node("n" + extra++).build()));
            }
            if (!op.check()) {
                continue;
            }
            deferred.keySet().removeIf(id -> c.state.liveAllocations().stream().anyMatch(a -> a.jobId().equals(id)));
            InventorySnapshot before = c.state.snapshot();
            List<ClusterState.DeferredCheck> checks = c.state.checkDeferred(deferred.values(), T0,
                    fewTrials ? 2 : 1000, 1000);

            assertThat(c.state.snapshot()).as("a check changes nothing").isEqualTo(before);
            if (!fewTrials) {
                assertThat(checks).hasSize(deferred.size());
            }
            TopologyPlacer placer = new TopologyPlacer();
            for (ClusterState.DeferredCheck check : checks) {
                GangRequest g = deferred.get(check.jobId());
                boolean alone = placer.place(Inventory.of(before, Fixtures.SIM), g) instanceof PlacementDecision.Placed;
                assertThat(check.fits()).as("%s alone", g).isEqualTo(alone);
                if (check.onlyPlace() != null) {
                    // the one node it fits: every other node, each on its own, certainly does not hold it
                    Inventory inv = Inventory.of(before, Fixtures.SIM);
                    java.util.Set<String> all = new java.util.TreeSet<>();
                    before.nodes().forEach(n -> all.add(n.spec().nodeId()));
                    assertThat(check.fits()).isTrue();
                    assertThat(placer.mightFitNodes(inv, g, all, all.size())).as("%s only place", g)
                            .containsExactly(check.onlyPlace().node());
                    assertThat(check.onlyPlace()).isEqualTo(inv.roomOn(check.onlyPlace().node()));
                }
            }
        }
    }
}
