package io.gantry.placement.core;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static io.gantry.placement.core.Fixtures.T0;
import static org.assertj.core.api.Assertions.assertThat;

/** Invariants of placement over random clusters and random sequences of dispatches, cancels and node failures. */
class PlacementProperties {

    sealed interface Op {
    }

    record Dispatch(String jobId, int attempt, List<TaskGroup> tasks) implements Op {
    }

    record Cancel(String jobId) implements Op {
    }

    record FailNode(int node) implements Op {
    }

    record RecoverNode(int node) implements Op {
    }

    record Finish(String jobId, boolean ok) implements Op {
    }

    record Scenario(List<NodeSpec> nodes, List<Op> ops) {
    }

    @Provide
    Arbitrary<Scenario> scenarios() {
        Arbitrary<NodeSpec> node = Combinators.combine(
                Arbitraries.integers().between(0, 8), Arbitraries.of("H100", "A100"),
                Arbitraries.integers().between(1, 16).map(c -> c * 1_000))
                .as((gpus, model, cpu) -> new NodeSpec("n", "simulated", gpusOf(gpus, model), cpu, 65_536, null));
        Arbitrary<List<NodeSpec>> nodes = node.list().ofMinSize(1).ofMaxSize(5).map(list -> {
            List<NodeSpec> named = new ArrayList<>();
            for (int i = 0; i < list.size(); i++) {
                NodeSpec n = list.get(i);
                named.add(new NodeSpec("n" + i, n.backend(), n.gpus(), n.cpuMillis(), n.memoryMiB(), n.labels()));
            }
            return named;
        });
        Arbitrary<String> jobs = Arbitraries.of("j0", "j1", "j2", "j3", "j4", "j5");
        Arbitrary<TaskGroup> task = Combinators.combine(Arbitraries.integers().between(1, 4),
                        Arbitraries.integers().between(0, 8), Arbitraries.of("H100", "A100", "any"),
                        Arbitraries.integers().between(0, 8).map(c -> c * 1_000))
                .as((replicas, gpus, model, cpu) -> new TaskGroup("t", replicas, gpus,
                        model.equals("any") ? null : model, cpu, 1_024));
        Arbitrary<Op> dispatch = Combinators.combine(jobs, Arbitraries.integers().between(1, 3),
                task.list().ofMinSize(1).ofMaxSize(3)).as((job, attempt, tasks) -> {
            List<TaskGroup> named = new ArrayList<>();
            for (int i = 0; i < tasks.size(); i++) {
                TaskGroup t = tasks.get(i);
                named.add(new TaskGroup("t" + i, t.replicas(), t.gpus(), t.gpuModel(), t.cpuMillis(), t.memoryMiB()));
            }
            return new Dispatch(job, attempt, named);
        });
        Arbitrary<Op> op = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(6, dispatch),
                net.jqwik.api.Tuple.of(2, jobs.map(Cancel::new)),
                net.jqwik.api.Tuple.of(2, Combinators.combine(jobs, Arbitraries.of(true, false)).as(Finish::new)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0, 4).map(FailNode::new)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0, 4).map(RecoverNode::new)));
        return Combinators.combine(nodes, op.list().ofMaxSize(40)).as(Scenario::new);
    }

    private static List<Gpu> gpusOf(int count, String model) {
        List<Gpu> gpus = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            gpus.add(new Gpu(i, model, 81_920));
        }
        return gpus;
    }

    /** Runs one op the way the adapter does: decide, then replay every fact. Returns the facts. */
    private static List<PlacementFact> run(ClusterState state, Op op, int step) {
        var now = T0.plusSeconds(step);
        List<PlacementFact> facts;
        if (op instanceof Dispatch d) {
            facts = state.dispatch(new GangRequest(d.jobId(), "t", d.attempt(), d.tasks()), now);
        } else if (op instanceof Cancel c) {
            facts = state.liveAllocation(c.jobId()).map(a -> state.cancel(c.jobId(), a.attempt(), now)).orElse(List.of());
        } else if (op instanceof Finish f) {
            facts = state.liveAllocation(f.jobId()).map(a -> state.runEnded(a.allocationId(),
                    f.ok() ? RunResult.succeeded(now) : RunResult.failed(1, "boom", now))).orElse(List.of());
        } else if (op instanceof FailNode n) {
            facts = state.nodeFailed("n" + n.node(), now);
        } else {
            facts = state.nodeRecovered("n" + ((RecoverNode) op).node());
        }
        facts.forEach(state::replay);
        return facts;
    }

    private static ClusterState start(Scenario s) {
        ClusterState state = new ClusterState("simulated", new FirstFitPlacer());
        s.nodes().forEach(n -> state.register(n).forEach(state::replay));
        return state;
    }

    @Property(tries = 300)
    void aGpuIsNeverAllocatedTwiceAndOnlyOnHealthyNodesThatHaveIt(@ForAll("scenarios") Scenario s) {
        ClusterState state = start(s);
        for (int i = 0; i < s.ops().size(); i++) {
            for (PlacementFact f : run(state, s.ops().get(i), i)) {
                if (f instanceof PlacementFact.AllocationGranted g) {
                    for (PlacedTask p : g.allocation().placements()) {
                        assertThat(state.isHealthy(p.nodeId())).isTrue();
                    }
                }
            }
            Set<String> held = new HashSet<>();
            for (Allocation a : state.liveAllocations()) {
                for (PlacedTask p : a.placements()) {
                    NodeSpec node = s.nodes().stream().filter(n -> n.nodeId().equals(p.nodeId())).findFirst().orElseThrow();
                    for (int gpu : p.gpuIndices()) {
                        assertThat(held.add(p.nodeId() + "#" + gpu)).as("GPU %s#%s held twice", p.nodeId(), gpu).isTrue();
                        assertThat(gpu).isLessThan(node.gpuCount());
                    }
                }
            }
            for (NodeView n : state.snapshot().nodes()) {
                assertThat(n.freeCpuMillis()).isGreaterThanOrEqualTo(0);
            }
        }
    }

    @Property(tries = 300)
    void aGangIsPlacedWholeOrNotAtAll(@ForAll("scenarios") Scenario s) {
        ClusterState state = start(s);
        for (int i = 0; i < s.ops().size(); i++) {
            Op op = s.ops().get(i);
            InventorySnapshot before = state.snapshot();
            List<PlacementFact> facts = run(state, op, i);
            if (op instanceof Dispatch d && !facts.isEmpty()) {
                assertThat(facts).hasSize(1);
                if (facts.get(0) instanceof PlacementFact.AllocationGranted g) {
                    int replicas = d.tasks().stream().mapToInt(TaskGroup::replicas).sum();
                    assertThat(g.allocation().placements()).hasSize(replicas);
                    for (PlacedTask p : g.allocation().placements()) {
                        TaskGroup t = d.tasks().stream().filter(x -> x.name().equals(p.task())).findFirst().orElseThrow();
                        assertThat(p.gpuIndices()).hasSize(t.gpus());
                        if (t.gpuModel() != null && t.gpus() > 0) {
                            assertThat(p.gpuModel()).isEqualTo(t.gpuModel());
                        }
                    }
                } else {
                    assertThat(state.snapshot()).as("a deferred gang holds nothing").isEqualTo(before);
                }
            }
        }
    }

    @Property(tries = 200)
    void releasingAGrantedAllocationRestoresTheInventoryExactly(@ForAll("scenarios") Scenario s) {
        ClusterState state = start(s);
        for (int i = 0; i < s.ops().size(); i++) {
            Op op = s.ops().get(i);
            InventorySnapshot before = state.snapshot();
            List<PlacementFact> facts = run(state, op, i);
            if (facts.size() == 1 && facts.get(0) instanceof PlacementFact.AllocationGranted g) {
                state.cancel(g.allocation().jobId(), g.allocation().attempt(), T0).forEach(state::replay);
                assertThat(state.snapshot()).isEqualTo(before);
                facts.forEach(state::replay); // put it back and go on
            }
        }
    }

    @Property(tries = 200)
    void theSameInputsAlwaysGiveTheSameFactsAndReplayingThemRebuildsTheState(@ForAll("scenarios") Scenario s) {
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
        assertThat(replayed.liveAllocations()).isEqualTo(first.liveAllocations());
    }
}
