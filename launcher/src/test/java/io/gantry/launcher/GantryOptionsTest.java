package io.gantry.launcher;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code gantry dev}'s options as placement sees them (bad options exit the JVM, so only good ones here). */
class GantryOptionsTest {
    @TempDir
    Path dir;

    @Test
    void theSlurmBackendGetsItsConfPartitionApiUrlAndWorkDir() throws IOException {
        Path conf = Files.writeString(dir.resolve("slurm.conf"), "ClusterName=test\n");
        Map<String, String> opts = Gantry.parse(new String[] {"dev", "--backend", "slurm", "--slurm-conf",
            conf.toString(), "--slurm-partition", "gpu", "--port", "9080"});

        Map<String, String> placement = Gantry.placementProperties(opts, dir.resolve("data"), 9080);

        assertThat(placement).containsEntry("gantry.placement.backend", "slurm")
                .containsEntry("gantry.placement.slurm.conf", conf.toAbsolutePath().toString())
                .containsEntry("gantry.placement.slurm.partition", "gpu")
                .containsEntry("gantry.placement.slurm.api-url", "http://127.0.0.1:9080")
                .containsEntry("gantry.placement.slurm.work-dir", dir.resolve("data").resolve("slurm-runs").toString());
    }

    @Test
    void withoutSlurmOptionsTheSlurmBackendKeepsItsOwnDefaults() {
        Map<String, String> placement = Gantry.placementProperties(
                Gantry.parse(new String[] {"dev", "--backend", "slurm"}), dir, 8080);

        // the partition defaults to gantry and the tools read SLURM_CONF or the system's slurm.conf
        assertThat(placement).doesNotContainKeys("gantry.placement.slurm.conf", "gantry.placement.slurm.partition");
    }

    @Test
    void otherBackendsGetNoSlurmSettings() throws IOException {
        Path kubeconfig = Files.writeString(dir.resolve("kubeconfig"), "apiVersion: v1\n");
        Map<String, String> placement = Gantry.placementProperties(Gantry.parse(new String[] {"dev", "--backend",
            "kubernetes", "--kubeconfig", kubeconfig.toString(), "--namespace", "ml"}), dir, 8080);

        assertThat(placement).containsEntry("gantry.placement.backend", "kubernetes")
                .containsEntry("gantry.placement.kubernetes.kubeconfig", kubeconfig.toAbsolutePath().toString())
                .containsEntry("gantry.placement.kubernetes.namespace", "ml")
                .allSatisfy((key, value) -> assertThat(key).doesNotStartWith("gantry.placement.slurm."));
    }

    @Test
    void eachPoolGetsItsBackendAndTheBackendsOptionsApplyToItsPools() {
        Map<String, String> placement = Gantry.placementProperties(Gantry.parse(new String[] {"dev", "--pool",
            "sim=simulated", "--pool=gpu=local", "--local-gpus", "2"}), dir, 8080);

        assertThat(placement).containsEntry("gantry.placement.pools.sim.backend", "simulated")
                .containsEntry("gantry.placement.pools.gpu.backend", "local")
                .containsEntry("gantry.placement.local.gpus", "2")
                .allSatisfy((key, value) -> assertThat(key).doesNotStartWith("gantry.placement.slurm."));
        assertThat(Gantry.pools(Gantry.parse(new String[] {"dev", "--pool", "a=slurm", "--pool", "b=kubernetes"})))
                .containsExactly(Map.entry("a", "slurm"), Map.entry("b", "kubernetes"));
        assertThat(Gantry.placementProperties(Gantry.parse(new String[] {"dev", "--pool", "hpc=slurm"}), dir, 8080))
                .as("a slurm pool reports to admission like the slurm backend")
                .containsEntry("gantry.placement.slurm.api-url", "http://127.0.0.1:8080");
    }

    @Test
    void splittingPlacementByPoolNeedsTwoPools() {
        Map<String, String> placement = Gantry.placementProperties(Gantry.parse(new String[] {"dev", "--pool",
            "sim=simulated", "--pool", "gpu=local", "--shard-by-pool"}), dir, 8080);
        assertThat(placement).containsEntry("gantry.placement.shard-by-pool", "true");
        assertThat(Gantry.placementProperties(Gantry.parse(new String[] {"dev", "--pool", "sim=simulated"}), dir, 8080))
                .doesNotContainKey("gantry.placement.shard-by-pool");
    }

    @Test
    void theQueueSplitsIntoTheShardsAsked() {
        assertThat(Gantry.queueProperties(Gantry.parse(new String[] {"dev", "--queue-shards", "2"})))
                .containsEntry("gantry.queue.shards", "2");
        assertThat(Gantry.queueProperties(Gantry.parse(new String[] {"dev"}))).doesNotContainKey("gantry.queue.shards");
    }
}
