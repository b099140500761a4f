-- The automatic issuing re-issues a month older than the last one only when an input that changes its amount was
-- recorded since it last looked: a ledger row reaching the month, or the terms or a checkpoint of a job with such a
-- row. Checkpoints now keep when they were recorded (NULL for older rows: they never make a month be looked at
-- again); indexes make "recorded since" a short range scan.
ALTER TABLE run_checkpoint ADD COLUMN recorded_at TIMESTAMPTZ;
CREATE INDEX usage_entry_recorded ON usage_entry (recorded_at);
CREATE INDEX job_terms_recorded ON job_terms (recorded_at);
CREATE INDEX run_checkpoint_recorded ON run_checkpoint (recorded_at);

-- Up to when the automatic issuing has looked at the inputs recorded (one row, only ever moved forward), shared by
-- every billing instance so a restart or another instance goes on from there.
CREATE TABLE invoice_watermark (
    id            SMALLINT PRIMARY KEY CHECK (id = 1),
    looked_before TIMESTAMPTZ NOT NULL
);
