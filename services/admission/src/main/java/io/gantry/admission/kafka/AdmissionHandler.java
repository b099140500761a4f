package io.gantry.admission.kafka;

import io.gantry.admission.core.NodeCatalog;
import io.gantry.admission.core.BudgetGate;
import io.gantry.admission.core.CostEstimate;
import io.gantry.events.PriceBookApplied;
import io.gantry.events.PriceEvent;
import io.gantry.admission.core.SchedulingCatalog;
import io.gantry.events.BudgetEvent;
import io.gantry.events.BudgetStatusChanged;
import io.gantry.admission.db.JobStore;
import io.gantry.events.AdmissionJobEvent;
import io.gantry.admission.db.CheckpointRow;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.CheckpointCommitted;
import io.gantry.events.CheckpointEvent;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.events.PlacementConfigEvent;
import io.gantry.events.QueueConfigEvent;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.RecoveryJobEvent;
import io.gantry.runtime.kafka.DatabaseFailures;
import io.gantry.runtime.kafka.EventHandler;
import io.gantry.runtime.kafka.Output;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;

import java.util.ArrayList;
import java.util.List;

/**
 * Feeds the job read model from every topic that says something about a job, the cluster limits from the node
 * topic, and the scheduling catalog from the queue's and placement's configuration topics. One instance per
 * processor (re)start: limits and catalog are rebuilt from the beginning of their topics each time, the read
 * model is in PostgreSQL and needs no rebuilding.
 */
final class AdmissionHandler implements EventHandler {
    private static final int MAX_ID_LENGTH = 64;

    private final JobStore store;
    private final ClusterLimitsHolder limits;
    private final NodeCatalog nodes = new NodeCatalog();
    private SchedulingCatalog catalog = SchedulingCatalog.unknown();
    private BudgetGate budgets = BudgetGate.none();
    private CostEstimate.PriceList prices;
    /** The read-model writes of the batch being handled, in order ({@link #batchHandled}). */
    private final List<JobStore.Write> pending = new ArrayList<>();

    AdmissionHandler(JobStore store, ClusterLimitsHolder limits) {
        this.store = store;
        this.limits = limits;
    }

    /** A node's registration, as far as admission checks specs against it. */
    private void register(String nodeId, NodeRegistered r) {
        nodes.register(nodeId, WireMapping.gpuModels(r), WireMapping.socketCpuMillis(r),
                WireMapping.socketMemoryMiB(r), r.getCpuMillis(), r.getMemoryMiB(), WireMapping.migProfiles(r));
    }

    @Override
    public void restore(Topic<?> topic, String key, Object value) {
        if (value instanceof NodeEvent e && e.getPayload() instanceof NodeRegistered r) {
            register(e.getNodeId(), r);
        } else if (value instanceof QueueConfigEvent e) {
            catalog = WireMapping.withQueueConfig(catalog, e);
        } else if (value instanceof PlacementConfigEvent e) {
            catalog = WireMapping.withPlacementConfig(catalog, e);
        } else if (value instanceof BudgetEvent e && e.getPayload() instanceof BudgetStatusChanged b) {
            budgets = budgets.with(WireMapping.budgetStatus(b));
        } else if (value instanceof PriceEvent e && e.getPayload() instanceof PriceBookApplied p) {
            prices = WireMapping.priceList(p);
        }
    }

    @Override
    public void restored(Output out) {
        limits.publish(nodes.limits());
        limits.publish(catalog);
        limits.publish(budgets);
        limits.publish(prices);
    }

    @Override
    public void handle(Topic<?> topic, String key, Object value, Output out) {
        if (value instanceof PriceEvent e) {
            if (e.getPayload() instanceof PriceBookApplied p) {
                prices = WireMapping.priceList(p);
                limits.publish(prices);
            }
            return;
        }
        if (value instanceof BudgetEvent e) {
            if (e.getPayload() instanceof BudgetStatusChanged b) {
                budgets = budgets.with(WireMapping.budgetStatus(b));
                limits.publish(budgets);
            }
            return;
        }
        if (value instanceof NodeEvent e) {
            if (e.getPayload() instanceof NodeRegistered r) {
                register(e.getNodeId(), r);
                limits.publish(nodes.limits());
            }
            return;
        }
        if (value instanceof QueueConfigEvent e) {
            catalog = WireMapping.withQueueConfig(catalog, e);
            limits.publish(catalog);
            return;
        }
        if (value instanceof PlacementConfigEvent e) {
            catalog = WireMapping.withPlacementConfig(catalog, e);
            limits.publish(catalog);
            return;
        }
        if (value instanceof CheckpointEvent e) {
            checkpoint(e);
            return;
        }
        JobEvent event = toJobEvent(topic, value);
        check(event, key);
        pending.add(new JobStore.Apply(event));
        if (value instanceof AllocationEvent a && a.getPayload() instanceof AllocationGranted g
                && g.getRunTokenSha256() != null) {
            pending.add(new JobStore.RunToken(a.getJobId(), g.getAttempt(), g.getRunTokenSha256()));
        }
    }

