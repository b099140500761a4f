package io.gantry.queue;

import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobQueued;
import io.gantry.events.JobSucceeded;
import io.gantry.events.JobWaiting;
import io.gantry.events.QuotaReleased;
import io.gantry.queue.kafka.QueueProcessor;
import io.gantry.schemas.Topics;
import io.micronaut.context.ApplicationContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The queue restarts mid-stream: the second instance rebuilds its state from its newest snapshot and the topics'
 * history after it (the queue's own facts, budgets). Contexts
 * are started by hand because the test stops one and starts another (never two at once: they share a
 * transactional id).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QueueRestartIntegrationTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final String tenant = "qr-" + UUID.randomUUID().toString().substring(0, 8);
    private final Wire wire = new Wire();
    private final KafkaProbe probe;

    QueueRestartIntegrationTest() {
        EmbeddedKafka.shared().createTopics(Topics.allNames(), 1);
        probe = new KafkaProbe();
    }

    private ApplicationContext startQueue() throws InterruptedException {
        ApplicationContext ctx = ApplicationContext.run(Map.of(
                "kafka.bootstrap.servers", EmbeddedKafka.shared().bootstrapServers(),
                "micronaut.server.port", "-1",
                "gantry.queue.quotas." + tenant, "8",
                // a snapshot after every batch: each restart below restores from one and the history after it
                "gantry.kafka.snapshot-every", "1"));
        await().atMost(TIMEOUT).until(() -> ctx.getBean(QueueProcessor.class).isReady());
        return ctx;
    }

    @AfterAll
    void closeClients() {
        wire.close();
        probe.close();
    }

    @Test
    void aRestartedQueueDispatchesNothingTwiceAndDispatchesTheWaitingJobWhenQuotaFrees() throws Exception {
        String r1 = tenant + "-r1";
        String r2 = tenant + "-r2";
        String r3 = tenant + "-r3";
        ApplicationContext first = startQueue();
        try {
            wire.submit(r1, tenant, 8, 1);
            wire.submit(r2, tenant, 8, 1);
            wire.submit(r3, tenant, 4, 1);
            await().atMost(TIMEOUT).untilAsserted(() -> {
                assertThat(probe.payloads(tenant, r1, JobDispatched.class)).hasSize(1);
                assertThat(probe.payloads(tenant, r2, JobWaiting.class)).hasSize(1);
                assertThat(probe.payloads(tenant, r3, JobQueued.class)).hasSize(1);
            });
        } finally {
            first.close();
        }

        // while the queue is down: r1 finishes, and admission repeats r1's submission
        wire.runSucceeds(r1, tenant, 1);
        wire.submit(r1, tenant, 8, 1);

        ApplicationContext second = startQueue();
        try {
            await().atMost(TIMEOUT).untilAsserted(() -> {
                assertThat(probe.payloads(tenant, r1, JobSucceeded.class)).hasSize(1);
                assertThat(probe.payloads(tenant, r1, QuotaReleased.class)).hasSize(1);
                assertThat(probe.payloads(tenant, r2, JobDispatched.class)).hasSize(1);
            });
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(probe.payloads(tenant, r1, JobQueued.class)).as("r1 queued once").hasSize(1);
                assertThat(probe.payloads(tenant, r1, JobDispatched.class)).as("r1 dispatched once").hasSize(1);
                assertThat(probe.payloads(tenant, r2, JobDispatched.class)).as("r2 dispatched once").hasSize(1);
                assertThat(probe.payloads(tenant, r3, JobDispatched.class)).as("r3 behind r2 within quota 8").isEmpty();
            });
            assertThat(second.getBean(QueueProcessor.class).lastRestore().snapshotRecords())
                    .as("restored from a snapshot").isPositive();
            long reserved = second.getBean(QueueProcessor.class).read(core -> core.reservedMilli(tenant));
            assertThat(reserved).as("r2's GPUs reserved after the restart").isEqualTo(8_000L);
        } finally {
            second.close();
        }
    }
    @Test
    void aJobHeldForBudgetStaysHeldAcrossARestartAndIsDispatchedWhenBillingRaisesTheBudget() throws Exception {
        String held = tenant + "-held";
        String budgetTenant = tenant + "-b";
        ApplicationContext first = startQueue();
        try {
            wire.budget(budgetTenant, "EXHAUSTED", "HOLD", "120.50");
            // topics are not ordered with each other: a job submitted before the budget arrived would be dispatched
            await().atMost(TIMEOUT).until(() -> first.getBean(QueueProcessor.class)
                    .read(core -> core.budgetHold(budgetTenant, budgetTenant)) != null);
            wire.submit(held, budgetTenant, 1, 1);
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(probe.payloads(budgetTenant, held, JobWaiting.class))
                    .singleElement().satisfies(w -> {
                        assertThat(w.getReason()).isEqualTo(io.gantry.events.WaitReason.BUDGET);
                        assertThat(w.getMessage()).isEqualTo("held: the monthly budget of tenant " + budgetTenant
                                + " is exhausted (120.50 EUR of 100.00 EUR); held until "
                                + java.time.YearMonth.now(java.time.ZoneOffset.UTC).plusMonths(1).atDay(1)
                                + " or the budget is raised");
                    }));
        } finally {
            first.close();
        }

        ApplicationContext second = startQueue();
        try {
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(probe.payloads(budgetTenant, held, JobDispatched.class)).as("still held").isEmpty();
                assertThat(probe.payloads(budgetTenant, held, JobWaiting.class)).as("not explained again").hasSize(1);
            });
            wire.budget(budgetTenant, "WARNING", "HOLD", "90.00");
            await().atMost(TIMEOUT).untilAsserted(() ->
                    assertThat(probe.payloads(budgetTenant, held, JobDispatched.class)).hasSize(1));
        } finally {
            second.close();
        }
    }
}
