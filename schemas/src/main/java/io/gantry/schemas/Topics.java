package io.gantry.schemas;

import io.gantry.events.AccessEvent;
import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.AllocationEvent;
import io.gantry.events.BudgetEvent;
import io.gantry.events.CheckpointEvent;
import io.gantry.events.DeviceEvent;
import io.gantry.events.DeviceHealthEvent;
import io.gantry.events.IdleEvent;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeHealthEvent;
import io.gantry.events.NodeHeartbeatEvent;
import io.gantry.events.PlacementConfigEvent;
import io.gantry.events.PriceEvent;
import io.gantry.events.SuspensionEvent;
import io.gantry.events.QueueConfigEvent;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.QueuePreemptionEvent;
import io.gantry.events.QueueReservationEvent;
import io.gantry.events.StateSnapshot;
import io.gantry.events.RecoveryJobEvent;
import io.gantry.events.StopEvent;
import io.gantry.events.UsageEvent;
import io.gantry.events.UtilisationEvent;

import java.util.List;

/** Every topic Gantry uses: the one place topic names live. */
public final class Topics {
    static {
        AvroWire.trustGeneratedClasses();
    }

    private Topics() {
    }

    public static final Topic<AdmissionJobEvent> ADMISSION_JOB_EVENTS =
            new Topic<>("admission.job-events", Service.ADMISSION, "jobId", AdmissionJobEvent.class);
    /** Checkpoints the runs reported (with their run token), in order per job. */
    public static final Topic<CheckpointEvent> ADMISSION_CHECKPOINT_EVENTS =
            new Topic<>("admission.checkpoint-events", Service.ADMISSION, "jobId", CheckpointEvent.class);
    /**
     * Suspend and resume requests, in order per job; the newest says whether the job should be suspended. A topic of
     * its own so v1 readers of {@code admission.job-events} stay valid; the queue restores it at start.
     */
    public static final Topic<SuspensionEvent> ADMISSION_SUSPENSION_EVENTS =
            new Topic<>("admission.suspension-events", Service.ADMISSION, "jobId", SuspensionEvent.class);
    /**
     * Tenants and API tokens as admins manage them (never a secret, only its SHA-256). Compacted: each record is its
     * tenant's or token's whole current state, so the topic stays as small as the set of tenants and tokens, and every
     * service reads it from the beginning into the view its token filter consults.
     */
    public static final Topic<AccessEvent> ADMISSION_ACCESS_EVENTS =
            new Topic<>("admission.access-events", Service.ADMISSION, "subject (tenant or tokenId)", AccessEvent.class,
                    Topic.FOREVER, true);
    public static final Topic<QueueJobEvent> QUEUE_JOB_EVENTS =
            new Topic<>("queue.job-events", Service.QUEUE, "jobId", QueueJobEvent.class);
    /** Runs the queue asks placement to stop (preemption); a topic of its own so v1 readers of the lifecycle stay valid. */
    public static final Topic<QueuePreemptionEvent> QUEUE_PREEMPTION_EVENTS =
            new Topic<>("queue.preemption-events", Service.QUEUE, "jobId", QueuePreemptionEvent.class);
    /** Capacity the queue asks placement to reserve (drain) for starving gangs. */
    public static final Topic<QueueReservationEvent> QUEUE_RESERVATION_EVENTS =
            new Topic<>("queue.reservation-events", Service.QUEUE, "jobId", QueueReservationEvent.class);
    /**
     * Idle-reclamation warnings (JobIdleWarned, JobIdleCleared): a topic of its own so readers of the released queue
     * topics stay valid; admission shows the standing warning on the job, the queue restores it at start.
     */
    public static final Topic<IdleEvent> QUEUE_IDLE_EVENTS =
            new Topic<>("queue.idle-events", Service.QUEUE, "jobId", IdleEvent.class);
    /** Every applied queue configuration; the newest is the live one after a restart. */
    public static final Topic<QueueConfigEvent> QUEUE_CONFIG_EVENTS =
            new Topic<>("queue.config-events", Service.QUEUE, "queue-config", QueueConfigEvent.class);
    public static final Topic<AllocationEvent> PLACEMENT_ALLOCATION_EVENTS =
            new Topic<>("placement.allocation-events", Service.PLACEMENT, "jobId", AllocationEvent.class);
    /** Placement's configuration as others need it (GPU tiers); the newest is the live one. */
    public static final Topic<PlacementConfigEvent> PLACEMENT_CONFIG_EVENTS =
            new Topic<>("placement.config-events", Service.PLACEMENT, "placement-config", PlacementConfigEvent.class);
    public static final Topic<NodeEvent> PLACEMENT_NODE_EVENTS =
            new Topic<>("placement.node-events", Service.PLACEMENT, "nodeId", NodeEvent.class);
    /** Liveness only, so a short history: nothing is rebuilt from it. */
    public static final Topic<NodeHeartbeatEvent> PLACEMENT_HEARTBEAT_EVENTS =
            new Topic<>("placement.heartbeat-events", Service.PLACEMENT, "nodeId", NodeHeartbeatEvent.class,
                    java.time.Duration.ofHours(1).toMillis());
    /**
     * Device faults the execution backends observed (Xid, ECC, links, GPU lost, thermal, failed pre-flight checks).
     * Thirty days: nothing is rebuilt from it (recovery's decisions on {@code recovery.device-events} are the record),
     * and a faulty device may repeat itself often.
     */
    public static final Topic<DeviceEvent> PLACEMENT_DEVICE_EVENTS =
            new Topic<>("placement.device-events", Service.PLACEMENT, "nodeId", DeviceEvent.class,
                    java.time.Duration.ofDays(30).toMillis());
    /**
     * Preemption notices: placement asked a run to stop and when it kills it. Seven days: a notice matters while its
     * run lives; the read model keeps what it showed.
     */
    public static final Topic<StopEvent> PLACEMENT_STOP_EVENTS =
            new Topic<>("placement.stop-events", Service.PLACEMENT, "jobId", StopEvent.class,
                    java.time.Duration.ofDays(7).toMillis());
    /**
     * How busy each run's GPUs were, per run and sampling window, where the backend reports utilisation. Thirty days:
     * billing records every window in its database (FinOps: GPU time held vs used, idle allocations).
     */
    public static final Topic<UtilisationEvent> PLACEMENT_UTILISATION_EVENTS =
            new Topic<>("placement.utilisation-events", Service.PLACEMENT, "jobId", UtilisationEvent.class,
                    java.time.Duration.ofDays(30).toMillis());
    public static final Topic<NodeHealthEvent> RECOVERY_NODE_EVENTS =
            new Topic<>("recovery.node-events", Service.RECOVERY, "nodeId", NodeHealthEvent.class);
    public static final Topic<RecoveryJobEvent> RECOVERY_JOB_EVENTS =
            new Topic<>("recovery.job-events", Service.RECOVERY, "jobId", RecoveryJobEvent.class);
    /** Recovery's decisions about device faults: fail the runs, cordon the GPU or node, drain the node. */
    public static final Topic<DeviceHealthEvent> RECOVERY_DEVICE_EVENTS =
            new Topic<>("recovery.device-events", Service.RECOVERY, "nodeId", DeviceHealthEvent.class);
    public static final Topic<UsageEvent> BILLING_USAGE_EVENTS =
            new Topic<>("billing.usage-events", Service.BILLING, "tenant", UsageEvent.class);
    /** Every version of the price book; the newest is the one in force. */
    public static final Topic<PriceEvent> BILLING_PRICE_EVENTS =
            new Topic<>("billing.price-events", Service.BILLING, "price-book", PriceEvent.class);
    /** Money budgets per tenant (and queue) and month: what admission checks a new job against. */
    public static final Topic<BudgetEvent> BILLING_BUDGET_EVENTS =
            new Topic<>("billing.budget-events", Service.BILLING, "tenant", BudgetEvent.class);

