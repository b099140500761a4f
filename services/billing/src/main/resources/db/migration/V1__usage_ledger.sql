-- The usage ledger: one row per node per allocation interval. entry_id = '<allocationId>/<nodeId>' makes
-- inserts idempotent (ON CONFLICT DO NOTHING) under redelivery and restart.
CREATE TABLE usage_entry (
    entry_id        TEXT PRIMARY KEY,
    tenant          TEXT        NOT NULL,
    job_id          TEXT        NOT NULL,
    attempt         INTEGER     NOT NULL CHECK (attempt >= 1),
    allocation_id   TEXT        NOT NULL,
    node_id         TEXT        NOT NULL,
    gpu_model       TEXT,
    gpu_count       INTEGER     NOT NULL CHECK (gpu_count >= 0),
    started_at      TIMESTAMPTZ NOT NULL,
    ended_at        TIMESTAMPTZ NOT NULL,
    duration_millis BIGINT      NOT NULL CHECK (duration_millis >= 0),
    gpu_millis      BIGINT      NOT NULL CHECK (gpu_millis >= 0),
    recorded_at     TIMESTAMPTZ NOT NULL,
    CHECK (ended_at >= started_at),
    CHECK (gpu_millis = gpu_count::BIGINT * duration_millis)
);

CREATE INDEX usage_entry_tenant_interval ON usage_entry (tenant, started_at, ended_at);
CREATE INDEX usage_entry_interval ON usage_entry (started_at, ended_at);
CREATE INDEX usage_entry_job ON usage_entry (job_id);
