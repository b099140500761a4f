package io.gantry.launcher;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of every service ({@code gantry dev --instances 2}) under one stream of 1,600 jobs
 * ({@link FaultSuite}): one after another, kill -9 of the instance of admission, queue, placement, recovery and
 * billing whose consumer holds the service's inputs — of queue, placement and recovery the owner of the work, with
 * the other instance standing by — and no restart until the other instance holds them. Nothing lost or doubled (the
 * suite's checks), every takeover within {@link #TAKEOVER_BOUND} of the kill (the group waits out the killed member's
 * 10 s session, then the standby restores the state), and a standby forwards API requests to the owner. About 3
 * minutes on 2 cores.
 */
class FailoverTest extends FaultSuite {
    /** The stated bound: the 10 s session timeout, a rebalance, and the standby's restore with room for a slow CI. */
    static final Duration TAKEOVER_BOUND = Duration.ofSeconds(30);

    @Override
    int jobs() {
        return 1600;
    }

    @Override
    String title() {
        return "failover suite (2 instances per service, 1 broker)";
    }

    @Override
    DevCluster.Config config(Path dataDir, Path repo) throws java.io.IOException {
        return new DevCluster.Config(dataDir, repo, EmbeddedStack.freePort(), EmbeddedStack.freePort(),
                EmbeddedStack.freePortRange(10), serviceProperties(), "200m", 1, 2);
    }

    @Override
    void inflictFaults(JobEnds jobEnds, ExecutorService watchers, List<CompletableFuture<Fault>> faults,
                       Map<String, Object> chaos) throws Exception {
        for (String service : DevCluster.SERVICES) {
            faults.add(failOver(service, jobEnds, watchers));
        }
    }

    @Override
    void checkFaults(List<Fault> measured, long lastSubmission) {
        assertThat(measured).allSatisfy(f -> assertThat(f.consumingAt() - f.hitAt()).as("takeover after " + f.what())
                .isNotNegative().isLessThanOrEqualTo(TAKEOVER_BOUND.toMillis()));
        // every kill hits while jobs still come in (the suite submits until the last fault), and jobs end again
        // after each takeover
        assertThat(measured).allSatisfy(f -> {
            assertThat(f.hitAt()).as(f.what() + " while jobs come in").isLessThan(lastSubmission);
            assertThat(f.flowingAt()).as("jobs ending again after " + f.what()).isNotNegative();
        });
        // a standby answers the API by forwarding to the owner: the same answer, saying who served it
        Map<String, String> reads = Map.of("queue", "/v1/admin/queue-config", "placement", "/v1/nodes",
                "recovery", "/v1/nodes/health");
        reads.forEach((service, path) -> {
            try {
                int owner = holder("gantry-" + service, -1);
                Api.Response direct = new Api(cluster.url(service, owner), "admin-token-0009").get(path);
                Api.Response forwarded = new Api(cluster.url(service, 1 - owner), "admin-token-0009").get(path);
                assertThat(direct.status()).as(service + " owner " + path).isEqualTo(200);
                assertThat(direct.servedBy()).isNull();
                assertThat(forwarded.status()).as(service + " standby " + path).isEqualTo(200);
                assertThat(forwarded.servedBy()).isEqualTo(cluster.url(service, owner));
                // the owner says so on /prometheus, the standby says it is not
                assertThat(ownerGauge(cluster.url(service, owner))).as(service + " owner").isEqualTo(1.0);
                assertThat(ownerGauge(cluster.url(service, 1 - owner))).as(service + " standby").isEqualTo(0.0);
                if (!service.equals("recovery")) {
                    // node health carries the time since each node's last heartbeat, which moves between two reads
                    assertThat(forwarded.body()).isEqualTo(direct.body());
                }
            } catch (Exception e) {
                throw new AssertionError(service + ": " + e, e);
            }
        });
        // a write with a body goes through too, and the owner's refusal comes back as it was
        try {
            int owner = holder("gantry-queue", -1);
            Api.Response refused = new Api(cluster.url("queue", 1 - owner), "admin-token-0009")
                    .put("/v1/admin/queue-config", "queues: 7\n", "application/yaml");
            assertThat(refused.status()).isEqualTo(400);
            assertThat(refused.contentType()).startsWith("application/problem+json");
            assertThat(refused.servedBy()).isEqualTo(cluster.url("queue", owner));
            assertThat(refused.body().path("errors").path(0).path("field").asText()).isNotEmpty();
        } catch (Exception e) {
            throw new AssertionError("queue: " + e, e);
        }
    }

    /** The {@code gantry_instance_owner} sample of a service instance's {@code /prometheus}. */
    private static double ownerGauge(String base) throws Exception {
        String text = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create(base + "/prometheus")).timeout(Duration.ofSeconds(10)).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        return text.lines().filter(l -> l.startsWith("gantry_instance_owner")).map(l -> l.substring(l.lastIndexOf(' ') + 1))
                .mapToDouble(Double::parseDouble).findFirst()
                .orElseThrow(() -> new AssertionError("no gantry_instance_owner on " + base));
    }

    @Test
    void killingTheInstanceThatHoldsEachServicesWorkHandsItToTheOtherWithinTheBoundLosingAndDoublingNothing()
            throws Exception {
        runSuite(5);
    }
}
