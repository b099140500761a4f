package io.gantry.queue.core;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.stream.IntStream;

import static io.gantry.queue.core.ConfigBuilder.aConfig;
import static io.gantry.queue.core.ConfigBuilder.aQueue;
import static org.assertj.core.api.Assertions.assertThat;

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
}
