package io.gantry.placement.backend;

import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.PlacedTask;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The simulated backend keeps the contract: tasks end by virtual time, so "finishing" one moves the clock. */
class SimulatedBackendContractTest extends ExecutionBackendContract<SimulatedBackend> {
    private static final long RUN_SECONDS = 600;
    private Instant now = Instant.parse("2026-11-24T10:00:00Z");

    @Override
    protected SimulatedBackend newBackend() {
        return new SimulatedBackend(ClusterFile.defaultCluster());
    }

    @Override
    protected SimulatedBackend restarted(SimulatedBackend before) {
        return before; // the backend object outlives a restart of the event loop
    }

    @Override
    protected List<String> nodeIds(SimulatedBackend backend) {
        return backend.nodes().stream().map(n -> n.nodeId()).toList();
    }

    @Override
    protected RunPlan plan(Allocation allocation) {
        Map<String, RunPlan.Task> tasks = new HashMap<>();
        allocation.placements().forEach(p -> tasks.put(p.task(), new RunPlan.Task(List.of(), RUN_SECONDS)));
        return new RunPlan(tasks);
    }

    @Override
    protected RunPlan restoredPlan(Allocation allocation) {
        return plan(allocation); // placement recovers the run time from TaskPlacement.runSeconds
    }

    @Override
    protected void finish(SimulatedBackend backend, Allocation allocation, PlacedTask task, int exitCode) {
        Instant end = allocation.grantedAt().plusSeconds(RUN_SECONDS);
        if (now.isBefore(end)) {
            now = end;
        }
    }

    @Override
    protected int running(SimulatedBackend backend, Allocation allocation) {
        return backend.running().contains(allocation.allocationId()) ? allocation.placements().size() : 0;
    }

    @Override
    protected void loseNode(SimulatedBackend backend, String nodeId) {
        backend.fail(nodeId);
    }

    @Override
    protected Set<Capability> cannot() {
        return Set.of(Capability.EXIT_CODES);
    }

    @Override
    protected Instant now() {
        return now;
    }
}
