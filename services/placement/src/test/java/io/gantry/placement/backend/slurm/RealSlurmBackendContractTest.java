package io.gantry.placement.backend.slurm;

import io.gantry.placement.backend.ExecutionBackendContract;
import io.gantry.placement.backend.RunPlan;
import io.gantry.placement.backend.slurm.SlurmCommands.SlurmCommandException;
import io.gantry.placement.backend.slurm.SlurmCommands.Tool;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.PlacedTask;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.awaitility.Awaitility.await;

/**
 * The Slurm backend keeps the contract against a real controller ({@link TestSlurm}: one node, this host; its own
 * directory and ports 16827/16828, apart from SlurmBackendIntegrationTest's). The gang's two replicas share the one
 * node. Each task is {@code sh} waiting for a file naming its exit code; a lost node is drained and set DOWN (its
 * jobs end NODE_FAIL; DOWN alone would come back at once with {@code ReturnToService=2}) and resumed after the test.
 * Skipped with the reason where Slurm cannot run.
 */
class RealSlurmBackendContractTest extends ExecutionBackendContract<SlurmBackend> {
    private static final Path DIR = Path.of("/tmp/gantry-slurm-contract");
    private static TestSlurm controller;

    @TempDir
    static Path control;
    private String lostNode;

    @BeforeAll
    static void startSlurm() throws Exception {
        controller = TestSlurm.start(DIR, 16827, 16828);
    }

    @AfterAll
    static void stopSlurm() throws Exception {
        if (controller != null) {
            controller.stop();
        }
    }

    @AfterEach
    void resumeLostNode() throws SlurmCommandException {
        if (lostNode != null) {
            controller.commands.run(Tool.SCONTROL, List.of("update", "nodename=" + lostNode, "state=resume"), null);
            await().atMost(Duration.ofSeconds(30)).until(() -> SlurmOutput.nodes(controller.commands.run(Tool.SCONTROL,
                    List.of("show", "node", "-o"), null)).stream().noneMatch(SlurmOutput.Node::failing));
        }
    }

    @Override
    protected SlurmBackend newBackend() {
        SlurmBackend b = connect();
        // placement always restores first; a fresh one also cancels what an earlier test's backend left running
        b.adopt(List.of(), Instant.now());
        return b;
    }

    private SlurmBackend connect() {
        return SlurmBackend.connect(SlurmConfig.defaults("gantry", DIR.resolve("jobs"))
                .withPollInterval(Duration.ofMillis(200)).withSubmit(2, Duration.ofMillis(200)).withGraceSeconds(1),
                controller.commands, Clock.systemUTC());
    }

    /** Jobs outlive placement: the old process is gone, a new one reads the same controller. */
    @Override
    protected SlurmBackend restarted(SlurmBackend before) {
        before.close();
        return connect();
    }

    @Override
    protected List<String> nodeIds(SlurmBackend backend) {
        return List.of(controller.node);
    }

    @Override
    protected RunPlan plan(Allocation allocation) {
        String script = "f=" + control + "/" + allocation.allocationId() + "-$GANTRY_TASK-$GANTRY_REPLICA; "
                + "while [ ! -f $f ]; do sleep 0.05; done; exit $(cat $f)";
        Map<String, RunPlan.Task> tasks = new java.util.HashMap<>();
        allocation.placements().forEach(p -> tasks.put(p.task(), new RunPlan.Task(List.of("sh", "-c", script), null)));
        return new RunPlan(tasks, "token", null);
    }

    @Override
    protected void finish(SlurmBackend backend, Allocation allocation, PlacedTask task, int exitCode) {
        try {
            Path tmp = Files.writeString(control.resolve("tmp-" + System.nanoTime()), Integer.toString(exitCode));
            Files.move(tmp, control.resolve(allocation.allocationId() + "-" + task.task() + "-" + task.replica()),
                    StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The run's jobs Slurm started and has not ended (running, completing; a pending job has not launched). */
    @Override
    protected int running(SlurmBackend backend, Allocation allocation) {
        try {
            return (int) SlurmOutput.queue(controller.commands.run(Tool.SQUEUE, List.of("-h", "-t", "all", "-o",
                    SlurmOutput.SQUEUE_FORMAT), null)).stream()
                    .filter(q -> q.name().startsWith(SlurmSubmission.JOB_PREFIX + allocation.allocationId() + "-"))
                    .filter(q -> SlurmOutput.holdsResources(q.state())).count();
        } catch (SlurmCommandException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    protected void loseNode(SlurmBackend backend, String nodeId) {
        lostNode = nodeId;
        try {
            controller.commands.run(Tool.SCONTROL, List.of("update", "nodename=" + nodeId, "state=drain",
                    "reason=gantry-contract"), null);
            controller.commands.run(Tool.SCONTROL, List.of("update", "nodename=" + nodeId, "state=down",
                    "reason=gantry-contract"), null);
        } catch (SlurmCommandException e) {
            throw new IllegalStateException(e);
        }
    }
}
