package io.gantry.bench.placement;

import io.gantry.placement.core.ClusterState;
import io.gantry.placement.core.PlacementFact;
import io.gantry.placement.core.GangRequest;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.PlacementDecision;
import io.gantry.placement.core.PlacementPolicy;
import io.gantry.placement.core.TaskGroup;
import io.gantry.placement.core.TopologyPlacer;
import io.gantry.placement.core.TraceClusters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Topology-aware gang placement throughput, single-threaded, on the pure core.
 *
 * <p>{@code place}: one gang of {@code gangGpus} (8-GPU tasks, or one task when smaller) on {@code nodes} x 8-GPU
 * servers (16 nodes per rack, 16 racks per spine), {@code fill} = empty | 70 (70% of GPUs held by 1-4 GPU jobs,
 * binpacked) | fragmented (3 GPUs held on every node, so no node has 8 free). {@code mode} = incremental: the
 * live index is searched and the grant replayed, then released again, so the state is the same every call; full:
 * the index is rebuilt from a snapshot for every decision (what a stateless placer would pay).
 *
 * <p>{@code lingjun}: gangs of 8, 16, 32, 64 and 128 GPUs in turn on the 847-host Lingjun Clos
 * ({@code ../shared/traces/lingjun-topology/topo.csv}, run from the repository root), grant + release.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class PlacementBenchmark {
    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");

    @Param({"100", "1000", "5000"})
    public int nodes;

    @Param({"1", "8", "32", "128"})
    public int gangGpus;

    @Param({"empty", "70", "fragmented"})
    public String fill;

    @Param({"incremental", "full"})
    public String mode;

    private ClusterState state;
    private GangRequest gang;
    private int sequence;

    @Setup(Level.Trial)
    public void setUp() {
        state = new ClusterState("simulated", new TopologyPlacer(PlacementPolicy.BINPACK, Map.of()));
        for (int i = 0; i < nodes; i++) {
            NodeSpec n = TraceClusters.eightGpuServer(String.format("n%05d", i), "simulated", "H100", 81_920, 96_000,
                    1 << 20, Map.of(NodeSpec.SPINE_LABEL, "s" + i / 256, NodeSpec.RACK_LABEL, "r" + (i / 16) % 16));
            state.register(n).forEach(state::replay);
        }
        Random random = new Random(7);
        int job = 0;
        if ("70".equals(fill)) {
            int target = (int) (nodes * 8 * 0.7);
            int held = 0;
            while (held < target) {
                int g = 1 << random.nextInt(3);
                held += grant("fill-" + job++, new TaskGroup("w", 1, g, null, 1_000, 1_024)) ? g : 0;
            }
        } else if ("fragmented".equals(fill)) {
            // three GPUs on every node: a node-level binpacker would stack them, so pin one job per node first
            for (int i = 0; i < nodes; i++) {
                grant("fill-" + job++, new TaskGroup("w", 1, 5, null, 1_000, 1_024));
            }
            for (int i = 0; i < nodes; i++) {
                grant("fill-" + job++, new TaskGroup("w", 1, 3, null, 1_000, 1_024));
            }
            for (int i = 0; i < nodes; i++) {
                state.cancel("fill-" + i, 1, T0).forEach(state::replay); // drop the 5s: 5 free on every node
            }
        }
        int per = Math.min(8, gangGpus);
        gang = new GangRequest("bench", "t", 1, List.of(new TaskGroup("w", gangGpus / per, per, null, 1_000, 1_024)));
    }

    private boolean grant(String id, TaskGroup t) {
        List<PlacementFact> facts = state.dispatch(new GangRequest(id, "t", 1, List.of(t)), T0);
        facts.forEach(state::replay);
        return facts.get(0) instanceof PlacementFact.AllocationGranted;
    }

    @Benchmark
    public void place(Blackhole bh) {
        if ("full".equals(mode)) {
            bh.consume(state.placer().place(state.snapshot(), gang));
            return;
        }
        String id = "b" + (sequence++);
        GangRequest g = new GangRequest(id, "t", 1, gang.tasks());
        List<PlacementFact> facts = state.dispatch(g, T0);
        facts.forEach(state::replay);
        if (facts.get(0) instanceof PlacementFact.AllocationGranted) {
            state.cancel(id, 1, T0).forEach(state::replay);
        }
        bh.consume(facts);
    }

    /** Gangs of 8-128 GPUs on the Lingjun Clos, 30% of it held by small jobs. */
    @State(Scope.Benchmark)
    public static class Lingjun {
        ClusterState state;
        List<GangRequest> gangs = new ArrayList<>();
        int sequence;

        @Setup(Level.Trial)
        public void setUp() throws IOException {
            Path topo = Path.of(System.getProperty("gantry.traces", "../shared/traces"), "lingjun-topology/topo.csv");
            state = new ClusterState("simulated", new TopologyPlacer(PlacementPolicy.BINPACK, Map.of()));
            TraceClusters.lingjun(Files.readAllLines(topo), "simulated", "H100")
                    .forEach(n -> state.register(n).forEach(state::replay));
            Random random = new Random(11);
            int held = 0;
            for (int i = 0; held < 847 * 8 * 0.3; i++) {
                int g = 1 << random.nextInt(4);
                List<PlacementFact> facts = state.dispatch(new GangRequest("fill-" + i, "t", 1,
                        List.of(new TaskGroup("w", 1, g, null, 1_000, 1_024))), T0);
                facts.forEach(state::replay);
                held += facts.get(0) instanceof PlacementFact.AllocationGranted ? g : 0;
            }
            for (int gpus : new int[] {8, 16, 32, 64, 128}) {
                gangs.add(new GangRequest("g", "t", 1, List.of(new TaskGroup("w", gpus / 8, 8, null, 1_000, 1_024))));
            }
        }
    }

    @Benchmark
    public void lingjunGangs(Lingjun l, Blackhole bh) {
        GangRequest template = l.gangs.get(l.sequence % l.gangs.size());
        String id = "b" + (l.sequence++);
        List<PlacementFact> facts = l.state.dispatch(new GangRequest(id, "t", 1, template.tasks()), T0);
        facts.forEach(l.state::replay);
        if (facts.get(0) instanceof PlacementFact.AllocationGranted) {
            l.state.cancel(id, 1, T0).forEach(l.state::replay);
        }
        bh.consume(facts);
    }

    static boolean placed(PlacementDecision d) {
        return d instanceof PlacementDecision.Placed;
    }
}
