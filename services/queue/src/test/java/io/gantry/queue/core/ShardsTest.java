package io.gantry.queue.core;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static io.gantry.queue.core.ConfigBuilder.aConfig;
import static io.gantry.queue.core.ConfigBuilder.aQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ShardsTest {

    /** Two root cohorts whose trees fall on different shards of two: found, not assumed from the hash. */
    private static String[] twoRootsApart() {
        for (int i = 0; i < 100; i++) {
            for (int j = i + 1; j < 100; j++) {
                if (Math.floorMod(("cohort:r" + i).hashCode(), 2) != Math.floorMod(("cohort:r" + j).hashCode(), 2)) {
                    return new String[]{"r" + i, "r" + j};
                }
            }
        }
        throw new AssertionError("no two names apart");
    }

    @Test
    void everyQueueOfATreeIsOnTheShardOfItsRootCohort() {
        String[] r = twoRootsApart();
        FairShareConfig c = aConfig().flavours("H100").cohort(r[0]).cohort("vision", r[0]).cohort(r[1])
                .queue(aQueue("a").tenant("ta").cohort("vision").quota("H100", 8))
                .queue(aQueue("b").tenant("tb").cohort(r[0]).quota("H100", 8))
                .queue(aQueue("c").tenant("tc").cohort(r[1]).quota("H100", 8)).build();
        Shards s = Shards.of(c, 2);

        assertThat(s.groupOf("ta")).isEqualTo("cohort:" + r[0]);
        assertThat(s.ofTenant("ta")).isEqualTo(s.ofTenant("tb"));
        assertThat(s.ofTenant("tc")).isNotEqualTo(s.ofTenant("ta"));
        assertThat(List.of(s.ofTenant("ta"), s.ofTenant("tc"))).containsExactlyInAnyOrder(0, 1);
        assertThat(s.ofTenant("nobody")).as("a tenant without a queue: shard 0").isZero();
        assertThat(Shards.of(c, 1).ofTenant("tc")).isZero();
    }

    @Test
    void aTenantWithQueuesInTwoTreesJoinsThemUnderTheSmallerName() {
        String[] r = twoRootsApart();
        FairShareConfig c = aConfig().flavours("H100").cohort(r[0]).cohort(r[1])
                .queue(aQueue("a").tenant("ta").cohort(r[0]).quota("H100", 8))
                .queue(aQueue("b").tenant("tb").cohort(r[1]).quota("H100", 8))
                .queue(aQueue("b2").tenant("tb").cohort(r[0]).quota("H100", 8))
                .queue(aQueue("solo").tenant("ts").quota("H100", 8)).build();
        Shards s = Shards.of(c, 2);

        String smaller = r[0].compareTo(r[1]) < 0 ? r[0] : r[1];
        assertThat(s.groupOf("ta")).isEqualTo("cohort:" + smaller);
        assertThat(s.groupOf("tb")).isEqualTo("cohort:" + smaller);
        assertThat(s.ofTenant("ta")).isEqualTo(s.ofTenant("tb"));
        assertThat(s.groupOf("ts")).isEqualTo("queue:solo");
    }

    @Test
    void withoutAConfigurationFileEachTenantIsATreeOfItsOwn() {
        Shards s = Shards.of(FairShareConfig.implicit(Quotas.uniform(8)), 3);
        IntStream.range(0, 20).forEach(i -> assertThat(s.ofTenant("t" + i))
                .isEqualTo(Math.floorMod(("queue:t" + i).hashCode(), 3)));
        assertThat(s.moves(Shards.of(FairShareConfig.implicit(Quotas.uniform(4)), 3))).isEmpty();
    }

    @Test
    void aChangeThatMovesATenantToAnotherShardIsNamedAndOneThatDoesNotPasses() {
        String[] r = twoRootsApart();
        ConfigBuilder before = aConfig().flavours("H100").cohort(r[0]).cohort(r[1])
                .queue(aQueue("a").tenant("ta").cohort(r[0]).quota("H100", 8))
                .queue(aQueue("b").tenant("tb").cohort(r[1]).quota("H100", 8));
        Shards from = Shards.of(before.build(), 2);

        FairShareConfig moved = aConfig().flavours("H100").cohort(r[0]).cohort(r[1])
                .queue(aQueue("a").tenant("ta").cohort(r[1]).quota("H100", 8))
                .queue(aQueue("b").tenant("tb").cohort(r[1]).quota("H100", 8)).build();
        assertThat(from.moves(Shards.of(moved, 2))).singleElement().asString()
                .contains("tenant ta would move from shard " + from.ofTenant("ta"))
                .contains("to shard " + from.ofTenant("tb"))
                .contains("gantry.queue.shards=1");

        FairShareConfig grown = aConfig().flavours("H100").cohort(r[0]).cohort(r[1])
                .queue(aQueue("a").tenant("ta").cohort(r[0]).quota("H100", 16))
                .queue(aQueue("b").tenant("tb").cohort(r[1]).quota("H100", 8))
                .queue(aQueue("n").tenant("tn").cohort(r[1]).quota("H100", 8)).build();
        assertThat(from.moves(Shards.of(grown, 2))).as("quota changes and new tenants move nobody").isEmpty();
        FairShareConfig withoutB = aConfig().flavours("H100").cohort(r[0])
                .queue(aQueue("a").tenant("ta").cohort(r[0]).quota("H100", 8)).build();
        FairShareConfig withoutA = aConfig().flavours("H100").cohort(r[1])
                .queue(aQueue("b").tenant("tb").cohort(r[1]).quota("H100", 8)).build();
        String onOne = from.ofTenant("ta") == 1 ? "ta" : "tb";
        FairShareConfig leavingOne = onOne.equals("ta") ? withoutA : withoutB;
        FairShareConfig leavingZero = onOne.equals("ta") ? withoutB : withoutA;
        assertThat(from.moves(Shards.of(leavingOne, 2))).as("a tenant of shard 1 that leaves goes to shard 0")
                .singleElement().asString().contains("tenant " + onOne + " would move from shard 1")
                .contains("(no queue left)");
        assertThat(from.moves(Shards.of(leavingZero, 2))).as("a tenant of shard 0 that leaves stays there").isEmpty();
        assertThat(Shards.of(before.build(), 1).moves(Shards.of(moved, 1))).as("one shard: nothing moves").isEmpty();
    }

    @Test
    void theDigestChangesWithWhoOwnsWhat() {
        String[] r = twoRootsApart();
        FairShareConfig a = aConfig().flavours("H100").cohort(r[0]).cohort(r[1])
                .queue(aQueue("a").tenant("ta").cohort(r[0]).quota("H100", 8))
                .queue(aQueue("b").tenant("tb").cohort(r[1]).quota("H100", 8)).build();
        FairShareConfig quota = aConfig().flavours("H100").cohort(r[0]).cohort(r[1])
                .queue(aQueue("a").tenant("ta").cohort(r[0]).quota("H100", 16))
                .queue(aQueue("b").tenant("tb").cohort(r[1]).quota("H100", 8)).build();
        FairShareConfig moved = aConfig().flavours("H100").cohort(r[0]).cohort(r[1])
                .queue(aQueue("a").tenant("ta").cohort(r[1]).quota("H100", 8))
                .queue(aQueue("b").tenant("tb").cohort(r[1]).quota("H100", 8)).build();

        assertThat(Shards.of(quota, 2).digest()).isEqualTo(Shards.of(a, 2).digest());
        assertThat(Shards.of(moved, 2).digest()).isNotEqualTo(Shards.of(a, 2).digest());
        assertThat(Shards.of(a, 3).digest()).isNotEqualTo(Shards.of(a, 2).digest());
    }

    @Test
    void goingFromImplicitQueuesToAFileComparesTheTenantsTheFileNames() {
        String[] r = twoRootsApart();
        // a tenant whose implicit tree (queue:<tenant>) falls on the other shard than the root it is given
        String tenant = IntStream.range(0, 100).mapToObj(i -> "t" + i)
                .filter(t -> Math.floorMod(("queue:" + t).hashCode(), 2)
                        != Math.floorMod(("cohort:" + r[0]).hashCode(), 2))
                .findFirst().orElseThrow();
        Shards implicit = Shards.of(FairShareConfig.implicit(Quotas.uniform(8)), 2);
        FairShareConfig file = aConfig().flavours("H100").cohort(r[0])
                .queue(aQueue(tenant).tenant(tenant).cohort(r[0]).quota("H100", 8)).build();

        assertThat(implicit.moves(Shards.of(file, 2))).singleElement().asString().contains("tenant " + tenant);
        assertThat(Shards.of(file, 2).moves(implicit)).singleElement().asString().contains("tenant " + tenant);
    }

    @Test
    void removingAQueueAnotherShardOwnsIsNamedForTheShardThatAppliesConfigurations() {
        String[] r = twoRootsApart();
        FairShareConfig before = aConfig().flavours("H100").cohort(r[0]).cohort(r[1])
                .queue(aQueue("a").tenant("ta").cohort(r[0]).quota("H100", 8))
                .queue(aQueue("b").tenant("tb").cohort(r[1]).quota("H100", 8)).build();
        Shards s = Shards.of(before, 2);
        int here = s.ofTenant("ta");
        FairShareConfig withoutB = aConfig().flavours("H100").cohort(r[0]).cohort(r[1])
                .queue(aQueue("a").tenant("ta").cohort(r[0]).quota("H100", 8)).build();
        FairShareConfig withoutA = aConfig().flavours("H100").cohort(r[0]).cohort(r[1])
                .queue(aQueue("b").tenant("tb").cohort(r[1]).quota("H100", 8)).build();

        assertThat(s.removedElsewhere(before, withoutB, here)).singleElement().asString()
                .contains("queue 'b' of tenant tb would be removed").contains("with force");
        assertThat(s.removedElsewhere(before, withoutA, here)).as("its own queues: the core counts their jobs")
                .isEmpty();
        assertThat(Shards.of(before, 1).removedElsewhere(before, withoutB, 0)).isEmpty();
        assertThat(s.ofQueue("b")).isEqualTo(s.ofTenant("tb"));
    }

    @Test
    void aPinnedTreeIsOnItsShardWhateverItsNameHashesTo() {
        String[] r = twoRootsApart();
        int hashed = Math.floorMod(("cohort:" + r[0]).hashCode(), 2);
        FairShareConfig c = aConfig().flavours("H100").cohort(Map.of("name", r[0], "shard", 1 - hashed))
                .cohort("vision", r[0])
                .queue(aQueue("a").tenant("ta").cohort("vision").quota("H100", 8))
                .queue(aQueue("solo").tenant("ts").quota("H100", 8).set("shard", 1)).build();
        Shards s = Shards.of(c, 2);

        assertThat(s.ofTenant("ta")).isEqualTo(1 - hashed);
        assertThat(s.ofQueue("a")).isEqualTo(1 - hashed);
        assertThat(s.ofTenant("ts")).isEqualTo(1);
        assertThat(s.problems()).isEmpty();
        assertThat(Shards.of(c, 1).ofTenant("ts")).as("not split: pins wait for a split").isZero();
        assertThat(Shards.of(c, 1).problems()).isEmpty();
        assertThat(FairShareConfig.fromYaml(c.toDocument())).as("written and read back").isEqualTo(c);
    }

    @Test
    void pinsOnAShardThatDoesNotExistOrApartForTreesATenantJoinsAreProblems() {
        String[] r = twoRootsApart();
        FairShareConfig c = aConfig().flavours("H100").cohort(Map.of("name", r[0], "shard", 0))
                .cohort(Map.of("name", r[1], "shard", 1))
                .queue(aQueue("a").tenant("ta").cohort(r[0]).quota("H100", 8))
                .queue(aQueue("b").tenant("ta").cohort(r[1]).quota("H100", 8))
                .queue(aQueue("far").tenant("tf").quota("H100", 8).set("shard", 2)).build();

        assertThat(Shards.of(c, 2).problems()).containsExactly(
                "queues: cohort trees cohort:" + min(r) + " and cohort:" + max(r) + " share tenants (ta) and so one "
                        + "shard, but are pinned to shards 0 and 1",
                "queues: queue:far is pinned to shard 2, and the queue is split into 2 shards "
                        + "(gantry.queue.shards): shards 0 to 1");
        assertThat(Shards.of(c, 3).problems()).hasSize(1);
    }

    @Test
    void aPinThatMovesATenantIsRefusedLikeAnyMove() {
        String[] r = twoRootsApart();
        FairShareConfig hashed = aConfig().flavours("H100").cohort(r[0])
                .queue(aQueue("a").tenant("ta").cohort(r[0]).quota("H100", 8)).build();
        int from = Shards.of(hashed, 2).ofTenant("ta");
        FairShareConfig pinnedThere = aConfig().flavours("H100").cohort(Map.of("name", r[0], "shard", from))
                .queue(aQueue("a").tenant("ta").cohort(r[0]).quota("H100", 8)).build();
        FairShareConfig pinnedAway = aConfig().flavours("H100").cohort(Map.of("name", r[0], "shard", 1 - from))
                .queue(aQueue("a").tenant("ta").cohort(r[0]).quota("H100", 8)).build();

        assertThat(Shards.of(hashed, 2).moves(Shards.of(pinnedThere, 2))).isEmpty();
        assertThat(Shards.of(hashed, 2).moves(Shards.of(pinnedAway, 2))).singleElement().asString()
                .contains("tenant ta would move from shard " + from);
    }

    @Test
    void onlyAWholeTreeCanBePinned() {
        assertThatThrownBy(() -> aConfig().flavours("H100").cohort("org").cohort(Map.of("name", "research",
                "parent", "org", "shard", 1)).queue(aQueue("a").cohort("research").quota("H100", 8)).build())
                .isInstanceOf(ConfigException.class).hasMessageContaining("cohorts[1].shard")
                .hasMessageContaining("root cohort");
        assertThatThrownBy(() -> aConfig().flavours("H100").cohort("org")
                .queue(aQueue("a").cohort("org").quota("H100", 8).set("shard", 1)).build())
                .isInstanceOf(ConfigException.class).hasMessageContaining("queues[0].shard")
                .hasMessageContaining("cohort org");
        assertThatThrownBy(() -> aConfig().flavours("H100")
                .queue(aQueue("a").quota("H100", 8).set("shard", -1)).build())
                .isInstanceOf(ConfigException.class).hasMessageContaining("queues[0].shard");
    }

    private static String min(String[] r) {
        return r[0].compareTo(r[1]) < 0 ? r[0] : r[1];
    }

    private static String max(String[] r) {
        return r[0].compareTo(r[1]) < 0 ? r[1] : r[0];
    }
}
