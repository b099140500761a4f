package io.gantry.billing.streams;

import io.gantry.billing.core.BillingMonth;
import io.gantry.billing.core.MonthToDate;
import io.gantry.billing.core.Usage;
import io.gantry.events.UsageEvent;
import io.gantry.events.UsageRecorded;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topics;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The month-to-date topology on Kafka Streams' TopologyTestDriver: no broker, the real processor and stores. */
class MonthToDateTopologyTest {
    private static final String APP = "billing-mtd-test";
    private static final long HOUR = 3_600_000L;
    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    private final List<String> closed = new ArrayList<>();
    private TopologyTestDriver driver;
    private TestInputTopic<String, byte[]> usage;

    private void start(ZoneId zone, int openMonths) {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, APP);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        driver = new TopologyTestDriver(MonthToDateTopology.build(zone, openMonths, new MonthToDateTopology.Listener() {
            @Override
            public void closedMonth(String entryId, YearMonth month) {
                closed.add(entryId + "@" + month);
            }
        }), props);
        usage = driver.createInputTopic(Topics.BILLING_USAGE_EVENTS.name(), new StringSerializer(),
                new ByteArraySerializer());
    }

    @AfterEach
    void close() {
        if (driver != null) {
            driver.close();
        }
    }

    /** A fluent UsageRecorded: whole GPUs unless {@link #gpuMillis} says otherwise. */
    private static final class Usage0 {
        private final String entryId;
        private String tenant = "vision";
        private String model = "H100";
        private int gpus = 1;
        private Instant from = Instant.parse("2026-03-10T10:00:00Z");
        private Instant to = from.plusMillis(HOUR);
        private Long gpuMillis;

        private Usage0(String entryId) {
            this.entryId = entryId;
        }

        Usage0 tenant(String t) {
            tenant = t;
            return this;
        }

        Usage0 gpus(String m, int n) {
            model = m;
            gpus = n;
            return this;
        }

        Usage0 held(String start, String end) {
            from = Instant.parse(start);
            to = Instant.parse(end);
            return this;
        }

        Usage0 gpuMillis(long g) {
            gpuMillis = g;
            return this;
        }

        UsageEvent event() {
            long d = to.toEpochMilli() - from.toEpochMilli();
            UsageRecorded u = UsageRecorded.newBuilder().setEntryId(entryId).setTenant(tenant).setJobId("job-" + entryId)
                    .setAttempt(1).setAllocationId(entryId.split("/")[0]).setNodeId("n1").setGpuModel(model)
                    .setGpuCount(gpus).setStartedAt(from).setEndedAt(to).setDurationMillis(d)
                    .setGpuMillis(gpuMillis != null ? gpuMillis : gpus * d).build();
            return UsageEvent.newBuilder().setEventId(UUID.nameUUIDFromBytes(entryId.getBytes(StandardCharsets.UTF_8))
                    .toString()).setTenant(tenant).setOccurredAt(to).setPayload(u).build();
        }
    }

    private static Usage0 aUsage(String entryId) {
        return new Usage0(entryId);
    }

    private void send(Usage0 u) {
        UsageEvent e = u.event();
        usage.pipeInput(e.getTenant(), AvroWire.encode(Topics.BILLING_USAGE_EVENTS, e));
    }

    private KeyValueStore<String, MonthToDate.Totals> totals() {
        return driver.getKeyValueStore(MonthToDateTopology.TOTALS_STORE);
    }

    private MonthToDate.Totals totals(String month, String tenant, String model) {
        return totals().get(StoreKeys.totals(YearMonth.parse(month), tenant, model));
    }

    private static Map<String, MonthToDate.Totals> contents(KeyValueStore<String, MonthToDate.Totals> store) {
        Map<String, MonthToDate.Totals> all = new HashMap<>();
        try (KeyValueIterator<String, MonthToDate.Totals> it = store.all()) {
            it.forEachRemaining(kv -> all.put(kv.key, kv.value));
        }
        return all;
    }

    private long seenEntries() {
        KeyValueStore<String, byte[]> seen = driver.getKeyValueStore(MonthToDateTopology.SEEN_STORE);
        return seen.approximateNumEntries();
    }

    @Test
    void shouldAddUpGpuTimePerTenantMonthAndGpuModel() {
        start(ZoneOffset.UTC, 2);
        send(aUsage("a1/n1").gpus("H100", 2).held("2026-03-01T00:00:00Z", "2026-03-01T01:00:00Z"));
        send(aUsage("a2/n1").gpus("H100", 1).held("2026-03-20T00:00:00Z", "2026-03-20T00:00:01.001Z"));
        send(aUsage("a3/n1").gpus("A100", 4).held("2026-03-05T00:00:00Z", "2026-03-05T00:30:00Z"));
        send(aUsage("a4/n1").gpus("H100", 1).held("2026-04-02T00:00:00Z", "2026-04-02T02:00:00Z"));
        send(aUsage("a5/n1").gpus(null, 0).held("2026-03-06T00:00:00Z", "2026-03-06T02:00:00Z"));
        send(aUsage("a6/n1").gpus("H100", 0).held("2026-03-07T00:00:00Z", "2026-03-07T00:01:00Z").gpuMillis(30_000));

        assertThat(totals("2026-03", "vision", "H100"))
                .isEqualTo(new MonthToDate.Totals((2 * HOUR + 1_001 + HOUR / 120) * 1000, 3));
        assertThat(totals("2026-03", "vision", "A100")).isEqualTo(new MonthToDate.Totals(4 * HOUR / 2 * 1000, 1));
        assertThat(totals("2026-03", "vision", null)).isEqualTo(new MonthToDate.Totals(0, 1));
        assertThat(totals("2026-04", "vision", "H100")).isEqualTo(new MonthToDate.Totals(2 * HOUR * 1000, 1));
    }

    @Test
    void shouldSplitAnEntrySpanningAMonthBoundaryExactlyAsInvoicesDo() {
        start(BERLIN, 2);
        // Berlin's April starts at 2026-03-31T22:00Z (summer time): 1 h in March, 3 h in April, on 3 GPUs
        Usage0 across = aUsage("a1/n1").gpus("H100", 3).held("2026-03-31T21:00:00Z", "2026-04-01T01:00:00Z");
        send(across);

        assertThat(totals("2026-03", "vision", "H100")).isEqualTo(new MonthToDate.Totals(3 * HOUR * 1000, 1));
        assertThat(totals("2026-04", "vision", "H100")).isEqualTo(new MonthToDate.Totals(3 * 3 * HOUR * 1000, 1));
        UsageRecorded u = (UsageRecorded) across.event().getPayload();
        var entry = MonthToDate.announced(u.getEntryId(), u.getTenant(), u.getJobId(), 1, u.getAllocationId(),
                u.getNodeId(), u.getGpuModel(), u.getGpuCount(), u.getStartedAt(), u.getEndedAt(),
                u.getDurationMillis(), u.getGpuMillis());
        for (String month : List.of("2026-03", "2026-04")) {
            BillingMonth m = new BillingMonth(YearMonth.parse(month), BERLIN);
            assertThat(totals(month, "vision", "H100").gpuMicros()).isEqualTo(Usage.gpuMicrosIn(entry, m.window()));
        }
    }

    @Test
    void shouldCountARedeliveredEntryOnce() {
        start(ZoneOffset.UTC, 2);
        Usage0 once = aUsage("a1/n1").gpus("H100", 2);
        send(once);
        send(once);
        send(aUsage("a2/n1").gpus("H100", 1));
        send(once);

        assertThat(totals("2026-03", "vision", "H100")).isEqualTo(new MonthToDate.Totals(3 * HOUR * 1000, 2));
    }

    @Test
    void shouldKeepTwoTenantsApart() {
        start(ZoneOffset.UTC, 2);
        send(aUsage("a1/n1").tenant("vision").gpus("H100", 2));
        send(aUsage("a2/n1").tenant("nlp").gpus("H100", 1));

        assertThat(totals("2026-03", "vision", "H100")).isEqualTo(new MonthToDate.Totals(2 * HOUR * 1000, 1));
        assertThat(totals("2026-03", "nlp", "H100")).isEqualTo(new MonthToDate.Totals(HOUR * 1000, 1));
        assertThat(contents(totals())).hasSize(2);
    }

    @Test
    void shouldSendAnUndecodableOrImpossibleRecordToTheDeadLetterTopicAndGoOn() {
        start(ZoneOffset.UTC, 2);
        usage.pipeInput("vision", "not avro".getBytes(StandardCharsets.UTF_8));
        UsageEvent wrongKey = aUsage("a1/n1").tenant("vision").event();
        usage.pipeInput("nlp", AvroWire.encode(Topics.BILLING_USAGE_EVENTS, wrongKey));
        send(aUsage("a2/n1").gpus("H100", 2).gpuMillis(5));
        send(aUsage("a3/n1").gpus("H100", 1));

        var dead = driver.createOutputTopic(Topics.deadLetter(Service.BILLING).name(), new StringDeserializer(),
                new ByteArrayDeserializer()).readRecordsToList();
        assertThat(dead).hasSize(3);
        assertThat(dead).extracting(r -> header(r, "gantry.error"))
                .anySatisfy(e -> assertThat(e).contains("cannot decode UsageEvent"))
                .anySatisfy(e -> assertThat(e).contains("key: must be the tenant vision"))
                .anySatisfy(e -> assertThat(e).contains("gpuMillis: 5 is less than 2 whole GPUs"));
        assertThat(dead).extracting(r -> header(r, "gantry.source.topic")).containsOnly("billing.usage-events");
        assertThat(dead.get(0).value()).isEqualTo("not avro".getBytes(StandardCharsets.UTF_8));
        assertThat(totals("2026-03", "vision", "H100")).isEqualTo(new MonthToDate.Totals(HOUR * 1000, 1));
    }

    @Test
    void shouldForgetSeenEntriesOfClosedMonthsAndIgnoreTheirLateRecords() {
        start(ZoneOffset.UTC, 1);
        Usage0 january = aUsage("jan/n1").held("2026-01-10T00:00:00Z", "2026-01-10T01:00:00Z");
        send(january);
        send(aUsage("feb/n1").held("2026-02-10T00:00:00Z", "2026-02-10T01:00:00Z"));
        assertThat(seenEntries()).isEqualTo(2);

        // March opens: with one open month before it (February), January closes and its seen ids go
        send(aUsage("mar/n1").held("2026-03-10T00:00:00Z", "2026-03-10T01:00:00Z"));
        assertThat(seenEntries()).isEqualTo(2);
        send(january);
        send(aUsage("late/n1").held("2026-01-20T00:00:00Z", "2026-01-20T01:00:00Z"));
        send(aUsage("feb2/n1").held("2026-02-11T00:00:00Z", "2026-02-11T01:00:00Z"));

        assertThat(totals("2026-01", "vision", "H100")).isEqualTo(new MonthToDate.Totals(HOUR * 1000, 1));
        assertThat(totals("2026-02", "vision", "H100")).isEqualTo(new MonthToDate.Totals(2 * HOUR * 1000, 2));
        assertThat(closed).containsExactly("jan/n1@2026-01", "late/n1@2026-01");
    }

    @Test
    void shouldWriteEveryStoreChangeToItsChangelogSoARestartRestoresTheTotals() {
        start(BERLIN, 2);
        send(aUsage("a1/n1").gpus("H100", 3).held("2026-03-31T21:00:00Z", "2026-04-01T01:00:00Z"));
        send(aUsage("a2/n1").tenant("nlp").gpus("A100", 1));
        send(aUsage("a1/n1").gpus("H100", 3).held("2026-03-31T21:00:00Z", "2026-04-01T01:00:00Z"));
        send(aUsage("a3/n1").gpus("H100", 1).held("2026-04-02T00:00:00Z", "2026-04-02T00:00:00.500Z"));
        Map<String, MonthToDate.Totals> before = contents(totals());

        String changelog = MonthToDateTopology.changelog(APP, MonthToDateTopology.TOTALS_STORE);
        String seenChangelog = MonthToDateTopology.changelog(APP, MonthToDateTopology.SEEN_STORE);
        assertThat(driver.producedTopicNames()).contains(changelog, seenChangelog);
        List<TestRecord<String, byte[]>> log = driver.createOutputTopic(changelog, new StringDeserializer(),
                new ByteArrayDeserializer()).readRecordsToList();
        List<TestRecord<String, byte[]>> seenLog = driver.createOutputTopic(seenChangelog, new StringDeserializer(),
                new ByteArrayDeserializer()).readRecordsToList();
        driver.close();

        // a new instance: its stores get what a restore replays, each changelog in order (the driver cannot restore)
        start(BERLIN, 2);
        TotalsSerde serde = new TotalsSerde();
        KeyValueStore<String, byte[]> seen = driver.getKeyValueStore(MonthToDateTopology.SEEN_STORE);
        log.forEach(r -> totals().put(r.key(), serde.deserializer().deserialize(changelog, r.value())));
        seenLog.forEach(r -> seen.put(r.key(), r.value()));
        assertThat(contents(totals())).isEqualTo(before).hasSize(3);

        send(aUsage("a1/n1").gpus("H100", 3).held("2026-03-31T21:00:00Z", "2026-04-01T01:00:00Z"));
        send(aUsage("a4/n1").gpus("H100", 1).held("2026-04-03T00:00:00Z", "2026-04-03T01:00:00Z"));
        assertThat(totals("2026-03", "vision", "H100")).isEqualTo(new MonthToDate.Totals(3 * HOUR * 1000, 1));
        assertThat(totals("2026-04", "vision", "H100"))
                .isEqualTo(new MonthToDate.Totals((9 * HOUR + 500 + HOUR) * 1000, 3));
    }

    private static String header(TestRecord<String, byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}
