package io.gantry.billing.core;

/** USAGE: time held, a positive amount. CREDIT: time lost to a fault and given back, a negative amount. */
public enum LineKind {
    USAGE,
    CREDIT
}
