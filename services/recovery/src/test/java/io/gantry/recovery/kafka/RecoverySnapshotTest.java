package io.gantry.recovery.kafka;

import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.AllocationReleased;
import io.gantry.events.CheckpointCommitted;
import io.gantry.events.CheckpointEvent;
import io.gantry.events.DeviceEvent;
import io.gantry.events.DeviceFaultKind;
import io.gantry.events.DeviceFaultReported;
import io.gantry.events.GpuDevice;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeHeartbeat;
import io.gantry.events.NodeHeartbeatEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.events.ReleaseReason;
import io.gantry.events.TaskPlacement;
import io.gantry.recovery.core.RecoveryPolicy;
import io.gantry.runtime.kafka.Output;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import io.gantry.testkit.MutableClock;
import org.apache.avro.specific.SpecificRecord;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Recovery's snapshots: restoring a snapshot taken anywhere in a history and then the history after it leaves the
 * state a restore of the whole history leaves — the same snapshot, the same node health, the same decisions on
 * what comes next — from far fewer records. Histories are random walks of registrations (with cordon labels),
 * heartbeats, silences, grants, releases of every reason, checkpoints and GPU faults, through the handler.
 */
class RecoverySnapshotTest {
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    private static final Set<Topic<?>> RESTORED = Set.copyOf(RecoveryProcessor.loop(RecoveryPolicy.defaults(),
            Clock.systemUTC(), Duration.ofSeconds(1)).restoreFrom());

    private record Rec(Topic<?> topic, String key, Object value) {
    }

    /** Collects what the handler publishes on its restore topics into the history; drops the rest. */
    private static Output into(List<Rec> history, List<Rec> all) {
        return new Output() {
            @Override
            public <V> void send(Topic<V> topic, String key, V value) {
                all.add(new Rec(topic, key, value));
                if (RESTORED.contains(topic)) {
                    history.add(new Rec(topic, key, value));
                }
            }
        };
    }

    @Test
    void aSnapshotAnywhereInAHistoryThenTheRestRebuildsTheStateOfTheWholeHistoryFromFewerRecords() {
        long historyRecords = 0;
        long snapshotRecords = 0;
        for (long seed = 1; seed <= 120; seed++) {
            Random r = new Random(seed);
            RecoveryHandler live = new RecoveryHandler(RecoveryPolicy.defaults(), new MutableClock(T0));
            List<String> jobs = new ArrayList<>();
            List<Rec> history = history(live, r, 400, jobs);
            int cut = r.nextInt(history.size() + 1);

            RecoveryHandler whole = restored(history);
            List<Rec> snapshot = snapshot(restored(history.subList(0, cut)));
            List<Rec> fromSnapshot = new ArrayList<>(snapshot);
            fromSnapshot.addAll(history.subList(cut, history.size()));
            RecoveryHandler resumed = restored(fromSnapshot);

            String why = "seed " + seed + ", snapshot after " + cut + " of " + history.size() + " records";
            List<Rec> wholeSnapshot = snapshot(whole);
            var nodes = whole.nodes();
            var outOfService = whole.outOfService();
            List<Object> next = probe(whole, jobs);
            assertThat(values(snapshot(resumed))).as(why).isEqualTo(values(wholeSnapshot));
            assertThat(resumed.nodes()).as(why).isEqualTo(nodes);
            assertThat(resumed.outOfService()).as(why).isEqualTo(outOfService);
            assertThat(probe(resumed, jobs)).as(why).isEqualTo(next);
            // the running service's own snapshot (it saw inputs again after handling them, as after a restart)
            RecoveryHandler fromLive = restored(snapshot(live));
            assertThat(fromLive.nodes()).as(why).isEqualTo(nodes);
            assertThat(fromLive.outOfService()).as(why).isEqualTo(outOfService);
            assertThat(probe(fromLive, jobs)).as(why).isEqualTo(next);
            historyRecords += history.size();
            snapshotRecords += wholeSnapshot.size();
        }
        assertThat(snapshotRecords).as("records in the snapshots of the whole histories, of " + historyRecords)
                .isLessThan(historyRecords / 3);
    }

    private static RecoveryHandler restored(List<Rec> records) {
        RecoveryHandler h = new RecoveryHandler(RecoveryPolicy.defaults(), Clock.fixed(T0, ZoneOffset.UTC));
        records.forEach(rec -> h.restore(rec.topic(), rec.key(), rec.value()));
        return h;
    }

