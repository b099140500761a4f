package io.gantry.billing.core;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * The one rounding rule: an amount is the exact product quantity x unit price, divided by the quantity units in a
 * priced unit, rounded <b>once, half-even, to the currency's minor unit</b>, per invoice line. Everything before
 * that (quantities, unit prices, their products) is exact; everything after it (totals) is a sum of rounded lines.
 */
public final class Money {
    public static final RoundingMode ROUNDING = RoundingMode.HALF_EVEN;

    private Money() {
    }

    /** {@code quantity x unitPrice / perPricedUnit}, rounded once to {@code minorDigits} decimals, half-even. */
    public static BigDecimal amount(long quantity, BigDecimal unitPrice, Component component, int minorDigits) {
        if (unitPrice == null) {
            return BigDecimal.ZERO.setScale(minorDigits);
        }
        return exactNumerator(quantity, unitPrice)
                .divide(BigDecimal.valueOf(component.perPricedUnit()), minorDigits, ROUNDING);
    }

    /** {@code quantity x unitPrice}: the amount times the component's units per priced unit, exact. */
    public static BigDecimal exactNumerator(long quantity, BigDecimal unitPrice) {
        return unitPrice == null ? BigDecimal.ZERO : unitPrice.multiply(BigDecimal.valueOf(quantity));
    }

    /**
     * An amount or price as people and programs read it: its exact decimal, with at least the currency's minor digits
     * ({@code 2.50}, {@code 10.00}, {@code 2.4375}); never rounded.
     */
    public static String text(BigDecimal v, int minorDigits) {
        return (v.scale() < minorDigits ? v.setScale(minorDigits) : v).toPlainString();
    }

    /** One representation per value (2.50 and 2.5 are the same price), so equal prices make equal line keys. */
    public static BigDecimal canonical(BigDecimal d) {
        BigDecimal s = d.stripTrailingZeros();
        return s.scale() < 0 ? s.setScale(0) : s;
    }
}
