/**
 * What billing decides, as plain Java.
 *
 * <ul>
 *   <li>The ledger: how one released allocation becomes ledger entries, one per node, in exact integer
 *       GPU-microseconds ({@link io.gantry.billing.core.Rating}), and how much of each entry falls into a window
 *       ({@link io.gantry.billing.core.Usage}); month-to-date totals from the announced entries, cut into calendar
 *       months the same way ({@link io.gantry.billing.core.MonthToDate}, run by billing's Kafka Streams adapter).</li>
 *   <li>Money: the versioned price book and its never-retroactive rule ({@link io.gantry.billing.core.PriceBook}),
 *       rating entries into priced lines ({@link io.gantry.billing.core.Pricing}) with one rounding rule
 *       ({@link io.gantry.billing.core.Money}), fault credits, invoices and their credit/debit notes
 *       ({@link io.gantry.billing.core.Invoicing}), budget states ({@link io.gantry.billing.core.Budget}) and the
 *       reconciliation of a month ({@link io.gantry.billing.core.Reconciliation}).</li>
 * </ul>
 *
 * <p>Quantities are integers on epoch milliseconds and prices exact decimals: no floating point, so splitting a
 * window into sub-windows never loses or invents a millisecond or a fraction of a cent before the single rounding
 * of an invoice line. It does not store anything, publish anything, read a clock or decide what a tenant may see.
 */
package io.gantry.billing.core;
