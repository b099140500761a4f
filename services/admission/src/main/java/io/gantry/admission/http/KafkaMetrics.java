package io.gantry.admission.http;

import io.gantry.runtime.http.ClusterMeters;
import io.gantry.runtime.http.ClusterReporter;
import io.gantry.schemas.Service;
import io.gantry.schemas.Topics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Value;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.TaskScheduler;
import jakarta.inject.Named;
import jakarta.annotation.PreDestroy;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Kafka health of the whole system, measured from outside the services' loops: the consumer lag of every Gantry
 * group, the services' own, their split units' and billing's Streams application's (every group named
 * {@code gantry-*}; {@code gantry_kafka_consumer_lag_records{group,topic,partition}}: each partition the group has
 * committed offsets for, once) and the records every service sent to its
 * dead-letter topic ({@code gantry_dead_letters_total{owner,topic}}: the service that owns the topic, and the topic).
 * One exporter for all five services, so the lag of a service that is down (the case that matters) is still reported.
 * The label is {@code owner}, not {@code service}: a scrape configuration that labels each target with its service
 * would overwrite it with {@code admission}.
 *
 * <p>Dead letters are counted by reading the topics (committed records only), not from their end offsets: queue,
 * placement and recovery write theirs in transactions, and each transaction's commit marker takes an offset too. The
 * count starts from what the topics still hold when this process starts; Prometheus reads a lower value after a
 * restart as a counter reset.
 *
 * <p>The lag of a transactional group reads 1 per partition at rest: a transaction's commit marker takes an offset
 * that no record uses, and input that only changes a service's state is committed up to a second late (the quiet
 * commit interval): up to a second's worth of such records. Alerts use thresholds well above that.
 *
 * <p>These series describe the whole system, and every admission instance could measure them alike: only the
 * instance that reports the cluster ({@link ClusterReporter}) measures and exports them, so a sum over the instances
 * Prometheus scrapes counts each partition's lag and each dead letter once. An instance that starts reporting counts
 * the dead letters from what the topics hold, as a start does; one that stops removes its series.
 */
