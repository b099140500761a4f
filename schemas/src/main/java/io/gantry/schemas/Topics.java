package io.gantry.schemas;

import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.AllocationEvent;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeHealthEvent;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.RecoveryJobEvent;
import io.gantry.events.UsageEvent;

import java.util.List;

/** Every topic Gantry uses: the one place topic names live. */
public final class Topics {
    private Topics() {
    }

    public static final Topic<AdmissionJobEvent> ADMISSION_JOB_EVENTS =
            new Topic<>("admission.job-events", Service.ADMISSION, "jobId", AdmissionJobEvent.class);
    public static final Topic<QueueJobEvent> QUEUE_JOB_EVENTS =
            new Topic<>("queue.job-events", Service.QUEUE, "jobId", QueueJobEvent.class);
    public static final Topic<AllocationEvent> PLACEMENT_ALLOCATION_EVENTS =
            new Topic<>("placement.allocation-events", Service.PLACEMENT, "jobId", AllocationEvent.class);
    public static final Topic<NodeEvent> PLACEMENT_NODE_EVENTS =
            new Topic<>("placement.node-events", Service.PLACEMENT, "nodeId", NodeEvent.class);
    public static final Topic<NodeHealthEvent> RECOVERY_NODE_EVENTS =
            new Topic<>("recovery.node-events", Service.RECOVERY, "nodeId", NodeHealthEvent.class);
    public static final Topic<RecoveryJobEvent> RECOVERY_JOB_EVENTS =
            new Topic<>("recovery.job-events", Service.RECOVERY, "jobId", RecoveryJobEvent.class);
    public static final Topic<UsageEvent> BILLING_USAGE_EVENTS =
            new Topic<>("billing.usage-events", Service.BILLING, "tenant", UsageEvent.class);

    /** Where a service puts input records it cannot decode or process (raw bytes plus error headers). */
    public static Topic<byte[]> deadLetter(Service owner) {
        return new Topic<>(owner.id() + ".dead-letter", owner, "source key", byte[].class);
    }

    /** The event topics, in pipeline order. */
    public static List<Topic<?>> eventTopics() {
        return List.of(ADMISSION_JOB_EVENTS, QUEUE_JOB_EVENTS, PLACEMENT_ALLOCATION_EVENTS, PLACEMENT_NODE_EVENTS,
                RECOVERY_NODE_EVENTS, RECOVERY_JOB_EVENTS, BILLING_USAGE_EVENTS);
    }

    /** Event topics and every service's dead-letter topic: what a fresh cluster needs created. */
    public static List<String> allNames() {
        var names = new java.util.ArrayList<String>();
        eventTopics().forEach(t -> names.add(t.name()));
        for (Service s : Service.values()) {
            names.add(deadLetter(s).name());
        }
        return List.copyOf(names);
    }
}
