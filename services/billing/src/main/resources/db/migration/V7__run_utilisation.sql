-- placement's utilisation windows per run (placement.utilisation-events), for FinOps: GPU time held vs used and
-- idle allocations. One row per (allocation, window start): a redelivered window writes nothing.
CREATE TABLE run_utilisation (
    allocation_id  TEXT        NOT NULL,
    window_from    TIMESTAMPTZ NOT NULL,
    window_to      TIMESTAMPTZ NOT NULL,
    tenant         TEXT        NOT NULL,
    job_id         TEXT        NOT NULL,
    attempt        INT         NOT NULL,
    held_gpu_milli BIGINT      NOT NULL CHECK (held_gpu_milli >= 0),
    used_gpu_milli BIGINT      NOT NULL CHECK (used_gpu_milli >= 0 AND used_gpu_milli <= held_gpu_milli),
    samples        INT         NOT NULL,
    idle_since     TIMESTAMPTZ,
    PRIMARY KEY (allocation_id, window_from),
    CHECK (window_to >= window_from)
);
CREATE INDEX run_utilisation_tenant_to ON run_utilisation (tenant, window_to);
