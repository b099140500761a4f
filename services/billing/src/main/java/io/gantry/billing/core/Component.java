package io.gantry.billing.core;

import java.math.BigDecimal;

/**
 * What a price applies to, with the integer unit its quantities are kept in and how many of those make the
 * priced unit-hour. Quantities are exact integers (the ledger's), so a quantity never needs rounding; only an
 * amount does, once per invoice line.
 */
public enum Component {
    /** Thousandths of a GPU x milliseconds (GPU-microseconds); priced per GPU-hour. */
    GPU("GPU-seconds", "GPU-hour", 3_600_000_000L, 1_000_000L),
    /** Millicores x milliseconds; priced per core-hour. */
    CPU("core-seconds", "core-hour", 3_600_000_000L, 1_000_000L),
    /** MiB x milliseconds; priced per GiB-hour. */
    MEMORY("GiB-seconds", "GiB-hour", 1024L * 3_600_000L, 1024L * 1000L),
    /**
     * Instances of one MIG profile x milliseconds; priced per instance-hour, for a profile the price book prices on
     * its own (otherwise an instance is GPU time: its share of the model's price).
     */
    MIG("instance-seconds", "instance-hour", 3_600_000L, 1000L);

    private final String quantityUnit;
    private final String priceUnit;
    private final long perPricedUnit;
    private final long perQuantityUnit;

    Component(String quantityUnit, String priceUnit, long perPricedUnit, long perQuantityUnit) {
        this.quantityUnit = quantityUnit;
        this.priceUnit = priceUnit;
        this.perPricedUnit = perPricedUnit;
        this.perQuantityUnit = perQuantityUnit;
    }

    /** The unit quantities are shown in (GPU-seconds, core-seconds, GiB-seconds). */
    public String quantityUnit() {
        return quantityUnit;
    }

    /** The unit prices are per (GPU-hour, core-hour, GiB-hour). */
    public String priceUnit() {
        return priceUnit;
    }

    /** How many integer quantity units make one priced unit (e.g. 3.6e9 GPU-microseconds in a GPU-hour). */
    public long perPricedUnit() {
        return perPricedUnit;
    }

    /**
     * The integer quantity in its display unit, exactly: GPU- and core-seconds have at most 6 decimals, GiB-seconds
     * at most 13 (a MiB is 2^-10 GiB, which is a finite decimal).
     */
    public BigDecimal display(long quantity) {
        BigDecimal exact = perQuantityUnit == 1_000_000L ? BigDecimal.valueOf(quantity, 6)
                : BigDecimal.valueOf(quantity).divide(BigDecimal.valueOf(perQuantityUnit));
        BigDecimal s = exact.stripTrailingZeros();
        return s.scale() < 3 ? s.setScale(3) : s;
    }
}
