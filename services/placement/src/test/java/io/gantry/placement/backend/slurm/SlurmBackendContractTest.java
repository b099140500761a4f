package io.gantry.placement.backend.slurm;

import io.gantry.placement.backend.ExecutionBackendContract;
import io.gantry.placement.backend.RunPlan;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.PlacedTask;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The Slurm backend keeps the contract against the in-memory controller ({@link FakeSlurm}); the test plays slurmd
 * (a job ends with an exit code, a node stops responding). Every capability holds: Slurm reports exit codes and
 * node failures. Jobs outlive placement, so a restart is a new backend on the same controller.
 */
class SlurmBackendContractTest extends ExecutionBackendContract<SlurmBackend> {
    @TempDir
    Path work;
    private final FakeSlurm slurm = new FakeSlurm();

    @Override
    protected SlurmBackend newBackend() {
        SlurmBackend b = connect();
        // placement always restores before it starts runs: a fresh one adopts nothing
        b.adopt(List.of(), Instant.now());
        return b;
    }

    private SlurmBackend connect() {
        return SlurmBackend.connect(SlurmConfig.defaults("gantry", work).withPollInterval(Duration.ofMillis(40))
                .withSubmit(3, Duration.ofMillis(20)).withGraceSeconds(1), slurm, Clock.systemUTC());
    }

    /** The old process is gone (its worker stops, its jobs run on); the new one reads the same controller. */
    @Override
    protected SlurmBackend restarted(SlurmBackend before) {
        before.close();
        return connect();
    }

    @Override
    protected List<String> nodeIds(SlurmBackend backend) {
        return List.of("g1", "g2");
    }

    @Override
    protected RunPlan plan(Allocation allocation) {
        Map<String, RunPlan.Task> tasks = new java.util.HashMap<>();
        allocation.placements().forEach(p -> tasks.put(p.task(), new RunPlan.Task(List.of("python", "train.py"),
                null)));
        return new RunPlan(tasks, "token", null);
    }

    private static String jobName(Allocation allocation, PlacedTask task) {
        return SlurmSubmission.jobName(allocation.allocationId(), allocation.placements().indexOf(task));
    }

    @Override
    protected void finish(SlurmBackend backend, Allocation allocation, PlacedTask task, int exitCode) {
        String name = jobName(allocation, task);
        FakeSlurm.Job j = slurm.submitted().stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow();
        slurm.set(j.id(), exitCode == 0 ? "COMPLETED" : "FAILED", exitCode + ":0",
                exitCode == 0 ? "None" : "NonZeroExitCode");
    }

    @Override
    protected int running(SlurmBackend backend, Allocation allocation) {
        int n = 0;
        for (PlacedTask t : allocation.placements()) {
            n += (int) slurm.unfinished(jobName(allocation, t));
        }
        return n;
    }

    @Override
    protected void loseNode(SlurmBackend backend, String nodeId) {
        slurm.loseNode(nodeId);
    }
}
