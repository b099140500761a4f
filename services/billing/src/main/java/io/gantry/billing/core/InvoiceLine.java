package io.gantry.billing.core;

import java.math.BigDecimal;

/**
 * One line of an invoice or note: a job's usage (or credit) on a GPU model and component at one unit price.
 *
 * @param quantity integer quantity in the component's unit (negative for credits and for reductions in notes)
 * @param amount   rounded once, half-even, to the currency's minor unit
 * @param migProfile the MIG profile of a {@link Component#MIG} line, else {@code null}
 */
public record InvoiceLine(String jobId, String gpuModel, Component component, LineKind kind, String reason,
                          BigDecimal unitPrice, long quantity, BigDecimal amount, String migProfile) {

    /** A line of GPU time, CPU or memory (no MIG profile). */
    public InvoiceLine(String jobId, String gpuModel, Component component, LineKind kind, String reason,
                       BigDecimal unitPrice, long quantity, BigDecimal amount) {
        this(jobId, gpuModel, component, kind, reason, unitPrice, quantity, amount, null);
    }

    public RatedLine.Key key(String tenant) {
        return new RatedLine.Key(tenant, jobId, gpuModel, component, kind, reason, unitPrice, migProfile);
    }

    /** The same line with another quantity and amount (a note's difference). */
    InvoiceLine with(long newQuantity, BigDecimal newAmount) {
        return new InvoiceLine(jobId, gpuModel, component, kind, reason, unitPrice, newQuantity, newAmount,
                migProfile);
    }

    /** The quantity in its display unit (GPU-seconds, core-seconds, GiB-seconds), exact. */
    public BigDecimal displayQuantity() {
        return component.display(quantity);
    }

    /** What the line says in words, e.g. {@code H100 GPU time} or {@code credit: NODE_FAILED}. */
    public String description() {
        String what = switch (component) {
            case GPU -> (gpuModel == null ? "" : gpuModel + " ") + "GPU time";
            case CPU -> "CPU time";
            case MEMORY -> "memory";
            case MIG -> (gpuModel == null ? "" : gpuModel + " ") + "MIG " + migProfile + " instance time";
        };
        return kind == LineKind.CREDIT ? what + " credit (" + reason + ")" : what;
    }
}
