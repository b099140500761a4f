package io.gantry.placement.backend.slurm;

import io.gantry.placement.backend.RunPlan;
import io.gantry.placement.core.Allocation;
import io.gantry.placement.core.Gpu;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.PlacedTask;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class SlurmInventoryAndSubmissionTest {
    private static final SlurmConfig CONFIG = SlurmConfig.defaults("gantry", Path.of("/shared/gantry"));

    @Test
    void aNodeOfTheGantryPartitionBecomesANodeWithItsGpusSocketsAndRack() {
        List<NodeSpec> nodes = SlurmInventory.nodes(SlurmOutput.nodes(SlurmOutputTest.sample("node-idle.txt")
                + "NodeName=other CPUTot=8 State=IDLE Partitions=batch\n"), List.of(), CONFIG);
        assertThat(nodes).hasSize(1);
        NodeSpec n = nodes.get(0);
        assertThat(n.nodeId()).isEqualTo("vm");
        assertThat(n.backend()).isEqualTo("slurm");
        assertThat(n.gpus()).hasSize(8).allSatisfy(g -> assertThat(g.model()).isEqualTo("H100"));
        // one gres line over sockets 0-1: spread in index order
        assertThat(n.gpus().stream().map(Gpu::numaNode).toList()).containsExactly(0, 0, 0, 0, 1, 1, 1, 1);
        assertThat(n.cpuMillis()).isEqualTo(4000);
        assertThat(n.numaCpuMillis()).containsExactly(2000, 2000);
        assertThat(n.memoryMiB()).isEqualTo(8192);
        assertThat(n.rack()).isEqualTo("r1");
        assertThat(n.spine()).isEqualTo("s1");
        assertThat(n.labels()).containsEntry(SlurmInventory.FEATURES_LABEL, "rack_r1,spine_s1");
    }

    @Test
    void perSocketGresLinesAndMappedModelsAreKept() {
        SlurmConfig config = new SlurmConfig("gantry", "", CONFIG.pollInterval(), CONFIG.commandTimeout(), 10, 4,
                CONFIG.submitBackoff(), CONFIG.pendingTimeout(), "gpu", Map.of("a100", "A100-80GB"), CONFIG.workDir(),
                true, true, "rack_", "spine_", "", CONFIG.startupTimeout());
        SlurmOutput.Node node = SlurmOutput.nodes("NodeName=g1 CPUTot=64 Sockets=2 RealMemory=512000 "
                + "MemSpecLimit=2000 Gres=gpu:a100:2(S:1),gpu:a100:2(S:0) State=MIXED Partitions=gantry,batch").get(0);
        NodeSpec n = SlurmInventory.nodes(List.of(node), List.of(), config).get(0);
        assertThat(n.gpus().stream().map(Gpu::numaNode).toList()).containsExactly(1, 1, 0, 0);
        assertThat(n.gpus()).allSatisfy(g -> assertThat(g.model()).isEqualTo("A100-80GB"));
        assertThat(n.memoryMiB()).isEqualTo(510000);
        assertThat(SlurmInventory.gresType(node, "A100-80GB", config)).isEqualTo("a100");
    }

    @Test
    void withoutRackFeaturesTheTopologyPluginsSwitchesGiveRackAndSpine() {
        List<SlurmOutput.Switch> switches = SlurmOutput.topology("""
                SwitchName=leaf2 Level=0 LinkSpeed=1 Nodes=g[03-04]
                SwitchName=spine1 Level=1 LinkSpeed=1 Nodes=g[01-04] Switches=leaf[1-2]
                """);
        SlurmOutput.Node node = SlurmOutput.nodes("NodeName=g03 CPUTot=8 State=IDLE Partitions=gantry").get(0);
        NodeSpec n = SlurmInventory.nodes(List.of(node), switches, CONFIG).get(0);
        assertThat(n.rack()).isEqualTo("leaf2");
        assertThat(n.spine()).isEqualTo("spine1");
        assertThat(n.gpus()).isEmpty();
    }

    private static Allocation allocation(Long timeLimit) {
        PlacedTask p = new PlacedTask("train", 1, "g1", "H100", List.of(2, 3), 1500, 2048, List.of(4, 5), null);
        return new Allocation("a-1", "job 7", "vision", 3, List.of(p), Instant.EPOCH, "slurm", timeLimit);
    }

    @Test
    void aReplicaIsOneBatchJobPinnedToGantrysNodeAndGpuCount() {
        List<String> o = SlurmSubmission.options(allocation(3600L), 0, "h100", CONFIG);
        assertThat(o).contains("--parsable", "--job-name=gantry-a-1-0", "--partition=gantry", "--nodelist=g1",
                "--nodes=1", "--ntasks=1", "--cpus-per-task=2", "--mem=2048M", "--gres=gpu:h100:2", "--no-requeue",
                "--export=NONE", "--output=/shared/gantry/job_7/3/train-1.log", "--chdir=/shared/gantry/job_7/3",
                "--time=61", "--comment=gantry job=job+7 attempt=3 task=train replica=1");
        assertThat(o).noneMatch(s -> s.startsWith("--account"));
        assertThat(SlurmSubmission.options(allocation(null), 0, null, CONFIG))
                .contains("--gres=gpu:2").noneMatch(s -> s.startsWith("--time"));
        assertThat(SlurmSubmission.identity("gantry-a-1-0")).isEqualTo(new SlurmSubmission.Identity("a-1", 0));
        assertThat(SlurmSubmission.identity("train")).isNull();
        assertThat(SlurmSubmission.identity("gantry-x")).isNull();
    }

    @Test
    void theScriptSetsExactGpuIndicesAndRunIdentityAndExecsTheCommandLiterally() {
        RunPlan plan = new RunPlan(Map.of("train", new RunPlan.Task(List.of("sh", "-c", "echo 'hi' $HOME; exit 3"), null)),
                "tok-123", "/ckpt");
        String script = SlurmSubmission.script(allocation(null), 0, plan.task("train").command(), plan, CONFIG);
        assertThat(script).startsWith("#!/bin/sh\n")
                .contains("export CUDA_VISIBLE_DEVICES='2,3'\n", "export GANTRY_JOB_ID='job 7'\n",
                        "export GANTRY_TASK='train'\n", "export GANTRY_REPLICA='1'\n", "export GANTRY_ATTEMPT='3'\n",
                        "export GANTRY_CPU_SET='4-5'\n", "export GANTRY_RUN_TOKEN='tok-123'\n",
                        "export GANTRY_CHECKPOINT_DIR='/ckpt'\n")
                .endsWith("exec 'sh' '-c' 'echo '\\''hi'\\'' $HOME; exit 3'\n")
                .doesNotContain("export PATH", "export HOME");
    }

    @Test
    void theScriptSetsTheTenantsVariablesTheGangsRendezvousAndEntersTheWorkingDirectory() {
        Allocation a = new Allocation("a-2", "job-8", "vision", 1, List.of(
                new PlacedTask("launcher", 0, "g1", null, List.of(), 1000, 1024),
                new PlacedTask("worker", 0, "g2", "H100", List.of(0, 1), 1000, 1024),
                new PlacedTask("worker", 1, "g3", "H100", List.of(0, 1), 1000, 1024)), Instant.EPOCH, "slurm");
        RunPlan plan = new RunPlan(Map.of("launcher", new RunPlan.Task(List.of("mpirun"), null),
                "worker", new RunPlan.Task(List.of("python", "train.py"), null,
                        Map.of("NCCL_DEBUG", "INFO", "MSG", "it's", "PATH", "/venv/bin:/usr/bin"), "/home/u/proj",
                        "pytorch/pytorch:2.3.0", List.of(new RunPlan.Mount("/data", "/mnt/data", null, true)))));

        String script = SlurmSubmission.script(a, 2, List.of("python", "train.py"), plan, CONFIG);
        String port = Integer.toString(io.gantry.placement.backend.GangEnvironment.derivedPort("a-2"));

        assertThat(script).contains("export NCCL_DEBUG='INFO'\n", "export MSG='it'\\''s'\n",
                        "export PATH='/venv/bin:/usr/bin'\n", "export MASTER_ADDR='g1'\n",
                        "export MASTER_PORT='" + port + "'\n", "export WORLD_SIZE='3'\n", "export RANK='2'\n",
                        "export GANTRY_RANK='2'\n", "export GANTRY_WORLD_SIZE='3'\n", "export GANTRY_HOSTS='g1,g2,g3'\n",
                        "export PET_NPROC_PER_NODE='2'\n",
                        "echo 'gantry: the slurm backend runs commands on the host: image pytorch/pytorch:2.3.0 is not "
                                + "used'\n",
                        "echo 'gantry: the slurm backend mounts nothing: [/data] are the host'\\''s own paths'\n",
                        "cd '/home/u/proj' || { echo 'gantry: cannot enter the working directory /home/u/proj' >&2; "
                                + "exit 1; }\nexec 'python' 'train.py'\n");
        assertThat(script.indexOf("export NCCL_DEBUG")).as("the tenant's variables come before Gantry's")
                .isLessThan(script.indexOf("export GANTRY_JOB_ID"));
        String launcher = SlurmSubmission.script(a, 0, List.of("mpirun"), plan, CONFIG);
        assertThat(launcher).contains("export RANK='0'\n", "export MASTER_ADDR='g1'\n")
                .doesNotContain("NCCL_DEBUG", "cd ", "echo ");
    }
}
