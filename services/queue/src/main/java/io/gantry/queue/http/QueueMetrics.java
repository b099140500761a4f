package io.gantry.queue.http;

import io.gantry.queue.kafka.QueueProcessor;
import io.gantry.queue.core.FairShareConfig;
import io.gantry.queue.core.PendingEntry;
import io.gantry.queue.core.QueueView;
import io.gantry.queue.core.WaitReason;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Value;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.TaskScheduler;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Named;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The queue's state as Prometheus gauges, refreshed from the live core every {@code gantry.queue.metrics.refresh}
 * (one read on the loop thread). Labels are bounded by the configuration: queue, its tenant, GPU flavour, and the
 * wait reason (an enum, or {@code NONE} while the queue has not said why yet).
 *
 * <ul>
 *   <li>{@code gantry_queue_pending_jobs{queue,tenant,reason}}</li>
 *   <li>{@code gantry_queue_dispatched_jobs{queue,tenant}}</li>
 *   <li>{@code gantry_queue_oldest_pending_seconds{queue,tenant}}: how long its oldest queued job has waited</li>
 *   <li>{@code gantry_queue_quota_{nominal,used,borrowed,lent}_gpus{queue,tenant,flavour}}</li>
 *   <li>{@code gantry_queue_fair_share_ratio{queue,tenant}} and {@code gantry_queue_weighted_share_ratio}: the share
 *       a queue is entitled to under contention vs. its dominant share divided by its weight</li>
 * </ul>
 */
@Context
public class QueueMetrics {
    private static final Logger LOG = LoggerFactory.getLogger(QueueMetrics.class);
    static final String NO_REASON = "NONE";

    private final QueueProcessor queue;
    private final MultiGauge pending;
    private final MultiGauge dispatched;
    private final MultiGauge oldest;
    private final MultiGauge nominal;
    private final MultiGauge used;
    private final MultiGauge borrowed;
    private final MultiGauge lent;
    private final MultiGauge fairShare;
    private final MultiGauge weightedShare;

    private final java.util.concurrent.ScheduledFuture<?> refreshing;

    public QueueMetrics(QueueProcessor queue, MeterRegistry registry,
            @Named(TaskExecutors.SCHEDULED) TaskScheduler scheduler,
            @Value("${gantry.queue.metrics.refresh:5s}") java.time.Duration refresh) {
        this.queue = queue;
        this.pending = gauge(registry, "gantry.queue.pending.jobs", null, "Queued jobs by queue and wait reason");
        this.dispatched = gauge(registry, "gantry.queue.dispatched.jobs", null,
                "Jobs dispatched to placement and not finished");
        this.oldest = gauge(registry, "gantry.queue.oldest.pending", "seconds",
                "How long the queue's oldest queued job has waited since it was submitted");
        this.nominal = gauge(registry, "gantry.queue.quota.nominal", "gpus", "Nominal quota per GPU flavour");
        this.used = gauge(registry, "gantry.queue.quota.used", "gpus", "GPUs reserved by dispatched jobs");
        this.borrowed = gauge(registry, "gantry.queue.quota.borrowed", "gpus", "Use above the nominal quota");
        this.lent = gauge(registry, "gantry.queue.quota.lent", "gpus",
                "The part of this queue's idle nominal quota that others use");
        this.fairShare = gauge(registry, "gantry.queue.fair.share", "ratio",
                "Weight over the sum of weights in the queue's cohort tree: its entitlement under contention");
        this.weightedShare = gauge(registry, "gantry.queue.weighted.share", "ratio",
                "Dominant share (allocation plus decayed usage) divided by weight: lower goes first");
        // the bean schedules itself and stops at close: a task that looked the bean up after the context closed
        // would create it again, and with it a second event loop
        this.refreshing = scheduler.scheduleWithFixedDelay(java.time.Duration.ofMillis(1000), refresh,
                this::refresh);
    }

    private static MultiGauge gauge(MeterRegistry registry, String name, String unit, String description) {
        MultiGauge.Builder b = MultiGauge.builder(name).description(description);
        if (unit != null) {
            b.baseUnit(unit);
        }
        return b.register(registry);
    }

    private record QueueSample(QueueView view, List<PendingEntry> pending) {
    }

