package io.gantry.launcher.load;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Consumer-group lag of the services: for every group named {@code gantry-*}, per input topic, the sum over
 * partitions of (last committed offset readable by a read_committed consumer - the group's committed offset).
 * The groups are found by listing them, so a service that adds an input needs no change here.
 */
public final class LagSampler implements AutoCloseable {
    private final Admin admin;
    private List<String> groups = List.of();
    private long groupsListedAt;

    public LagSampler(String bootstrap, Map<String, String> security) {
        Map<String, Object> p = new java.util.HashMap<>(security);
        p.putAll(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000, AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000));
        this.admin = Admin.create(p);
    }

    /** "group topic" -> records behind, now. Empty when the broker did not answer within two seconds. */
    public Map<String, Long> sample() {
        Map<String, Long> lag = new TreeMap<>();
        try {
            if (groups.isEmpty() || System.nanoTime() - groupsListedAt > TimeUnit.SECONDS.toNanos(10)) {
                List<String> found = new ArrayList<>();
                for (ConsumerGroupListing g : admin.listConsumerGroups().all().get(2, TimeUnit.SECONDS)) {
                    if (g.groupId().startsWith("gantry-")) {
                        found.add(g.groupId());
                    }
                }
                found.sort(String::compareTo);
                groups = found;
                groupsListedAt = System.nanoTime();
            }
            Map<String, Map<TopicPartition, OffsetAndMetadata>> committed = new HashMap<>();
            Map<TopicPartition, OffsetSpec> wanted = new HashMap<>();
            for (String g : groups) {
                Map<TopicPartition, OffsetAndMetadata> offsets =
                        admin.listConsumerGroupOffsets(g).partitionsToOffsetAndMetadata().get(2, TimeUnit.SECONDS);
                committed.put(g, offsets);
                offsets.keySet().forEach(tp -> wanted.put(tp, OffsetSpec.latest()));
            }
            if (wanted.isEmpty()) {
                return lag;
            }
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = admin
                    .listOffsets(wanted, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all().get(2, TimeUnit.SECONDS);
            for (Map.Entry<String, Map<TopicPartition, OffsetAndMetadata>> g : committed.entrySet()) {
                for (Map.Entry<TopicPartition, OffsetAndMetadata> e : g.getValue().entrySet()) {
                    if (e.getValue() == null || !ends.containsKey(e.getKey())) {
                        continue;
                    }
                    long behind = Math.max(0, ends.get(e.getKey()).offset() - e.getValue().offset());
                    lag.merge(g.getKey() + " " + e.getKey().topic(), behind, Long::sum);
                }
            }
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return new TreeMap<>();
        }
        return lag;
    }

    @Override
    public void close() {
        admin.close(java.time.Duration.ofSeconds(2));
    }
}
