package io.gantry.billing.money;

import io.gantry.billing.BillingStack;
import io.gantry.billing.db.LedgerRepository;
import io.gantry.billing.kafka.KnownModels;
import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.GpuDevice;
import io.gantry.events.GpuShare;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TopicClient;
import io.micronaut.core.type.Argument;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.MediaType;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;
import io.gantry.testkit.MutableClock;
import io.micronaut.test.annotation.MockBean;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A running job's budget spend is what its release will cost: a MIG instance with a price of its own counts at that
 * price while the job runs, as on {@code /v1/costs} and the invoice once it is released, not at its share of the GPU
 * price. Billing's clock is the test's, in March 2023, apart from the other tests' months on the shared broker.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunningMigSpendIntegrationTest implements TestPropertyProvider {
    private static final String NLP = "nlp-token-12345";
    private static final String ADMIN = "admin-token-123";
    private static final Duration AWAIT = Duration.ofSeconds(60);
    /** A 1g.10gb instance holds 142 thousandths of an A100: 0.14 an hour by its share, 0.45 by its own price. */
    private static final String BOOK = """
            currency: EUR
            gpu:
              - {model: A100, perGpuHour: "1.00", effectiveFrom: 2023-01-01T00:00:00Z}
            mig:
              - {model: A100, profile: 1g.10gb, perInstanceHour: "0.45", effectiveFrom: 2023-01-01T00:00:00Z}
            """;
    private static final Instant GRANTED = Instant.parse("2023-03-10T10:00:00Z");

    private final MutableClock clock = new MutableClock(GRANTED);
    private final Map<String, String> properties = new HashMap<>();
    private final TopicClient kafka = new TopicClient(EmbeddedKafka.shared().bootstrapServers());

    @Inject
    @Client("/")
    HttpClient http;

    @Inject
    KnownModels models;

    @Inject
    LedgerRepository ledger;

    @MockBean(Clock.class)
    Clock clock() {
        return clock;
    }

    @Override
    public Map<String, String> getProperties() {
        if (properties.isEmpty()) {
            properties.putAll(BillingStack.properties("vision-token-123", NLP, ADMIN));
            properties.put("gantry.billing.invoices.auto-issue", "false");
        }
        return properties;
    }

    @AfterAll
    void closeClient() {
        kafka.close();
    }

    @Test
    void aRunningJobsMigInstanceCountsInItsBudgetAtTheProfilePriceItsReleaseIsBilledAt() {
        // the price book may name A100 only once a node with one is known
        kafka.send(Topics.PLACEMENT_NODE_EVENTS, "mig-spend-n1", NodeEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setNodeId("mig-spend-n1").setOccurredAt(GRANTED)
                .setPayload(NodeRegistered.newBuilder()
                        .setGpus(List.of(GpuDevice.newBuilder().setIndex(0).setModel("A100").setMemoryMiB(81_920)
                                .setMigCapable(true).build()))
                        .setCpuMillis(64_000).setMemoryMiB(512_000).setLabels(Map.of()).setBackend("simulated").build())
                .build());
        await().atMost(AWAIT).until(() -> models.snapshot().contains("A100"));
        http.toBlocking().exchange(HttpRequest.PUT("/v1/price-book", BOOK).contentType("application/yaml")
                .bearerAuth(ADMIN));

        String job = "mig-spend-" + UUID.randomUUID();
        TaskPlacement instance = TaskPlacement.newBuilder().setTask("w").setReplica(0).setNodeId("mig-spend-n1")
                .setGpuModel("A100").setGpuIndices(List.of()).setCpuMillis(1000).setMemoryMiB(1024)
                .setGpuShares(List.of(GpuShare.newBuilder().setIndex(0).setMilli(142).setMemoryMiB(10_240)
                        .setMigProfile("1g.10gb").setMigSlice(0).build()))
                .build();
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, AllocationEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setJobId(job).setOccurredAt(GRANTED)
                .setPayload(AllocationGranted.newBuilder().setAllocationId("alloc-" + job).setTenant("nlp")
                        .setAttempt(1).setGrantedAt(GRANTED).setBackend("simulated").setPlacements(List.of(instance))
                        .build())
                .build());
        http.toBlocking().exchange(HttpRequest.PUT("/v1/budgets",
                        "{\"budgets\": [{\"tenant\": \"nlp\", \"limit\": \"10.00\", \"action\": \"WARN\"}]}")
                .contentType(MediaType.APPLICATION_JSON).bearerAuth(ADMIN));

        // an hour later the job still runs: one instance-hour at the profile's price
        clock.set(Instant.parse("2023-03-10T11:00:00Z"));
        String running = await().atMost(AWAIT).until(this::nlpSpent, spent -> !spent.equals("0.00"));
        assertThat(running).as("budget spend while running").isEqualTo("0.45");

        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, AllocationEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setJobId(job).setOccurredAt(clock.instant())
                .setPayload(AllocationReleased.newBuilder().setAllocationId("alloc-" + job).setTenant("nlp")
                        .setAttempt(1).setReason(ReleaseReason.RUN_SUCCEEDED).setGrantedAt(GRANTED)
                        .setReleasedAt(clock.instant()).setBackend("simulated").setPlacements(List.of(instance))
                        .build())
                .build());
        await().atMost(AWAIT).until(() -> ledger.countByJobId(job) == 1);
        Map<String, Object> costs = http.toBlocking().retrieve(HttpRequest.GET("/v1/costs?month=2023-03")
                .bearerAuth(NLP), Argument.mapOf(String.class, Object.class));
        assertThat(costs.get("total")).as("/v1/costs once released").isEqualTo(running);
        assertThat(nlpSpent()).as("budget spend once released").isEqualTo(running);
    }

    @SuppressWarnings("unchecked")
    private String nlpSpent() {
        Map<String, Object> body = http.toBlocking().retrieve(HttpRequest.GET("/v1/budgets").bearerAuth(NLP),
                Argument.mapOf(String.class, Object.class));
        List<Map<String, Object>> budgets = (List<Map<String, Object>>) body.get("budgets");
        assertThat(budgets).hasSize(1);
        return (String) budgets.get(0).get("spent");
    }
}
