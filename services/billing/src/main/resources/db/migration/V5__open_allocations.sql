-- Allocations granted and not yet released, one row per node (the shape of a ledger entry without its end), so a
-- budget's month-to-date spend includes what running jobs have held so far. Deleted when the release is rated;
-- never invoiced.
CREATE TABLE open_allocation_node (
    entry_id      TEXT PRIMARY KEY,
    allocation_id TEXT        NOT NULL,
    tenant        TEXT        NOT NULL,
    job_id        TEXT        NOT NULL,
    attempt       INTEGER     NOT NULL,
    node_id       TEXT        NOT NULL,
    gpu_model     TEXT,
    gpu_count     INTEGER     NOT NULL,
    gpu_milli     BIGINT      NOT NULL,
    cpu_millis    BIGINT      NOT NULL,
    memory_mib    BIGINT      NOT NULL,
    granted_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX open_allocation_node_allocation ON open_allocation_node (allocation_id);
CREATE INDEX open_allocation_node_tenant ON open_allocation_node (tenant);
