package io.gantry.queue.kafka;

import io.gantry.queue.config.LiveConfig;
import io.gantry.queue.config.QueueConfig;
import io.gantry.events.QueueJobEvent;
import io.gantry.events.QueuePreemptionEvent;
import io.gantry.events.QueueReservationEvent;
import io.gantry.queue.core.FairShareConfig;
import io.gantry.queue.core.Input;
import io.gantry.queue.core.QueueCore;
import io.gantry.queue.core.QueueFact;
import io.gantry.queue.core.Shards;
import io.gantry.events.QueueConfigEvent;
import io.gantry.runtime.kafka.EventHandler;
import io.gantry.runtime.kafka.Output;
import io.gantry.runtime.kafka.SnapshotRecords;
import io.gantry.runtime.kafka.SnapshotWriter;
import io.gantry.events.QueueMemoryPart;
import io.gantry.schemas.Topic;
import io.gantry.schemas.Topics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * Feeds the core: restores it from {@code queue.job-events}, turns each input record into an {@link Input} and
 * publishes the facts {@link QueueCore#apply} returns (the core has already replayed them).
 */
public final class QueueHandler implements EventHandler {
    private static final Logger LOG = LoggerFactory.getLogger(QueueHandler.class);

    private final QueueCore core;
    private final Clock clock;
    private final QueueConfig settings;
    private long restoredFacts;
    private final java.time.Duration parkedRecheck;
    private Instant nextParkedRecheck;
    private Instant nextConfigPoll;
    private LiveConfig.Applied toPublish;
    private volatile LiveConfig.Applied current;
    private volatile LiveConfig.Rejected rejected;
    /** SHA-256 of the file text last looked at, applied or not, so a bad edit is reported once. */
    private String fileSha;

    QueueHandler(LiveConfig.Startup startup, QueueConfig settings, Clock clock,
                 io.gantry.queue.core.DispatchPolicy policy) {
        this(startup, settings, clock, policy, 0, 1);
    }

    /**
     * The handler of shard {@code shard} of {@code shards} (a queue split by cohort tree): it takes the jobs of the
     * tenants {@link Shards} gives it. Shard 0 decides the configuration (file, admin API) and publishes it; the
     * others start on the newest published one and follow what shard 0 publishes.
     */
    QueueHandler(LiveConfig.Startup startup, QueueConfig settings, Clock clock,
                 io.gantry.queue.core.DispatchPolicy policy, int shard, int shards) {
        boolean follower = shard != 0;
        FairShareConfig initial = follower && startup.fallbackConfig() != null ? startup.fallbackConfig()
                : startup.config();
        this.core = new QueueCore(initial, policy);
        this.clock = clock;
        this.settings = settings;
        this.shard = shard;
        this.shards = Shards.of(initial, shards);
        this.parkedRecheck = settings.parkedRecheckInterval();
        this.nextParkedRecheck = clock.instant().plus(parkedRecheck);
        this.nextConfigPoll = clock.instant().plus(settings.configPollInterval());
        this.toPublish = follower ? null : startup.publish();
        this.current = follower && startup.fallback() != null ? startup.fallback() : startup.current();
        this.rejected = follower ? null : startup.rejected();
        this.fileSha = startup.fileSha();
        this.fallback = follower ? null : startup.fallback();
        this.fallbackConfig = follower ? null : startup.fallbackConfig();
    }

    /** This handler's shard (0 unless the queue is split by cohort tree). */
    private final int shard;
    /** Who owns which tenant's jobs, under the live configuration (read by HTTP threads too). */
    private volatile Shards shards;

    /** Whether this handler takes {@code tenant}'s jobs. */
    private boolean mine(String tenant) {
        return !shards.split() || shards.ofTenant(tenant) == shard;
    }

    /** Whether this handler decides the configuration: not split, or shard 0. */
    private boolean decidesConfig() {
        return shard == 0;
    }

    /** Who owns which tenant's jobs under the live configuration. */
    public Shards shards() {
        return shards;
    }

    /**
     * Whether a queue split into shards would refuse {@code next}: its pins cannot hold, or it moves a tenant to
     * another shard.
     */
    private List<String> moves(FairShareConfig next) {
        return Shards.refusals(shards, Shards.of(next, shards.count()));
    }

    /**
     * What going from {@code before} to {@code next} strands: this shard's jobs left without a queue, and (split)
     * queues other shards own that it removes, whose jobs this shard cannot count.
     */
    private List<String> stranded(FairShareConfig before, FairShareConfig next) {
        List<String> out = new java.util.ArrayList<>(core.stranded(before, next));
        out.addAll(Shards.of(before, shards.count()).removedElsewhere(before, next, shard));
        return out;
    }

    @Override
    public String snapshotVariant() {
        return shards.split() ? "shards " + shards.digest() : "";
    }

    /** The configuration live before a file that changed while the service was down; null otherwise. */
    private LiveConfig.Applied fallback;
    private FairShareConfig fallbackConfig;

    /** The configuration in force (null: implicit and never published) and the last refused one. */
    public record ConfigStatus(LiveConfig.Applied current, LiveConfig.Rejected rejected) {
    }

    public ConfigStatus configStatus() {
        return new ConfigStatus(current, rejected);
    }

    /**
     * Validates and applies a configuration from the admin API, publishes it and the decisions it causes. Throws
     * {@link io.gantry.queue.core.ConfigException} (nothing changed) when it is invalid.
     */
    public LiveConfig.Applied applyAdmin(String yaml, String by, boolean force, Output out) {
        Instant now = clock.instant();
        FairShareConfig next;
        try {
            next = QueueConfig.parse(yaml, "body");
        } catch (io.gantry.queue.core.ConfigException e) {
            rejected = new LiveConfig.Rejected(LiveConfig.ADMIN, by, e.problems(), now);
            throw e;
        }
        List<String> moves = moves(next);
        if (!moves.isEmpty()) {
            // not even with force: the jobs of a tenant that moved would be left with an owner that no longer hears
            // about them
            List<String> problems = moves.stream().map(p -> "body: " + p).toList();
            rejected = new LiveConfig.Rejected(LiveConfig.ADMIN, by, problems, now);
            throw new io.gantry.queue.core.ConfigException(problems);
        }
        List<String> stranded = stranded(core.config(), next);
        if (!stranded.isEmpty()) {
            if (!force) {
                List<String> problems = stranded.stream().map(p -> "body: " + p).toList();
                rejected = new LiveConfig.Rejected(LiveConfig.ADMIN, by, problems, now);
                throw new io.gantry.queue.core.ConfigException(problems);
            }
            LOG.warn("queue configuration applied with force by {}, leaving jobs without their queue or priority class: {}",
                    by, stranded);
        }
        return apply(next, LiveConfig.ADMIN, by, yaml, now, out);
    }

    private LiveConfig.Applied apply(FairShareConfig next, String source, String by, String yaml, Instant now,
                                     Output out) {
        LiveConfig.Applied a = LiveConfig.Applied.of(current == null ? 1 : current.version() + 1, source, by, yaml,
                now, next);
        out.send(Topics.QUEUE_CONFIG_EVENTS, "queue-config", a.toEvent());
        publish(core.reconfigure(next, now), now, out);
        current = a;
        shards = Shards.of(next, shards.count());
        LOG.info("queue configuration version {} applied (source {}, by {})", a.version(), source, by);
        return a;
    }

    /** The file changed: applied when valid, else refused (logged and shown) and the live one kept. */
    private void pollFile(Instant now, Output out) {
        String text;
        try {
            text = settings.configFileText();
        } catch (io.gantry.queue.core.ConfigException e) {
            if (fileSha != null) {
                fileSha = null;
                rejected = new LiveConfig.Rejected(LiveConfig.FILE, LiveConfig.FILE, e.problems(), now);
                LOG.error("queue configuration file unreadable, keeping the live configuration: {}", e.problems());
            }
            return;
        }
        String sha = LiveConfig.sha256(text);
        if (sha.equals(fileSha)) {
            return;
        }
        fileSha = sha;
        try {
            FairShareConfig next = QueueConfig.parse(text, settings.getConfigFile());
            List<String> stranded = new java.util.ArrayList<>(moves(next));
            stranded.addAll(stranded(core.config(), next));
            if (!stranded.isEmpty()) {
                // a file cannot say "force": the admin API can, after a look at the jobs named here
                throw new io.gantry.queue.core.ConfigException(stranded.stream()
                        .map(p -> settings.getConfigFile() + ": " + p).toList());
            }
            apply(next, LiveConfig.FILE, LiveConfig.FILE, text, now, out);
        } catch (io.gantry.queue.core.ConfigException e) {
            rejected = new LiveConfig.Rejected(LiveConfig.FILE, LiveConfig.FILE, e.problems(), now);
            LOG.error("queue configuration file rejected, keeping version {}: {}",
                    current == null ? "implicit" : current.version(), e.problems());
        }
    }

    public QueueCore core() {
        return core;
    }

    @Override
    public void restore(Topic<?> topic, String key, Object value) {
        if (!ofThisShard(key, value)) {
            return;
        }
        restoreOne(topic, key, value);
        keep(topic, key, value);
    }

    /**
     * Whether a record read back concerns this shard's tenants (always, unless split). A record that cannot be read
     * goes on to where it is skipped or dead-lettered as before.
     */
    private boolean ofThisShard(String key, Object value) {
        if (!shards.split()) {
            return true;
        }
        String tenant;
        try {
            tenant = value instanceof QueueJobEvent e ? WireMapping.fromEnvelope(e).tenant()
                    : value instanceof QueuePreemptionEvent e ? WireMapping.fromPreemptionEnvelope(e).tenant()
                    : value instanceof io.gantry.events.IdleEvent e ? WireMapping.fromIdleEnvelope(e).tenant()
                    : value instanceof QueueReservationEvent e ? WireMapping.fromReservationEnvelope(e).tenant()
                    : value instanceof QueueMemoryPart ? null
                    : tenantOf(WireMapping.toInput(key, value));
        } catch (RuntimeException unreadable) {
            return decidesConfig();
        }
        return tenant == null || mine(tenant);
    }

    /** The tenant an input concerns; null for what concerns every shard (capacity, ticks). */
    private static String tenantOf(Input input) {
        // a release frees capacity every shard may dispatch into; the shard without the job ignores the rest
        return input == null || input instanceof Input.Released ? null : input.tenant();
    }

    private void restoreOne(Topic<?> topic, String key, Object value) {
        if (topic.equals(MEMORY)) {
            core.restoreMemory(WireMapping.fromMemoryPart((QueueMemoryPart) value));
        } else if (topic.equals(Topics.QUEUE_JOB_EVENTS)) {
            QueueJobEvent e = (QueueJobEvent) value;
            QueueFact fact = WireMapping.fromEnvelope(e);
            core.replay(fact, e.getOccurredAt());
            remember(fact, e.getPayload() instanceof io.gantry.events.JobQueued q ? q.getSpec() : null);
            restoredFacts++;
        } else if (topic.equals(Topics.QUEUE_PREEMPTION_EVENTS)) {
            // facts name their attempt, so reading this topic before or after the lifecycle rebuilds the same state
            QueuePreemptionEvent e = (QueuePreemptionEvent) value;
            core.replay(WireMapping.fromPreemptionEnvelope(e), e.getOccurredAt());
            restoredFacts++;
        } else if (topic.equals(Topics.QUEUE_IDLE_EVENTS)) {
            io.gantry.events.IdleEvent e = (io.gantry.events.IdleEvent) value;
            core.replay(WireMapping.fromIdleEnvelope(e), e.getOccurredAt());
            restoredFacts++;
        } else if (topic.equals(Topics.QUEUE_RESERVATION_EVENTS)) {
            QueueReservationEvent e = (QueueReservationEvent) value;
            core.replay(WireMapping.fromReservationEnvelope(e), e.getOccurredAt());
            restoredFacts++;
        } else if (topic.equals(Topics.ADMISSION_CHECKPOINT_EVENTS)) {
            // in any order with the queue's own topics: a checkpoint of a job that has ended is dropped either way
            Input input = WireMapping.toInput(key, value);
            if (input instanceof Input.CheckpointCommitted c) {
                core.checkpointed(c);
            }
        } else if (topic.equals(Topics.ADMISSION_SUSPENSION_EVENTS)) {
            // the newest request per job stands, whatever the order with the queue's own topics
            if (WireMapping.toInput(key, value) instanceof Input.SuspensionRequested r) {
                core.suspension(r);
            }
        } else if (topic.equals(Topics.BILLING_BUDGET_EVENTS)) {
            // the newest state of each budget; the Restored cycle then holds or releases jobs by it. A malformed
            // record went to the dead letter when it was input; here it is skipped, not a reason to stop the start
            try {
                if (WireMapping.toInput(key, value) instanceof Input.BudgetChanged b) {
                    core.budgetChanged(b);
                }
            } catch (RuntimeException e) {
                LOG.warn("skipping a budget record that cannot be read ({}): {}", key, e.toString());
            }
        }
    }

    @Override
    public void restored(Output out) {
        LOG.info("queue state rebuilt from {} facts", restoredFacts);
        Instant now = clock.instant();
        if (toPublish != null && fallbackConfig != null) {
            List<String> stranded = stranded(fallbackConfig, core.config());
            if (!stranded.isEmpty()) {
                // the file changed while the service was down and would strand jobs: keep what was live
                rejected = new LiveConfig.Rejected(LiveConfig.FILE, LiveConfig.FILE, stranded.stream()
                        .map(p -> settings.getConfigFile() + ": " + p).toList(), now);
                LOG.error("queue configuration file rejected, keeping version {}: {}", fallback.version(),
                        rejected.problems());
                publish(core.reconfigure(fallbackConfig, now), now, out);
                current = fallback;
                shards = Shards.of(fallbackConfig, shards.count());
                toPublish = null;
            }
        }
        fallback = null;
        fallbackConfig = null;
        if (toPublish != null) {
            out.send(Topics.QUEUE_CONFIG_EVENTS, "queue-config", toPublish.toEvent());
            LOG.info("queue configuration version {} applied (source {})", toPublish.version(), toPublish.source());
            toPublish = null;
        }
        publish(core.apply(new Input.Restored(), now), now, out);
    }

    @Override
    public void handle(Topic<?> topic, String key, Object value, Output out) {
        if (value instanceof QueueConfigEvent e) {
            followConfig(e, out);
            return;
        }
        Input input;
        try {
            input = WireMapping.toInput(key, value);
        } catch (RuntimeException malformed) {
            if (shards.split() && !decidesConfig()) {
                return; // every shard finds it malformed: shard 0 sends it to the dead letter, once
            }
            throw malformed;
        }
        String tenant = tenantOf(input);
        if (tenant != null && !mine(tenant)) {
            return; // another shard's tenant
        }
        if (input instanceof Input.Submitted s
                && ((io.gantry.events.AdmissionJobEvent) value).getPayload() instanceof io.gantry.events.JobSubmitted j) {
            // a resubmission of a live or ended job changes nothing: keep the spec the job was queued with
            submitted.putIfAbsent(s.jobId(), j.getSpec());
        }
        if (input != null) {
            Instant now = clock.instant();
            publish(core.apply(input, now), now, out);
        }
        if (topic.equals(Topics.ADMISSION_CHECKPOINT_EVENTS) || topic.equals(Topics.ADMISSION_SUSPENSION_EVENTS)
                || topic.equals(Topics.BILLING_BUDGET_EVENTS)) {
            keep(topic, key, value); // restore topics too
        }
    }

    /**
     * A shard other than 0 applies each configuration shard 0 published after the one it runs on (older ones, read
     * again after a restart, change nothing).
     */
    private void followConfig(QueueConfigEvent e, Output out) {
        LiveConfig.Applied a = LiveConfig.Applied.of(e);
        if (decidesConfig() || a == null || current != null && a.version() <= current.version()) {
            return;
        }
        FairShareConfig next = LiveConfig.IMPLICIT.equals(a.source()) ? settings.implicitConfig()
                : QueueConfig.parse(a.yaml(), "version " + a.version());
        Instant now = clock.instant();
        publish(core.reconfigure(next, now), now, out);
        current = a;
        shards = Shards.of(next, shards.count());
        LOG.info("queue shard {} follows configuration version {}", shard, a.version());
    }

    @Override
    public void tick(Instant wallNow, Output out) {
        Instant now = clock.instant();
        if (decidesConfig() && settings.hasConfigFile() && !now.isBefore(nextConfigPoll)) {
            nextConfigPoll = now.plus(settings.configPollInterval());
            pollFile(now, out);
        }
        boolean recheck = !now.isBefore(nextParkedRecheck);
        if (recheck) {
            nextParkedRecheck = now.plus(parkedRecheck);
        }
        publish(core.apply(new Input.Tick(recheck), now), now, out);
    }

    /**
     * Specs as submitted, of live jobs: what {@code JobQueued}, {@code JobDispatched} and reservations forward to
     * placement with the queue's decisions (the core keeps only what it decides on). Restored from {@code JobQueued}.
     */
    private final java.util.Map<String, io.gantry.events.JobSpec> submitted = new java.util.HashMap<>();

    /** Keeps a queued job's submitted spec; forgets it when the job ends. */
    private void remember(QueueFact fact, io.gantry.events.JobSpec spec) {
        if (spec != null) {
            submitted.put(fact.jobId(), spec);
        } else if (fact instanceof QueueFact.JobSucceeded || fact instanceof QueueFact.JobFailed
                || fact instanceof QueueFact.JobCancelled) {
            submitted.remove(fact.jobId());
        }
    }

    /** occurredAt = the {@code now} the core decided at, so a replay accrues usage exactly as the live core did. */
    private void publish(List<QueueFact> facts, Instant now, Output out) {
        for (QueueFact fact : facts) {
            if (fact instanceof QueueFact.JobPreempted p) {
                QueuePreemptionEvent e = WireMapping.toPreemptionEnvelope(p, UUID.randomUUID().toString(), now);
                out.send(Topics.QUEUE_PREEMPTION_EVENTS, p.jobId(), e);
                keep(Topics.QUEUE_PREEMPTION_EVENTS, p.jobId(), e);
            } else if (fact instanceof QueueFact.JobIdleWarned || fact instanceof QueueFact.JobIdleCleared) {
                io.gantry.events.IdleEvent e = WireMapping.toIdleEnvelope(fact, UUID.randomUUID().toString(), now);
                out.send(Topics.QUEUE_IDLE_EVENTS, fact.jobId(), e);
                keep(Topics.QUEUE_IDLE_EVENTS, fact.jobId(), e);
            } else if (fact instanceof QueueFact.CapacityReservationRequested
                    || fact instanceof QueueFact.CapacityReservationCancelled) {
                out.send(Topics.QUEUE_RESERVATION_EVENTS, fact.jobId(), WireMapping.toReservationEnvelope(fact,
                        UUID.randomUUID().toString(), now, submitted.get(fact.jobId())));
            } else {
                QueueJobEvent e = WireMapping.toEnvelope(fact, UUID.randomUUID().toString(), now,
                        submitted.get(fact.jobId()));
                out.send(Topics.QUEUE_JOB_EVENTS, fact.jobId(), e);
                remember(fact, null);
                keep(Topics.QUEUE_JOB_EVENTS, fact.jobId(), e);
            }
        }
    }

    // ---------------------------------------------------------------- snapshots

    private static final Topic<QueueMemoryPart> MEMORY = Topics.queueSnapshotMemory();
    /** Ended jobs per memory part: a part stays well inside a snapshot part (about 60 bytes each). */
    static final int ENDED_PER_PART = 4_000;
    /**
     * The records of the restore topics the state is made of besides the core's memory, for snapshots: every fact
     * of each live job (lifecycle, preemptions, idle warnings); per job not ended its checkpoints (the newest per
     * attempt) and newest suspend/resume request; per budget scope the newest announcement. A job that ends for good
     * leaves them all behind: its outcome is in the memory.
     */
    private final SnapshotRecords kept = new SnapshotRecords();

    @Override
    public boolean snapshot(SnapshotWriter out) {
        List<QueueMemoryPart> parts = WireMapping.toMemoryParts(core.memory(), ENDED_PER_PART);
        for (int i = 0; i < parts.size(); i++) {
            out.add(MEMORY, "memory-" + i, parts.get(i));
        }
        kept.writeTo(out);
        return true;
    }

    /** Keeps (or drops) what a record of a restore topic contributes to the state, once the core has taken it. */
    private void keep(Topic<?> topic, String key, Object value) {
        if (value instanceof QueueJobEvent e) {
            keepFact(e.getJobId(), Topics.QUEUE_JOB_EVENTS, e);
        } else if (value instanceof QueuePreemptionEvent e) {
            keepFact(e.getJobId(), Topics.QUEUE_PREEMPTION_EVENTS, e);
        } else if (value instanceof io.gantry.events.IdleEvent e) {
            keepFact(e.getJobId(), Topics.QUEUE_IDLE_EVENTS, e);
        } else if (value instanceof io.gantry.events.CheckpointEvent e && !core.ended(e.getJobId())
                && e.getPayload() instanceof io.gantry.events.CheckpointCommitted c) {
            // the newest per attempt is what the core keeps
            String slot = "checkpoint/" + e.getJobId();
            boolean newer = kept.values(slot).stream()
                    .map(v -> (io.gantry.events.CheckpointCommitted) ((io.gantry.events.CheckpointEvent) v).getPayload())
                    .noneMatch(o -> o.getAttempt() == c.getAttempt() && o.getStep() > c.getStep());
            if (newer) {
                kept.removeIf(slot, v -> ((io.gantry.events.CheckpointCommitted)
                        ((io.gantry.events.CheckpointEvent) v).getPayload()).getAttempt() == c.getAttempt());
                kept.append(slot, Topics.ADMISSION_CHECKPOINT_EVENTS, key, e);
            }
        } else if (value instanceof io.gantry.events.SuspensionEvent e && !core.ended(e.getJobId())) {
            kept.put("suspension/" + e.getJobId(), Topics.ADMISSION_SUSPENSION_EVENTS, key, e);
        } else if (value instanceof io.gantry.events.BudgetEvent e) {
            Input input;
            try {
                input = WireMapping.toInput(key, value);
            } catch (RuntimeException unreadable) {
                return; // skipped by the core too
            }
            if (input instanceof Input.BudgetChanged b) {
                // the newest announcement of a scope stands; one about an older month is ignored
                String slot = "budget/" + b.tenant() + "/" + (b.queue() == null ? "" : b.queue());
                boolean older = kept.values(slot).stream()
                        .map(v -> (Input.BudgetChanged) WireMapping.toInput(key, v))
                        .anyMatch(k -> b.periodFrom().isBefore(k.periodFrom()));
                if (!older) {
                    kept.put(slot, Topics.BILLING_BUDGET_EVENTS, key, e);
                }
            }
        }
    }

    /** A fact of the job's: kept while the job is live; everything of it dropped once it ended for good. */
    private <V> void keepFact(String jobId, Topic<V> topic, V value) {
        if (core.live(jobId)) {
            kept.append("job/" + jobId, topic, jobId, value);
        } else if (core.ended(jobId)) {
            kept.remove("job/" + jobId);
            kept.remove("checkpoint/" + jobId);
            kept.remove("suspension/" + jobId);
        }
    }
}
