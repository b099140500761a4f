package io.gantry.runtime.kafka;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

class SingleOwnerAssignorTest {
    static final TopicPartition A0 = new TopicPartition("a", 0);
    static final TopicPartition A1 = new TopicPartition("a", 1);
    static final TopicPartition B0 = new TopicPartition("b", 0);

    static Subscription member(String instance, TopicPartition... owned) {
        return new Subscription(List.of("a", "b"), ByteBuffer.wrap(("http://" + instance).getBytes(StandardCharsets.UTF_8)),
                List.of(owned));
    }

    static Subscription staticMember(String instance, TopicPartition... owned) {
        Subscription s = new Subscription(List.of("a", "b"),
                ByteBuffer.wrap(("http://" + instance).getBytes(StandardCharsets.UTF_8)), List.of(owned));
        s.setGroupInstanceId(Optional.of(instance));
        return s;
    }

    @Test
    void theMemberHoldingTheWorkKeepsItWhenOthersJoin() {
        Map<String, Subscription> m = new LinkedHashMap<>();
        m.put("m-1", staticMember("0"));
        m.put("m-2", staticMember("1", A0, A1, B0));
        assertThat(SingleOwnerAssignor.chooseOwner(m)).isEqualTo("m-2");
        assertThat(SingleOwnerAssignor.ownerShare(List.of(A0, A1, B0), "m-2", m)).containsExactly(A0, A1, B0);
    }

    @Test
    void withoutAHolderTheSmallestInstanceIdThenMemberIdTakesEverything() {
        Map<String, Subscription> m = new LinkedHashMap<>();
        m.put("m-9", staticMember("1"));
        m.put("m-8", staticMember("0"));
        assertThat(SingleOwnerAssignor.chooseOwner(m)).isEqualTo("m-8");
        Map<String, Subscription> dynamic = new LinkedHashMap<>();
        dynamic.put("m-9", member("x"));
        dynamic.put("m-8", member("y"));
        assertThat(SingleOwnerAssignor.chooseOwner(dynamic)).isEqualTo("m-8");
    }

    @Test
    void partitionsAnotherMemberStillClaimsAreLeftForTheNextRebalance() {
        Map<String, Subscription> m = new LinkedHashMap<>();
        m.put("m-1", staticMember("0", A0, A1));
        m.put("m-2", staticMember("1", B0));
        assertThat(SingleOwnerAssignor.chooseOwner(m)).isEqualTo("m-1");
        // cooperative: B0 is revoked from m-2 in this round and given to m-1 in the next
        assertThat(SingleOwnerAssignor.ownerShare(List.of(A0, A1, B0), "m-1", m)).containsExactly(A0, A1);
    }

    @Test
    void unitsOfASplitServiceSpreadOverTheMembersByInstanceId() {
        Map<String, Subscription> m = new LinkedHashMap<>();
        m.put("m-b", staticMember("2"));
        m.put("m-a", staticMember("1"));
        assertThat(SingleOwnerAssignor.spreadOwner(m, 0)).isEqualTo("m-a");
        assertThat(SingleOwnerAssignor.spreadOwner(m, 1)).isEqualTo("m-b");
        assertThat(SingleOwnerAssignor.spreadOwner(m, 2)).isEqualTo("m-a");
        m.remove("m-a");
        assertThat(SingleOwnerAssignor.spreadOwner(m, 0)).isEqualTo("m-b");
    }

    @Test
    void aUnitHeldByAnotherMemberIsRevokedFirstThenGivenToTheMemberItBelongsTo() {
        Map<String, Subscription> m = new LinkedHashMap<>();
        m.put("m-a", staticMember("1"));
        m.put("m-b", staticMember("2", A0, A1, B0)); // took unit 0 over while m-a was away
        SingleOwnerAssignor assignor = new SingleOwnerAssignor();
        assignor.configure(Map.of(SingleOwnerAssignor.OWNERSHIP_CONFIG, new Ownership("http://a", 0)));
        org.apache.kafka.common.Cluster cluster = cluster();
        var first = assignor.assign(cluster, new org.apache.kafka.clients.consumer.ConsumerPartitionAssignor
                .GroupSubscription(m)).groupAssignment();
        assertThat(first.get("m-b").partitions()).isEmpty();
        assertThat(first.get("m-a").partitions()).isEmpty();
        m.put("m-b", staticMember("2"));
        var second = assignor.assign(cluster, new org.apache.kafka.clients.consumer.ConsumerPartitionAssignor
                .GroupSubscription(m)).groupAssignment();
        assertThat(second.get("m-a").partitions()).containsExactlyInAnyOrder(A0, A1, B0);
        assertThat(second.get("m-b").partitions()).isEmpty();
        assertThat(StandardCharsets.UTF_8.decode(second.get("m-b").userData()).toString()).isEqualTo("http://1");
    }

    private static org.apache.kafka.common.Cluster cluster() {
        org.apache.kafka.common.Node n = new org.apache.kafka.common.Node(0, "127.0.0.1", 9092);
        List<org.apache.kafka.common.PartitionInfo> parts = List.of(
                new org.apache.kafka.common.PartitionInfo("a", 0, n, new org.apache.kafka.common.Node[]{n},
                        new org.apache.kafka.common.Node[]{n}),
                new org.apache.kafka.common.PartitionInfo("a", 1, n, new org.apache.kafka.common.Node[]{n},
                        new org.apache.kafka.common.Node[]{n}),
                new org.apache.kafka.common.PartitionInfo("b", 0, n, new org.apache.kafka.common.Node[]{n},
                        new org.apache.kafka.common.Node[]{n}));
        return new org.apache.kafka.common.Cluster("c", List.of(n), parts, java.util.Set.of(), java.util.Set.of());
    }
}
