package io.gantry.billing.core;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * The prices in one currency, each in force from its {@code effectiveFrom} until the next entry for the same thing.
 * An entry is never edited once in force: {@link #requireNoRetroactiveChange} refuses a new version that differs
 * from the current one anywhere before the moment it is applied, so the newest version prices every past interval
 * exactly as the version in force at the time did.
 *
 * @param version     1 for the first book, +1 per change (0: the empty book, before any was applied)
 * @param currency    ISO 4217 code
 * @param gpu         prices per GPU model (and optionally tier), per GPU-hour
 * @param cpu         price per core-hour (empty: CPU is not billed)
 * @param memory      price per GiB-hour (empty: memory is not billed)
 * @param multipliers factors per queue or priority class
 * @param mig         prices per MIG profile of a model, per instance-hour (empty: an instance pays its share of the
 *                    model's GPU price)
 */
public record PriceBook(long version, String currency, List<GpuPrice> gpu, List<ResourcePrice> cpu,
                        List<ResourcePrice> memory, List<Multiplier> multipliers, List<MigPrice> mig) {

    /**
     * An instance of MIG profile {@code profile} on a GPU of {@code model} for an hour costs {@code perInstanceHour}
     * from {@code effectiveFrom} on, instead of its share of the model's price.
     */
    public record MigPrice(String model, String profile, BigDecimal perInstanceHour, Instant effectiveFrom) {
        public MigPrice {
            Objects.requireNonNull(model, "model");
            Objects.requireNonNull(profile, "profile");
            Objects.requireNonNull(perInstanceHour, "perInstanceHour");
            Objects.requireNonNull(effectiveFrom, "effectiveFrom");
            perInstanceHour = Money.canonical(perInstanceHour);
        }
    }

    /** A whole GPU of {@code model} for an hour costs {@code perGpuHour} from {@code effectiveFrom} on. */
    public record GpuPrice(String model, String tier, BigDecimal perGpuHour, Instant effectiveFrom) {
        public GpuPrice {
            Objects.requireNonNull(model, "model");
            Objects.requireNonNull(perGpuHour, "perGpuHour");
            Objects.requireNonNull(effectiveFrom, "effectiveFrom");
            perGpuHour = Money.canonical(perGpuHour);
        }
    }

    /** A unit-hour (core-hour, GiB-hour) costs {@code perHour} from {@code effectiveFrom} on. */
    public record ResourcePrice(BigDecimal perHour, Instant effectiveFrom) {
        public ResourcePrice {
            Objects.requireNonNull(perHour, "perHour");
            Objects.requireNonNull(effectiveFrom, "effectiveFrom");
            perHour = Money.canonical(perHour);
        }
    }

    /** Every price of a job in {@code queue} (or of {@code priorityClass}) is multiplied by {@code factor}. */
    public record Multiplier(String queue, String priorityClass, BigDecimal factor, Instant effectiveFrom) {
        public Multiplier {
            if ((queue == null) == (priorityClass == null)) {
                throw new IllegalArgumentException("a multiplier names exactly one of queue and priorityClass");
            }
            Objects.requireNonNull(factor, "factor");
            Objects.requireNonNull(effectiveFrom, "effectiveFrom");
            factor = Money.canonical(factor);
        }
    }

    public PriceBook {
        Objects.requireNonNull(currency, "currency");
        gpu = List.copyOf(gpu);
        cpu = List.copyOf(cpu);
        memory = List.copyOf(memory);
        multipliers = List.copyOf(multipliers);
        mig = List.copyOf(mig);
    }

    /** A book without MIG profile prices. */
    public PriceBook(long version, String currency, List<GpuPrice> gpu, List<ResourcePrice> cpu,
                     List<ResourcePrice> memory, List<Multiplier> multipliers) {
        this(version, currency, gpu, cpu, memory, multipliers, List.of());
    }

    /**
     * Whether {@code other} holds the same prices: the same currency and entries, in whatever order (a document
     * that only lists them differently is no change), whatever the versions.
     */
    public boolean samePrices(PriceBook other) {
        return currency.equals(other.currency) && sameEntries(gpu, other.gpu) && sameEntries(cpu, other.cpu)
                && sameEntries(memory, other.memory) && sameEntries(multipliers, other.multipliers)
                && sameEntries(mig, other.mig);
    }

    private static <T> boolean sameEntries(List<T> a, List<T> b) {
        return a.size() == b.size() && new HashSet<>(a).equals(new HashSet<>(b));
    }

    /** The book before any version was applied: nothing is priced. */
    public static PriceBook empty(String currency) {
        return new PriceBook(0, currency, List.of(), List.of(), List.of(), List.of());
    }

    public int minorDigits() {
        return java.util.Currency.getInstance(currency).getDefaultFractionDigits();
    }

    public PriceBook withVersion(long v) {
        return new PriceBook(v, currency, gpu, cpu, memory, multipliers, mig);
    }

    /**
     * The GPU price at {@code at}: the tier's own price for the model when one is in force, else the model's
     * price; {@code null} when the model has no price yet (the usage is shown unpriced, never guessed).
     */
    public BigDecimal gpuPrice(String model, String tier, Instant at) {
        GpuPrice best = null;
        if (tier != null) {
            best = latest(gpu, p -> p.model().equals(model) && tier.equals(p.tier()), GpuPrice::effectiveFrom, at);
        }
        if (best == null) {
            best = latest(gpu, p -> p.model().equals(model) && p.tier() == null, GpuPrice::effectiveFrom, at);
        }
        return best == null ? null : best.perGpuHour();
    }

    /**
     * The own price of an instance of MIG profile {@code profile} on {@code model} at {@code at}, or {@code null}
     * when none is in force (the instance then pays its share of {@link #gpuPrice}).
     */
    public BigDecimal migPrice(String model, String profile, Instant at) {
        if (mig.isEmpty()) {
            return null;
        }
        MigPrice p = latest(mig, x -> x.model().equals(model) && x.profile().equals(profile), MigPrice::effectiveFrom,
                at);
        return p == null ? null : p.perInstanceHour();
    }

    public BigDecimal cpuPrice(Instant at) {
        ResourcePrice p = latest(cpu, x -> true, ResourcePrice::effectiveFrom, at);
        return p == null ? null : p.perHour();
    }

    public BigDecimal memoryPrice(Instant at) {
        ResourcePrice p = latest(memory, x -> true, ResourcePrice::effectiveFrom, at);
        return p == null ? null : p.perHour();
    }

    /** The product of the queue's and the priority class's factors in force at {@code at} (1 when neither has one). */
    public BigDecimal factor(String queue, String priorityClass, Instant at) {
        BigDecimal f = BigDecimal.ONE;
        if (queue != null) {
            Multiplier m = latest(multipliers, x -> queue.equals(x.queue()), Multiplier::effectiveFrom, at);
            f = m == null ? f : f.multiply(m.factor());
        }
        if (priorityClass != null) {
            Multiplier m = latest(multipliers, x -> priorityClass.equals(x.priorityClass()), Multiplier::effectiveFrom,
                    at);
            f = m == null ? f : f.multiply(m.factor());
        }
        return Money.canonical(f);
    }

    /**
     * Every instant at which some price or factor may change, in order. Rating cuts intervals there; a cut where
     * nothing changes for that interval is harmless, because both pieces land on the same invoice line.
     */
    public List<Instant> changeInstants() {
        TreeSet<Instant> all = new TreeSet<>();
        gpu.forEach(p -> all.add(p.effectiveFrom()));
        cpu.forEach(p -> all.add(p.effectiveFrom()));
        memory.forEach(p -> all.add(p.effectiveFrom()));
        multipliers.forEach(p -> all.add(p.effectiveFrom()));
        mig.forEach(p -> all.add(p.effectiveFrom()));
        return List.copyOf(all);
    }

    /**
     * Refuses {@code next} when it would change what was in force before {@code now}: every entry effective before
     * {@code now} must stay exactly as it is, no new entry may start before {@code now}, and the currency may not
     * change once a price is in force. The first version ({@code current.version() == 0}) may date its entries in
     * the past: it defines the prices of usage recorded before billing had a book.
     */
    public static void requireNoRetroactiveChange(PriceBook current, PriceBook next, Instant now) {
        if (current.version() == 0) {
            return;
        }
        List<InvalidInput.Field> errors = new ArrayList<>();
        boolean anyInForce = !current.changeInstants().isEmpty() && current.changeInstants().get(0).isBefore(now);
        if (anyInForce && !current.currency().equals(next.currency())) {
            errors.add(new InvalidInput.Field("currency", "must stay " + current.currency()
                    + ": prices in that currency are already in force"));
        }
        int digits = current.minorDigits();
        compare("gpu", current.gpu(), next.gpu(), GpuPrice::effectiveFrom, now, digits, errors);
        compare("cpu", current.cpu(), next.cpu(), ResourcePrice::effectiveFrom, now, digits, errors);
        compare("memory", current.memory(), next.memory(), ResourcePrice::effectiveFrom, now, digits, errors);
        compare("multipliers", current.multipliers(), next.multipliers(), Multiplier::effectiveFrom, now, digits, errors);
        compare("mig", current.mig(), next.mig(), MigPrice::effectiveFrom, now, digits, errors);
        if (!errors.isEmpty()) {
            throw new InvalidInput(errors);
        }
    }

    private static <T> void compare(String field, List<T> current, List<T> next,
                                    java.util.function.Function<T, Instant> from, Instant now, int minorDigits,
                                    List<InvalidInput.Field> errors) {
        Set<T> before = new HashSet<>();
        for (T t : current) {
            if (from.apply(t).isBefore(now)) {
                before.add(t);
            }
        }
        Set<T> kept = new HashSet<>();
        for (int i = 0; i < next.size(); i++) {
            T t = next.get(i);
            if (!from.apply(t).isBefore(now)) {
                continue;
            }
            if (before.contains(t)) {
                kept.add(t);
            } else {
                errors.add(new InvalidInput.Field(field + "[" + i + "].effectiveFrom", "is before now (" + now
                        + ") and not an entry already in force: prices change only from now on, never retroactively"));
            }
        }
        for (T t : before) {
            if (!kept.contains(t)) {
                errors.add(new InvalidInput.Field(field, "leaves out or changes an entry already in force ("
                        + describe(t, minorDigits) + "): prices change only from now on, never retroactively; keep it and add "
                        + "the new price with an effectiveFrom of now or later"));
            }
        }
    }

    /** An entry as the book's author wrote it (not a Java record's text). */
    static String describe(Object entry, int minorDigits) {
        if (entry instanceof GpuPrice g) {
            return "gpu " + g.model() + (g.tier() == null ? "" : " tier " + g.tier()) + " at "
                    + Money.text(g.perGpuHour(), minorDigits) + " per GPU-hour from " + g.effectiveFrom();
        }
        if (entry instanceof ResourcePrice r) {
            return Money.text(r.perHour(), minorDigits) + " per hour from " + r.effectiveFrom();
        }
        if (entry instanceof Multiplier m) {
            return (m.queue() != null ? "queue " + m.queue() : "priority class " + m.priorityClass()) + " x "
                    + m.factor().toPlainString() + " from " + m.effectiveFrom();
        }
        if (entry instanceof MigPrice m) {
            return "mig " + m.model() + " " + m.profile() + " at " + Money.text(m.perInstanceHour(), minorDigits)
                    + " per instance-hour from " + m.effectiveFrom();
        }
        return String.valueOf(entry);
    }

    private static <T> T latest(List<T> entries, java.util.function.Predicate<T> match,
                                java.util.function.Function<T, Instant> from, Instant at) {
        return entries.stream().filter(match).filter(e -> !from.apply(e).isAfter(at))
                .max(Comparator.comparing(from)).orElse(null);
    }
}
