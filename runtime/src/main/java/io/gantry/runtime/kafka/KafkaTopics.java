package io.gantry.runtime.kafka;

import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

/**
 * Creates Gantry's topics if they are missing, so any service can start first on an empty cluster.
 *
 * <p>Event topics are the system of record: services rebuild their state by replaying them, so they are created
 * with unlimited retention ({@code retention.ms=-1}) instead of the broker's default of seven days, after which
 * a restarted queue would silently forget every job older than a week. Heartbeats, which nothing is rebuilt
 * from, keep an hour. A compacted topic ({@link Topic#compacted}, e.g. {@code admission.access-events}) keeps the
 * newest record per key. Existing topics are left as they are.
 */
public final class KafkaTopics {
    private KafkaTopics() {
    }

    public static void ensureAll(String bootstrap, int partitions) {
        ensureAll(bootstrap, partitions, KafkaSecurity.NONE);
    }

    public static void ensureAll(String bootstrap, int partitions, KafkaSecurity security) {
        try (Admin admin = Admin.create(security.on(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 60_000)))) {
            for (Topic<?> topic : Topics.all()) {
                try {
                    Map<String, String> configs = topic.compacted()
                            ? Map.of("retention.ms", Long.toString(topic.retentionMs()), "cleanup.policy", "compact")
                            : Map.of("retention.ms", Long.toString(topic.retentionMs()));
                    // a snapshot's parts must stay in one partition, in order
                    int n = Topics.snapshotTopics().contains(topic) ? 1 : partitions;
                    admin.createTopics(List.of(new NewTopic(topic.name(), n, (short) -1)
                            .configs(configs))).all().get();
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw new IllegalStateException("could not create topic " + topic, e.getCause());
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