    private static List<Rec> snapshot(RecoveryHandler h) {
        List<Rec> out = new ArrayList<>();
        assertThat(h.snapshot(new io.gantry.runtime.kafka.SnapshotWriter() {
            @Override
            public <V> void add(Topic<V> topic, String key, V value) {
                assertThat(RESTORED).contains(topic);
                out.add(new Rec(topic, key, value));
            }
        })).isTrue();
        assertThat(h.snapshotRecords()).isEqualTo(out.size());
        return out;
    }

    private static List<Object> values(List<Rec> records) {
        return records.stream().map(Rec::value).toList();
    }

    /**
     * What the handler decides next, as payloads: each run still held ends on a failed node (requeue or abandon,
     * with the checkpoint to resume from), then the whole cluster goes silent (which nodes fail, and how).
     */
    private static List<Object> probe(RecoveryHandler h, List<String> jobs) {
        List<Rec> out = new ArrayList<>();
        List<Rec> ignored = new ArrayList<>();
        Output sink = into(ignored, out);
        h.restored(sink);
        h.caughtUp(T0, sink);
        for (int node = 0; node < NODES; node++) {
            // which runs a fault on a GPU they hold hits
            h.handle(Topics.PLACEMENT_DEVICE_EVENTS, "n" + node, fault("n" + node, 1, 79, T0.plusSeconds(node)), sink);
        }
        for (String job : jobs) {
            for (int attempt = 1; attempt <= 12; attempt++) {
                h.handle(Topics.PLACEMENT_ALLOCATION_EVENTS, job, released(job, attempt, ReleaseReason.NODE_FAILED,
                        "n0", T0), sink);
            }
        }
        h.tick(T0.plus(Duration.ofHours(1)), sink);
        return out.stream().map(rec -> (Object) ((SpecificRecord) rec.value()).get(
                ((SpecificRecord) rec.value()).getSchema().getField("payload").pos())).toList();
    }

    private static final int NODES = 3;
    private static final int JOBS = 6;

    /**
     * A random history of recovery's restore topics, made by driving a handler as the running service would be; a
     * job that succeeded or was cancelled is over (its slot gets a new job); {@code live} gets the jobs not over.
     */
    private static List<Rec> history(RecoveryHandler h, Random r, int steps, List<String> live) {
        MutableClock time = (MutableClock) h.clock();
        List<Rec> history = new ArrayList<>();
        Output out = into(history, new ArrayList<>());
        h.restored(out);
        h.caughtUp(time.instant(), out);
        Map<String, Integer> attempts = new HashMap<>();
        int[] generation = new int[JOBS];
        Map<String, String> runningOn = new HashMap<>();
        for (int i = 0; i < steps; i++) {
            time.advance(Duration.ofMillis(r.nextInt(4_000)));
            String node = "n" + r.nextInt(NODES);
            int slot = r.nextInt(JOBS);
            String job = "job-" + slot + "-" + generation[slot];
            int attempt = attempts.getOrDefault(job, 0);
            int op = r.nextInt(20);
            List<Rec> inputs = history.stream().filter(rec -> !rec.topic().owner().equals(io.gantry.schemas.Service.RECOVERY))
                    .toList();
            if (r.nextInt(15) == 0 && !inputs.isEmpty()) {
                // an input handled again (redelivered after a restart): on its topic once, seen twice
                Rec again = inputs.get(r.nextInt(inputs.size()));
                h.handle(again.topic(), again.key(), again.value(), out);
            } else if (op == 0) {
                input(h, history, out, Topics.PLACEMENT_NODE_EVENTS, node, registration(node, r, time.instant()));
            } else if (op <= 5) {
                h.handle(Topics.PLACEMENT_HEARTBEAT_EVENTS, node, heartbeat(node, i), out);
            } else if (op <= 7) {
                h.tick(time.instant(), out);
            } else if (op <= 10) {
                attempts.put(job, attempt + 1);
                runningOn.put(job, node);
                input(h, history, out, Topics.PLACEMENT_ALLOCATION_EVENTS, job, granted(job, attempt + 1, node, time.instant()));
            } else if (op <= 13) {
                if (attempt > 0) {
                    ReleaseReason reason = ReleaseReason.values()[r.nextInt(ReleaseReason.values().length)];
                    input(h, history, out, Topics.PLACEMENT_ALLOCATION_EVENTS, job,
                            released(job, attempt, reason, runningOn.get(job), time.instant()));
                    if (reason == ReleaseReason.RUN_SUCCEEDED || reason == ReleaseReason.CANCELLED) {
                        generation[slot]++;
                    }
                }
            } else if (op <= 18) {
                if (attempt > 0) {
                    input(h, history, out, Topics.ADMISSION_CHECKPOINT_EVENTS, job,
                            checkpoint(job, Math.max(1, attempt - r.nextInt(2)), r.nextInt(1_000), time.instant()));
                }
            } else if (r.nextInt(3) == 0) {
                // GPU faults are rare
                h.handle(Topics.PLACEMENT_DEVICE_EVENTS, node, fault(node, r.nextInt(4), r.nextBoolean() ? 79 : 48,
                        time.instant()), out);
            }
        }
        for (int k = 0; k < JOBS; k++) {
            live.add("job-" + k + "-" + generation[k]);
        }
        return history;
    }