    void refresh() {
        if (!queue.split() && !queue.isReady()) {
            if (queue.ownership().role() == io.gantry.runtime.kafka.Ownership.Role.STANDBY) {
                // a standby (maybe the owner until a moment ago) reports no queue: the owner's gauges are the figures
                publish(List.of(), queue.now());
            }
            return;
        }
        try {
            Instant now = queue.now();
            List<QueueSample> samples = new ArrayList<>();
            // split by cohort tree: each shard owned here reports its tenants' queues (the other instances theirs)
            for (int shard : queue.ownedShards()) {
                samples.addAll(queue.readShard(shard, (h, core) -> core.queues(now).stream()
                        .filter(v -> !queue.split() || h.shards().ofQueue(v.name()) == shard)
                        .map(v -> new QueueSample(v, core.pending(v.name()))).toList()));
            }
            publish(samples, now);
        } catch (Exception e) {
            LOG.warn("queue metrics not refreshed; the next run retries: {}", e.toString());
        }
    }

    private void publish(List<QueueSample> samples, Instant now) {
        List<MultiGauge.Row<?>> pendingRows = new ArrayList<>();
        List<MultiGauge.Row<?>> dispatchedRows = new ArrayList<>();
        List<MultiGauge.Row<?>> oldestRows = new ArrayList<>();
        List<MultiGauge.Row<?>> nominalRows = new ArrayList<>();
        List<MultiGauge.Row<?>> usedRows = new ArrayList<>();
        List<MultiGauge.Row<?>> borrowedRows = new ArrayList<>();
        List<MultiGauge.Row<?>> lentRows = new ArrayList<>();
        List<MultiGauge.Row<?>> fairRows = new ArrayList<>();
        List<MultiGauge.Row<?>> weightedRows = new ArrayList<>();
        for (QueueSample s : samples) {
            QueueView v = s.view();
            Tags queueTags = Tags.of("queue", v.name(), "tenant", v.tenant() == null ? "" : v.tenant());
            Map<WaitReason, Integer> byReason = new EnumMap<>(WaitReason.class);
            int unexplained = 0;
            Instant oldestSubmit = null;
            for (PendingEntry p : s.pending()) {
                if (p.waitReason() == null) {
                    unexplained++;
                } else {
                    byReason.merge(p.waitReason(), 1, Integer::sum);
                }
                if (p.submittedAt() != null && (oldestSubmit == null || p.submittedAt().isBefore(oldestSubmit))) {
                    oldestSubmit = p.submittedAt();
                }
            }
            for (WaitReason r : WaitReason.values()) {
                pendingRows.add(MultiGauge.Row.of(queueTags.and("reason", r.name()), byReason.getOrDefault(r, 0)));
            }
            pendingRows.add(MultiGauge.Row.of(queueTags.and("reason", NO_REASON), unexplained));
            dispatchedRows.add(MultiGauge.Row.of(queueTags, v.dispatched()));
            oldestRows.add(MultiGauge.Row.of(queueTags, oldestSubmit == null ? 0.0
                    : Math.max(0, Duration.between(oldestSubmit, now).toMillis() / 1000.0)));
            for (QueueView.FlavourView f : v.flavours()) {
                if (f.flavour().equals(FairShareConfig.CPU) || f.flavour().equals(FairShareConfig.MEMORY)) {
                    continue;
                }
                // the core counts GPUs in thousandths; the gauges say GPUs (2.5 for five half-GPU jobs)
                Tags t = queueTags.and("flavour", f.flavour());
                nominalRows.add(MultiGauge.Row.of(t, f.nominal() / 1000.0));
                usedRows.add(MultiGauge.Row.of(t, f.used() / 1000.0));
                borrowedRows.add(MultiGauge.Row.of(t, f.borrowed() / 1000.0));
                lentRows.add(MultiGauge.Row.of(t, f.lent() / 1000.0));
            }
            fairRows.add(MultiGauge.Row.of(queueTags, v.fairShare()));
            weightedRows.add(MultiGauge.Row.of(queueTags, v.weightedShare()));
        }
        pending.register(pendingRows, true);
        dispatched.register(dispatchedRows, true);
        oldest.register(oldestRows, true);
        nominal.register(nominalRows, true);
        used.register(usedRows, true);
        borrowed.register(borrowedRows, true);
        lent.register(lentRows, true);
        fairShare.register(fairRows, true);
        weightedShare.register(weightedRows, true);
    }

    @PreDestroy
    void stop() {
        refreshing.cancel(false);
    }
}
