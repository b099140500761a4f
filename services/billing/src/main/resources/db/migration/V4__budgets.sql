-- Money budgets per tenant (queue = '' for the tenant's whole spend) for every calendar month. The admin API
-- replaces the whole set in one transaction.
CREATE TABLE budget (
    tenant     TEXT        NOT NULL,
    queue      TEXT        NOT NULL DEFAULT '',
    amount     NUMERIC     NOT NULL CHECK (amount >= 0),
    action     TEXT        NOT NULL CHECK (action IN ('WARN', 'HOLD', 'REJECT')),
    warn_at    TEXT        NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant, queue)
);
