/**
 * What billing decides, as plain Java: rating (how one released allocation becomes ledger entries, one per
 * node, in exact integer GPU-milliseconds) and usage (how much of each entry falls into a query window, grouped by
 * tenant and GPU model).
 *
 * <p>Everything is integer arithmetic on epoch milliseconds: no floating point, so splitting a window into
 * sub-windows never loses or invents a millisecond. It does not store anything, publish anything or price
 * anything (no currency, no rates per model); it does not decide what a tenant may see.
 */
package io.gantry.billing.core;