@Context
public class KafkaMetrics implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaMetrics.class);
    private static final long TIMEOUT_SECONDS = 5;
    /** The prefix of every consumer group Gantry runs ({@code gantry-<service>[-<unit>]}, billing's Streams id). */
    private static final String GROUP_PREFIX = "gantry-";

    private final String bootstrap;
    private final ClusterReporter reporter;
    private final ClusterMeters meters;
    private final MultiGauge lag;
    private final Map<Service, AtomicLong> deadLetters = new EnumMap<>(Service.class);
    /** Whether this instance's series are registered (only the refresh, one run at a time, changes it). */
    private boolean reporting;
    /** Reads the dead-letter topics to count their records; only the refresh (one at a time) and close touch it. */
    private KafkaConsumer<byte[], byte[]> deadLetterReader;
    private final Object reading = new Object();
    private boolean closed;
    private final java.util.Set<String> complained = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private volatile Admin admin;
    private final io.gantry.runtime.kafka.KafkaSecurity security;

    private final java.util.concurrent.ScheduledFuture<?> refreshing;

    public KafkaMetrics(@Value("${kafka.bootstrap.servers}") String bootstrap, MeterRegistry registry,
            ClusterReporter reporter, @Named(TaskExecutors.SCHEDULED) TaskScheduler scheduler,
            @Value("${gantry.admission.metrics.refresh:5s}") java.time.Duration refresh,
            io.gantry.runtime.kafka.KafkaSecurity security) {
        this.bootstrap = bootstrap;
        this.security = security;
        this.reporter = reporter;
        this.meters = new ClusterMeters(registry);
        this.lag = MultiGauge.builder("gantry.kafka.consumer.lag").baseUnit("records")
                .description("Records a service's consumer group has not processed yet, per input topic and partition")
                .register(registry);
        // the bean schedules itself and stops at close: a task that looked the bean up after the context closed
        // would create it again, and with it a second event loop
        this.refreshing = scheduler.scheduleWithFixedDelay(java.time.Duration.ofMillis(2000), refresh,
                this::refresh);
    }

    void refresh() {
        if (!meters.follow(reporter, this::stopReporting)) {
            return;
        }
        if (!reporting) {
            startReporting();
        }
        try {
            refreshLag(admin());
        } catch (Exception e) {
            complain("consumer lag", e);
        }
        try {
            refreshDeadLetters(admin());
        } catch (Exception e) {
            complain("dead-letter counts", e);
        }
    }

    private void startReporting() {
        for (Service s : Service.values()) {
            AtomicLong count = new AtomicLong();
            deadLetters.put(s, count);
            meters.add(FunctionCounter.builder("gantry.dead.letters", count, AtomicLong::doubleValue)
                    .description("Records the service could not process and sent to its dead-letter topic")
                    .tag("owner", s.id()).tag("topic", Topics.deadLetter(s).name()).register(meters.registry()));
        }
        reporting = true;
    }

    /** Another instance reports now: this one exports nothing, and counts from the beginning when it reports again. */
    private void stopReporting() {
        reporting = false;
        lag.register(List.of(), true);
        synchronized (reading) {
            deadLetters.clear();
            if (deadLetterReader != null) {
                deadLetterReader.close(java.time.Duration.ofSeconds(1));
                deadLetterReader = null;
            }
        }
    }

    /** Once at WARN (the broker may simply not be up yet), then at DEBUG: a refresh runs every few seconds. */
    private void complain(String what, Exception e) {
        if (complained.add(what)) {
            LOG.warn("{} not refreshed; the next run retries (further failures at DEBUG): {}", what,
                    e.getCause() == null ? e.toString() : e + " caused by " + e.getCause());
        } else {
            LOG.debug("{} not refreshed: {}", what, e.toString());
        }
    }

    /**
     * Counts the committed records added to the dead-letter topics since the last refresh: reads up to their last
     * stable offsets (a bounded number of polls; the next refresh goes on where this one stopped).
     */
    private void refreshDeadLetters(Admin a) throws Exception {
        Map<String, Service> byTopic = new HashMap<>();
        List<TopicPartition> partitions = new ArrayList<>();
        for (Service s : Service.values()) {
            String topic = Topics.deadLetter(s).name();
            byTopic.put(topic, s);
            a.describeTopics(List.of(topic)).allTopicNames().get(TIMEOUT_SECONDS, TimeUnit.SECONDS).get(topic)
                    .partitions().forEach(p -> partitions.add(new TopicPartition(topic, p.partition())));
        }
        synchronized (reading) {
            if (closed) {
                return;
            }
            KafkaConsumer<byte[], byte[]> c = deadLetterReader();
            if (!c.assignment().equals(new java.util.HashSet<>(partitions))) {
                c.assign(partitions); // positions of partitions already assigned are kept
            }
            java.time.Duration timeout = java.time.Duration.ofSeconds(TIMEOUT_SECONDS);
            Map<TopicPartition, Long> stable = c.endOffsets(partitions, timeout);
            for (int polls = 0; polls < 20 && behind(c, stable, timeout); polls++) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(java.time.Duration.ofMillis(200))) {
                    deadLetters.get(byTopic.get(r.topic())).incrementAndGet();
                }
            }
        }
    }

    private static boolean behind(KafkaConsumer<?, ?> c, Map<TopicPartition, Long> stable, java.time.Duration timeout) {
        for (Map.Entry<TopicPartition, Long> e : stable.entrySet()) {
            if (c.position(e.getKey(), timeout) < e.getValue()) {
                return true;
            }
        }
        return false;
    }

    private KafkaConsumer<byte[], byte[]> deadLetterReader() {
        if (deadLetterReader == null) {
            Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ConsumerConfig.CLIENT_ID_CONFIG, "gantry-admission-dead-letter-count");
            p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS));
            p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS));
            deadLetterReader = new KafkaConsumer<>(security.on(p), new ByteArrayDeserializer(),
                    new ByteArrayDeserializer());
        }
        return deadLetterReader;
    }

    private void refreshLag(Admin a) throws Exception {
        Map<String, Map<TopicPartition, OffsetAndMetadata>> committed = new TreeMap<>();
        Map<TopicPartition, OffsetSpec> ends = new HashMap<>();
        // every Gantry group: the services' own, their split units' (gantry-queue-shard-N, gantry-placement-pool-P)
        // and billing's Kafka Streams application (gantry-billing-month-to-date); listed with their committed offsets
        // also while no member runs, which is when the lag matters
        java.util.SortedSet<String> groups = new java.util.TreeSet<>();
        for (Service s : Service.values()) {
            groups.add(GROUP_PREFIX + s.id());
        }
        for (var g : a.listConsumerGroups().all().get(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            if (g.groupId().startsWith(GROUP_PREFIX)) {
                groups.add(g.groupId());
            }
        }
        for (String group : groups) {
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>(a.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get(TIMEOUT_SECONDS, TimeUnit.SECONDS));
            offsets.values().removeIf(o -> o == null);
            committed.put(group, offsets);
            offsets.keySet().forEach(tp -> ends.put(tp, OffsetSpec.latest()));
        }
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> end =
                a.listOffsets(ends).all().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        lag.register(lagRows(committed, end), true);
    }

    /** One row per group and partition it committed offsets for: the records from its offset to the partition's end. */
    static List<MultiGauge.Row<?>> lagRows(Map<String, Map<TopicPartition, OffsetAndMetadata>> committed,
                                           Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> end) {
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        committed.forEach((group, offsets) -> {
            Map<TopicPartition, Long> byPartition = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::topic)
                    .thenComparingInt(TopicPartition::partition));
            offsets.forEach((tp, o) -> {
                ListOffsetsResult.ListOffsetsResultInfo e = end.get(tp);
                if (e != null) {
                    byPartition.put(tp, Math.max(0, e.offset() - o.offset()));
                }
            });
            byPartition.forEach((tp, n) -> rows.add(MultiGauge.Row.of(Tags.of("group", group, "topic", tp.topic(),
                    "partition", Integer.toString(tp.partition())), n)));
        });
        return rows;
    }

    private Admin admin() {
        Admin a = admin;
        if (a == null) {
            Properties p = new Properties();
            p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(AdminClientConfig.CLIENT_ID_CONFIG, "gantry-admission-metrics");
            // a refresh gives up after a few seconds and the next one retries; the API timeout may not be shorter
            // than the request timeout (the client refuses to start)
            int timeoutMs = (int) TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS);
            p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, timeoutMs);
            p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeoutMs);
            a = Admin.create(security.on(p));
            admin = a;
        }
        return a;
    }

    @PreDestroy
    @Override
    public void close() {
        refreshing.cancel(false);
        synchronized (reading) {
            closed = true;
            if (deadLetterReader != null) {
                deadLetterReader.close(java.time.Duration.ofSeconds(1));
            }
        }
        Admin a = admin;
        if (a != null) {
            a.close(java.time.Duration.ofSeconds(1));
        }
    }
}