    /** Where a service puts input records it cannot decode or process (raw bytes plus error headers). */
    public static Topic<byte[]> deadLetter(Service owner) {
        return new Topic<>(owner.id() + ".dead-letter", owner, "source key", byte[].class);
    }

    /**
     * Where a service with one owner keeps snapshots of its state, so a start reads the newest snapshot and the
     * history after it instead of the whole history: compacted (key {@code part-<n>}), one partition, written by the
     * owner instance only.
     */
    public static Topic<StateSnapshot> snapshots(Service owner) {
        if (!SNAPSHOTTING.contains(owner)) {
            throw new IllegalArgumentException(owner + " keeps no snapshots (its state is in PostgreSQL)");
        }
        return new Topic<>(owner.id() + ".snapshots", owner, "part-<n>", StateSnapshot.class, Topic.FOREVER, true);
    }

    /**
     * How the queue's memory of its history (what none of its restore topics holds any more once a snapshot leaves
     * the facts of ended jobs out: those jobs' outcomes, the decayed usage) travels inside its snapshots: as entries of
     * {@code queue.snapshots} itself, keys {@code memory-<n>}. Not a topic of its own: never created, never consumed.
     */
    public static Topic<io.gantry.events.QueueMemoryPart> queueSnapshotMemory() {
        return new Topic<>(snapshots(Service.QUEUE).name(), Service.QUEUE, "memory-<n>",
                io.gantry.events.QueueMemoryPart.class, Topic.FOREVER, true);
    }

