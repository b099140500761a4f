package io.gantry.billing.money;

import io.gantry.billing.core.Money;
import io.gantry.billing.core.InvalidInput;
import io.gantry.billing.core.PriceBook;
import io.gantry.billing.core.PriceBookParser;
import io.gantry.billing.db.BillingStore;
import io.gantry.billing.kafka.BillingProcessor;
import io.gantry.billing.kafka.KnownModels;
import io.gantry.events.GpuPrice;
import io.gantry.events.PriceBookApplied;
import io.gantry.events.PriceEvent;
import io.gantry.events.PriceMultiplier;
import io.gantry.events.ResourcePrice;
import io.gantry.schemas.Topics;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Value;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.json.JsonMapper;
import io.micronaut.scheduling.annotation.Scheduled;
import jakarta.annotation.PostConstruct;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

/**
 * The price book in force: versions in PostgreSQL (insert-only), each announced as {@code PriceBookApplied} on
 * {@code billing.price-events} with an event id derived from its version. At start it loads the newest version,
 * applies the configured YAML file when it differs, and announces the newest version again (a crash between the
 * insert and the send loses no event; the repeat has the same id).
 *
 * <p>Several billing instances share the table: each one looks for a newer version every
 * {@code gantry.billing.price-book-check} (1 s) and before it applies one, so a version applied through one instance
 * is in force on every other within about a second (costs, budgets and invoices rate with it), and the next version
 * applied anywhere builds on it.
 */
@Context
public class PriceBookService {
    private static final Logger LOG = LoggerFactory.getLogger(PriceBookService.class);

    private final BillingStore store;
    private final BillingProcessor processor;
    private final KnownModels models;
    private final JsonMapper json;
    private final Clock clock;
    private final String file;
    private volatile PriceBook current;
    private volatile BillingStore.PriceBookRow currentRow;

    public PriceBookService(BillingStore store, BillingProcessor processor, KnownModels models, JsonMapper json,
                            Clock clock, @Nullable @Value("${gantry.billing.price-book-file:}") String file,
                            @Value("${gantry.billing.currency:EUR}") String currency) {
        this.current = PriceBook.empty(currencyOf(currency));
        this.store = store;
        this.processor = processor;
        this.models = models;
        this.json = json;
        this.clock = clock;
        this.file = file == null || file.isBlank() ? null : file;
    }

    /** The configured currency of version 0 (no prices yet): an ISO 4217 code, or the service does not start. */
    private static String currencyOf(String code) {
        try {
            return java.util.Currency.getInstance(code.trim().toUpperCase(java.util.Locale.ROOT)).getCurrencyCode();
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalStateException("gantry.billing.currency must be an ISO 4217 currency code such as EUR or"
                    + " USD, was '" + code + "'", e);
        }
    }

