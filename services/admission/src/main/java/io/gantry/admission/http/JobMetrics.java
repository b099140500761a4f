package io.gantry.admission.http;

import io.gantry.admission.core.JobState;
import io.gantry.events.PreemptionReason;
import io.gantry.events.ReleaseReason;
import io.gantry.runtime.http.ClusterMeters;
import io.gantry.runtime.http.ClusterReporter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Value;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.TaskScheduler;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Named;
import io.micronaut.transaction.TransactionOperations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * Job-lifecycle metrics, read from the job read model: admission is the one service that sees every job event
 * (submission, queue, placement, recovery), with the submission time, so the waits and the reaction time of each core
 * are measured here from the events' own timestamps. Every label is bounded: tenants come from the tokens file,
 * states, reasons and causes are enum symbols (anything else is {@code OTHER}); job ids are never labels.
 *
 * <ul>
 *   <li>{@code gantry_jobs{tenant,state}}: jobs in each state (gauge)</li>
 *   <li>{@code gantry_job_admission_wait_seconds{tenant}}: submit to first dispatch (histogram)</li>
 *   <li>{@code gantry_job_placement_wait_seconds{tenant}}: submit to first allocation (histogram)</li>
 *   <li>{@code gantry_decision_latency_seconds{core}}: from an input event to the core's reaction: queue
 *       (JobSubmitted to JobQueued), placement (JobDispatched to AllocationGranted or PlacementDeferred), recovery
 *       (AllocationReleased after a node failure to JobRequeued or JobRecoveryAbandoned); it includes the Kafka hops
 *       (histogram)</li>
 *   <li>{@code gantry_job_requeues_total{cause}}: attempts queued again, by cause (PREEMPTED by the queue,
 *       NODE_FAILED by recovery, OTHER)</li>
 *   <li>{@code gantry_job_preemptions_total{reason}}: preempted attempts queued again, by preemption reason</li>
 *   <li>{@code gantry_allocation_releases_total{reason}}: allocations released, by release reason</li>
 * </ul>
 * Counters and histograms count what this process saw since it started (Prometheus handles the reset).
 *
 * <p>Every series here describes the whole cluster (the read model is one database every instance reads), so only
 * the instance that reports the cluster ({@link ClusterReporter}) exports them: with two instances a sum over both is
 * still the cluster's figure. The others export none of them; an instance that starts reporting starts its counters
 * and histograms from zero at that moment, and one that stops removes them (the reporting instance counts from then).
 */
@Context
public class JobMetrics {
    private static final Logger LOG = LoggerFactory.getLogger(JobMetrics.class);
    private static final Duration[] WAIT_BUCKETS = buckets(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900,
            1800, 3600, 4 * 3600, 12 * 3600, 24 * 3600);
    private static final Duration[] LATENCY_BUCKETS = buckets(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
            10, 30);
    static final List<String> CORES = List.of("queue", "placement", "recovery");
    static final List<String> REQUEUE_CAUSES = List.of("PREEMPTED", "NODE_FAILED", "OTHER");
    private static final int BATCH = 5000;
    /** How admission's WireMapping words JobQueued.requeuedBecause in the job's history. */
    private static final String REQUEUE_MARKER = "queued again:";

    private final TransactionOperations<Connection> tx;
    private final ClusterReporter reporter;
    private final ClusterMeters meters;
    private final MultiGauge jobs;
    private final Map<String, Timer> admissionWait = new ConcurrentHashMap<>();
    private final Map<String, Timer> placementWait = new ConcurrentHashMap<>();
    private final Map<String, Timer> decision = new ConcurrentHashMap<>();
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private volatile long lastSeq = -1;
    /** Whether the cluster's series are registered (only the refresh, one run at a time, changes it). */
    private boolean reporting;

    private final java.util.concurrent.ScheduledFuture<?> refreshing;

