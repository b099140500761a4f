package io.gantry.runtime.access;

import io.gantry.runtime.kafka.KafkaSecurity;

import io.gantry.events.AccessEvent;
import io.gantry.events.AccessRole;
import io.gantry.events.TenantChanged;
import io.gantry.events.TenantState;
import io.gantry.events.TokenChanged;
import io.gantry.schemas.AvroWire;
import io.gantry.schemas.Topics;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Requires;
import io.micronaut.context.annotation.Value;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Every service's copy of {@code admission.access-events}: one consumer thread reads the compacted topic from its
 * beginning into an {@link AccessDirectory} and then follows it, so a token admission revokes stops working
 * everywhere within about a poll interval. No consumer group (it assigns every partition itself): each service
 * instance needs the whole topic, and nothing is committed.
 *
 * <p>Startup never waits for it: the bootstrap tokens file works from the first request, and a managed token
 * the view has not read yet is simply unknown (401), which fails closed. If Kafka is slow or away the thread retries
 * with the last state kept. On by default wherever {@code kafka.bootstrap.servers} is set; off with
 * {@code gantry.auth.access-topic.enabled=false}.
 */
@Context
@Requires(property = "kafka.bootstrap.servers")
@Requires(property = "gantry.auth.access-topic.enabled", notEquals = "false")
public class AccessView implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AccessView.class);
    private static final Duration POLL = Duration.ofMillis(200);

    private final AccessDirectory directory = new AccessDirectory();
    private final String bootstrap;
    private final String clientId;
    private final CountDownLatch caughtUp = new CountDownLatch(1);
    private final Thread thread;
    private volatile boolean running = true;
    private volatile KafkaConsumer<String, byte[]> consumer;
    private final KafkaSecurity security;

    @Inject
    public AccessView(@Value("${kafka.bootstrap.servers}") String bootstrap,
                      @Value("${micronaut.application.name:gantry}") String application, KafkaSecurity security) {
        this.bootstrap = bootstrap;
        this.security = security;
        this.clientId = application + "-access-view";
        this.thread = new Thread(this::run, clientId);
        thread.setDaemon(true);
        thread.start();
    }

    public AccessDirectory directory() {
        return directory;
    }

    /** Whether the view has read the topic up to where it ended when the view started (or last reconnected). */
    public boolean isCaughtUp() {
        return caughtUp.getCount() == 0;
    }

    public boolean awaitCaughtUp(Duration timeout) throws InterruptedException {
        return caughtUp.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void run() {
        while (running) {
            try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(security.on(Map.of(
                    ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                    ConsumerConfig.CLIENT_ID_CONFIG, clientId,
                    ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                    ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                    // the services create their topics with the right settings (compaction); a reader must not
                    ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false)),
                    new StringDeserializer(), new ByteArrayDeserializer())) {
                consumer = c;
                if (!running) {
                    return;
                }
                follow(c);
            } catch (WakeupException e) {
                // close() asked us to stop
            } catch (RuntimeException e) {
                LOG.warn("access view lost {}; reconnecting: {}", Topics.ADMISSION_ACCESS_EVENTS, e.toString());
                pause(Duration.ofSeconds(1));
            } finally {
                consumer = null;
            }
        }
    }

    private void follow(KafkaConsumer<String, byte[]> c) {
        List<PartitionInfo> infos = c.partitionsFor(Topics.ADMISSION_ACCESS_EVENTS.name(), Duration.ofSeconds(10));
        while (running && (infos == null || infos.isEmpty())) {
            // the topic does not exist yet: admission (or any service starting its loop) creates it
            pause(Duration.ofSeconds(1));
            infos = c.partitionsFor(Topics.ADMISSION_ACCESS_EVENTS.name(), Duration.ofSeconds(10));
        }
        if (!running) {
            return;
        }
        List<TopicPartition> parts = infos.stream().map(i -> new TopicPartition(i.topic(), i.partition())).toList();
        c.assign(parts);
        c.seekToBeginning(parts);
        Map<TopicPartition, Long> end = c.endOffsets(parts);
        while (running) {
            for (ConsumerRecord<String, byte[]> r : c.poll(POLL)) {
                apply(r);
            }
            if (!isCaughtUp() && parts.stream().allMatch(tp -> c.position(tp) >= end.get(tp))) {
                LOG.info("access view read {} to its end", Topics.ADMISSION_ACCESS_EVENTS);
                caughtUp.countDown();
            }
        }
    }

    private void apply(ConsumerRecord<String, byte[]> r) {
        if (r.value() == null) {
            // a tombstone deletes its subject: token ids start with tok_, tenant names cannot contain '_'
            if (r.key() != null && r.key().startsWith("tok_")) {
                directory.forgetToken(r.key());
            } else if (r.key() != null) {
                directory.forgetTenant(r.key());
            }
            return;
        }
        AccessEvent event;
        try {
            event = AvroWire.decode(Topics.ADMISSION_ACCESS_EVENTS, r.value());
        } catch (RuntimeException e) {
            LOG.error("skipping undecodable record {}-{}@{}: {}", r.topic(), r.partition(), r.offset(), e.toString());
            return;
        }
        if (event.getPayload() instanceof TenantChanged t) {
            directory.tenant(t.getTenant(), t.getState() == TenantState.ACTIVE);
        } else if (event.getPayload() instanceof TokenChanged t) {
            directory.token(new AccessDirectory.Grant(t.getTokenId(), t.getTenant(), t.getRole() == AccessRole.ADMIN,
                    t.getSha256(), t.getExpiresAt(), t.getRevokedAt()));
        }
    }

    private void pause(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    @PreDestroy
    @Override
    public void close() {
        running = false;
        KafkaConsumer<String, byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
        thread.interrupt();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
