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
}
