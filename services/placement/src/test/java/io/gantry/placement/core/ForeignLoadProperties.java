package io.gantry.placement.core;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static io.gantry.placement.core.Fixtures.T0;
import static io.gantry.placement.core.Fixtures.aGang;
import static io.gantry.placement.core.Fixtures.anH100Node;
import static org.assertj.core.api.Assertions.assertThat;

class ForeignLoadProperties {
    /** 0: dispatch a gang of {@code size} GPUs; 1: the backend counts {@code size} foreign GPUs on a node; 2: release. */
    record Op(int kind, int node, int pick, int size) {
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        return Combinators.combine(Arbitraries.integers().between(0, 2), Arbitraries.integers().between(0, 2),
                Arbitraries.integers().between(0, 7), Arbitraries.integers().between(0, 8)).as(Op::new).list()
                .ofMaxSize(50);
    }

    @Property
    void foreignGpusAreNeverGrantedAndFreePlusHeldPlusForeignIsEverything(@ForAll("ops") List<Op> ops,
                                                                           @ForAll boolean topology) {
        Fixtures.Cluster c = topology ? Fixtures.Cluster.topology(anH100Node("n0"), anH100Node("n1"), anH100Node("n2"))
                : Fixtures.Cluster.of(anH100Node("n0"), anH100Node("n1"), anH100Node("n2"));
        int job = 0;
        for (Op op : ops) {
            String node = "n" + op.node();
            if (op.kind() == 0) {
                Map<String, NodeView> before = c.state.snapshot().nodes().stream()
                        .collect(Collectors.toMap(NodeView::nodeId, v -> v));
                for (PlacementFact f : c.apply(c.state.dispatch(aGang("j" + job++).task("w", 1, Math.max(1, op.size()))
                        .build(), T0))) {
                    if (f instanceof PlacementFact.AllocationGranted g) {
                        for (PlacedTask p : g.allocation().placements()) {
                            assertThat(java.util.Collections.disjoint(p.gpuIndices(), before.get(p.nodeId()).foreignGpus()))
                                    .as("granted %s on foreign GPUs", p).isTrue();
                        }
                    }
                }
            } else if (op.kind() == 1) {
                c.apply(c.state.foreignLoad(node, op.size(), "pod x/y"));
            } else {
                List<Allocation> live = c.state.liveAllocations();
                if (!live.isEmpty()) {
                    Allocation a = live.get(op.pick() % live.size());
                    c.apply(c.state.runEnded(a.allocationId(), RunResult.succeeded(T0)));
                }
            }
            InventorySnapshot snapshot = c.state.snapshot();
            for (NodeView v : snapshot.nodes()) {
                // as many as counted, but never one Gantry holds
                assertThat(v.foreignGpus()).hasSize(Math.min(v.spec().foreignGpus(), 8 - v.allocatedTo().size()));
                assertThat(java.util.Collections.disjoint(v.foreignGpus(), v.allocatedTo().keySet())).isTrue();
                assertThat(v.freeGpuCount() + v.allocatedTo().size() + v.foreignGpus().size()).isEqualTo(8);
            }
            int free = c.state.freeCapacity().stream().mapToInt(FreeCapacity::freeGpus).sum();
            assertThat(free).isEqualTo(snapshot.nodes().stream().mapToInt(NodeView::freeGpuCount).sum());
            assertThat(Inventory.of(snapshot, Fixtures.SIM).snapshot()).isEqualTo(snapshot);
        }
    }
}
