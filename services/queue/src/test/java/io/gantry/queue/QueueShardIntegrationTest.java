package io.gantry.queue;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobSucceeded;
import io.gantry.events.JobWaiting;
import io.gantry.events.WaitReason;
import io.gantry.queue.kafka.QueueProcessor;
import io.gantry.runtime.kafka.EventProcessor;
import io.gantry.testkit.InstanceProperties;
import io.gantry.testkit.TokensFile;
import io.micronaut.context.ApplicationContext;
import io.micronaut.core.type.Argument;
import io.micronaut.json.JsonMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The queue split by cohort tree ({@code gantry.queue.shards: 2}) on a broker of its own: two instances, two cohort
 * trees on different shards, each instance owning one shard. Each shard admits its tree's jobs against that tree's
 * quota; either instance answers over both shards; a configuration change applied at either goes through shard 0 and
 * the other shard follows it; one that would move a tenant to another shard is refused; when an instance stops, the
 * other takes its shard over and goes on from its state (nothing dispatched twice); a record no shard can use goes to
 * the dead letter once.
 */
class QueueShardIntegrationTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String ADMIN = "shard-admin-token-123";
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static EmbeddedKafka broker;
    private static Path tokens;
    private static Path configFile;
    private static final Map<String, Integer> PORTS = new HashMap<>();
    private static final String RUN = UUID.randomUUID().toString().substring(0, 6);
    /** Tenant (and queue) on shard 0, and on shard 1. */
    private static final String A = "ta-" + RUN;
    private static final String B = "tb-" + RUN;
    /** Root cohorts whose trees fall on shard 0 and on shard 1: found, not assumed from the hash. */
    private static String root0;
    private static String root1;

    @BeforeAll
    static void start() throws Exception {
        broker = EmbeddedKafka.start(null, 0, Map.of());
        tokens = TokensFile.write(TokensFile.tenants(A, A + "-token", B, B + "-token"), ADMIN);
        InstanceProperties.freePorts(PORTS, "1", "2");
        for (int i = 0; root0 == null || root1 == null; i++) {
            String name = "root" + i;
            if (Math.floorMod(("cohort:" + name).hashCode(), 2) == 0) {
                root0 = root0 == null ? name : root0;
            } else {
                root1 = root1 == null ? name : root1;
            }
        }
        configFile = Files.createTempFile("queues", ".yml");
        configFile.toFile().deleteOnExit();
        Files.writeString(configFile, config(4, root0), StandardCharsets.UTF_8);
    }

    /** Queue A in the tree of {@code rootOfA}, queue B in root1's with {@code quotaB} GPUs. */
    private static String config(int quotaB, String rootOfA) {
        return "flavours: [H100]\n"
                + "cohorts:\n  - name: " + root0 + "\n  - name: " + root1 + "\n"
                + "queues:\n"
                + "  - {name: " + A + ", tenant: " + A + ", cohort: " + rootOfA + ", quotas: {H100: {nominal: 4}}}\n"
                + "  - {name: " + B + ", tenant: " + B + ", cohort: " + root1 + ", quotas: {H100: {nominal: " + quotaB
                + "}}}\n";
    }

    @AfterAll
    static void stop() throws Exception {
        if (broker != null) {
            broker.close();
        }
    }

    private static ApplicationContext instance(String id) {
        Map<String, Object> props = InstanceProperties.of(broker.bootstrapServers(), PORTS.get(id), tokens, id);
        props.put("gantry.queue.config-file", configFile.toString());
        props.put("gantry.queue.config-poll", "1s");
        props.put("gantry.queue.shards", "2");
        return ApplicationContext.run(io.micronaut.runtime.server.EmbeddedServer.class, props).getApplicationContext();
    }

    private static List<EventProcessor> shards(ApplicationContext ctx) {
        return ctx.getBean(QueueProcessor.class).eventLoops();
    }

    @Test
    void eachInstanceOwnsATreesShardAnswersOverBothAndTheSurvivorTakesTheOtherOver() throws Exception {
        try (Wire wire = new Wire(broker.bootstrapServers()); ApplicationContext one = instance("1");
             KafkaProbe probe = new KafkaProbe(broker.bootstrapServers())) { // the topics exist once one started
            ApplicationContext two = instance("2");
            try {
                // shard 0 belongs to instance 1, shard 1 to instance 2
                await().atMost(TIMEOUT).until(() -> shards(one).get(0).isOwner() && shards(two).get(1).isOwner());
                assertThat(shards(one).get(1).isOwner()).isFalse();
                assertThat(shards(two).get(0).isOwner()).isFalse();

                // each tree admits against its own quota: two jobs of 2 GPUs each, the third waits
                for (String t : List.of(A, B)) {
                    for (int i = 1; i <= 3; i++) {
                        wire.submit(t + "-" + i, t, 2, 1);
                    }
                }
                await().atMost(TIMEOUT).untilAsserted(() -> {
                    for (String t : List.of(A, B)) {
                        assertThat(probe.payloads(t, t + "-1", JobDispatched.class)).hasSize(1);
                        assertThat(probe.payloads(t, t + "-2", JobDispatched.class)).hasSize(1);
                        assertThat(probe.payloads(t, t + "-3", JobWaiting.class)).singleElement()
                                .satisfies(w -> assertThat(w.getReason()).isEqualTo(WaitReason.QUOTA));
                    }
                });

                // either instance answers over both shards
                for (String id : List.of("1", "2")) {
                    List<Map<String, Object>> rows = rows(get(id, "/v1/queues", ADMIN));
                    assertThat(rows).extracting(r -> r.get("name")).containsExactly(A, B);
                    assertThat(rows).allSatisfy(r -> {
                        assertThat(r.get("reservedGpus")).isEqualTo(4);
                        assertThat(r.get("pending")).isEqualTo(1);
                    });
                    assertThat(rows(get(id, "/v1/queues", B + "-token"))).extracting(r -> r.get("name"))
                            .containsExactly(B);
                    HttpResponse<String> pending = get(id, "/v1/queues/" + B + "/pending", B + "-token");
                    assertThat(pending.statusCode()).isEqualTo(200);
                    assertThat(pending.body()).contains(B + "-3").contains("QUOTA");
                    assertThat(get(id, "/v1/queues/" + B + "/pending", A + "-token").statusCode()).isEqualTo(404);
                }

                // a change applied at instance 2 goes to shard 0 (instance 1); shard 1 follows it: B's third runs
                HttpResponse<String> grown = put("2", config(6, root0));
                assertThat(grown.statusCode()).as(grown.body()).isEqualTo(200);
                await().atMost(TIMEOUT).untilAsserted(() ->
                        assertThat(probe.payloads(B, B + "-3", JobDispatched.class)).hasSize(1));
                assertThat(probe.payloads(A, A + "-3", JobDispatched.class)).isEmpty();

                // moving A's queue into B's tree would move tenant A to shard 1: refused, the live one kept
                HttpResponse<String> moved = put("1", config(6, root1));
                assertThat(moved.statusCode()).isEqualTo(400);
                assertThat(moved.body()).contains("tenant " + A + " would move from shard 0").contains("to shard 1");
                assertThat(get("2", "/v1/admin/queue-config", ADMIN).body()).contains("nominal: 6")
                        .doesNotContain(A + ", cohort: " + root1);

                // a tree pinned to a shard the split does not have: refused; pinned where it is: applied
                String pinnedTo2 = config(6, root0).replace("  - name: " + root0 + "\n",
                        "  - name: " + root0 + "\n    shard: 2\n");
                HttpResponse<String> pinned = put("2", pinnedTo2);
                assertThat(pinned.statusCode()).isEqualTo(400);
                assertThat(pinned.body()).contains("cohort:" + root0 + " is pinned to shard 2")
                        .contains("shards 0 to 1");
                HttpResponse<String> pinnedHere = put("2", pinnedTo2.replace("shard: 2", "shard: 0"));
                assertThat(pinnedHere.statusCode()).as(pinnedHere.body()).isEqualTo(200);
                assertThat(get("1", "/v1/admin/queue-config", ADMIN).body()).contains("shard: 0");
            } finally {
                two.close();
            }

            // instance 2 is gone: instance 1 takes shard 1 over from its snapshot and goes on from there
            await().atMost(TIMEOUT).until(() -> shards(one).get(1).isOwner());
            assertThat(shards(one).get(1).lastRestore().snapshotRecords()).as("shard 1 restored from its snapshot")
                    .isPositive();
            wire.submit(B + "-4", B, 2, 1);
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(probe.payloads(B, B + "-4", JobWaiting.class))
                    .singleElement().satisfies(w -> assertThat(w.getReason()).isEqualTo(WaitReason.QUOTA)));
            wire.runSucceeds(B + "-1", B, 1);
            wire.runSucceeds(A + "-1", A, 1);
            await().atMost(TIMEOUT).untilAsserted(() -> {
                assertThat(probe.payloads(B, B + "-4", JobDispatched.class)).hasSize(1);
                assertThat(probe.payloads(A, A + "-3", JobDispatched.class)).hasSize(1);
                assertThat(probe.payloads(B, B + "-1", JobSucceeded.class)).hasSize(1);
            });
            for (int i = 1; i <= 3; i++) {
                assertThat(probe.payloads(B, B + "-" + i, JobDispatched.class)).as("dispatched once: " + B + "-" + i)
                        .hasSize(1);
            }
            assertThat(probe.deadLetters()).isEmpty();

            // a record every shard reads and none can use goes to the dead letter once (shard 0's)
            ApplicationContext back = instance("2");
            try {
                await().atMost(TIMEOUT).until(() -> shards(back).get(1).isOwner());
                wire.sendRaw(io.gantry.schemas.Topics.ADMISSION_JOB_EVENTS, "garbage-" + RUN,
                        "not avro".getBytes(StandardCharsets.UTF_8));
                wire.submit(B + "-no-replicas", B, 1, 0);
                wire.submit(B + "-5", B, 1, 1);
                wire.runSucceeds(B + "-2", B, 1); // room in B's quota for B-5
                await().atMost(TIMEOUT).untilAsserted(() ->
                        assertThat(probe.payloads(B, B + "-5", JobDispatched.class)).hasSize(1));
                assertThat(probe.deadLetters()).extracting(r -> r.key())
                        .containsExactlyInAnyOrder("garbage-" + RUN, B + "-no-replicas");
            } finally {
                back.close();
            }
        }
    }

    private static HttpResponse<String> get(String instance, String path, String token) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + PORTS.get(instance) + path))
                .header("Authorization", "Bearer " + token).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> put(String instance, String yaml) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + PORTS.get(instance)
                        + "/v1/admin/queue-config")).header("Authorization", "Bearer " + ADMIN)
                .header("Content-Type", "application/yaml")
                .PUT(HttpRequest.BodyPublishers.ofString(yaml)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> rows(HttpResponse<String> r) throws Exception {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        Map<String, Object> body = JsonMapper.createDefault().readValue(r.body(),
                Argument.mapOf(String.class, Object.class));
        return (List<Map<String, Object>>) body.get("queues");
    }
}
