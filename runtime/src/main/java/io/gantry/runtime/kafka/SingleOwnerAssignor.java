package io.gantry.runtime.kafka;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.TopicPartition;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Gives every input partition of a stateful service to one member of its consumer group, the <em>owner</em>, and
 * none to the others (standbys). The owner stays the owner while it is in the group (a member joining never moves
 * the work: the protocol is cooperative, so the owner reports what it holds and keeps it); when it leaves, or its
 * session times out, the member with the smallest instance id (static membership) or member id takes everything.
 * Each member's subscription carries its HTTP address, and every assignment carries the owner's, so a standby
 * knows where to forward requests.
 *
 * <p>A service split into several units of work (placement's pools: one consumer group per unit, every instance a
 * member of each) spreads them instead: unit <i>i</i> goes to the member at <i>i</i> mod <i>members</i> in instance id
 * order, so two instances share two pools one each. When that member is not the one holding the unit (it joined
 * after the holder took it over), the holder gets nothing in this rebalance, revokes the unit (its open transaction
 * is aborted, its committed state is on Kafka), and the next rebalance gives it to the member it belongs to, which
 * restores it: an instance that joins takes its share back. The holder's rejoin starts that next rebalance; when the
 * holder's processor restarts its loop instead (the revocation ends its ownership, or refuses its open batch), it
 * leaves the group first, because a consumer that takes a static member's place in a stable group starts none.
 *
 * <p>Configured with the member's {@link Ownership} under {@link #OWNERSHIP_CONFIG} in the consumer's properties.
 */
public final class SingleOwnerAssignor implements ConsumerPartitionAssignor, Configurable {
    /** The consumer property holding this member's {@link Ownership}. */
    public static final String OWNERSHIP_CONFIG = "gantry.ownership";

    private Ownership ownership = new Ownership("");

    @Override
    public void configure(Map<String, ?> configs) {
        if (configs.get(OWNERSHIP_CONFIG) instanceof Ownership o) {
            this.ownership = o;
        }
    }

    @Override
    public String name() {
        return "gantry-single-owner";
    }

    @Override
    public List<RebalanceProtocol> supportedProtocols() {
        return List.of(RebalanceProtocol.COOPERATIVE);
    }

    @Override
    public ByteBuffer subscriptionUserData(Set<String> topics) {
        return ByteBuffer.wrap(ownership.advertisedUrl().getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public GroupAssignment assign(Cluster metadata, GroupSubscription group) {
        Map<String, Subscription> members = group.groupSubscription();
        Set<String> topics = new TreeSet<>();
        members.values().forEach(s -> topics.addAll(s.topics()));
        List<TopicPartition> all = new ArrayList<>();
        for (String t : topics) {
            Integer n = metadata.partitionCountForTopic(t);
            for (int p = 0; n != null && p < n; p++) {
                all.add(new TopicPartition(t, p));
            }
        }
        String owner = ownership.unitIndex() < 0 ? chooseOwner(members) : spreadOwner(members, ownership.unitIndex());
        Map<String, Assignment> out = new HashMap<>();
        ByteBuffer ownerUrl = members.get(owner).userData();
        byte[] url = ownerUrl == null ? new byte[0] : bytes(ownerUrl);
        for (Map.Entry<String, Subscription> m : members.entrySet()) {
            List<TopicPartition> mine = m.getKey().equals(owner) ? ownerShare(all, owner, members) : List.of();
            out.put(m.getKey(), new Assignment(mine, ByteBuffer.wrap(url)));
        }
        return new GroupAssignment(out);
    }

    @Override
    public void onAssignment(Assignment assignment, ConsumerGroupMetadata metadata) {
        ByteBuffer data = assignment.userData();
        ownership.ownerUrl(data == null ? "" : new String(bytes(data), StandardCharsets.UTF_8));
    }

    /**
     * The member that holds partitions now (the one holding most, should two claim some after a split), else the
     * first by instance id, then member id.
     */
    static String chooseOwner(Map<String, Subscription> members) {
        Comparator<Map.Entry<String, Subscription>> byId = byId();
        return members.entrySet().stream()
                .min(Comparator.comparingInt((Map.Entry<String, Subscription> e) -> -e.getValue().ownedPartitions().size())
                        .thenComparing(byId))
                .orElseThrow(() -> new IllegalStateException("a group without members"))
                .getKey();
    }

    /** The member unit {@code unitIndex} belongs to: the one at that index, modulo their number, by instance id. */
    static String spreadOwner(Map<String, Subscription> members, int unitIndex) {
        List<String> ordered = members.entrySet().stream().sorted(byId()).map(Map.Entry::getKey).toList();
        if (ordered.isEmpty()) {
            throw new IllegalStateException("a group without members");
        }
        return ordered.get(unitIndex % ordered.size());
    }

    private static Comparator<Map.Entry<String, Subscription>> byId() {
        return Comparator.comparing((Map.Entry<String, Subscription> e) -> e.getValue().groupInstanceId().orElse("~"))
                .thenComparing(Map.Entry::getKey);
    }

    /**
     * Every partition but those another member still claims: the cooperative protocol takes a partition from its
     * holder in one rebalance and gives it away in the next, which the holder's revocation starts.
     */
    static List<TopicPartition> ownerShare(List<TopicPartition> all, String owner, Map<String, Subscription> members) {
        Set<TopicPartition> claimedByOthers = new HashSet<>();
        members.forEach((id, s) -> {
            if (!id.equals(owner)) {
                claimedByOthers.addAll(s.ownedPartitions());
            }
        });
        return all.stream().filter(tp -> !claimedByOthers.contains(tp)).toList();
    }

    private static byte[] bytes(ByteBuffer b) {
        ByteBuffer d = b.duplicate();
        byte[] out = new byte[d.remaining()];
        d.get(out);
        return out;
    }
}