    public JobMetrics(TransactionOperations<Connection> tx, MeterRegistry registry, ClusterReporter reporter,
            @Named(TaskExecutors.SCHEDULED) TaskScheduler scheduler,
            @Value("${gantry.admission.metrics.refresh:5s}") java.time.Duration refresh) {
        this.tx = tx;
        this.reporter = reporter;
        this.meters = new ClusterMeters(registry);
        this.jobs = MultiGauge.builder("gantry.jobs").description("Jobs by tenant and state (the job read model)")
                .register(registry);
        // the bean schedules itself and stops at close: a task that looked the bean up after the context closed
        // would create it again
        this.refreshing = scheduler.scheduleWithFixedDelay(java.time.Duration.ofMillis(1000), refresh,
                this::refresh);
    }

    /** Registers the series that exist from the start, so a dashboard shows 0 rather than "no data". */
    private void startReporting() {
        CORES.forEach(this::decisionTimer);
        REQUEUE_CAUSES.forEach(c -> counter("gantry.job.requeues", "cause", c,
                "Attempts queued again, by cause"));
        for (PreemptionReason r : PreemptionReason.values()) {
            counter("gantry.job.preemptions", "reason", r.name(), "Preempted attempts queued again, by reason");
        }
        counter("gantry.job.preemptions", "reason", "OTHER", "Preempted attempts queued again, by reason");
        for (ReleaseReason r : ReleaseReason.values()) {
            counter("gantry.allocation.releases", "reason", r.name(), "Allocations released, by reason");
        }
        lastSeq = -1;
        reporting = true;
    }

    /** Another instance reports the cluster now: this one exports none of its series. */
    private void stopReporting() {
        LOG.info("job metrics: another instance reports the cluster's series now");
        reporting = false;
        jobs.register(List.of(), true);
        admissionWait.clear();
        placementWait.clear();
        decision.clear();
        counters.clear();
        lastSeq = -1;
    }

    void refresh() {
        if (!meters.follow(reporter, this::stopReporting)) {
            return;
        }
        if (!reporting) {
            LOG.info("job metrics: this instance reports the cluster's series");
            startReporting();
        }
        try {
            refreshJobCounts();
            observeNewEvents();
        } catch (RuntimeException e) {
            LOG.warn("job metrics not refreshed; the next run retries: {}", e.toString());
        }
    }

