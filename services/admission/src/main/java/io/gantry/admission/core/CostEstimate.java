package io.gantry.admission.core;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * What a job with a time limit can cost at most, at the prices in force when it is submitted (billing's price book,
 * as billing announced it). Every task is assumed to hold what it asks for for the whole time limit; where the job
 * accepts several GPU models (a list, a tier, or none named) the most expensive of them is assumed. A MIG instance
 * costs its profile's own price where the book has one, else its share of the model's GPU price (the shared rule,
 * {@code GpuShares.migMilli}). Multipliers of its queue and priority class apply. Rounded up once to the currency's
 * minor unit, so that it is a bound. Billing bills what is actually held; this is only a bound shown at submit.
 */
public final class CostEstimate {
    private static final BigDecimal MS_PER_HOUR = BigDecimal.valueOf(3_600_000L);

    /** Billing's price book as admission keeps it (from {@code PriceBookApplied}). */
    public record PriceList(long version, String currency, List<GpuPrice> gpu, List<Timed> cpu, List<Timed> memory,
                            List<Multiplier> multipliers, List<MigPrice> mig) {
        public PriceList {
            gpu = List.copyOf(gpu);
            cpu = List.copyOf(cpu);
            memory = List.copyOf(memory);
            multipliers = List.copyOf(multipliers);
            mig = mig == null ? List.of() : List.copyOf(mig);
        }

        /** Without MIG profile prices. */
        public PriceList(long version, String currency, List<GpuPrice> gpu, List<Timed> cpu, List<Timed> memory,
                         List<Multiplier> multipliers) {
            this(version, currency, gpu, cpu, memory, multipliers, List.of());
        }
    }

    /** One instance of MIG {@code profile} on a GPU of {@code model} for an hour. */
    public record MigPrice(String model, String profile, BigDecimal perInstanceHour, Instant effectiveFrom) {
    }

    public record GpuPrice(String model, String tier, BigDecimal perGpuHour, Instant effectiveFrom) {
    }

    public record Timed(BigDecimal perHour, Instant effectiveFrom) {
    }

    public record Multiplier(String queue, String priorityClass, BigDecimal factor, Instant effectiveFrom) {
    }

    /** The bound, in {@code currency}, for {@code timeLimitSeconds}. */
    public record Estimate(BigDecimal amount, String currency, long timeLimitSeconds, long priceBookVersion) {
    }

    private CostEstimate() {
    }

    /** Empty when the job has no time limit or no price book is known. */
    public static Optional<Estimate> of(JobSpec spec, String tenant, PriceList prices, Instant now) {
        if (spec.timeLimitSeconds() == null || prices == null) {
            return Optional.empty();
        }
        BigDecimal limitMs = BigDecimal.valueOf(spec.timeLimitSeconds()).multiply(BigDecimal.valueOf(1000));
        BigDecimal factor = factor(prices, spec.queue() != null ? spec.queue() : tenant, spec.priorityClass(), now);
        BigDecimal perHour = BigDecimal.ZERO; // price per hour of everything the job holds
        for (TaskSpec t : spec.tasks()) {
            BigDecimal replicas = BigDecimal.valueOf(t.replicas());
            BigDecimal gpus = BigDecimal.valueOf(t.gpus());
            if (t.gpuMilli() != null) {
                gpus = gpus.add(BigDecimal.valueOf(t.gpuMilli(), 3));
            }
            if (gpus.signum() > 0) {
                perHour = perHour.add(gpuPrice(prices, t, now).multiply(gpus).multiply(replicas));
            }
            if (t.migProfile() != null) {
                perHour = perHour.add(migPrice(prices, t, now).multiply(replicas));
            }
            BigDecimal cpu = latest(prices.cpu(), x -> true, now);
            if (cpu != null) {
                perHour = perHour.add(cpu.multiply(BigDecimal.valueOf(t.cpuMillis(), 3)).multiply(replicas));
            }
            BigDecimal mem = latest(prices.memory(), x -> true, now);
            if (mem != null) {
                perHour = perHour.add(mem.multiply(BigDecimal.valueOf(t.memoryMiB()))
                        .divide(BigDecimal.valueOf(1024)).multiply(replicas));
            }
        }
        int digits = java.util.Currency.getInstance(prices.currency()).getDefaultFractionDigits();
        BigDecimal amount = perHour.multiply(factor).multiply(limitMs).divide(MS_PER_HOUR, digits, RoundingMode.CEILING);
        return Optional.of(new Estimate(amount, prices.currency(), spec.timeLimitSeconds(), prices.version()));
    }

