/**
 * Billing's money adapters: they load what the core needs from PostgreSQL (ledger, job terms, checkpoints, price
 * book versions, budgets, issued documents), call the core, store documents and announce price books and budget
 * states through the event loop. No pricing or rounding rule lives here.
 */
package io.gantry.billing.money;
