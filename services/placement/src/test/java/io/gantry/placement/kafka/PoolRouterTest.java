package io.gantry.placement.kafka;

import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.DeferralReason;
import io.gantry.events.FreeGpus;
import io.gantry.events.JobCancelled;
import io.gantry.events.JobDispatched;
import io.gantry.events.JobSpec;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.events.PlacementConfigApplied;
import io.gantry.events.PlacementConfigEvent;
import io.gantry.events.PlacementDeferred;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.TaskPlacement;
import io.gantry.events.TaskSpec;
import io.gantry.placement.backend.ClusterFile;
import io.gantry.placement.backend.ExecutionBackend;
import io.gantry.placement.backend.SimulatedBackend;
import io.gantry.placement.backend.VirtualClock;
import io.gantry.placement.core.ClusterState;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.TopologyPlacer;
import io.gantry.runtime.kafka.Output;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import io.gantry.testkit.MutableClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two pools behind one router: each decides alone on its own nodes, every fact names its pool, a pool that has no
 * nodes (a dead or slow backend answers nothing) never delays the other, a release wakes only its own pool's gangs,
 * and a restart rebuilds each pool whatever the order across topics.
 */
class PoolRouterTest {
    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");
    private final MutableClock wall = new MutableClock(T0);

    /** Records what the router sends, with the topic, so a restart can read it back. */
    static final class Log implements Output {
        final List<Map.Entry<Topic<?>, Object>> sent = new ArrayList<>();

        @Override
        public <V> void send(Topic<V> topic, String key, V value) {
            sent.add(Map.entry(topic, value));
        }

        List<Object> payloads() {
            return sent.stream().map(Map.Entry::getValue).filter(v -> v instanceof AllocationEvent)
                    .map(v -> ((AllocationEvent) v).getPayload()).toList();
        }

        List<NodeRegistered> registrations() {
            return sent.stream().map(Map.Entry::getValue).filter(v -> v instanceof NodeEvent)
                    .map(v -> (NodeRegistered) ((NodeEvent) v).getPayload()).toList();
        }
    }

    /** The default cluster's nodes (8 x H100 each) under other ids. */
    private static List<NodeSpec> nodes(String... ids) {
        NodeSpec n = ClusterFile.defaultCluster().get(0);
        List<NodeSpec> out = new ArrayList<>();
        for (String id : ids) {
            out.add(new NodeSpec(id, n.backend(), n.gpus(), n.cpuMillis(), n.memoryMiB(), Map.of(), n.numaCpuMillis(),
                    List.of(), n.numaMemoryMiB()));
        }
        return out;
    }

    private PoolRouter router(Map<String, ExecutionBackend> pools) {
        VirtualClock clock = new VirtualClock(wall, 1);
        List<PlacementHandler> handlers = new ArrayList<>();
        pools.forEach((pool, backend) -> handlers.add(new PlacementHandler(
                new ClusterState(backend.name(), new TopologyPlacer()), backend, clock, Duration.ofSeconds(1))
                .inPool(pool)));
        return new PoolRouter(handlers);
    }

    /** Pool a: a-0, a-1 (16 H100); pool b: b-0 (8 H100). */
    private Map<String, ExecutionBackend> twoPools() {
        Map<String, ExecutionBackend> pools = new LinkedHashMap<>();
        pools.put("a", new SimulatedBackend(nodes("a-0", "a-1"), 0));
        pools.put("b", new SimulatedBackend(nodes("b-0"), 0));
        return pools;
    }

    private static QueueJobEvent dispatch(String jobId, String pool, int tasks, int gpus) {
        TaskSpec task = TaskSpec.newBuilder().setName("w").setReplicas(tasks).setCommand(List.of("train")).setGpus(gpus)
                .setCpuMillis(1000).setMemoryMiB(1024).build();
        return QueueJobEvent.newBuilder().setEventId(jobId + "-d").setJobId(jobId).setOccurredAt(T0)
                .setPayload(JobDispatched.newBuilder().setTenant("vision").setAttempt(1).setGpus(tasks * gpus)
                        .setPool(pool)
                        .setSpec(JobSpec.newBuilder().setName(jobId).setPriority(0).setTasks(List.of(task)).build())
                        .build()).build();
    }

    private static QueueJobEvent cancel(String jobId) {
        return QueueJobEvent.newBuilder().setEventId(jobId + "-c").setJobId(jobId).setOccurredAt(T0)
                .setPayload(JobCancelled.newBuilder().setTenant("vision").setAttempt(1).setRequestedBy("user").build())
                .build();
    }

