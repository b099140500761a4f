package io.gantry.billing.core;

import java.math.BigDecimal;
import java.util.Comparator;
import java.util.Objects;

/**
 * Rated usage of one job on one GPU model and component at one unit price: the exact integer quantity (negative for
 * a credit) and the unit price (base price x multipliers, exact). The amount is rounded only when asked for.
 *
 * @param gpuModel  {@code null} for CPU-only usage
 * @param reason    the release reason a credit is for, {@code null} for usage
 * @param unitPrice {@code null} when no price was in force (the usage is shown, at zero)
 * @param quantity  in the component's integer unit ({@link Component}), negative for credits
 * @param migProfile the MIG profile of a {@link Component#MIG} line (priced on its own), else {@code null}
 */
public record RatedLine(String tenant, String jobId, String gpuModel, Component component, LineKind kind,
                        String reason, BigDecimal unitPrice, long quantity, String migProfile) {
    public static final Comparator<RatedLine> ORDER = Comparator.comparing(RatedLine::tenant)
            .thenComparing(RatedLine::jobId)
            .thenComparing(RatedLine::gpuModel, Comparator.nullsFirst(Comparator.naturalOrder()))
            .thenComparing(RatedLine::component)
            .thenComparing(RatedLine::kind)
            .thenComparing(RatedLine::reason, Comparator.nullsFirst(Comparator.naturalOrder()))
            .thenComparing(RatedLine::migProfile, Comparator.nullsFirst(Comparator.naturalOrder()))
            .thenComparing(RatedLine::unitPrice, Comparator.nullsFirst(Comparator.naturalOrder()));

    public RatedLine {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(jobId, "jobId");
        Objects.requireNonNull(component, "component");
        Objects.requireNonNull(kind, "kind");
        unitPrice = unitPrice == null ? null : Money.canonical(unitPrice);
        if ((component == Component.MIG) != (migProfile != null)) {
            throw new IllegalArgumentException("migProfile: a MIG line names its profile, other lines none");
        }
    }

    /** A line of GPU time, CPU or memory (no MIG profile). */
    public RatedLine(String tenant, String jobId, String gpuModel, Component component, LineKind kind,
                     String reason, BigDecimal unitPrice, long quantity) {
        this(tenant, jobId, gpuModel, component, kind, reason, unitPrice, quantity, null);
    }

    /** Everything but the quantity: lines with equal keys are one invoice line. */
    public Key key() {
        return new Key(tenant, jobId, gpuModel, component, kind, reason, unitPrice, migProfile);
    }

    public record Key(String tenant, String jobId, String gpuModel, Component component, LineKind kind, String reason,
                      BigDecimal unitPrice, String migProfile) {
    }

    /** The amount, rounded once (see {@link Money}). */
    public BigDecimal amount(int minorDigits) {
        return Money.amount(quantity, unitPrice, component, minorDigits);
    }

    /** The exact amount times the component's units per priced unit (no rounding at all). */
    public BigDecimal exactNumerator() {
        return Money.exactNumerator(quantity, unitPrice);
    }

    public RatedLine plus(long more) {
        return new RatedLine(tenant, jobId, gpuModel, component, kind, reason, unitPrice,
                Math.addExact(quantity, more), migProfile);
    }
}