    /**
     * How a service's snapshots carry state that is no record of its restore topics, if it has such state (the
     * queue: {@link #queueSnapshotMemory}); empty for the others.
     */
    public static java.util.Optional<Topic<?>> snapshotMemory(Service owner) {
        return owner == Service.QUEUE ? java.util.Optional.of(queueSnapshotMemory()) : java.util.Optional.empty();
    }

    /** The services whose state is rebuilt from Kafka (one owner at a time) and may be snapshotted. */
    private static final List<Service> SNAPSHOTTING = List.of(Service.QUEUE, Service.PLACEMENT, Service.RECOVERY);

    /** The snapshot topics, one per service that keeps its state in Kafka. */
    public static List<Topic<?>> snapshotTopics() {
        return SNAPSHOTTING.stream().<Topic<?>>map(Topics::snapshots).toList();
    }

    /** The event topics, in pipeline order. */
    public static List<Topic<?>> eventTopics() {
        return List.of(ADMISSION_JOB_EVENTS, ADMISSION_CHECKPOINT_EVENTS, ADMISSION_SUSPENSION_EVENTS, ADMISSION_ACCESS_EVENTS, QUEUE_JOB_EVENTS, QUEUE_PREEMPTION_EVENTS, QUEUE_RESERVATION_EVENTS,
                QUEUE_IDLE_EVENTS, QUEUE_CONFIG_EVENTS,
                PLACEMENT_ALLOCATION_EVENTS, PLACEMENT_CONFIG_EVENTS, PLACEMENT_NODE_EVENTS,
                PLACEMENT_HEARTBEAT_EVENTS, PLACEMENT_DEVICE_EVENTS, PLACEMENT_STOP_EVENTS, PLACEMENT_UTILISATION_EVENTS,
                RECOVERY_NODE_EVENTS, RECOVERY_JOB_EVENTS,
                RECOVERY_DEVICE_EVENTS, BILLING_USAGE_EVENTS,
                BILLING_PRICE_EVENTS, BILLING_BUDGET_EVENTS);
    }

    /** Event topics, snapshot topics and every service's dead-letter topic: what a fresh cluster needs created. */
    public static List<Topic<?>> all() {
        var topics = new java.util.ArrayList<Topic<?>>(eventTopics());
        topics.addAll(snapshotTopics());
        for (Service s : Service.values()) {
            topics.add(deadLetter(s));
        }
        return List.copyOf(topics);
    }

    public static List<String> allNames() {
        return all().stream().map(Topic::name).toList();
    }
}