    private static void input(RecoveryHandler h, List<Rec> history, Output out, Topic<?> topic, String key,
                              Object value) {
        history.add(new Rec(topic, key, value)); // on its topic before what handling it publishes
        h.handle(topic, key, value, out);
    }

    private static NodeEvent registration(String node, Random r, Instant at) {
        Map<String, String> labels = new HashMap<>();
        if (r.nextInt(4) == 0) {
            labels.put(RecoveryHandler.CORDONED_LABEL, "true");
        }
        if (r.nextInt(3) == 0) {
            labels.put(RecoveryHandler.CORDONED_GPUS_LABEL, Integer.toString(r.nextInt(4)));
        }
        List<GpuDevice> gpus = new ArrayList<>();
        for (int g = 0; g < 4; g++) {
            gpus.add(GpuDevice.newBuilder().setIndex(g).setModel("H100").setMemoryMiB(81_920).build());
        }
        return NodeEvent.newBuilder().setEventId("reg-" + node + "-" + at.toEpochMilli()).setNodeId(node)
                .setOccurredAt(at).setPayload(NodeRegistered.newBuilder().setGpus(gpus).setCpuMillis(64_000)
                        .setMemoryMiB(512_000L).setLabels(labels).setBackend("simulated").build()).build();
    }

    private static NodeHeartbeatEvent heartbeat(String node, long sequence) {
        return NodeHeartbeatEvent.newBuilder().setEventId("hb-" + node + "-" + sequence).setNodeId(node)
                .setOccurredAt(T0).setPayload(NodeHeartbeat.newBuilder().setSequence(sequence).build()).build();
    }

    private static TaskPlacement placement(String node) {
        return TaskPlacement.newBuilder().setTask("worker").setReplica(0).setNodeId(node).setGpuModel("H100")
                .setGpuIndices(List.of(0, 1)).setCpuMillis(1000).setMemoryMiB(1024).build();
    }

    private static AllocationEvent granted(String job, int attempt, String node, Instant at) {
        return AllocationEvent.newBuilder().setEventId("grant-" + job + "-" + attempt).setJobId(job).setOccurredAt(at)
                .setPayload(AllocationGranted.newBuilder().setAllocationId(job + "-a" + attempt).setTenant("vision")
                        .setAttempt(attempt).setPlacements(List.of(placement(node))).setGrantedAt(at)
                        .setBackend("simulated").build())
                .build();
    }

    private static AllocationEvent released(String job, int attempt, ReleaseReason reason, String node, Instant at) {
        return AllocationEvent.newBuilder().setEventId("release-" + job + "-" + attempt + "-" + reason).setJobId(job)
                .setOccurredAt(at)
                .setPayload(AllocationReleased.newBuilder().setAllocationId(job + "-a" + attempt).setTenant("vision")
                        .setAttempt(attempt).setReason(reason).setGrantedAt(at.minusSeconds(60)).setReleasedAt(at)
                        .setPlacements(List.of(placement(node))).setBackend("simulated").build())
                .build();
    }

    private static CheckpointEvent checkpoint(String job, int attempt, long step, Instant at) {
        return CheckpointEvent.newBuilder().setEventId("ckpt-" + job + "-" + attempt + "-" + step).setJobId(job)
                .setOccurredAt(at).setPayload(CheckpointCommitted.newBuilder().setTenant("vision").setAttempt(attempt)
                        .setStep(step).setPath("/ckpt/" + job + "/" + step).setReportedVia("api").setCommittedAt(at)
                        .build())
                .build();
    }

    private static DeviceEvent fault(String node, int gpu, int xid, Instant at) {
        return DeviceEvent.newBuilder().setEventId("fault-" + node + "-" + gpu + "-" + at.toEpochMilli())
                .setNodeId(node).setOccurredAt(at)
                .setPayload(DeviceFaultReported.newBuilder().setGpuIndex(gpu).setKind(DeviceFaultKind.XID).setXid(xid)
                        .setSource("simulated").setMessage("Xid " + xid).build()).build();
    }
}
