package io.gantry.launcher;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A fault suite of a service split into two units (placement by pool, the queue by cohort tree), two instances of
 * every service: one after another, kill -9 of the instance that owns each unit; each time the other instance takes
 * the unit over within {@link FailoverTest#TAKEOVER_BOUND}, and the killed instance, restarted, gets its unit back
 * within that bound too (before the next kill, so that kill stops one unit, not a hand-back under way).
 */
abstract class SplitFailoverSuite extends FaultSuite {

    /** The split service. */
    abstract String service();

    /** Its two units' consumer groups, in the order their owners are killed. */
    abstract List<String> groups();

    /**
     * Two instances of every service on one broker, the suite's service settings with {@code split} added to those of
     * the split service.
     */
    DevCluster.Config twoInstances(Path dataDir, Path repo, Map<String, String> split) throws java.io.IOException {
        Map<String, Map<String, String>> properties = new HashMap<>(serviceProperties());
        Map<String, String> own = new HashMap<>(properties.get(service()));
        own.putAll(split);
        properties.put(service(), own);
        return new DevCluster.Config(dataDir, repo, EmbeddedStack.freePort(), EmbeddedStack.freePort(),
                EmbeddedStack.freePortRange(10), properties, "200m", 1, 2);
    }

    @Override
    void inflictFaults(JobEnds jobEnds, ExecutorService watchers, List<CompletableFuture<Fault>> faults,
                       Map<String, Object> chaos) throws Exception {
        assertThat(spread()).as("the two units are spread over the two instances").isTrue();
        for (String group : groups()) {
            faults.add(failOver(service(), group, jobEnds, watchers));
            // the restarted instance takes its unit back (the holder revokes it, then it restores it)
            long restarted = System.currentTimeMillis();
            await().atMost(FailoverTest.TAKEOVER_BOUND).pollInterval(Duration.ofMillis(200)).until(this::spread);
            System.out.printf("  %s: its restarted instance had it back %d ms after the restart's 3 s pause%n",
                    group, System.currentTimeMillis() - restarted);
        }
    }

    /** Whether each instance owns one of the two units. */
    private boolean spread() throws Exception {
        return holder(groups().get(0), -1) == 1 - holder(groups().get(1), -1);
    }

    @Override
    void checkFaults(List<Fault> measured, long lastSubmission) {
        assertThat(measured).allSatisfy(f -> {
            assertThat(f.consumingAt() - f.hitAt()).as("takeover after " + f.what())
                    .isNotNegative().isLessThanOrEqualTo(FailoverTest.TAKEOVER_BOUND.toMillis());
            assertThat(f.hitAt()).as(f.what() + " while jobs come in").isLessThan(lastSubmission);
        });
        // each restarted instance got its unit back: one unit per instance again
        try {
            assertThat(spread()).as("one unit per instance at the end").isTrue();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