    /**
     * One MIG instance of the task's profile for an hour, on the most expensive model it accepts: the profile's own
     * price there, else its share of the model's GPU price.
     */
    private static BigDecimal migPrice(PriceList prices, TaskSpec t, Instant now) {
        List<String> models = accepted(t);
        BigDecimal share = BigDecimal.valueOf(io.gantry.model.GpuShares.migMilli(t.migProfile()), 3);
        BigDecimal best = BigDecimal.ZERO;
        for (String model : java.util.stream.Stream.concat(prices.gpu().stream().map(GpuPrice::model),
                prices.mig().stream().map(MigPrice::model)).distinct().toList()) {
            if (models != null && !models.contains(model)) {
                continue;
            }
            BigDecimal p = prices.mig().stream().filter(m -> m.model().equals(model)
                            && m.profile().equals(t.migProfile()) && !m.effectiveFrom().isAfter(now))
                    .max(Comparator.comparing(MigPrice::effectiveFrom)).map(MigPrice::perInstanceHour).orElse(null);
            if (p == null) {
                BigDecimal whole = latestGpu(prices, g -> g.model().equals(model) && g.tier() == null, now);
                p = whole == null ? null : whole.multiply(share);
            }
            if (p != null && p.compareTo(best) > 0) {
                best = p;
            }
        }
        return best;
    }

    /** The models a task accepts, or null for any. */
    private static List<String> accepted(TaskSpec t) {
        return t.gpuModel() != null ? List.of(t.gpuModel())
                : t.gpuModels() != null && !t.gpuModels().isEmpty() ? t.gpuModels() : null;
    }

    /** The most expensive price among the models the task accepts (its tier's own price first where there is one). */
    private static BigDecimal gpuPrice(PriceList prices, TaskSpec t, Instant now) {
        List<String> models = accepted(t);
        BigDecimal best = BigDecimal.ZERO;
        for (String model : prices.gpu().stream().map(GpuPrice::model).distinct().toList()) {
            if (models != null && !models.contains(model)) {
                continue;
            }
            BigDecimal p = null;
            if (t.gpuTier() != null) {
                p = latestGpu(prices, g -> g.model().equals(model) && t.gpuTier().equals(g.tier()), now);
            }
            if (p == null) {
                p = latestGpu(prices, g -> g.model().equals(model) && g.tier() == null, now);
            }
            if (p != null && p.compareTo(best) > 0) {
                best = p;
            }
        }
        return best;
    }

    private static BigDecimal factor(PriceList prices, String queue, String priorityClass, Instant now) {
        BigDecimal f = BigDecimal.ONE;
        Multiplier q = best(prices.multipliers(), x -> queue != null && queue.equals(x.queue()), now);
        Multiplier c = best(prices.multipliers(), x -> priorityClass != null && priorityClass.equals(x.priorityClass()),
                now);
        if (q != null) {
            f = f.multiply(q.factor());
        }
        if (c != null) {
            f = f.multiply(c.factor());
        }
        return f;
    }

    private static Multiplier best(List<Multiplier> all, Predicate<Multiplier> match, Instant now) {
        return all.stream().filter(match).filter(m -> !m.effectiveFrom().isAfter(now))
                .max(Comparator.comparing(Multiplier::effectiveFrom)).orElse(null);
    }

    private static BigDecimal latestGpu(PriceList prices, Predicate<GpuPrice> match, Instant now) {
        return prices.gpu().stream().filter(match).filter(g -> !g.effectiveFrom().isAfter(now))
                .max(Comparator.comparing(GpuPrice::effectiveFrom)).map(GpuPrice::perGpuHour).orElse(null);
    }

    private static BigDecimal latest(List<Timed> all, Predicate<Timed> match, Instant now) {
        return all.stream().filter(match).filter(g -> !g.effectiveFrom().isAfter(now))
                .max(Comparator.comparing(Timed::effectiveFrom)).map(Timed::perHour).orElse(null);
    }
}