    private void refreshJobCounts() {
        Map<String, Map<String, Long>> counts = tx.executeRead(status -> {
            Map<String, Map<String, Long>> out = new TreeMap<>();
            try (PreparedStatement ps = status.getConnection().prepareStatement(
                    "SELECT tenant, state, count(*) FROM jobs GROUP BY tenant, state");
                 ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.computeIfAbsent(rs.getString(1), t -> new TreeMap<>()).put(rs.getString(2), rs.getLong(3));
                }
            }
            return out;
        });
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        counts.forEach((tenant, byState) -> {
            for (JobState s : JobState.values()) {
                rows.add(MultiGauge.Row.of(Tags.of("tenant", tenant, "state", s.name()),
                        byState.getOrDefault(s.name(), 0L)));
            }
            // the tenant's timers exist as soon as it has a job: its dashboards never show "no data"
            admissionWait(tenant);
            placementWait(tenant);
        });
        jobs.register(rows, true);
    }

    /** One event of interest with what its measure needs: the submission, and the event it answers. */
    private record Seen(long seq, String type, Instant at, Integer attempt, String detail, String tenant,
                        Instant submittedAt, boolean firstOfItsKind, Instant answers) {
    }

    private void observeNewEvents() {
        if (lastSeq < 0) {
            // counters start at this process's start: history before it was counted by the previous process
            lastSeq = tx.executeRead(status -> {
                try (PreparedStatement ps = status.getConnection().prepareStatement(
                        "SELECT coalesce(max(seq), 0) FROM job_events"); ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return rs.getLong(1);
                }
            });
            return;
        }
        List<Seen> seen = tx.executeRead(status -> read(status.getConnection(), lastSeq));
        for (Seen s : seen) {
            observe(s);
            lastSeq = Math.max(lastSeq, s.seq());
        }
    }

    private static List<Seen> read(Connection c, long after) throws SQLException {
        // the paired event is found by time, not arrival order: topics from different services interleave
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT e.seq, e.type, e.occurred_at, e.attempt, e.detail, j.tenant, j.submitted_at,
                  NOT EXISTS (SELECT 1 FROM job_events p WHERE p.job_id = e.job_id AND p.type = e.type
                              AND p.attempt IS NOT DISTINCT FROM e.attempt AND p.seq < e.seq),
                  CASE e.type
                    WHEN 'JobQueued' THEN (SELECT min(p.occurred_at) FROM job_events p
                        WHERE p.job_id = e.job_id AND p.type = 'JobSubmitted')
                    WHEN 'AllocationGranted' THEN (SELECT max(p.occurred_at) FROM job_events p
                        WHERE p.job_id = e.job_id AND p.type = 'JobDispatched' AND p.attempt = e.attempt
                        AND p.occurred_at <= e.occurred_at)
                    WHEN 'PlacementDeferred' THEN (SELECT max(p.occurred_at) FROM job_events p
                        WHERE p.job_id = e.job_id AND p.type = 'JobDispatched' AND p.attempt = e.attempt
                        AND p.occurred_at <= e.occurred_at)
                    WHEN 'JobRequeued' THEN (SELECT max(p.occurred_at) FROM job_events p
                        WHERE p.job_id = e.job_id AND p.type = 'AllocationReleased' AND p.attempt = e.attempt
                        AND p.occurred_at <= e.occurred_at)
                    WHEN 'JobRecoveryAbandoned' THEN (SELECT max(p.occurred_at) FROM job_events p
                        WHERE p.job_id = e.job_id AND p.type = 'AllocationReleased' AND p.attempt = e.attempt
                        AND p.occurred_at <= e.occurred_at)
                  END
                FROM job_events e JOIN jobs j ON j.job_id = e.job_id
                WHERE e.seq > ? AND e.type IN ('JobQueued', 'JobDispatched', 'AllocationGranted', 'PlacementDeferred',
                  'AllocationReleased', 'JobRequeued', 'JobRecoveryAbandoned')
                ORDER BY e.seq LIMIT ?""")) {
            ps.setLong(1, after);
            ps.setInt(2, BATCH);
            List<Seen> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    int attempt = rs.getInt(4);
                    Integer maybeAttempt = rs.wasNull() ? null : attempt;
                    out.add(new Seen(rs.getLong(1), rs.getString(2), instant(rs.getTimestamp(3)), maybeAttempt,
                            rs.getString(5), rs.getString(6), instant(rs.getTimestamp(7)), rs.getBoolean(8),
                            instant(rs.getTimestamp(9))));
                }
            }
            return out;
        }
    }

    private void observe(Seen s) {
        boolean firstAttempt = s.attempt() != null && s.attempt() == 1;
        switch (s.type()) {
            case "JobDispatched" -> {
                if (firstAttempt && s.firstOfItsKind()) {
                    record(admissionWait(s.tenant()), s.submittedAt(), s.at());
                }
            }
            case "AllocationGranted" -> {
                if (firstAttempt && s.firstOfItsKind()) {
                    record(placementWait(s.tenant()), s.submittedAt(), s.at());
                }
                record(decisionTimer("placement"), s.answers(), s.at());
            }
            case "PlacementDeferred" -> record(decisionTimer("placement"), s.answers(), s.at());
            case "JobRequeued", "JobRecoveryAbandoned" -> record(decisionTimer("recovery"), s.answers(), s.at());
            case "JobQueued" -> {
                if (firstAttempt && s.firstOfItsKind()) {
                    record(decisionTimer("queue"), s.answers(), s.at());
                } else if (s.attempt() != null && s.attempt() > 1 && s.firstOfItsKind()) {
                    requeued(s.detail());
                }
            }
            case "AllocationReleased" -> {
                String reason = reasonOf(s.detail());
                counter("gantry.allocation.releases", "reason", known(reason, ReleaseReason.values()),
                        "Allocations released, by reason").increment();
            }
            default -> { }
        }
    }

    private void requeued(String detail) {
        String cause = requeueCause(detail);
        counter("gantry.job.requeues", "cause", cause, "Attempts queued again, by cause").increment();
        if (cause.equals("PREEMPTED")) {
            counter("gantry.job.preemptions", "reason", preemptionReason(detail),
                    "Preempted attempts queued again, by reason").increment();
        }
    }

    /**
     * A later attempt's JobQueued detail reads "N GPUs; queued again: WHY" when the queue requeued it (WHY is a
     * preemption text), and just "N GPUs" when recovery did, which it does only for runs a node failure ended.
     */
    static String requeueCause(String detail) {
        if (detail == null || !detail.contains(REQUEUE_MARKER)) {
            return "NODE_FAILED";
        }
        return why(detail).toLowerCase(Locale.ROOT).startsWith("preempted") ? "PREEMPTED" : "OTHER";
    }

    /** A preemption text reads "preempted (REASON) for job ...: message"; a reason not in the enum is OTHER. */
    static String preemptionReason(String detail) {
        String why = why(detail);
        int open = why.indexOf('(');
        int close = why.indexOf(')');
        String reason = open >= 0 && close > open ? why.substring(open + 1, close) : "OTHER";
        return known(reason, PreemptionReason.values());
    }

    private static String why(String detail) {
        int at = detail == null ? -1 : detail.indexOf(REQUEUE_MARKER);
        return at < 0 ? "" : detail.substring(at + REQUEUE_MARKER.length()).trim();
    }

    /** "REASON: message" or "REASON" as the read model stores a reason. */
    static String reasonOf(String detail) {
        if (detail == null) {
            return "OTHER";
        }
        int colon = detail.indexOf(':');
        return (colon < 0 ? detail : detail.substring(0, colon)).trim();
    }

    static String known(String value, Enum<?>[] symbols) {
        Set<String> names = Arrays.stream(symbols).map(Enum::name).collect(Collectors.toCollection(TreeSet::new));
        return names.contains(value) ? value : "OTHER";
    }

    private static void record(Timer timer, Instant from, Instant to) {
        if (from != null && to != null && !to.isBefore(from)) {
            timer.record(Duration.between(from, to));
        }
    }

    private Timer admissionWait(String tenant) {
        return admissionWait.computeIfAbsent(tenant, t -> meters.add(Timer.builder("gantry.job.admission.wait")
                .description("From submission to the first dispatch by the queue (quota and fair-share wait)")
                .tag("tenant", t).serviceLevelObjectives(WAIT_BUCKETS).register(meters.registry())));
    }

    private Timer placementWait(String tenant) {
        return placementWait.computeIfAbsent(tenant, t -> meters.add(Timer.builder("gantry.job.placement.wait")
                .description("From submission to the first allocation of GPUs by placement")
                .tag("tenant", t).serviceLevelObjectives(WAIT_BUCKETS).register(meters.registry())));
    }

    private Timer decisionTimer(String core) {
        return decision.computeIfAbsent(core, c -> meters.add(Timer.builder("gantry.decision.latency")
                .description("From an input event to the core's decision on it, Kafka hops included")
                .tag("core", c).serviceLevelObjectives(LATENCY_BUCKETS).register(meters.registry())));
    }

    private Counter counter(String name, String tag, String value, String description) {
        return counters.computeIfAbsent(name + "|" + value, k -> meters.add(Counter.builder(name)
                .description(description).tag(tag, value).register(meters.registry())));
    }

    private static Instant instant(Timestamp t) {
        return t == null ? null : t.toInstant();
    }

    private static Duration[] buckets(double... seconds) {
        return Arrays.stream(seconds).mapToObj(s -> Duration.ofNanos((long) (s * 1e9))).toArray(Duration[]::new);
    }

    @PreDestroy
    void stop() {
        refreshing.cancel(false);
    }
}