    private static void handle(PoolRouter r, QueueJobEvent e, Output out) {
        r.handle(Topics.QUEUE_JOB_EVENTS, e.getJobId(), e, out);
    }

    private static List<String> nodesOf(AllocationGranted g) {
        return g.getPlacements().stream().map(TaskPlacement::getNodeId).distinct().sorted().toList();
    }

    @Test
    void eachPoolRegistersItsOwnNodesAndTheConfigurationNamesBothPools() {
        PoolRouter r = router(twoPools());
        Log out = new Log();

        r.restored(out);

        assertThat(out.registrations()).extracting(NodeRegistered::getPool).containsExactly("a", "a", "b");
        assertThat(r.pools().get("a").state().nodes()).extracting(NodeSpec::nodeId).containsExactlyInAnyOrder("a-0", "a-1");
        assertThat(r.pools().get("b").state().nodes()).extracting(NodeSpec::nodeId).containsExactly("b-0");
        PlacementConfigApplied config = out.sent.stream().map(Map.Entry::getValue)
                .filter(v -> v instanceof PlacementConfigEvent).map(v -> (PlacementConfigApplied)
                        ((PlacementConfigEvent) v).getPayload()).findFirst().orElseThrow();
        assertThat(config.getPools()).containsOnlyKeys("a", "b");
        assertThat(config.getPools().get("b").getBackend()).isEqualTo("simulated");
    }

    @Test
    void aDispatchIsPlacedOnlyInThePoolItNamesAndTheGrantNamesThatPool() {
        PoolRouter r = router(twoPools());
        Log out = new Log();
        r.restored(out);

        handle(r, dispatch("j-a", "a", 2, 8), out);
        handle(r, dispatch("j-b", "b", 1, 8), out);

        List<AllocationGranted> grants = out.payloads().stream().filter(p -> p instanceof AllocationGranted)
                .map(p -> (AllocationGranted) p).toList();
        assertThat(grants).hasSize(2);
        assertThat(grants.get(0).getPool()).isEqualTo("a");
        assertThat(nodesOf(grants.get(0))).containsExactly("a-0", "a-1");
        assertThat(grants.get(1).getPool()).isEqualTo("b");
        assertThat(nodesOf(grants.get(1))).containsExactly("b-0");
    }

    @Test
    void aGangLargerThanItsPoolIsDeferredThereEvenWhenAnotherPoolHasTheGpus() {
        PoolRouter r = router(twoPools());
        Log out = new Log();
        r.restored(out);

        handle(r, dispatch("j", "b", 2, 8), out);

        assertThat(out.payloads()).singleElement().isInstanceOfSatisfying(PlacementDeferred.class, d -> {
            assertThat(d.getPool()).isEqualTo("b");
            assertThat(d.getReason()).isEqualTo(DeferralReason.GANG_LARGER_THAN_CLUSTER);
        });
    }

    @Test
    void aPoolWhoseBackendListsNoNodesDefersItsJobsWhileTheOtherPoolKeepsPlacingAndEndingRuns() {
        Map<String, ExecutionBackend> pools = new LinkedHashMap<>();
        pools.put("dead", new SimulatedBackend(List.of(), 0)); // a backend that answers nothing: no nodes, no outcomes
        pools.put("live", new SimulatedBackend(nodes("l-0"), 0));
        PoolRouter r = router(pools);
        Log out = new Log();
        r.restored(out);

        handle(r, dispatch("j-dead", "dead", 1, 1), out);
        TaskSpec task = TaskSpec.newBuilder().setName("w").setReplicas(1).setCommand(List.of("train")).setGpus(1)
                .setCpuMillis(1000).setMemoryMiB(1024).setRunSeconds(10L).build();
        QueueJobEvent live = QueueJobEvent.newBuilder(dispatch("j-live", "live", 1, 1))
                .setPayload(JobDispatched.newBuilder((JobDispatched) dispatch("j-live", "live", 1, 1).getPayload())
                        .setSpec(JobSpec.newBuilder().setName("j-live").setPriority(0).setTasks(List.of(task)).build())
                        .build()).build();
        handle(r, live, out);
        wall.advance(Duration.ofSeconds(11));
        r.tick(wall.instant(), out);

        assertThat(out.payloads()).first().isInstanceOfSatisfying(PlacementDeferred.class, d -> {
            assertThat(d.getPool()).isEqualTo("dead");
            assertThat(d.getReason()).isEqualTo(DeferralReason.NO_HEALTHY_NODES);
        });
        assertThat(out.payloads()).anySatisfy(p -> assertThat(p).isInstanceOfSatisfying(AllocationReleased.class,
                rel -> assertThat(rel.getReason().name()).isEqualTo("RUN_SUCCEEDED")));
    }

