package io.gantry.billing.money;

import io.gantry.billing.BillingStack;
import io.gantry.billing.core.BillingMonth;
import io.gantry.billing.core.Invoice;
import io.gantry.billing.core.LedgerEntry;
import io.gantry.billing.core.UsageWindow;
import io.gantry.billing.db.BillingStore;
import io.gantry.billing.db.Ledger;
import io.gantry.billing.db.LedgerRepository;
import io.gantry.embedded.EmbeddedKafka;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationReleased;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.schemas.Topics;
import io.gantry.testkit.TopicClient;
import io.gantry.testkit.MutableClock;
import io.micronaut.test.annotation.MockBean;
import io.micronaut.test.extensions.junit5.annotation.MicronautTest;
import io.micronaut.test.support.TestPropertyProvider;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.math.BigDecimal;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * Issuing against the real PostgreSQL, with billing's clock in the test's hands: the timer issuing the note of a month
 * older than the last one when a release lands in it late, and two instances issuing one month while a late release
 * is recorded between their reads. Its months are in 2024, apart from the other tests' on the shared broker.
 */
@MicronautTest(transactional = false)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class InvoiceIssuingIntegrationTest implements TestPropertyProvider {
    private static final String BOOK = """
            currency: EUR
            gpu:
              - {model: H100, perGpuHour: "2.50", effectiveFrom: 2024-01-01T00:00:00Z}
            """;

    private final MutableClock clock = new MutableClock(Instant.parse("2024-01-15T00:00:00Z"));
    private final Map<String, String> properties = new HashMap<>();
    private final TopicClient kafka = new TopicClient(EmbeddedKafka.shared().bootstrapServers());

    @Inject
    Ledger ledger;

    @Inject
    LedgerRepository rows;

    @Inject
    BillingStore store;

    @Inject
    PriceBookService prices;

    @Inject
    BillingSettings settings;

    @Inject
    Reconciler reconciler;

    @MockBean(Clock.class)
    Clock clock() {
        return clock;
    }

    @Override
    public Map<String, String> getProperties() {
        if (properties.isEmpty()) {
            properties.putAll(BillingStack.properties("vision-token-123", "nlp-token-12345", "admin-token-123"));
            properties.put("gantry.billing.invoices.auto-issue", "false");
        }
        return properties;
    }

    @BeforeAll
    void applyPriceBook() {
        prices.apply(ExactYaml.load(BOOK), "test");
    }

    @AfterAll
    void closeClient() {
        kafka.close();
    }

    @Test
    void aReleaseLandingInAMonthOlderThanTheLastIsInvoicedOnANoteOfItsOwnMonthByTheTimer() {
        ObservedLedger observed = new ObservedLedger(rows);
        InvoiceService timer = instance(observed);
        clock.set(Instant.parse("2024-06-10T11:00:00Z"));
        release("vision", "2024-06-10T10:00:00Z", "2024-06-10T11:00:00Z");
        clock.set(Instant.parse("2024-07-01T07:00:00Z"));
        timer.issueClosedMonth();
        assertThat(store.documents("vision", "2024-06")).extracting(Invoice::documentId, Invoice::total)
                .containsExactly(tuple("INV-2024-06-vision", new BigDecimal("2.50")));

        // a run granted in June and released in August (a time limit may be a year) is recorded after June's invoice
        clock.set(Instant.parse("2024-08-02T10:00:00Z"));
        release("vision", "2024-06-29T00:00:00Z", "2024-08-02T10:00:00Z");
        clock.set(Instant.parse("2024-08-02T12:00:00Z"));
        observed.windowsRead.clear();
        timer.issueClosedMonth();
        assertThat(store.documents("vision", "2024-06")).extracting(Invoice::documentId, Invoice::total)
                .containsExactly(tuple("INV-2024-06-vision", new BigDecimal("2.50")),
                        tuple("DN-2024-06-vision-1", new BigDecimal("120.00")));
        assertThat(store.documents("vision", "2024-07")).extracting(Invoice::documentId, Invoice::total)
                .containsExactly(tuple("INV-2024-07-vision", new BigDecimal("1860.00")));
        assertThat(reconciler.reconcile(month("2024-06")).tenants()).singleElement().satisfies(t -> {
            assertThat(t.balanced()).as(t.toString()).isTrue();
            assertThat(t.invoiced()).isEqualByComparingTo("122.50");
        });
        assertThat(observed.windowsRead).as("July, as every look, and June, which the release reached")
                .containsExactlyInAnyOrder(month("2024-07").window(), month("2024-06").window());

        // nothing recorded since: the next look rates July alone
        clock.set(Instant.parse("2024-08-02T12:30:00Z"));
        observed.windowsRead.clear();
        timer.issueClosedMonth();
        assertThat(observed.windowsRead).containsExactly(month("2024-07").window());
        assertThat(store.documents("vision", "2024-06")).hasSize(2);
    }

    @Test
    void aNoteAnotherInstanceIssuedWhileThisOneReadTheLedgerIsNotCorrectedAgain() {
        BillingMonth march = month("2024-03");
        record(entry("vision", "2024-03-10T10:00:00Z", "2024-03-10T11:00:00Z"), "2024-03-10T11:00:00Z");
        clock.set(Instant.parse("2024-04-01T07:00:00Z"));
        assertThat(instance(ledger).issue(march)).extracting(Invoice::documentId)
                .containsExactly("INV-2024-03-vision");

        // A reads the ledger without the late release; then it is recorded and B issues its debit note; then A goes on
        InvoiceService b = instance(ledger);
        ObservedLedger observed = new ObservedLedger(rows);
        observed.afterNextRead(() -> {
            record(entry("vision", "2024-03-20T10:00:00Z", "2024-03-20T12:00:00Z"), "2024-04-02T09:00:00Z");
            assertThat(b.issue(march)).extracting(Invoice::documentId).containsExactly("DN-2024-03-vision-1");
        });
        clock.set(Instant.parse("2024-04-02T10:00:00Z"));
        assertThat(instance(observed).issue(march)).as("what A issues").isEmpty();

        assertThat(store.documents("vision", "2024-03")).extracting(Invoice::documentId, Invoice::total)
                .containsExactly(tuple("INV-2024-03-vision", new BigDecimal("2.50")),
                        tuple("DN-2024-03-vision-1", new BigDecimal("5.00")));
        assertThat(instance(ledger).issue(march)).as("nothing left to correct").isEmpty();
    }

    @Test
    void aNoteAnotherInstanceIssuedBeforeThisOneReadTheLedgerIsIssuedOnce() {
        BillingMonth april = month("2024-04");
        record(entry("vision", "2024-04-10T10:00:00Z", "2024-04-10T11:00:00Z"), "2024-04-10T11:00:00Z");
        clock.set(Instant.parse("2024-05-01T07:00:00Z"));
        assertThat(instance(ledger).issue(april)).extracting(Invoice::documentId)
                .containsExactly("INV-2024-04-vision");

        // A has read what was issued; the late release is recorded and B issues its note before A reads the ledger:
        // A computes the same note under the same sequence number, and PostgreSQL keeps only B's
        InvoiceService b = instance(ledger);
        ObservedLedger observed = new ObservedLedger(rows);
        observed.beforeNextRead(() -> {
            record(entry("vision", "2024-04-20T10:00:00Z", "2024-04-20T12:00:00Z"), "2024-05-02T09:00:00Z");
            assertThat(b.issue(april)).extracting(Invoice::documentId).containsExactly("DN-2024-04-vision-1");
        });
        clock.set(Instant.parse("2024-05-02T10:00:00Z"));
        assertThat(instance(observed).issue(april)).as("what A issues").isEmpty();

        assertThat(store.documents("vision", "2024-04")).extracting(Invoice::documentId, Invoice::total)
                .containsExactly(tuple("INV-2024-04-vision", new BigDecimal("2.50")),
                        tuple("DN-2024-04-vision-1", new BigDecimal("5.00")));
    }

    /** Another billing instance on the same database: its own service and (so) its own lock. */
    private InvoiceService instance(Ledger l) {
        return new InvoiceService(l, store, prices, settings, clock, true);
    }

    private BillingMonth month(String text) {
        return BillingMonth.parse(text, settings.zone());
    }

    private void record(LedgerEntry e, String recordedAt) {
        ledger.record(e, Instant.parse(recordedAt));
    }

    /** Releases one H100 of {@code tenant} held from {@code start} to {@code end} on the broker; waits for its row. */
    private void release(String tenant, String start, String end) {
        String job = "late-" + UUID.randomUUID();
        kafka.send(Topics.PLACEMENT_ALLOCATION_EVENTS, job, AllocationEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setJobId(job).setOccurredAt(Instant.parse(end))
                .setPayload(AllocationReleased.newBuilder().setAllocationId("alloc-" + job).setTenant(tenant)
                        .setAttempt(1).setReason(ReleaseReason.RUN_SUCCEEDED).setGrantedAt(Instant.parse(start))
                        .setReleasedAt(Instant.parse(end))
                        .setPlacements(List.of(TaskPlacement.newBuilder().setTask("w").setReplica(0).setNodeId("n1")
                                .setGpuModel("H100").setGpuIndices(List.of(0)).setCpuMillis(1000)
                                .setMemoryMiB(1024).build()))
                        .setBackend("simulated").build())
                .build());
        await().atMost(Duration.ofSeconds(90)).until(() -> rows.countByJobId(job) == 1);
    }

    /** One H100 of {@code tenant} from {@code start} to {@code end}, on an allocation of its own. */
    private static LedgerEntry entry(String tenant, String start, String end) {
        String allocation = "alloc-" + UUID.randomUUID();
        Instant from = Instant.parse(start);
        Instant to = Instant.parse(end);
        long millis = to.toEpochMilli() - from.toEpochMilli();
        return new LedgerEntry(LedgerEntry.entryId(allocation, "n1"), tenant, "job-" + allocation, 1, allocation, "n1",
                "H100", 1, from, to, millis, millis);
    }

    /**
     * The ledger as one instance reads it, with a hook into its next read: what another instance does before or
     * after that read, and the windows it was asked for.
     */
    static final class ObservedLedger extends Ledger {
        final List<UsageWindow> windowsRead = new ArrayList<>();
        private Runnable before;
        private Runnable after;

        ObservedLedger(LedgerRepository rows) {
            super(rows);
        }

        void beforeNextRead(Runnable meanwhile) {
            before = meanwhile;
        }

        void afterNextRead(Runnable meanwhile) {
            after = meanwhile;
        }

        @Override
        public List<LedgerEntry> reaching(String tenant, UsageWindow window) {
            windowsRead.add(window);
            Runnable first = before;
            before = null;
            if (first != null) {
                first.run();
            }
            List<LedgerEntry> read = super.reaching(tenant, window);
            Runnable then = after;
            after = null;
            if (then != null) {
                then.run();
            }
            return read;
        }
    }
}
