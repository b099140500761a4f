package io.gantry.admission;

import io.gantry.admission.kafka.AdmissionProcessor;
import io.gantry.embedded.EmbeddedKafka;
import io.gantry.embedded.EmbeddedPostgres;
import io.gantry.events.GpuDevice;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.events.QueueConfigApplied;
import io.gantry.events.QueueConfigEvent;
import io.gantry.events.QueueEntry;
import io.gantry.runtime.kafka.KafkaTopics;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import io.gantry.testkit.InstanceHttp;
import io.gantry.testkit.InstanceProperties;
import io.gantry.testkit.PrometheusText;
import io.gantry.testkit.TokensFile;
import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two admission instances sharing the work, on a broker of their own and one database (as {@code gantry dev
 * --instances 2} runs them), scraped as Prometheus scrapes them: the series that describe the whole cluster (jobs by
 * state, the job-lifecycle counters, consumer lag, dead letters) come from one instance, so their sum over both
 * scrapes is the cluster's figure, not twice it; when that instance stops, the other one reports them.
 */
class AdmissionInstancesMetricsTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String TOKEN = "metrics-vision-token-1";
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final int JOBS = 6;
    private static EmbeddedKafka broker;
    private static Path tokens;
    private static Map<String, String> database;
    private static final InstanceHttp INSTANCES = new InstanceHttp("1", "2");

    @BeforeAll
    static void start() throws Exception {
        broker = EmbeddedKafka.start(null, 0, Map.of());
        KafkaTopics.ensureAll(broker.bootstrapServers(), 2);
        String node = "metrics-node-" + UUID.randomUUID();
        send(Topics.PLACEMENT_NODE_EVENTS, node, NodeEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setNodeId(node).setOccurredAt(Instant.now())
                .setPayload(NodeRegistered.newBuilder()
                        .setGpus(IntStream.range(0, 8).mapToObj(i -> GpuDevice.newBuilder().setIndex(i)
                                .setModel("H100").setMemoryMiB(81920).build()).toList())
                        .setCpuMillis(128_000).setMemoryMiB(1_048_576).setLabels(Map.of()).setBackend("simulated")
                        .build())
                .build());
        send(Topics.QUEUE_CONFIG_EVENTS, "queue-config", QueueConfigEvent.newBuilder()
                .setEventId(UUID.randomUUID().toString()).setOccurredAt(Instant.now())
                .setPayload(QueueConfigApplied.newBuilder().setVersion(1).setSource("admin").setAppliedBy("ops")
                        .setSha256("0").setYaml("# test").setQueues(List.of(new QueueEntry("vision", "vision")))
                        .setPriorityClasses(List.of("normal")).build())
                .build());
        // groups that are not a service's own: a queue shard's, billing's Kafka Streams application, and a
        // stranger's (committed offsets only, as a unit that is down leaves them)
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers()))) {
            for (String group : List.of("gantry-queue-shard-1", "gantry-billing-month-to-date", "someone-else")) {
                admin.alterConsumerGroupOffsets(group, Map.of(new TopicPartition(Topics.PLACEMENT_NODE_EVENTS.name(),
                        0), new OffsetAndMetadata(0))).all().get(30, TimeUnit.SECONDS);
            }
        }
        tokens = TokensFile.write(TokensFile.tenants("vision", TOKEN), null);
        database = EmbeddedPostgres.shared().newDatasource("admission");
    }

    @AfterAll
    static void stop() throws Exception {
        if (broker != null) {
            broker.close();
        }
    }

    private static ApplicationContext instance(String id) throws InterruptedException {
        Map<String, Object> props = InstanceProperties.of(broker.bootstrapServers(), INSTANCES.port(id), tokens, id);
        props.putAll(database);
        props.put("gantry.kafka.partitions", "2");
        props.put("gantry.admission.metrics.refresh", "500ms");
        ApplicationContext ctx = ApplicationContext.run(EmbeddedServer.class, props).getApplicationContext();
        assertThat(ctx.getBean(AdmissionProcessor.class).awaitReady(TIMEOUT)).isTrue();
        return ctx;
    }

    @Test
    void summedOverBothInstancesTheClusterWideSeriesAreTheClustersFiguresAndTheSurvivorTakesThemOver()
            throws Exception {
        Map<String, ApplicationContext> instances = new LinkedHashMap<>();
        try {
            instances.put("1", instance("1"));
            instances.put("2", instance("2"));
            List<String> jobs = new ArrayList<>();
            for (int i = 0; i < JOBS; i++) {
                jobs.add(submit(i % 2 == 0 ? "1" : "2", "job-" + i));
            }
            for (String job : jobs) {
                await().atMost(TIMEOUT).until(() -> INSTANCES.get("1", "/v1/jobs/" + job, TOKEN).statusCode() == 200);
            }

            // what Prometheus would sum over the two targets is the cluster's figure
            await().atMost(TIMEOUT).untilAsserted(() -> {
                List<PrometheusText> pages = List.of(INSTANCES.scrape("1"), INSTANCES.scrape("2"));
                assertThat(pages.stream().mapToDouble(p -> p.sum("gantry_jobs", Map.of("tenant", "vision"))).sum())
                        .as("jobs by state, summed over both instances").isEqualTo(JOBS);
                assertThat(pages.stream().mapToDouble(p -> p.sum("gantry_jobs",
                        Map.of("tenant", "vision", "state", "SUBMITTED"))).sum()).isEqualTo(JOBS);
                assertThat(pages.stream().filter(p -> p.sum("gantry_instance_reporter", Map.of()) == 1).count())
                        .as("one instance reports the cluster").isEqualTo(1);
                assertThat(pages).filteredOn(p -> p.has("gantry_kafka_consumer_lag_records")).hasSize(1);
            });
            List<PrometheusText> pages = List.of(INSTANCES.scrape("1"), INSTANCES.scrape("2"));
            PrometheusText reporter = pages.stream().filter(p -> p.sum("gantry_instance_reporter", Map.of()) == 1)
                    .findFirst().orElseThrow();
            PrometheusText other = pages.stream().filter(p -> p != reporter).findFirst().orElseThrow();
            for (String series : List.of("gantry_jobs", "gantry_kafka_consumer_lag_records",
                    "gantry_dead_letters_total", "gantry_job_requeues_total", "gantry_allocation_releases_total",
                    "gantry_decision_latency_seconds_count")) {
                assertThat(reporter.has(series)).as("the reporting instance exports " + series).isTrue();
                assertThat(other.has(series)).as("the other instance exports no " + series + " (not even zeros)")
                        .isFalse();
            }
            assertThat(other.samples("gantry_instance_reporter")).singleElement()
                    .satisfies(s -> assertThat(s.value()).isZero());
            // lag per group, topic and partition: each of the shared group's partitions once
            List<PrometheusText.Sample> lag = reporter.samples("gantry_kafka_consumer_lag_records");
            assertThat(lag).allSatisfy(s -> assertThat(s.labels()).containsKeys("group", "topic", "partition"));
            assertThat(lag.stream().map(s -> List.of(s.label("group"), s.label("topic"), s.label("partition"))))
                    .doesNotHaveDuplicates();
            assertThat(lag).anySatisfy(s -> assertThat(s.labels()).containsEntry("group", "gantry-admission")
                    .containsEntry("topic", Topics.ADMISSION_JOB_EVENTS.name()));
            // every Gantry group, a split unit's and the Streams application's too; no one else's
            assertThat(lag.stream().map(s -> s.label("group")).distinct())
                    .contains("gantry-queue-shard-1", "gantry-billing-month-to-date").doesNotContain("someone-else");

            // the reporting instance stops: the other one reports the same figures on its own
            String reporterId = INSTANCES.scrape("1").sum("gantry_instance_reporter", Map.of()) == 1 ? "1" : "2";
            String survivor = reporterId.equals("1") ? "2" : "1";
            instances.remove(reporterId).close();
            await().atMost(TIMEOUT).untilAsserted(() -> {
                PrometheusText page = INSTANCES.scrape(survivor);
                assertThat(page.sum("gantry_instance_reporter", Map.of())).isEqualTo(1);
                assertThat(page.sum("gantry_jobs", Map.of("tenant", "vision"))).isEqualTo(JOBS);
                assertThat(page.has("gantry_kafka_consumer_lag_records")).isTrue();
            });
        } finally {
            instances.values().forEach(ApplicationContext::close);
        }
    }

    private static String submit(String instance, String name) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(INSTANCES.url(instance) + "/v1/jobs"))
                .header("Authorization", "Bearer " + TOKEN).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("""
                        {"name":"%s","tasks":[{"name":"worker","replicas":1,"command":["python","train.py"],"gpus":2,
                         "gpuModel":"H100"}]}""".formatted(name))).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
        return r.body().replaceAll("(?s).*\"jobId\"\\s*:\\s*\"([^\"]+)\".*", "$1");
    }

    private static <V> void send(Topic<V> topic, String key, V value) {
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()),
                new StringSerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(topic.name(), key, AvroWire.encode(topic, value))).get();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
