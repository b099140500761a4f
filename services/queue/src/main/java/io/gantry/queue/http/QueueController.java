package io.gantry.queue.http;

import io.gantry.model.GpuShares;
import io.gantry.queue.core.FairShareConfig;
import io.gantry.queue.core.PendingEntry;
import io.gantry.queue.core.QueueView;
import io.gantry.queue.kafka.QueueProcessor;
import io.gantry.runtime.http.Caller;
import io.gantry.runtime.http.Problem;
import io.gantry.runtime.http.Units;
import io.micronaut.core.type.Argument;
import io.micronaut.http.HttpRequest;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.PathVariable;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.json.JsonMapper;
import io.micronaut.serde.annotation.Serdeable;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;

/**
 * Read-only views of the queues. A tenant sees its own queues (those it owns); an admin sees every queue. Without a
 * configuration file each tenant has one implicit queue named after it.
 */
@Controller("/v1/queues")
public class QueueController {
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,62}");

    private final QueueProcessor queue;
    private final JsonMapper json;

    public QueueController(QueueProcessor queue, JsonMapper json) {
        this.queue = queue;
        this.json = json;
    }

    /**
     * One resource of a queue: GPU flavours in GPUs (fractions and MIG slices count as what they are, so
     * {@code 2.5}), cpu in millicores, memory in MiB.
     */
    @Serdeable
    public record FlavourRow(String flavour, BigDecimal nominal, BigDecimal used, BigDecimal borrowed, BigDecimal lent,
                             BigDecimal borrowingLimit, BigDecimal lendingLimit) {
        static FlavourRow of(QueueView.FlavourView f) {
            boolean gpu = !f.flavour().equals(FairShareConfig.CPU) && !f.flavour().equals(FairShareConfig.MEMORY);
            return new FlavourRow(f.flavour(), amount(gpu, f.nominal()), amount(gpu, f.used()),
                    amount(gpu, f.borrowed()), amount(gpu, f.lent()), amount(gpu, f.borrowingLimit()),
                    amount(gpu, f.lendingLimit()));
        }
    }

    private static BigDecimal amount(boolean gpu, Long v) {
        return v == null ? null : gpu ? GpuShares.toGpus(v) : BigDecimal.valueOf(v);
    }

    /**
     * One queue. {@code quotaGpus}, {@code reservedGpus}, {@code queued}, {@code parked}, {@code dispatched} are kept
     * from the first API: GPUs summed over GPU flavours; queued = pending and not parked.
     */
    @Serdeable
    public record QueueRow(String name, String tenant, String cohort, List<FlavourRow> flavours, int pending,
                           double weightedShare, double fairShare, BigDecimal quotaGpus, BigDecimal reservedGpus, int queued,
                           int parked, int dispatched) {
        static QueueRow of(QueueView v) {
            return new QueueRow(v.name(), v.tenant(), v.cohort(), v.flavours().stream().map(FlavourRow::of).toList(),
                    v.pending(), v.weightedShare(), v.fairShare(), GpuShares.toGpus(v.nominalMilli()),
                    GpuShares.toGpus(v.usedMilli()),
                    v.pending() - v.parked(), v.parked(), v.dispatched());
        }
    }

    @Serdeable
    public record Queues(List<QueueRow> queues) {
    }

    @Serdeable
    public record PendingJobRow(String jobId, String tenant, int attempt, BigDecimal gpus, String submittedAt,
                                boolean parked, String waitReason, String message, String waitCause,
                                int serviceLevel, BigDecimal attainedGpuHours) {
        static PendingJobRow of(PendingEntry e) {
            Enum<?> cause = e.quotaWait() != null ? e.quotaWait() : e.deferral();
            return new PendingJobRow(e.jobId(), e.tenant(), e.attempt(), GpuShares.toGpus(e.gpuMilli()),
                    e.submittedAt().toString(),
                    e.parked(), e.waitReason() == null ? null : e.waitReason().name(), e.message(),
                    cause == null ? null : cause.name(), e.serviceLevel(),
                    BigDecimal.valueOf(e.attainedMilliGpuMillis()).divide(BigDecimal.valueOf(3_600_000_000L), 2,
                            java.math.RoundingMode.HALF_UP));
        }

        PendingJobRow withMessage(String shown) {
            return new PendingJobRow(jobId, tenant, attempt, gpus, submittedAt, parked, waitReason, shown, waitCause,
                    serviceLevel, attainedGpuHours);
        }
    }

    /** {@code tenant} is the queue's owner (kept from the first API, where queue and tenant were the same). */
    @Serdeable
    public record Pending(String queue, String tenant, List<PendingJobRow> pending) {
    }

    @Get
    public HttpResponse<?> queues(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, HttpRequest<?> request)
            throws Exception {
        Instant now = queue.now();
        if (queue.split()) {
            return splitQueues(caller, request, now);
        }
        List<QueueRow> rows = read(core -> core.queues(now).stream()
                .filter(v -> caller.admin() || v.tenant().equals(caller.tenant()))
                .map(QueueRow::of).toList());
        if (rows.isEmpty() && !caller.admin()) {
            // a tenant that never submitted still sees its implicit queue (zeros)
            rows = read(core -> implicitRow(core, caller, now));
        }
        return HttpResponse.ok(new Queues(rows));
    }

    /** A tenant's implicit queue with zeros (before it submitted), or nothing with a configuration file. */
    private static List<QueueRow> implicitRow(io.gantry.queue.core.QueueCore core, Caller caller, Instant now) {
        QueueView v = core.config().isImplicit() ? core.queue(caller.tenant(), now, true) : null;
        return v == null ? List.<QueueRow>of() : List.of(QueueRow.of(v));
    }

    /**
     * Split by cohort tree: each shard owned here answers for its tenants' queues, and the instances owning the other
     * shards add theirs (the request forwarded to them, so they answer for their own shards only); by queue name.
     */
    private HttpResponse<?> splitQueues(Caller caller, HttpRequest<?> request, Instant now) throws Exception {
        List<QueueRow> rows = new ArrayList<>();
        for (int shard : queue.ownedShards()) {
            rows.addAll(readShard(shard, (h, core) -> {
                List<QueueRow> part = core.queues(now).stream()
                        .filter(v -> h.shards().ofQueue(v.name()) == shard)
                        .filter(v -> caller.admin() || v.tenant().equals(caller.tenant()))
                        .map(QueueRow::of).toList();
                // the shard of a tenant without a queue row shows its implicit queue (zeros)
                return part.isEmpty() && !caller.admin() && h.shards().ofTenant(caller.tenant()) == shard
                        ? implicitRow(core, caller, now) : part;
            }));
        }
        try {
            Units.others(queue.units(), request, json, Argument.of(Queues.class)).forEach(q -> rows.addAll(q.queues()));
        } catch (Units.Unavailable u) {
            return u.answer();
        }
        rows.sort(java.util.Comparator.comparing(QueueRow::name));
        return HttpResponse.ok(new Queues(rows));
    }

    @Get("/{name}/pending")
    public HttpResponse<?> pending(@RequestAttribute(Caller.ATTRIBUTE) Caller caller, @PathVariable String name,
                                   HttpRequest<?> request) throws Exception {
        if (!NAME.matcher(name).matches()) {
            return Problem.badRequest(List.of(new Problem.FieldError("name",
                    "must be a lower-case queue name ([a-z0-9][a-z0-9-]{0,62})")));
        }
        int shard = 0;
        if (queue.split()) {
            io.gantry.queue.core.Shards shards = queue.shards();
            if (shards == null) {
                throw new QueueUnavailableException(null);
            }
            shard = shards.ofQueue(name);
            java.util.Optional<HttpResponse<?>> there = Units.toOwnerOf(queue.units(), request,
                    Integer.toString(shard), new byte[0]);
            if (there.isPresent()) {
                return there.get();
            }
        }
        Instant now = queue.now();
        Pending body = readShard(shard, (h, core) -> {
            QueueView v = core.queue(name, now, !caller.admin() && name.equals(caller.tenant()));
            if (v == null || !caller.mayAccess(v.tenant())) {
                return null;
            }
            return new Pending(name, v.tenant(), shownTo(caller, core.pending(name).stream().map(PendingJobRow::of)
                    .toList(), core::tenantOf));
        });
        if (body == null) {
            // 404, not 403: a tenant does not learn which other queues exist
            return Problem.notFound("no queue " + name);
        }
        return HttpResponse.ok(body);
    }

    /**
     * A queue's pending rows as {@code caller} may see them: the sentences of a tenant's own queue may name another
     * tenant's job (the starving job quota is held for, a preemptor), which a tenant sees as
     * {@value io.gantry.runtime.http.Redaction#OTHER}; an admin sees them all.
     */
    static List<PendingJobRow> shownTo(Caller caller, List<PendingJobRow> rows,
                                       java.util.function.Function<String, String> tenantOf) {
        if (caller.admin()) {
            return rows;
        }
        java.util.function.Predicate<String> others = id -> {
            String owner = tenantOf.apply(id);
            return owner != null && !owner.isEmpty() && !owner.equals(caller.tenant());
        };
        return rows.stream().map(r -> r.withMessage(io.gantry.runtime.http.Redaction.text(r.message(), others)))
                .toList();
    }

    private <T> T readShard(int shard, java.util.function.BiFunction<io.gantry.queue.kafka.QueueHandler,
            io.gantry.queue.core.QueueCore, T> query) throws Exception {
        try {
            return queue.readShard(shard, query);
        } catch (TimeoutException | ExecutionException e) {
            throw new QueueUnavailableException(e);
        }
    }

    private <T> T read(java.util.function.Function<io.gantry.queue.core.QueueCore, T> query) throws Exception {
        try {
            return queue.read(query);
        } catch (TimeoutException | ExecutionException e) {
            throw new QueueUnavailableException(e);
        }
    }

    /** The event loop is restoring or restarting; the client may retry. */
    static final class QueueUnavailableException extends RuntimeException {
        QueueUnavailableException(Throwable cause) {
            super("the queue is not ready", cause);
        }
    }

    @io.micronaut.http.annotation.Error(exception = QueueUnavailableException.class)
    public HttpResponse<?> unavailable(QueueUnavailableException e) {
        return Problem.response(HttpStatus.SERVICE_UNAVAILABLE, "Service unavailable",
                "the queue is rebuilding its state; retry shortly", List.of()).header("Retry-After", "1");
    }
}
