package io.gantry.billing;

import io.gantry.billing.db.LedgerRepository;
import io.gantry.billing.kafka.BillingProcessor;
import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationReleased;
import io.gantry.events.CheckpointCommitted;
import io.gantry.events.CheckpointEvent;
import io.gantry.events.GpuShare;
import io.gantry.events.JobSpec;
import io.gantry.events.JobSubmitted;
import io.gantry.events.PriceBookApplied;
import io.gantry.events.PriceEvent;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.events.TaskSpec;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TopicClient;
import io.micronaut.context.ApplicationContext;
import io.micronaut.core.type.Argument;
import io.micronaut.json.JsonMapper;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A month of simulated work in money: a price book applied over HTTP, a month of releases (whole GPUs, fractions,
 * a price change mid-month, preemptible work at a discount, node failures with and without checkpoints), faults on
 * the way (redelivered releases, a poison record, billing restarted and its input rewound to the beginning), then
 * invoices issued once, checked against an independent recomputation in this test, and a reconciliation report.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MoneyIntegrationTest implements TestPropertyProvider {
    private static final String VISION = "vision-token-123";
    private static final String NLP = "nlp-token-12345";
    private static final String ADMIN = "admin-token-123";
    private static final Duration AWAIT = Duration.ofSeconds(90);
    private static final Instant CHANGE = Instant.parse("2025-06-15T00:00:00Z");
    private static final String BOOK = """
            currency: EUR
            gpu:
              - {model: H100, perGpuHour: 2.50, effectiveFrom: 2025-01-01T00:00:00Z}
              - {model: H100, perGpuHour: "2.90", effectiveFrom: 2025-06-15T00:00:00Z}
              - {model: A100, perGpuHour: "1.10", effectiveFrom: 2025-01-01T00:00:00Z}
            multipliers:
              - {priorityClass: preemptible, factor: "0.6", effectiveFrom: 2025-01-01T00:00:00Z}
            """;

    private final TopicClient kafka = new TopicClient(EmbeddedKafka.shared().bootstrapServers());
    private final HttpClient client = HttpClient.newHttpClient();
    private final Map<String, String> properties = new HashMap<>();
    private final String run = UUID.randomUUID().toString().substring(0, 8);

    @Inject
    ApplicationContext context;

    @Inject
    LedgerRepository ledger;

    @Inject
    JsonMapper json;

    @Override
    public Map<String, String> getProperties() {
        if (properties.isEmpty()) {
            properties.putAll(BillingStack.properties(VISION, NLP, ADMIN));
            properties.put("gantry.billing.time-zone", "Europe/Berlin");
            properties.put("gantry.billing.invoices.auto-issue", "false");
            properties.put("gantry.billing.budgets.check-every", "1s");
        }
        return properties;
    }

    @AfterAll
    void closeClient() {
        kafka.close();
    }

    record Job(String id, String tenant, String model, long milli, Instant start, Instant end, boolean preemptible,
               ReleaseReason reason, Instant checkpoint) {
    }

    @Test
    @Order(1)
    void badPriceBooksAreProblemsNamingTheFieldAndOnlyAdminsMayChangeIt() throws Exception {
        assertField(call("PUT", "/v1/price-book", ADMIN, "application/yaml",
                "currency: EUR\ngpu: [{model: H100, perGpuHour: \"-1\", effectiveFrom: 2025-01-01T00:00:00Z}]"),
                400, "gpu[0].perGpuHour");
        assertField(call("PUT", "/v1/price-book", ADMIN, "application/json", """
                {"currency": "EUR", "gpu": [
                  {"model": "H100", "perGpuHour": "1", "effectiveFrom": "2025-01-01T00:00:00Z"},
                  {"model": "H100", "perGpuHour": "2", "effectiveFrom": "2025-01-01T00:00:00Z"}]}"""),
                400, "gpu[1].effectiveFrom");
        assertField(call("PUT", "/v1/price-book", ADMIN, "application/json", "{\"gpu\": []}"), 400, "currency");
        // once nodes are known, a model none of them has is refused
        kafka.send(Topics.PLACEMENT_NODE_EVENTS, "money-n1", io.gantry.events.NodeEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setNodeId("money-n1").setOccurredAt(Instant.now())
                .setPayload(io.gantry.events.NodeRegistered.newBuilder()
                        .setGpus(List.of(io.gantry.events.GpuDevice.newBuilder().setIndex(0).setModel("H100")
                                        .setMemoryMiB(81_920).build(),
                                io.gantry.events.GpuDevice.newBuilder().setIndex(1).setModel("A100")
                                        .setMemoryMiB(40_960).build()))
                        .setCpuMillis(64_000).setMemoryMiB(512_000).setLabels(Map.of()).setBackend("simulated").build())
                .build());
        String unknownModel = "currency: EUR\ngpu: [{model: Z999, perGpuHour: \"1\", effectiveFrom: 2025-01-01T00:00:00Z}]";
        // (waiting on the known models themselves: a PUT before they are known would be applied, not judged)
        await().atMost(AWAIT).until(() -> context.getBean(io.gantry.billing.kafka.KnownModels.class).snapshot()
                .containsAll(List.of("H100", "A100")));
        assertField(call("PUT", "/v1/price-book", ADMIN, "application/yaml", unknownModel), 400, "gpu[0].model");
        assertField(call("PUT", "/v1/price-book", VISION, "application/yaml", BOOK), 403, "Authorization");
        assertField(call("PUT", "/v1/price-book", ADMIN, "text/html", BOOK), 415, "Content-Type");
        assertThat(json(call("GET", "/v1/price-book", VISION, null, null).body())).containsEntry("version", 0);
        assertField(call("POST", "/v1/invoices/issue?month=2025-05", ADMIN, null, null), 400, "month");
    }

    @Test
    @Order(2)
    void aBudgetBelowWhatIsSpentIsRefusedAndCrossingThresholdsIsAnnouncedForAdmission() throws Exception {
        assertThat(call("PUT", "/v1/price-book", ADMIN, "application/yaml", BOOK).statusCode()).isEqualTo(200);
        Instant now = Instant.now();
        Job first = new Job("budget-" + run + "-1", "nlp", "H100", 8000, now.minusSeconds(120), now.minusSeconds(60),
                false, ReleaseReason.RUN_SUCCEEDED, null);
        publish(first, false);
        await().atMost(AWAIT).until(() -> ledger.countByJobId(first.id()) == 1);

        // 8 H100 for a minute at 2.90 an hour: 0.39 spent this month
        assertField(call("PUT", "/v1/budgets", ADMIN, "application/json",
                "{\"budgets\": [{\"tenant\": \"nlp\", \"limit\": \"0.10\", \"action\": \"REJECT\"}]}"),
                400, "budgets[0].limit");
        assertField(call("PUT", "/v1/budgets", ADMIN, "application/json",
                "{\"budgets\": [{\"tenant\": \"nlp\", \"limit\": \"-5\"}]}"), 400, "budgets[0].limit");
        assertField(call("PUT", "/v1/budgets", NLP, "application/json", "{\"budgets\": []}"), 403, "Authorization");
        HttpResponse<String> set = call("PUT", "/v1/budgets", ADMIN, "application/json",
                "{\"budgets\": [{\"tenant\": \"nlp\", \"limit\": \"0.40\", \"action\": \"REJECT\", \"warnAt\": [80]}]}");
        assertThat(set.statusCode()).as(set.body()).isEqualTo(200);
        assertThat(list(json(call("GET", "/v1/budgets", NLP, null, null).body()), "budgets")).singleElement()
                .satisfies(b -> assertThat(b).containsEntry("state", "WARNING").containsEntry("spent", "0.39")
                        .containsEntry("limit", "0.40")
                        .containsEntry("thresholdPercent", 80));
        assertThat(list(json(call("GET", "/v1/budgets", VISION, null, null).body()), "budgets")).isEmpty();
        await().atMost(AWAIT).until(() -> budgetStates("nlp").contains("WARNING"));

        // a release stamped by a clock running ahead of billing's (placement's, sped up or skewed) still counts
        // (unless that would cross into the next month)
        Instant ahead = now.plusSeconds(30);
        java.time.ZoneId berlin = java.time.ZoneId.of("Europe/Berlin");
        if (!java.time.YearMonth.from(ahead.atZone(berlin)).equals(java.time.YearMonth.from(now.atZone(berlin)))) {
            ahead = now;
        }
        Job second = new Job("budget-" + run + "-2", "nlp", "H100", 8000, ahead.minusSeconds(60), ahead, false,
                ReleaseReason.RUN_SUCCEEDED, null);
        publish(second, false);
        await().atMost(AWAIT).until(() -> budgetStates("nlp").contains("EXHAUSTED"));
        io.gantry.events.BudgetStatusChanged exhausted = kafka.readAll(Topics.BILLING_BUDGET_EVENTS).stream()
                .map(e -> (io.gantry.events.BudgetStatusChanged) e.getPayload())
                .filter(b -> b.getTenant().equals("nlp") && b.getState() == io.gantry.events.BudgetState.EXHAUSTED)
                .reduce((a, b) -> b).orElseThrow();
        assertThat(exhausted.getAction()).isEqualTo(io.gantry.events.BudgetAction.REJECT);
        assertThat(exhausted.getSpent()).isEqualTo("0.78");
        assertThat(exhausted.getLimit()).as("in the currency's minor digits").isEqualTo("0.40");
        assertThat(call("GET", "/prometheus", ADMIN, null, null).body())
                .contains("gantry_billing_budget_spent").contains("tenant=\"nlp\"");

        // nlp's budget in force is now below its spend (0.78 of 0.40, by design work keeps going): the whole set can
        // still be replaced with it unchanged or raised, and a new budget beside it; only lowering it is refused
        String nlpBudget = "{\"tenant\": \"nlp\", \"limit\": \"%s\", \"action\": \"REJECT\", \"warnAt\": [80]}";
        String visionBudget = "{\"tenant\": \"vision\", \"limit\": \"100.00\", \"action\": \"HOLD\"}";
        HttpResponse<String> unchanged = call("PUT", "/v1/budgets", ADMIN, "application/json",
                "{\"budgets\": [" + nlpBudget.formatted("0.40") + ", " + visionBudget + "]}");
        assertThat(unchanged.statusCode()).as(unchanged.body()).isEqualTo(200);
        HttpResponse<String> raised = call("PUT", "/v1/budgets", ADMIN, "application/json",
                "{\"budgets\": [" + nlpBudget.formatted("0.50") + ", " + visionBudget + "]}");
        assertThat(raised.statusCode()).as(raised.body()).isEqualTo(200);
        assertField(call("PUT", "/v1/budgets", ADMIN, "application/json",
                "{\"budgets\": [" + nlpBudget.formatted("0.45") + ", " + visionBudget + "]}"), 400, "budgets[0].limit");

        // a run still going counts too: half an hour of an H100 so far (1.45) is more than a 1.00 budget
        String running = "running-" + run;
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, running, AllocationEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setJobId(running).setOccurredAt(now)
                .setPayload(io.gantry.events.AllocationGranted.newBuilder().setAllocationId("alloc-" + running)
                        .setTenant("vision").setAttempt(1).setGrantedAt(now.minusSeconds(1800)).setBackend("simulated")
                        .setPlacements(List.of(TaskPlacement.newBuilder().setTask("w").setReplica(0).setNodeId("n1")
                                .setGpuModel("H100").setGpuIndices(List.of(0)).setCpuMillis(1000)
                                .setMemoryMiB(1024).build()))
                        .build())
                .build());
        await().atMost(AWAIT).until(() -> list(json(call("GET", "/v1/budgets", VISION, null, null).body()),
                "budgets").stream().anyMatch(b -> new BigDecimal((String) b.get("spent")).compareTo(BigDecimal.ONE) > 0));
        assertField(call("PUT", "/v1/budgets", ADMIN, "application/json",
                "{\"budgets\": [{\"tenant\": \"vision\", \"limit\": \"1.00\"}]}"), 400, "budgets[0].limit");

        // budgets are lifted again, so the month's simulation is not gated
        assertThat(call("PUT", "/v1/budgets", ADMIN, "application/json", "{\"budgets\": []}").statusCode())
                .isEqualTo(200);
    }

    private List<String> budgetStates(String tenant) {
        return kafka.readAll(Topics.BILLING_BUDGET_EVENTS).stream()
                .map(e -> (io.gantry.events.BudgetStatusChanged) e.getPayload())
                .filter(b -> b.getTenant().equals(tenant)).map(b -> b.getState().name()).toList();
    }

    @Test
    @Order(3)
    void aMonthOfSimulatedWorkEndsInInvoicesThatEqualAnIndependentRecomputationToTheCent() throws Exception {
        HttpResponse<String> applied = call("PUT", "/v1/price-book", ADMIN, "application/yaml", BOOK);
        assertThat(applied.statusCode()).as(applied.body()).isEqualTo(200);
        assertThat(json(call("PUT", "/v1/price-book", ADMIN, "application/yaml", BOOK).body()))
                .as("the same book again is no new version").containsEntry("version", 1);
        // a change that would reprice June (already in the past) is refused
        assertField(call("PUT", "/v1/price-book", ADMIN, "application/yaml", BOOK.replace("\"1.10\"", "\"1.00\"")),
                400, "gpu");
        await().atMost(AWAIT).until(() -> kafka.readAll(Topics.BILLING_PRICE_EVENTS).stream()
                .map(PriceEvent::getPayload).anyMatch(p -> ((PriceBookApplied) p).getVersion() == 1
                        && ((PriceBookApplied) p).getGpuPrices().size() == 3));

        List<Job> jobs = simulateMonth();
        List<Job> firstHalf = jobs.subList(0, jobs.size() / 2);
        List<Job> secondHalf = jobs.subList(jobs.size() / 2, jobs.size());
        firstHalf.forEach(j -> publish(j, false));
        kafka.sendRaw(Topics.PLACEMENT_ALLOCATION_EVENTS, "poison-" + run, "not avro".getBytes(StandardCharsets.UTF_8));
        await().atMost(AWAIT).until(() -> firstHalf.stream().allMatch(j -> ledger.countByJobId(j.id()) == 1));

        // billing is stopped and its input rewound: every record so far is delivered again to a new instance
        context.getBean(BillingProcessor.class).close();
        rewind();
        try (ApplicationContext restarted = ApplicationContext.run(EmbeddedServer.class,
                new HashMap<String, Object>(getProperties())).getApplicationContext()) {
            String base = restarted.getBean(EmbeddedServer.class).getURL().toString();
            LedgerRepository rows = restarted.getBean(LedgerRepository.class);
            for (int i = 0; i < secondHalf.size(); i++) {
                publish(secondHalf.get(i), i % 3 == 0); // every third release delivered twice
            }
            await().atMost(AWAIT).until(() -> jobs.stream().allMatch(j -> rows.countByJobId(j.id()) == 1));

            // checkpoints and job terms come on other topics: the month's cost is complete once they are in too
            Map<String, BigDecimal> expected = recompute(jobs);
            String june = "from=2025-05-31T22:00:00Z&to=2025-06-30T22:00:00Z";
            for (String tenant : expected.keySet()) {
                await().atMost(AWAIT).until(() -> new BigDecimal((String) json(call(base, "GET", "/v1/costs?" + june
                        + "&tenant=" + tenant, ADMIN, null, null).body()).get("total")).equals(expected.get(tenant)));
            }
            assertField(call(base, "GET", "/v1/costs?" + june + "&tenant=nlp", VISION, null, null), 403, "tenant");
            assertField(call(base, "GET", "/v1/costs?from=yesterday", VISION, null, null), 400, "from");
            // a month is the operator's calendar month (Europe/Berlin here): the same window as June's instants
            for (String tenant : expected.keySet()) {
                Map<String, Object> byMonth = json(call(base, "GET", "/v1/costs?month=2025-06&tenant=" + tenant, ADMIN,
                        null, null).body());
                assertThat(byMonth).containsEntry("from", "2025-05-31T22:00:00Z").containsEntry("to",
                        "2025-06-30T22:00:00Z");
                assertThat(new BigDecimal((String) byMonth.get("total"))).isEqualTo(expected.get(tenant));
                // and so are its dates (what `gantry costs --from 2025-06-01` sends), in usage as in costs
                Map<String, Object> byDates = json(call(base, "GET", "/v1/costs?from=2025-06-01&to=2025-07-01&tenant="
                        + tenant, ADMIN, null, null).body());
                assertThat(byDates).containsEntry("from", "2025-05-31T22:00:00Z").containsEntry("to",
                        "2025-06-30T22:00:00Z");
                assertThat(new BigDecimal((String) byDates.get("total"))).isEqualTo(expected.get(tenant));
                assertThat(json(call(base, "GET", "/v1/usage?from=2025-06-01&to=2025-07-01&tenant=" + tenant, ADMIN,
                        null, null).body())).containsEntry("from", "2025-05-31T22:00:00Z");
            }
            assertField(call(base, "GET", "/v1/costs?month=2025-06&from=2025-06-01T00:00:00Z", ADMIN, null, null),
                    400, "month");
            assertField(call(base, "GET", "/v1/costs?month=June", ADMIN, null, null), 400, "month");
            // every documented field is in the answer, null when it has no value (an open window, a usage line)
            Map<String, Object> open = json(call(base, "GET", "/v1/costs?from=2025-05-31T22:00:00Z&tenant=nlp",
                    ADMIN, null, null).body());
            assertThat(open).containsEntry("to", null);
            assertThat(list(open, "lines")).isNotEmpty().allSatisfy(l -> assertThat(l).containsKey("reason"));

            HttpResponse<String> issued = call(base, "POST", "/v1/invoices/issue?month=2025-06", ADMIN, null, null);
            assertThat(issued.statusCode()).as(issued.body()).isEqualTo(200);
            Map<String, BigDecimal> invoiced = new TreeMap<>();
            for (Map<String, Object> d : list(json(issued.body()), "issued")) {
                invoiced.put((String) d.get("tenant"), new BigDecimal((String) d.get("total")));
                assertThat(d.get("documentId")).isEqualTo("INV-2025-06-" + d.get("tenant"));
                assertThat(d).containsEntry("periodFrom", "2025-05-31T22:00:00Z").containsEntry("timeZone",
                        "Europe/Berlin");
            }
            assertThat(invoiced).isEqualTo(expected);

            Map<String, Object> finops = json(call(base, "GET", "/v1/finops?" + june, VISION, null, null).body());
            assertThat(list(finops, "tenants")).singleElement().satisfies(t -> {
                assertThat(t).containsEntry("tenant", "vision").containsEntry("cost",
                        expected.get("vision").toPlainString()).containsEntry("jobs", 15);
                assertThat(t).containsEntry("successfulJobs", (int) jobs.stream().filter(j -> j.tenant()
                        .equals("vision") && j.reason() == ReleaseReason.RUN_SUCCEEDED).count());
            });

            // issued once: issuing again issues nothing
            assertThat(list(json(call(base, "POST", "/v1/invoices/issue?month=2025-06", ADMIN, null, null).body()),
                    "issued")).isEmpty();

            Map<String, Object> visionInvoice = json(call(base, "GET", "/v1/invoices/INV-2025-06-vision", VISION,
                    null, null).body());
            List<Map<String, Object>> lines = list(visionInvoice, "lines");
            assertThat(lines).anySatisfy(l -> assertThat(l).containsEntry("kind", "CREDIT")
                    .containsEntry("reason", "NODE_FAILED"));
            assertThat(lines).extracting(l -> l.get("unitPrice")).contains("2.50", "2.90", "1.10");
            assertThat(call(base, "GET", "/v1/invoices/INV-2025-06-nlp", VISION, null, null).statusCode())
                    .isEqualTo(404);
            assertThat(list(json(call(base, "GET", "/v1/invoices?month=2025-06", VISION, null, null).body()),
                    "invoices")).extracting(d -> d.get("tenant")).containsOnly("vision");
            HttpResponse<String> csv = call(base, "GET", "/v1/invoices/INV-2025-06-vision?format=csv", VISION, null,
                    null);
            assertThat(csv.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t)
                    .startsWith("text/csv"));
            assertThat(csv.body().split("\r\n")).hasSize(lines.size() + 1);
            assertThat(call(base, "GET", "/v1/invoices/INV-2025-06-vision?format=md", VISION, null, null).body())
                    .contains("**" + expected.get("vision").toPlainString() + " EUR**");

            // a release arrives after the invoice: a debit note, and invoice + note equal the recomputation
            Job late = new Job("late-" + run, "vision", "H100", 1000, Instant.parse("2025-06-20T10:00:00Z"),
                    Instant.parse("2025-06-20T11:00:00Z"), false, ReleaseReason.RUN_SUCCEEDED, null);
            publish(late, false);
            await().atMost(AWAIT).until(() -> rows.countByJobId(late.id()) == 1);
            List<Map<String, Object>> notes = list(json(call(base, "POST", "/v1/invoices/issue?month=2025-06",
                    ADMIN, null, null).body()), "issued");
            assertThat(notes).singleElement().satisfies(n -> assertThat(n)
                    .containsEntry("documentId", "DN-2025-06-vision-1").containsEntry("kind", "DEBIT_NOTE")
                    .containsEntry("total", "2.90").containsEntry("corrects", "INV-2025-06-vision"));

            List<Job> all = new ArrayList<>(jobs);
            all.add(late);
            Map<String, Object> report = json(call(base, "GET", "/v1/reconciliation?month=2025-06", ADMIN, null,
                    null).body());
            List<Map<String, Object>> tenants = list(report, "tenants");
            Map<String, BigDecimal> recomputed = recompute(all);
            for (Map<String, Object> t : tenants.stream().filter(t -> recomputed.containsKey(t.get("tenant")))
                    .toList()) {
                assertThat(t).as(t.toString()).containsEntry("balanced", true);
                assertThat(new BigDecimal((String) t.get("invoiced"))).isEqualTo(recomputed.get(t.get("tenant")));
            }
            assertThat(report).containsEntry("balanced", true);
            assertField(call(base, "GET", "/v1/reconciliation?month=2025-06", VISION, null, null), 403,
                    "Authorization");
            assertField(call(base, "POST", "/v1/invoices/issue?month=2099-01", ADMIN, null, null), 400, "month");
            assertField(call(base, "POST", "/v1/invoices/issue?month=june", ADMIN, null, null), 400, "month");
        }
    }

    /** Thirty jobs over June (in UTC, inside June in Berlin too), deterministic. */
    private List<Job> simulateMonth() {
        Random r = new Random(42);
        List<Job> jobs = new ArrayList<>();
        long[] shares = {1000, 2000, 4000, 500, 142, 8000};
        for (int i = 0; i < 30; i++) {
            String tenant = i % 2 == 0 ? "vision" : "nlp";
            String model = i % 3 == 0 ? "A100" : "H100";
            Instant start = Instant.parse("2025-06-02T00:00:00Z").plusMillis((long) (r.nextDouble() * 24 * 86_400_000L));
            Instant end = start.plusMillis(60_000 + (long) (r.nextDouble() * 20 * 3_600_000L) + r.nextInt(1000));
            ReleaseReason reason = switch (i) {
                case 4, 9 -> ReleaseReason.NODE_FAILED;
                case 7 -> ReleaseReason.PREEMPTED;
                default -> ReleaseReason.RUN_SUCCEEDED;
            };
            Instant checkpoint = i == 4 ? start.plusMillis((end.toEpochMilli() - start.toEpochMilli()) / 3) : null;
            jobs.add(new Job("sim-" + run + "-" + i, tenant, model, shares[i % shares.length], start, end,
                    i % 4 == 1, reason, checkpoint));
        }
        // one job certainly spans the price change
        jobs.set(2, new Job(jobs.get(2).id(), "vision", "H100", 1000, CHANGE.minusSeconds(3_600).plusMillis(7),
                CHANGE.plusSeconds(5_400), false, ReleaseReason.RUN_SUCCEEDED, null));
        return jobs;
    }

    private void publish(Job j, boolean twice) {
        kafka.send(Topics.ADMISSION_JOB_EVENTS, j.id(), AdmissionJobEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setJobId(j.id()).setOccurredAt(j.start())
                .setPayload(JobSubmitted.newBuilder().setTenant(j.tenant()).setIdempotencyKey(null)
                        .setSpec(JobSpec.newBuilder().setName("sim").setPriority(0)
                                .setPriorityClass(j.preemptible() ? "preemptible" : null)
                                .setTasks(List.of(TaskSpec.newBuilder().setName("w").setReplicas(1)
                                        .setCommand(List.of("run")).setGpus((int) (j.milli() / 1000))
                                        .setCpuMillis(1000).setMemoryMiB(1024).build()))
                                .build())
                        .build())
                .build());
        if (j.checkpoint() != null) {
            kafka.send(Topics.ADMISSION_CHECKPOINT_EVENTS, j.id(), CheckpointEvent.newBuilder()
                    .setEventId(UUID.nameUUIDFromBytes(j.id().getBytes(StandardCharsets.UTF_8)).toString())
                    .setJobId(j.id()).setOccurredAt(j.checkpoint())
                    .setPayload(CheckpointCommitted.newBuilder().setTenant(j.tenant()).setAttempt(1).setStep(100)
                            .setPath("/ckpt/100").setReportedVia("api").setCommittedAt(j.checkpoint()).build())
                    .build());
        }
        int whole = (int) (j.milli() / 1000);
        List<Integer> indices = new ArrayList<>();
        for (int g = 0; g < whole; g++) {
            indices.add(g);
        }
        List<GpuShare> parts = j.milli() % 1000 == 0 ? List.of() : List.of(GpuShare.newBuilder().setIndex(7)
                .setMilli((int) (j.milli() % 1000)).setMemoryMiB(10_240).build());
        AllocationEvent release = AllocationEvent.newBuilder().setEventId(UUID.randomUUID().toString())
                .setJobId(j.id()).setOccurredAt(j.end())
                .setPayload(AllocationReleased.newBuilder().setAllocationId("alloc-" + j.id()).setTenant(j.tenant())
                        .setAttempt(1).setReason(j.reason()).setGrantedAt(j.start()).setReleasedAt(j.end())
                        .setPlacements(List.of(TaskPlacement.newBuilder().setTask("w").setReplica(0).setNodeId("n1")
                                .setGpuModel(j.model()).setGpuIndices(indices).setGpuShares(parts)
                                .setCpuMillis(1000).setMemoryMiB(1024).build()))
                        .setBackend("simulated").build())
                .build();
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, j.id(), release);
        if (twice) {
            kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, j.id(), release);
        }
    }

    /**
     * The oracle, written independently of billing's core: per job, each piece at one price is
     * thousandths x milliseconds x price / 3.6e9, rounded half-even to cents; a node failure gives back the time
     * since the checkpoint (or the start) at the same prices.
     */
    private static Map<String, BigDecimal> recompute(List<Job> jobs) {
        Map<String, BigDecimal> totals = new TreeMap<>();
        for (Job j : jobs) {
            BigDecimal t = pieces(j, j.start()).add(j.reason() == ReleaseReason.NODE_FAILED
                    ? pieces(j, j.checkpoint() == null ? j.start() : j.checkpoint()).negate() : BigDecimal.ZERO);
            totals.merge(j.tenant(), t, BigDecimal::add);
        }
        return totals;
    }

    private static BigDecimal pieces(Job j, Instant from) {
        List<Instant[]> spans = new ArrayList<>();
        if (j.model().equals("H100") && from.isBefore(CHANGE) && j.end().isAfter(CHANGE)) {
            spans.add(new Instant[]{from, CHANGE});
            spans.add(new Instant[]{CHANGE, j.end()});
        } else {
            spans.add(new Instant[]{from, j.end()});
        }
        BigDecimal sum = new BigDecimal("0.00");
        for (Instant[] s : spans) {
            BigDecimal price = j.model().equals("A100") ? new BigDecimal("1.10")
                    : s[0].isBefore(CHANGE) ? new BigDecimal("2.50") : new BigDecimal("2.90");
            if (j.preemptible()) {
                price = price.multiply(new BigDecimal("0.6"));
            }
            long ms = s[1].toEpochMilli() - s[0].toEpochMilli();
            sum = sum.add(price.multiply(BigDecimal.valueOf(j.milli() * ms))
                    .divide(BigDecimal.valueOf(3_600_000_000L), 2, RoundingMode.HALF_EVEN));
        }
        return sum;
    }

    private void rewind() throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                EmbeddedKafka.shared().bootstrapServers()))) {
            Map<TopicPartition, OffsetAndMetadata> zero = new HashMap<>();
            for (Topic<?> t : List.of(Topics.PLACEMENT_ALLOCATION_EVENTS, Topics.ADMISSION_JOB_EVENTS,
                    Topics.ADMISSION_CHECKPOINT_EVENTS, Topics.PLACEMENT_NODE_EVENTS)) {
                zero.put(new TopicPartition(t.name(), 0), new OffsetAndMetadata(0));
            }
            await().atMost(AWAIT).ignoreExceptions().until(() -> {
                admin.alterConsumerGroupOffsets("gantry-billing", zero).all().get();
                return true;
            });
        }
    }

    private HttpResponse<String> call(String method, String path, String token, String type, String body)
            throws Exception {
        return call(context.getBean(EmbeddedServer.class).getURL().toString(), method, path, token, type, body);
    }

    private HttpResponse<String> call(String base, String method, String path, String token, String type,
                                      String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
                .header("Authorization", "Bearer " + token)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (type != null) {
            b.header("Content-Type", type);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private Map<String, Object> json(String body) throws IOException {
        return json.readValue(body, Argument.mapOf(String.class, Object.class));
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Map<String, Object> m, String key) {
        return (List<Map<String, Object>>) m.get(key);
    }

    private void assertField(HttpResponse<String> r, int status, String field) throws IOException {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t)
                .startsWith("application/problem+json"));
        assertThat(list(json(r.body()), "errors")).extracting(e -> e.get("field")).contains(field);
    }
}
