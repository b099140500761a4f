package io.gantry.placement.backend;

import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.Gpu;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.PlacedTask;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The local backend keeps the contract with real {@code sh} processes that wait for a file naming their exit code
 * (as the current user: the contract is about the backend, not about {@code setpriv}).
 */
class LocalBackendContractTest extends ExecutionBackendContract<LocalBackend> {
    @TempDir
    Path dir;

    @Override
    protected LocalBackend newBackend() {
        NodeSpec node = new NodeSpec(LocalBackend.NODE_ID, LocalBackend.NAME,
                List.of(new Gpu(0, "H100", 0), new Gpu(1, "H100", 0)), 4000, 4096, Map.of());
        return new LocalBackend(node, dir.resolve("work"), null, new VirtualClock(Clock.systemUTC(), 1));
    }

    @Override
    protected LocalBackend restarted(LocalBackend before) {
        return before; // processes are children of this backend object; it outlives a restart of the event loop
    }

    @Override
    protected List<String> nodeIds(LocalBackend backend) {
        return List.of(LocalBackend.NODE_ID);
    }

    private Path control() {
        try {
            return Files.createDirectories(dir.resolve("control"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Each task writes its pid, then waits for {@code <job>-<task>-<replica>} and exits with the code in it. */
    @Override
    protected RunPlan plan(Allocation allocation) {
        String ctl = control().toString();
        String script = "c=" + ctl + "; f=$c/$GANTRY_JOB_ID-$GANTRY_TASK-$GANTRY_REPLICA; "
                + "echo $$ > $f.pid; while [ ! -f $f ]; do sleep 0.05; done; exit $(cat $f)";
        Map<String, RunPlan.Task> tasks = new java.util.HashMap<>();
        allocation.placements().forEach(p -> tasks.put(p.task(), new RunPlan.Task(List.of("sh", "-c", script), null)));
        return new RunPlan(tasks);
    }

    private Path file(Allocation a, PlacedTask t) {
        return control().resolve(a.jobId() + "-" + t.task() + "-" + t.replica());
    }

    @Override
    protected void finish(LocalBackend backend, Allocation allocation, PlacedTask task, int exitCode) {
        try {
            Path tmp = Files.writeString(control().resolve("tmp-" + System.nanoTime()), Integer.toString(exitCode));
            Files.move(tmp, file(allocation, task), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    protected int running(LocalBackend backend, Allocation allocation) {
        int alive = 0;
        for (PlacedTask t : allocation.placements()) {
            Path pid = Path.of(file(allocation, t) + ".pid");
            try {
                if (Files.exists(pid) && ProcessHandle.of(Long.parseLong(Files.readString(pid).trim()))
                        .map(ProcessHandle::isAlive).orElse(false)) {
                    alive++;
                }
            } catch (IOException | NumberFormatException e) {
                // written half-way: not counted yet
            }
        }
        return alive;
    }

    @Override
    protected Set<Capability> cannot() {
        return Set.of(Capability.NODE_LOSS);
    }
}
