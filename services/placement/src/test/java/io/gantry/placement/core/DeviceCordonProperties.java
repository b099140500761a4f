package io.gantry.placement.core;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static io.gantry.placement.core.Fixtures.T0;
import static io.gantry.placement.core.Fixtures.aGang;
import static io.gantry.placement.core.Fixtures.anH100Node;
import static org.assertj.core.api.Assertions.assertThat;

class DeviceCordonProperties {
    /** 0: dispatch a gang of {@code size} GPUs; 1: a hardware fault of GPU {@code gpu} of node {@code node}; 2: release. */
    record Op(int kind, int node, int gpu, int size) {
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        return Combinators.combine(Arbitraries.integers().between(0, 2), Arbitraries.integers().between(0, 2),
                Arbitraries.integers().between(0, 7), Arbitraries.integers().between(1, 8)).as(Op::new).list()
                .ofMaxSize(50);
    }

    @Property
    void noGpuIsEverPlacedOnOrCountedFreeOnceCordoned(@ForAll("ops") List<Op> ops, @ForAll boolean topology) {
        Fixtures.Cluster c = topology ? Fixtures.Cluster.topology(anH100Node("n0"), anH100Node("n1"), anH100Node("n2"))
                : Fixtures.Cluster.of(anH100Node("n0"), anH100Node("n1"), anH100Node("n2"));
        Set<String> cordoned = new HashSet<>();
        int job = 0;
        for (Op op : ops) {
            String node = "n" + op.node();
            if (op.kind() == 0) {
                for (PlacementFact f : c.apply(c.state.dispatch(aGang("j" + job++).task("w", 1, op.size()).build(), T0))) {
                    if (f instanceof PlacementFact.AllocationGranted g) {
                        for (PlacedTask p : g.allocation().placements()) {
                            p.gpuIndices().forEach(i -> assertThat(cordoned).doesNotContain(p.nodeId() + "#" + i));
                        }
                    }
                }
            } else if (op.kind() == 1) {
                c.apply(c.state.deviceFault(node, op.gpu(), DeviceAction.CORDON_DEVICE, "fault", T0, T0));
                cordoned.add(node + "#" + op.gpu());
                // every run holding the GPU was released
                c.state.liveAllocations().forEach(a -> a.placements().forEach(p -> assertThat(
                        p.nodeId().equals(node) && p.gpuIndices().contains(op.gpu())).isFalse()));
            } else {
                List<Allocation> live = c.state.liveAllocations();
                if (!live.isEmpty()) {
                    Allocation a = live.get(op.gpu() % live.size());
                    c.apply(c.state.runEnded(a.allocationId(), RunResult.succeeded(T0)));
                }
            }
            int free = c.state.freeCapacity().stream().mapToInt(FreeCapacity::freeGpus).sum();
            int held = c.state.liveAllocations().stream().mapToInt(Allocation::totalGpus).sum();
            assertThat(free + held + cordoned.size()).isEqualTo(24);
        }
    }
}
