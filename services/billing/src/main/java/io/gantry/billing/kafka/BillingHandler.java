package io.gantry.billing.kafka;

import io.gantry.billing.core.Utilisation;

import io.gantry.billing.core.JobTerms;
import io.gantry.billing.core.LedgerEntry;
import io.gantry.billing.core.Placement;
import io.gantry.billing.core.Rating;
import io.gantry.billing.core.Release;
import io.gantry.billing.db.BillingStore;
import io.gantry.billing.db.Ledger;
import io.gantry.billing.db.UsageEntryRow;
import io.gantry.events.AdmissionJobEvent;
import io.gantry.events.AllocationEvent;
import io.gantry.events.AllocationGranted;
import io.gantry.events.CheckpointCommitted;
import io.gantry.events.CheckpointEvent;
import io.gantry.events.JobSubmitted;
import io.gantry.events.NodeEvent;
import io.gantry.events.NodeRegistered;
import io.gantry.events.AllocationReleased;
import io.gantry.events.TaskPlacement;
import io.gantry.events.UsageEvent;
import io.gantry.events.UsageRecorded;
import io.gantry.model.GpuShares;
import io.gantry.runtime.kafka.EventHandler;
import io.gantry.runtime.kafka.Output;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import io.gantry.runtime.kafka.TransientFailureException;

import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * At-least-once: rate each released allocation, write its entries to the ledger idempotently, then publish one
 * {@code UsageRecorded} per entry. The offset is committed only after the records are sent, so a crash anywhere
 * re-runs the whole release: the inserts do nothing the second time and the events go out again with the same
 * event ids (derived from the entry id), which consumers deduplicate.
 */
public final class BillingHandler implements EventHandler {
    private final Ledger ledger;
    private final BillingStore store;
    private final KnownModels models;
    private final Clock clock;

    BillingHandler(Ledger ledger, BillingStore store, KnownModels models, Clock clock) {
        this.ledger = ledger;
        this.store = store;
        this.models = models;
        this.clock = clock;
    }

    @Override
    public void restore(Topic<?> topic, String key, Object value) {
        noteModels(value);
    }

    @Override
    public void handle(Topic<?> topic, String key, Object value, Output out) {
        if (noteModels(value)) {
            return;
        }
        if (value instanceof AdmissionJobEvent job && job.getPayload() instanceof JobSubmitted submitted) {
            JobTerms terms = terms(job.getJobId(), submitted);
            retryingTransient(() -> store.recordTerms(terms, submitted.getTenant(), clock.instant()));
            return;
        }
        if (value instanceof CheckpointEvent cp && cp.getPayload() instanceof CheckpointCommitted c) {
            if (c.getAttempt() < 1) {
                throw new IllegalArgumentException("attempt must be >= 1, was " + c.getAttempt());
            }
            retryingTransient(() -> store.recordCheckpoint(cp.getEventId(), cp.getJobId(), c.getAttempt(),
                    c.getCommittedAt()));
            return;
        }
        if (value instanceof io.gantry.events.UtilisationEvent u
                && u.getPayload() instanceof io.gantry.events.RunUtilisationSampled w) {
            // validated first (throws IllegalArgumentException -> dead letter); a redelivered window writes nothing
            Utilisation.Window window = new Utilisation.Window(w.getTenant(), u.getJobId(), w.getAttempt(),
                    w.getAllocationId(), w.getWindowFrom(), w.getWindowTo(), w.getHeldGpuMilli(), w.getUsedGpuMilli(),
                    w.getSamples(), w.getIdleSince());
            retryingTransient(() -> store.recordUtilisation(window));
            return;
        }
        if (value instanceof AllocationEvent granted && granted.getPayload() instanceof AllocationGranted g) {
            // what a running job holds, so budgets see it before the release; shares validated like a release
            List<LedgerEntry> nodes = Rating.rate(new Release(g.getTenant(), granted.getJobId(), g.getAttempt(),
                    g.getAllocationId(), g.getGrantedAt(), g.getGrantedAt(), placements(g.getPlacements()), null));
            retryingTransient(() -> store.recordOpen(nodes));
            return;
        }
        if (!(value instanceof AllocationEvent event) || !(event.getPayload() instanceof AllocationReleased released)) {
            return;
        }
        // validation first (throws IllegalArgumentException -> dead letter) so a bad record writes nothing
        List<LedgerEntry> entries = Rating.rate(release(event.getJobId(), released));
        List<UsageEntryRow> stored = new ArrayList<>(entries.size());
        try {
            for (LedgerEntry entry : entries) {
                stored.add(ledger.record(entry, clock.instant()));
            }
        } catch (RuntimeException e) {
            if (isTransient(e)) {
                // the record is fine, the database is not: make the processor restart and redeliver it instead of
                // dead-lettering billable usage (the runtime retries only Kafka failures)
                throw new TransientFailureException("usage ledger unavailable; the release will be redelivered", e);
            }
            throw e;
        }
        retryingTransient(() -> store.closeOpen(released.getAllocationId()));
        for (UsageEntryRow row : stored) {
            out.send(Topics.BILLING_USAGE_EVENTS, row.tenant(), usageRecorded(row));
        }
    }

