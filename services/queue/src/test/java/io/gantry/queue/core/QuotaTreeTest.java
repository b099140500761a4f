package io.gantry.queue.core;

import static io.gantry.queue.core.ConfigBuilder.aConfig;
import static io.gantry.queue.core.ConfigBuilder.aQueue;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The quota tree's "available" computations on their own (Kueue's hierarchical available): what queue {@code a}
 * could take of H100 now and in an idle tree, given the GPUs each queue uses.
 */
class QuotaTreeTest {

    record Case(String name, FairShareConfig config, Map<String, Long> used, long available, long maxAvailable) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("a queue without a cohort gets its nominal quota minus what it uses",
                        aConfig().flavours("H100").queue(aQueue("a").quota("H100", 8)).build(),
                        Map.of("a", 3L), 5, 8),
                new Case("a queue in a cohort borrows what the others leave unused",
                        aConfig().flavours("H100").cohort("c")
                                .queue(aQueue("a").cohort("c").quota("H100", 8))
                                .queue(aQueue("b").cohort("c").quota("H100", 8)).build(),
                        Map.of("a", 2L, "b", 4L), 10, 16),
                new Case("what another queue borrowed from the cohort is not available",
                        aConfig().flavours("H100").cohort("c")
                                .queue(aQueue("a").cohort("c").quota("H100", 8))
                                .queue(aQueue("b").cohort("c").quota("H100", 8)).build(),
                        Map.of("b", 12L), 4, 16),
                new Case("the borrowing limit caps what it may take above its nominal quota",
                        aConfig().flavours("H100").cohort("c")
                                .queue(aQueue("a").cohort("c").quota("H100", 8, 2L, null))
                                .queue(aQueue("b").cohort("c").quota("H100", 8)).build(),
                        Map.of("a", 1L), 9, 10),
                new Case("the lending limit of another queue caps what it lends",
                        aConfig().flavours("H100").cohort("c")
                                .queue(aQueue("a").cohort("c").quota("H100", 8))
                                .queue(aQueue("b").cohort("c").quota("H100", 8, null, 2L)).build(),
                        Map.of(), 10, 10),
                new Case("its own lending limit keeps the rest of its nominal quota for it",
                        aConfig().flavours("H100").cohort("c")
                                .queue(aQueue("a").cohort("c").quota("H100", 8, null, 2L))
                                .queue(aQueue("b").cohort("c").quota("H100", 8)).build(),
                        Map.of("b", 16L), 6, 16),
                new Case("nested cohorts lend across the whole tree",
                        aConfig().flavours("H100").cohort("root").cohort("left", "root").cohort("right", "root")
                                .queue(aQueue("a").cohort("left").quota("H100", 4))
                                .queue(aQueue("b").cohort("right").quota("H100", 4))
                                .queue(aQueue("x").cohort("right").quota("H100", 4)).build(),
                        Map.of("b", 5L), 7, 12));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void availableAndMaxAvailable(Case c) {
        QuotaTree tree = new QuotaTree(c.config(), (x, y) -> 0);
        int h100 = tree.resources.indexOf("H100");
        // the cases speak GPUs; the tree keeps thousandths of a GPU
        c.used().forEach((queue, gpus) -> tree.add(new QuotaCharge("run-" + queue, 1, tree.queues.get(queue), h100,
                gpus * 1000, 0, 0, 0, null, 0, 0, 0), 1, true));
        ClusterQueue a = tree.queues.get("a");
        assertThat(tree.available(a, h100)).as("available").isEqualTo(c.available() * 1000);
        assertThat(tree.maxAvailable(a, h100)).as("maxAvailable").isEqualTo(c.maxAvailable() * 1000);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void aWhatIfChargeLeavesNoTrace(Case c) {
        QuotaTree tree = new QuotaTree(c.config(), (x, y) -> 0);
        int h100 = tree.resources.indexOf("H100");
        ClusterQueue a = tree.queues.get("a");
        long before = tree.available(a, h100);
        QuotaCharge tentative = new QuotaCharge("what-if", 0, a, h100, 1, 0, 0, 0, null, 0, 0, 0);
        tree.add(tentative, 1, false);
        tree.add(tentative, -1, false);
        assertThat(tree.available(a, h100)).isEqualTo(before);
        assertThat(tree.usageChanged).isEmpty();
        assertThat(tree.freedTrees).isEmpty();
        assertThat(tree.usage().get("a")).isEqualTo(List.of(0L, 0L, 0L));
    }
}