    /**
     * The batch's read-model writes, validated one by one as they came, in one database transaction (one commit per
     * poll, not per record), before the batch's offsets are committed. A database failure restarts the loop, which
     * redelivers the batch; a write refused for its data is dead-lettered alone (see EventProcessor).
     */
    @Override
    public void batchHandled(Output out) {
        if (pending.isEmpty()) {
            return;
        }
        try {
            store.writeAll(pending);
        } catch (Exception e) {
            // the database's failure: the batch is delivered again; the record's (data PostgreSQL refuses): the
            // processor writes the batch one by one and dead-letters that record alone
            throw DatabaseFailures.classify(e, "the job read model");
        } finally {
            pending.clear();
        }
    }

    private void checkpoint(CheckpointEvent e) {
        require(e.getJobId(), "jobId", MAX_ID_LENGTH);
        require(e.getEventId(), "eventId", MAX_ID_LENGTH);
        if (!(e.getPayload() instanceof CheckpointCommitted c)) {
            throw new IllegalArgumentException("unexpected checkpoint payload " + e.getPayload());
        }
        if (c.getPath().length() > 1024) {
            throw new IllegalArgumentException("checkpoint path longer than 1024 characters");
        }
        pending.add(new JobStore.Checkpoint(new CheckpointRow(e.getEventId(), e.getJobId(), c.getAttempt(), c.getStep(),
                c.getPath(), c.getSizeBytes(), c.getSaveMillis(), c.getCommittedAt())));
    }

    private static JobEvent toJobEvent(Topic<?> topic, Object value) {
        String source = topic.name();
        if (value instanceof AdmissionJobEvent e) {
            return WireMapping.fromAdmission(e, source);
        }
        if (value instanceof QueueJobEvent e) {
            return WireMapping.fromQueue(e, source);
        }
        if (value instanceof AllocationEvent e) {
            return WireMapping.fromPlacement(e, source);
        }
        if (value instanceof RecoveryJobEvent e) {
            return WireMapping.fromRecovery(e, source);
        }
        if (value instanceof io.gantry.events.StopEvent e) {
            return WireMapping.fromStop(e, source);
        }
        if (value instanceof io.gantry.events.SuspensionEvent e) {
            return WireMapping.fromSuspension(e, source);
        }
        if (value instanceof io.gantry.events.IdleEvent e) {
            return WireMapping.fromIdle(e, source);
        }
        throw new IllegalArgumentException("unexpected record " + value.getClass().getName() + " on " + topic);
    }

    /** Rejects (to the dead-letter topic) what the database would refuse forever, before touching it. */
    private static void check(JobEvent e, String key) {
        require(e.jobId(), "jobId", MAX_ID_LENGTH);
        require(e.tenant(), "tenant", MAX_ID_LENGTH);
        require(e.fact().eventId(), "eventId", MAX_ID_LENGTH);
        if (key != null && !key.equals(e.jobId())) {
            throw new IllegalArgumentException("record key " + key + " is not the event's jobId " + e.jobId());
        }
        if (e.spec() != null && e.spec().name().length() > 128) {
            throw new IllegalArgumentException("job name longer than 128 characters");
        }
    }

    private static void require(String value, String what, int maxLength) {
        if (value == null || value.isBlank() || value.length() > maxLength) {
            throw new IllegalArgumentException(what + " must be 1.." + maxLength + " characters: " + value);
        }
    }

    static Topic<?>[] inputs() {
        return new Topic<?>[]{Topics.ADMISSION_JOB_EVENTS, Topics.QUEUE_JOB_EVENTS,
                Topics.PLACEMENT_ALLOCATION_EVENTS, Topics.RECOVERY_JOB_EVENTS, Topics.PLACEMENT_NODE_EVENTS,
                Topics.QUEUE_CONFIG_EVENTS, Topics.PLACEMENT_CONFIG_EVENTS, Topics.ADMISSION_CHECKPOINT_EVENTS,
                Topics.ADMISSION_SUSPENSION_EVENTS, Topics.BILLING_BUDGET_EVENTS, Topics.BILLING_PRICE_EVENTS,
                Topics.PLACEMENT_STOP_EVENTS, Topics.QUEUE_IDLE_EVENTS};
    }

    /** Rebuilt from their beginning at every start; newer records then arrive as input. */
    static Topic<?>[] restoreTopics() {
        return new Topic<?>[]{Topics.PLACEMENT_NODE_EVENTS, Topics.QUEUE_CONFIG_EVENTS, Topics.PLACEMENT_CONFIG_EVENTS,
                Topics.BILLING_BUDGET_EVENTS, Topics.BILLING_PRICE_EVENTS};
    }
}