    @PostConstruct
    void start() {
        store.latestPriceBook().ifPresent(this::use);
        if (file != null) {
            Object tree;
            try {
                tree = ExactYaml.load(Files.readString(Path.of(file), StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new UncheckedIOException("gantry.billing.price-book-file " + file + " cannot be read", e);
            }
            try {
                apply(tree, "file");
            } catch (InvalidInput e) {
                // a wrong file must stop the service, not bill with prices nobody meant
                throw new IllegalStateException("gantry.billing.price-book-file " + file + ": " + e.getMessage(), e);
            }
        }
        if (currentRow != null) {
            announce(currentRow, current);
        }
    }

    /** The book in force: the newest version stored, as of the last look (at most about a second ago). */
    public PriceBook current() {
        return current;
    }

    public BillingStore.PriceBookRow currentRow() {
        return currentRow;
    }

    /**
     * Looks for a version another instance applied, off the request path: a request never waits for it, also not
     * while the database is out of reach (what needs the database fails on its own; prices stay those last seen).
     */
    @Scheduled(fixedDelay = "${gantry.billing.price-book-check:1s}", initialDelay = "1s")
    void lookForNewerVersion() {
        try {
            catchUp();
        } catch (RuntimeException e) {
            LOG.debug("price book not refreshed: {}", e.toString());
        }
    }

    /** Takes the newest stored version when it is newer than the one in force (another instance applied it). */
    private synchronized void catchUp() {
        long newest = store.latestPriceBookVersion();
        if (newest > current.version()) {
            store.latestPriceBook().ifPresent(row -> {
                if (row.version() > current.version()) {
                    use(row);
                    LOG.info("price book version {} (applied by {}) in force", row.version(), row.appliedBy());
                }
            });
        }
    }

    /**
     * Validates the document and makes it the next version, unless it equals the one in force (then nothing
     * changes). Throws {@link InvalidInput} naming the fields.
     */
    public synchronized BillingStore.PriceBookRow apply(Object tree, String by) {
        catchUp();
        Instant now = clock.instant();
        PriceBook next = PriceBookParser.parse(tree, models.snapshot());
        PriceBook now0 = current;
        if (currentRow != null && next.samePrices(now0)) {
            return currentRow;
        }
        PriceBook.requireNoRetroactiveChange(now0, next, now);
        PriceBook versioned = next.withVersion(now0.version() + 1);
        BillingStore.PriceBookRow row = new BillingStore.PriceBookRow(versioned.version(), versioned.currency(),
                document(versioned), Instant.ofEpochMilli(now.toEpochMilli()), by);
        if (!store.insertPriceBook(row)) {
            throw InvalidInput.of("version", "another price book version was applied at the same time; retry");
        }
        use(row);
        announce(row, versioned);
        LOG.info("price book version {} applied by {}", row.version(), by);
        return row;
    }

    private void use(BillingStore.PriceBookRow row) {
        PriceBook book = PriceBookParser.parse(parseJson(row.document()), java.util.Set.of()).withVersion(row.version());
        this.current = book;
        this.currentRow = row;
    }

    public String document(PriceBook book) {
        try {
            return json.writeValueAsString(PriceBookParser.toTree(book));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public Object parseJson(String document) {
        try {
            return io.gantry.runtime.http.JsonBody.parse(document.getBytes(StandardCharsets.UTF_8));
        } catch (io.gantry.runtime.http.JsonBody.Rejected e) {
            throw new IllegalStateException("stored price book is not JSON: " + e.getMessage(), e);
        }
    }

    private void announce(BillingStore.PriceBookRow row, PriceBook book) {
        PriceEvent event = event(row, book);
        processor.submit(out -> {
            out.send(Topics.BILLING_PRICE_EVENTS, event.getBook(), event);
            return null;
        });
    }

    static PriceEvent event(BillingStore.PriceBookRow row, PriceBook book) {
        return PriceEvent.newBuilder()
                .setEventId(UUID.nameUUIDFromBytes(("billing.price-book/" + row.version())
                        .getBytes(StandardCharsets.UTF_8)).toString())
                .setBook("price-book")
                .setOccurredAt(row.appliedAt())
                .setPayload(PriceBookApplied.newBuilder()
                        .setVersion(row.version())
                        .setAppliedAt(row.appliedAt())
                        .setAppliedBy(row.appliedBy())
                        .setCurrency(book.currency())
                        .setGpuPrices(book.gpu().stream().map(p -> GpuPrice.newBuilder().setModel(p.model())
                                .setTier(p.tier()).setPerGpuHour(Money.text(p.perGpuHour(), book.minorDigits()))
                                .setEffectiveFrom(p.effectiveFrom()).build()).toList())
                        .setCpuPrices(book.cpu().stream().map(p -> resource(p, book.minorDigits())).toList())
                        .setMemoryPrices(book.memory().stream().map(p -> resource(p, book.minorDigits())).toList())
                        .setMultipliers(book.multipliers().stream().map(m -> PriceMultiplier.newBuilder()
                                .setQueue(m.queue()).setPriorityClass(m.priorityClass())
                                .setFactor(m.factor().toPlainString()).setEffectiveFrom(m.effectiveFrom()).build())
                                .toList())
                        .setMigPrices(book.mig().stream().map(m -> io.gantry.events.MigPrice.newBuilder()
                                .setModel(m.model()).setProfile(m.profile())
                                .setPerInstanceHour(Money.text(m.perInstanceHour(), book.minorDigits()))
                                .setEffectiveFrom(m.effectiveFrom()).build()).toList())
                        .build())
                .build();
    }

    private static ResourcePrice resource(PriceBook.ResourcePrice p, int minorDigits) {
        return ResourcePrice.newBuilder().setPerHour(Money.text(p.perHour(), minorDigits)).setEffectiveFrom(p.effectiveFrom())
                .build();
    }

    public java.util.List<BillingStore.PriceBookRow> history() {
        return store.priceBooks();
    }

    /** The document of the version in force as a tree, for the HTTP answer. */
    public Map<String, Object> tree() {
        return PriceBookParser.toTree(current);
    }
}
