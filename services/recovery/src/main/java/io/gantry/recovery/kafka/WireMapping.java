package io.gantry.recovery.kafka;

import io.gantry.events.DeviceFaultDecided;
import io.gantry.events.DeviceFaultKind;
import io.gantry.events.DeviceHealthEvent;
import io.gantry.events.FaultAction;
import io.gantry.events.FaultCategory;
import io.gantry.events.JobRecoveryAbandoned;
import io.gantry.events.JobRequeued;
import io.gantry.events.NodeFailed;
import io.gantry.events.NodeFailureReason;
import io.gantry.events.NodeHealthEvent;
import io.gantry.events.NodeRecovered;
import io.gantry.events.RecoveryJobEvent;
import io.gantry.recovery.core.RecoveryFact;

import java.time.Instant;
import java.util.Optional;

/** Core facts to recovery's Avro envelopes and back (the back direction is for restore). */
final class WireMapping {
    private WireMapping() {
    }

    static Optional<NodeHealthEvent> toNodeEvent(RecoveryFact fact, String eventId, Instant occurredAt) {
        if (fact instanceof RecoveryFact.NodeFailed f) {
            return Optional.of(NodeHealthEvent.newBuilder().setEventId(eventId).setNodeId(f.nodeId())
                    .setOccurredAt(f.failedAt())
                    .setPayload(NodeFailed.newBuilder().setReason(NodeFailureReason.HEARTBEAT_TIMEOUT)
                            .setLastHeartbeatAt(f.lastHeartbeatAt()).setMessage(f.message()).build())
                    .build());
        }
        if (fact instanceof RecoveryFact.NodeRecovered f) {
            return Optional.of(NodeHealthEvent.newBuilder().setEventId(eventId).setNodeId(f.nodeId())
                    .setOccurredAt(f.recoveredAt())
                    .setPayload(NodeRecovered.newBuilder().setMessage(f.message()).build())
                    .build());
        }
        return Optional.empty();
    }

    static Optional<RecoveryJobEvent> toJobEvent(RecoveryFact fact, String eventId, Instant occurredAt) {
        if (fact instanceof RecoveryFact.JobRequeued f) {
            return Optional.of(RecoveryJobEvent.newBuilder().setEventId(eventId).setJobId(f.jobId())
                    .setOccurredAt(occurredAt)
                    .setPayload(JobRequeued.newBuilder().setTenant(f.tenant())
                            .setInterruptedAttempt(f.interruptedAttempt()).setMessage(f.message())
                            .setResumeFrom(f.resumeFrom()).build())
                    .build());
        }
        if (fact instanceof RecoveryFact.JobRecoveryAbandoned f) {
            return Optional.of(RecoveryJobEvent.newBuilder().setEventId(eventId).setJobId(f.jobId())
                    .setOccurredAt(occurredAt)
                    .setPayload(JobRecoveryAbandoned.newBuilder().setTenant(f.tenant())
                            .setInterruptedAttempt(f.interruptedAttempt()).setMessage(f.message()).build())
                    .build());
        }
        return Optional.empty();
    }

    static DeviceHealthEvent toDeviceEvent(RecoveryFact.DeviceFaultDecided d, String eventId, Instant occurredAt) {
        return DeviceHealthEvent.newBuilder().setEventId(eventId).setNodeId(d.nodeId()).setOccurredAt(occurredAt)
                .setPayload(DeviceFaultDecided.newBuilder().setFaultEventId(d.faultEventId()).setFaultAt(d.faultAt())
                        .setGpuIndex(d.gpuIndex()).setKind(DeviceFaultKind.valueOf(d.kind().name())).setXid(d.xid())
                        .setCategory(FaultCategory.valueOf(d.category().name()))
                        .setAction(FaultAction.valueOf(d.action().name()))
                        .setAffectedJobIds(d.affectedJobIds()).setMessage(d.message()).build())
                .build();
    }

    static RecoveryFact fromWire(DeviceHealthEvent e) {
        if (e.getPayload() instanceof DeviceFaultDecided d) {
            return new RecoveryFact.DeviceFaultDecided(d.getFaultEventId(), e.getNodeId(), d.getFaultAt(),
                    d.getGpuIndex(), io.gantry.recovery.core.FaultKind.valueOf(d.getKind().name()), d.getXid(),
                    io.gantry.recovery.core.FaultCategory.valueOf(d.getCategory().name()),
                    io.gantry.recovery.core.FaultAction.valueOf(d.getAction().name()), d.getAffectedJobIds(),
                    d.getMessage());
        }
        throw new IllegalArgumentException("unknown device health payload " + e.getPayload());
    }

    static RecoveryFact fromWire(NodeHealthEvent e) {
        if (e.getPayload() instanceof NodeFailed p) {
            return new RecoveryFact.NodeFailed(e.getNodeId(), e.getOccurredAt(), p.getLastHeartbeatAt(),
                    p.getMessage());
        }
        if (e.getPayload() instanceof NodeRecovered p) {
            return new RecoveryFact.NodeRecovered(e.getNodeId(), e.getOccurredAt(), p.getMessage());
        }
        throw new IllegalArgumentException("unknown node health payload " + e.getPayload());
    }

    static RecoveryFact fromWire(RecoveryJobEvent e) {
        if (e.getPayload() instanceof JobRequeued p) {
            return new RecoveryFact.JobRequeued(e.getJobId(), p.getTenant(), p.getInterruptedAttempt(),
                    p.getMessage(), p.getResumeFrom());
        }
        if (e.getPayload() instanceof JobRecoveryAbandoned p) {
            return new RecoveryFact.JobRecoveryAbandoned(e.getJobId(), p.getTenant(), p.getInterruptedAttempt(),
                    p.getMessage());
        }
        throw new IllegalArgumentException("unknown recovery job payload " + e.getPayload());
    }
}