    /** GPU models registered nodes have: what a price book may name. True when the record was a node event. */
    private boolean noteModels(Object value) {
        if (value instanceof NodeEvent node) {
            if (node.getPayload() instanceof NodeRegistered reg) {
                models.node(node.getNodeId(), reg.getGpus().size());
                for (io.gantry.events.GpuDevice d : reg.getGpus()) {
                    models.add(d.getModel());
                }
            }
            return true;
        }
        return false;
    }

    /**
     * The queue (the spec's, else the tenant's own, as admission defaults it), priority class and GPU tier (when
     * every GPU task asks for the same one) of a submitted job.
     */
    static JobTerms terms(String jobId, JobSubmitted s) {
        String tier = null;
        boolean mixed = false;
        for (io.gantry.events.TaskSpec t : s.getSpec().getTasks()) {
            if (t.getGpuTier() != null) {
                mixed |= tier != null && !tier.equals(t.getGpuTier());
                tier = t.getGpuTier();
            }
        }
        String queue = s.getSpec().getQueue() != null ? s.getSpec().getQueue() : s.getTenant();
        return new JobTerms(jobId, queue, s.getSpec().getPriorityClass(), mixed ? null : tier);
    }

    private static void retryingTransient(Runnable write) {
        try {
            write.run();
        } catch (RuntimeException e) {
            if (isTransient(e)) {
                throw new TransientFailureException("billing database unavailable; the record will be redelivered", e);
            }
            throw e;
        }
    }

    /** The release as billing's core rates it (the simulator rates its replays the same way). */
    public static Release release(String jobId, AllocationReleased r) {
        return new Release(r.getTenant(), jobId, r.getAttempt(), r.getAllocationId(), r.getGrantedAt(),
                r.getReleasedAt(), placements(r.getPlacements()), r.getReason().name());
    }

    /** What each task placement holds, by the shared rule (thousandths of a GPU: 1000 per whole GPU plus shares). */
    public static List<Placement> placements(List<TaskPlacement> tasks) {
        List<Placement> placements = new ArrayList<>(tasks.size());
        for (TaskPlacement p : tasks) {
            long shares = 0;
            java.util.Map<String, Integer> mig = new java.util.TreeMap<>();
            for (io.gantry.events.GpuShare s : p.getGpuShares()) {
                shares += s.getMilli();
                if (s.getMigProfile() != null) {
                    mig.merge(s.getMigProfile(), 1, Integer::sum);
                }
            }
            long milli = GpuShares.held(p.getGpuIndices().size(), shares);
            placements.add(new Placement(p.getNodeId(), p.getGpuModel(), p.getGpuIndices().size(), milli,
                    p.getCpuMillis(), p.getMemoryMiB(), io.gantry.billing.core.MigInstances.of(mig)));
        }
        return placements;
    }

    /** The same entry always gets the same event id, so a republished event is recognisably the same fact. */
    static String eventId(String entryId) {
        return UUID.nameUUIDFromBytes(("billing.usage-recorded/" + entryId).getBytes(StandardCharsets.UTF_8))
                .toString();
    }

    static UsageEvent usageRecorded(UsageEntryRow row) {
        return UsageEvent.newBuilder()
                .setEventId(eventId(row.entryId()))
                .setTenant(row.tenant())
                .setOccurredAt(row.recordedAt())
                .setPayload(UsageRecorded.newBuilder()
                        .setEntryId(row.entryId())
                        .setTenant(row.tenant())
                        .setJobId(row.jobId())
                        .setAttempt(row.attempt())
                        .setAllocationId(row.allocationId())
                        .setNodeId(row.nodeId())
                        .setGpuModel(row.gpuModel())
                        .setGpuCount(row.gpuCount())
                        .setStartedAt(row.startedAt())
                        .setEndedAt(row.endedAt())
                        .setDurationMillis(row.durationMillis())
                        .setGpuMillis(row.gpuMillis())
                        .build())
                .build();
    }

    /** Connection loss, pool exhaustion, server shutdown, serialization failure: worth retrying. */
    static boolean isTransient(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLTransientException || t instanceof SQLRecoverableException
                    || t instanceof SQLNonTransientConnectionException) {
                return true;
            }
            if (t instanceof SQLException sql && sql.getSQLState() != null) {
                String cls = sql.getSQLState().length() >= 2 ? sql.getSQLState().substring(0, 2) : "";
                // 08 connection, 40 transaction rollback, 53 insufficient resources, 57 operator intervention
                if (cls.equals("08") || cls.equals("40") || cls.equals("53") || cls.equals("57")) {
                    return true;
                }
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }
}
