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
import io.gantry.runtime.kafka.DatabaseFailures;
import io.micronaut.transaction.TransactionOperations;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Clock;
import java.time.Instant;
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
    /** One database transaction per batch of records (see batchHandled). */
    private final TransactionOperations<Connection> tx;
    /** The writes of the batch being handled, in order. */
    private final List<Write> pending = new ArrayList<>();

    BillingHandler(Ledger ledger, BillingStore store, KnownModels models, Clock clock,
                   TransactionOperations<Connection> tx) {
        this.tx = tx;
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
        // each record is validated here (throwing sends it to the dead letter and writes nothing); its writes wait
        // for the end of the batch (batchHandled)
        Instant now = clock.instant();
        if (value instanceof AdmissionJobEvent job && job.getPayload() instanceof JobSubmitted submitted) {
            JobTerms terms = terms(job.getJobId(), submitted);
            pending.add(() -> {
                store.recordTerms(terms, submitted.getTenant(), now);
                return List.of();
            });
            return;
        }
        if (value instanceof CheckpointEvent cp && cp.getPayload() instanceof CheckpointCommitted c) {
            if (c.getAttempt() < 1) {
                throw new IllegalArgumentException("attempt must be >= 1, was " + c.getAttempt());
            }
            pending.add(() -> {
                store.recordCheckpoint(cp.getEventId(), cp.getJobId(), c.getAttempt(), c.getCommittedAt(), now);
                return List.of();
            });
            return;
        }
        if (value instanceof io.gantry.events.UtilisationEvent u
                && u.getPayload() instanceof io.gantry.events.RunUtilisationSampled w) {
            // a redelivered window writes nothing
            Utilisation.Window window = new Utilisation.Window(w.getTenant(), u.getJobId(), w.getAttempt(),
                    w.getAllocationId(), w.getWindowFrom(), w.getWindowTo(), w.getHeldGpuMilli(), w.getUsedGpuMilli(),
                    w.getSamples(), w.getIdleSince());
            pending.add(() -> {
                store.recordUtilisation(window);
                return List.of();
            });
            return;
        }
        if (value instanceof AllocationEvent granted && granted.getPayload() instanceof AllocationGranted g) {
            // what a running job holds, so budgets see it before the release; shares validated like a release
            List<LedgerEntry> nodes = Rating.rate(new Release(g.getTenant(), granted.getJobId(), g.getAttempt(),
                    g.getAllocationId(), g.getGrantedAt(), g.getGrantedAt(), placements(g.getPlacements()), null));
            pending.add(() -> {
                store.recordOpen(nodes);
                return List.of();
            });
            return;
        }
        if (!(value instanceof AllocationEvent event) || !(event.getPayload() instanceof AllocationReleased released)) {
            return;
        }
        List<LedgerEntry> entries = Rating.rate(release(event.getJobId(), released));
        pending.add(() -> {
            // the release's rows and the close of its open allocation commit together
            List<UsageEntryRow> rows = new ArrayList<>(entries.size());
            for (LedgerEntry entry : entries) {
                rows.add(ledger.record(entry, now));
            }
            store.closeOpen(released.getAllocationId());
            return rows;
        });
    }

    /**
     * The batch's writes, in the order their records came, in one database transaction (one commit per poll, not
     * per record), then one {@code UsageRecorded} per ledger row. The database's failure makes the processor deliver
     * the batch again (every write is idempotent); a write refused for its data is dead-lettered alone (the processor
     * writes the batch again one record at a time).
     */
    @Override
    public void batchHandled(Output out) {
        if (pending.isEmpty()) {
            return;
        }
        List<UsageEntryRow> stored;
        try {
            stored = tx.executeWrite(status -> {
                List<UsageEntryRow> rows = new ArrayList<>();
                for (Write w : pending) {
                    rows.addAll(w.run());
                }
                return rows;
            });
        } catch (Exception e) {
            throw DatabaseFailures.classify(e, "the billing database");
        } finally {
            pending.clear();
        }
        for (UsageEntryRow row : stored) {
            out.send(Topics.BILLING_USAGE_EVENTS, row.tenant(), usageRecorded(row));
        }
    }

    /** One record's writes, run inside the batch's transaction; answers the ledger rows it stands for. */
    private interface Write {
        List<UsageEntryRow> run();
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
}
