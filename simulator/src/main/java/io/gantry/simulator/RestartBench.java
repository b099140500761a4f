package io.gantry.simulator;

import io.gantry.placement.core.NodeSpec;
import io.gantry.queue.core.FairShareConfig;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * How a restart's restore grows with history: replays a workload with the first policy given (the same options as
 * {@code replay}), then restarts queue, placement and recovery on the log it left and times each restore.
 * In memory (no Kafka fetch, no Avro decoding): a lower bound on a real restart with that much history.
 *
 * <pre>java -cp simulator/target/gantry-simulator.jar io.gantry.simulator.RestartBench --trace scale
 *     --cluster uniform:5000x8 --policy gantry [--max-jobs N]</pre>
 */
public final class RestartBench {
    private RestartBench() {
    }

    public static void main(String[] args) throws Exception {
        Simulation sim = replayed(Replay.parse(args));
        // twice: the first restart of each handler also warms its code up
        for (int round = 1; round <= 2; round++) {
            System.gc();
            List<Simulation.Restart> times = new java.util.ArrayList<>(sim.timeRestarts());
            times.addAll(sim.timeSnapshotRestarts());
            for (Simulation.Restart t : times) {
                System.out.printf(Locale.ROOT, "round %d: %-9s %-14s %,11d records restored in %,8.0f ms (%.2f us/record)%n",
                        round, t.service().id(), t.fromSnapshot() ? "from snapshot" : "whole history", t.records(),
                        t.nanos() / 1e6, t.records() == 0 ? 0 : t.nanos() / 1e3 / t.records());
            }
        }
        System.out.println("machine: " + Replay.machine());
    }

    /** The replay the options describe (the first policy given), run, its size and time printed. */
    static Simulation replayed(Replay.Options o) throws java.io.IOException {
        List<NodeSpec> nodes = Clusters.resolve(o.cluster(), o.traces());
        Workload w = Replay.workload(o);
        FairShareConfig config = Replay.queueConfig(o, w, Clusters.totalGpus(nodes));
        Simulation sim = new Simulation(nodes, w, o.policies().get(0), config, Replay.placer(o.placer()),
                Replay.faults(o, nodes, Simulation.horizon(w)), s -> { });
        if (o.checkpointMinutes() != null) {
            sim.checkpoints(new Simulation.Checkpoints(Duration.ofMinutes(o.checkpointMinutes()),
                    Duration.ofSeconds(o.restartCostSeconds()), 0.1, o.seed()));
        }
        Simulation.Result r = sim.run();
        System.out.printf(Locale.ROOT, "%s: %d jobs, replayed in %.1f s%n", w.name(), w.jobs().size(),
                r.wallNanos / 1e9);
        return sim;
    }
}
