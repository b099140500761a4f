package io.gantry.launcher;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code gantry dev}'s options as placement sees them, and the ones it refuses before starting anything. */
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

    @Test
    void badOptionsAreRefusedBeforeAnythingStarts() {
        Map<String, String> refusals = new java.util.LinkedHashMap<>();
        refusals.put("--port=99999", "--port must be a port number from 1 to 65531");
        refusals.put("--port=65535", "--port must be a port number from 1 to 65531");
        refusals.put("--kafka-port=0", "--kafka-port must be a port number from 1 to 65535");
        refusals.put("--postgres-port=x", "--postgres-port must be a port number");
        refusals.put("--heartbeat-timeout=10", "--heartbeat-timeout must be a duration");
        refusals.put("--heartbeat-timeout=10x", "--heartbeat-timeout must be a duration");
        refusals.put("--service-heap=lots", "--service-heap must be a JVM heap size");
        refusals.put("--speedup=0", "--speedup must be a positive number");
        refusals.put("--instances=4", "--instances must be 1, 2 or 3");
        refusals.put("--no-such-option=1", "unknown option --no-such-option");
        refusals.forEach((arg, message) -> org.assertj.core.api.Assertions.assertThatThrownBy(
                () -> Gantry.parse(new String[] {"dev", arg})).as(arg).isInstanceOf(Gantry.BadOption.class)
                .hasMessageContaining(message));
        // with 3 instances the services take --port and the 14 after it
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Gantry.parse(new String[] {"dev", "--instances",
            "3", "--port", "65530"})).hasMessageContaining("from 1 to 65521");
        assertThat(Gantry.parse(new String[] {"dev", "--port", "65531", "--heartbeat-timeout", "500ms",
            "--service-heap", "1g", "--speedup", "0.5"})).containsEntry("port", "65531");
    }

    @Test
    void aMissingFileIsRefusedBeforeAnythingStarts() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Gantry.queueProperties(Gantry.parse(
                new String[] {"dev", "--queue-config", dir.resolve("none.yml").toString()})))
                .isInstanceOf(Gantry.BadOption.class).hasMessageContaining("no such file");
    }

    @Test
    void aPortInUseStopsTheStartBeforeKafkaOrPostgresqlStart() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1,
                java.net.InetAddress.getByName("127.0.0.1"))) {
            int base = DevCluster.freePortRange(5);
            DevCluster cluster = new DevCluster(new DevCluster.Config(dir.resolve("data"), dir, DevCluster.freePort(),
                    taken.getLocalPort(), base, Map.of(), "64m"));
            org.assertj.core.api.Assertions.assertThatThrownBy(cluster::start).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("127.0.0.1:" + taken.getLocalPort() + " for PostgreSQL (--postgres-port)");
            cluster.close();
            assertThat(dir.resolve("data").resolve("kafka")).doesNotExist();
            assertThat(dir.resolve("data").resolve("postgres")).doesNotExist();

            DevCluster same = new DevCluster(new DevCluster.Config(dir.resolve("data"), dir, base + 2,
                    DevCluster.freePort(), base, Map.of(), "64m"));
            org.assertj.core.api.Assertions.assertThatThrownBy(same::start)
                    .hasMessageContaining(base + 2 + " is given to both Kafka (--kafka-port) and placement");
            same.close();
        }
    }
}