    @Test
    void aReleaseReportsTheFreeCapacityAndTheDeferredGangsOfItsOwnPoolOnly() {
        PoolRouter r = router(twoPools());
        Log out = new Log();
        r.restored(out);
        handle(r, dispatch("holder", "a", 2, 8), out);       // all of pool a
        handle(r, dispatch("waits-in-a", "a", 1, 8), out);   // deferred in a
        handle(r, dispatch("waits-in-b", "b", 2, 8), out);   // deferred in b (larger than b)
        out.sent.clear();

        handle(r, cancel("holder"), out);

        AllocationReleased released = out.payloads().stream().filter(p -> p instanceof AllocationReleased)
                .map(p -> (AllocationReleased) p).findFirst().orElseThrow();
        assertThat(released.getFreeCapacity()).isNotEmpty().allSatisfy(f -> assertThat(f.getPool()).isEqualTo("a"));
        assertThat(released.getFreeCapacity()).extracting(FreeGpus::getFreeGpus).containsExactly(16);
        assertThat(released.getDeferredChecks()).extracting(c -> c.getJobId()).containsExactly("waits-in-a");
    }

    @Test
    void aDispatchToAPoolThatIsNotConfiguredIsDeferredNamingIt() {
        PoolRouter r = router(twoPools());
        Log out = new Log();
        r.restored(out);

        handle(r, dispatch("j", "gone", 1, 1), out);

        assertThat(out.payloads()).singleElement().isInstanceOfSatisfying(PlacementDeferred.class, d -> {
            assertThat(d.getPool()).isEqualTo("gone");
            assertThat(d.getReason()).isEqualTo(DeferralReason.NO_HEALTHY_NODES);
            assertThat(d.getMessage()).isEqualTo("pool gone is not configured (pools: a, b)");
        });
    }

    @Test
    void aJobNamingNoPoolRunsInThePoolDefault() {
        Map<String, ExecutionBackend> pools = new LinkedHashMap<>();
        pools.put("b", new SimulatedBackend(nodes("b-0"), 0));
        pools.put("default", new SimulatedBackend(nodes("d-0"), 0));
        PoolRouter r = router(pools);
        Log out = new Log();
        r.restored(out);

        handle(r, dispatch("j", null, 1, 8), out);

        assertThat(out.payloads()).filteredOn(p -> p instanceof AllocationGranted).singleElement()
                .isInstanceOfSatisfying(AllocationGranted.class,
                g -> assertThat(g.getPool()).isEqualTo("default"));
    }

    @Test
    void aNodeWhoseIdAnotherPoolHasIsNeverRegisteredNorHeartbeats() {
        Map<String, ExecutionBackend> pools = new LinkedHashMap<>();
        pools.put("a", new SimulatedBackend(nodes("x-0"), 0));
        NodeSyncHandlerTest.ChangingBackend late = new NodeSyncHandlerTest.ChangingBackend(); // lists sim-0, then sim-9
        pools.put("b", late);
        pools.put("c", new SimulatedBackend(nodes("sim-0"), 0));
        PoolRouter r = router(pools);
        Log out = new Log();
        r.restored(out);
        assertThat(out.registrations()).extracting(NodeRegistered::getPool).containsExactly("a", "b");

        late.listed.add(late.all.get(late.all.size() - 1));
        r.tick(wall.instant(), out);

        assertThat(r.pools().get("b").state().nodes()).extracting(NodeSpec::nodeId).containsExactlyInAnyOrder("sim-0", "sim-9");
        assertThat(r.pools().get("c").state().nodes()).as("sim-0 is pool b's").isEmpty();
        assertThat(out.sent).filteredOn(e -> e.getKey() == Topics.PLACEMENT_HEARTBEAT_EVENTS)
                .extracting(e -> ((io.gantry.events.NodeHeartbeatEvent) e.getValue()).getNodeId())
                .containsExactlyInAnyOrder("x-0", "sim-0", "sim-9");
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(ints = {1, 2, 3, 4, 5})
    void aRestartRebuildsEveryPoolWhateverTheOrderAcrossTopics(int seed) {
        PoolRouter first = router(twoPools());
        Log written = new Log();
        List<Map.Entry<Topic<?>, Object>> queue = new ArrayList<>();
        first.restored(written);
        for (QueueJobEvent d : List.of(dispatch("j-a", "a", 1, 8), dispatch("j-b", "b", 1, 4),
                dispatch("waits", "b", 1, 8))) {
            handle(first, d, written);
            queue.add(Map.entry(Topics.QUEUE_JOB_EVENTS, d));
        }

        // each topic in its own order, the topics interleaved at random (what a restore may read)
        Map<Topic<?>, List<Object>> byTopic = new LinkedHashMap<>();
        List<Map.Entry<Topic<?>, Object>> all = new ArrayList<>(written.sent);
        all.addAll(queue);
        all.forEach(e -> byTopic.computeIfAbsent(e.getKey(), t -> new ArrayList<>()).add(e.getValue()));
        List<Topic<?>> picks = new ArrayList<>();
        byTopic.forEach((t, values) -> values.forEach(v -> picks.add(t)));
        Collections.shuffle(picks, new Random(seed));
        Map<Topic<?>, Integer> next = new LinkedHashMap<>();
        PoolRouter second = router(twoPools());
        for (Topic<?> t : picks) {
            int i = next.merge(t, 1, Integer::sum) - 1;
            second.restore(t, "k", byTopic.get(t).get(i));
        }
        Log after = new Log();
        second.restored(after);

        assertThat(second.pools().get("a").state().liveAllocations()).extracting(a -> a.jobId()).containsExactly("j-a");
        assertThat(second.pools().get("b").state().liveAllocations()).extracting(a -> a.jobId()).containsExactly("j-b");
        assertThat(after.payloads()).as("no run is lost or started twice").isEmpty();
        assertThat(after.sent).as("the same configuration is not published again")
                .noneMatch(e -> e.getKey() == Topics.PLACEMENT_CONFIG_EVENTS);

        // the deferred gang waits in b: b's release wakes it, a's does not
        Log out = new Log();
        handle(second, dispatch("waits", "b", 1, 8), out);
        handle(second, cancel("j-a"), out);
        assertThat(out.payloads()).filteredOn(p -> p instanceof AllocationReleased).singleElement()
                .satisfies(p -> assertThat(((AllocationReleased) p).getDeferredChecks()).isEmpty());
        handle(second, cancel("j-b"), out);
        assertThat(out.payloads()).filteredOn(p -> p instanceof AllocationReleased).last()
                .satisfies(p -> assertThat(((AllocationReleased) p).getDeferredChecks())
                        .extracting(c -> c.getJobId()).containsExactly("waits"));
    }

    @Test
    void aUnitOfASplitPlacementKeepsNothingOfAnotherUnitsNodesOrJobsItNeverSawRegisteredOrGranted() {
        // the unit owning pool a (the fallback) of pools a and b, restored from its snapshot: b's registrations and
        // grants came before it, so a later heartbeat of b-0 or release of b's job must not reach pool a
        Map<String, ExecutionBackend> pools = twoPools();
        VirtualClock clock = new VirtualClock(wall, 1);
        PlacementHandler a = new PlacementHandler(new ClusterState(pools.get("a").name(), new TopologyPlacer()),
                pools.get("a"), clock, Duration.ofSeconds(1)).inPool("a");
        Map<String, String> configured = new LinkedHashMap<>();
        configured.put("a", "simulated");
        configured.put("b", "simulated");
        PoolRouter unit = new PoolRouter(List.of(a), configured).restoring(List.of(Topics.PLACEMENT_NODE_EVENTS,
                Topics.PLACEMENT_ALLOCATION_EVENTS));
        long before = unit.snapshotRecords();
        unit.restore(Topics.PLACEMENT_NODE_EVENTS, "b-0", NodeEvent.newBuilder().setEventId("hb").setNodeId("b-0")
                .setOccurredAt(Instant.parse("2026-11-28T10:00:00Z"))
                .setPayload(io.gantry.events.NodeHeartbeat.newBuilder().setSequence(7).build()).build());
        unit.restore(Topics.PLACEMENT_ALLOCATION_EVENTS, "job-b", AllocationEvent.newBuilder().setEventId("start")
                .setJobId("job-b").setOccurredAt(Instant.parse("2026-11-28T10:00:00Z"))
                .setPayload(io.gantry.events.JobRunStarted.newBuilder().setAllocationId("alloc-b").setTenant("t")
                        .setAttempt(1).setStartedAt(Instant.parse("2026-11-28T10:00:00Z")).build()).build());
        // only the newest-time record may be new; a foreign node's heartbeat is not kept
        assertThat(unit.snapshotRecords()).isLessThanOrEqualTo(before + 1);
        assertThat(a.state().knows("b-0")).isFalse();
    }
}
