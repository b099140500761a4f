-- Billing in money. The ledger keeps what rating into money needs besides GPU time: CPU and memory held (for
-- optional CPU/memory prices) and why the allocation was released (for fault credits). Rows written before this
-- migration keep 0 / 0 / NULL: their CPU and memory are unknown and they are never credited.
ALTER TABLE usage_entry ADD COLUMN cpu_millis BIGINT NOT NULL DEFAULT 0 CHECK (cpu_millis >= 0);
ALTER TABLE usage_entry ADD COLUMN memory_mib BIGINT NOT NULL DEFAULT 0 CHECK (memory_mib >= 0);
ALTER TABLE usage_entry ADD COLUMN release_reason TEXT;

-- What a job's spec says that prices depend on (from JobSubmitted); first write wins, redelivery changes nothing.
CREATE TABLE job_terms (
    job_id         TEXT PRIMARY KEY,
    tenant         TEXT        NOT NULL,
    queue          TEXT,
    priority_class TEXT,
    gpu_tier       TEXT,
    recorded_at    TIMESTAMPTZ NOT NULL
);

-- Checkpoints the runs committed (from CheckpointCommitted), once per event id: where a credited run's lost work starts.
CREATE TABLE run_checkpoint (
    event_id     TEXT PRIMARY KEY,
    job_id       TEXT        NOT NULL,
    attempt      INTEGER     NOT NULL,
    committed_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX run_checkpoint_job ON run_checkpoint (job_id, attempt);

-- Every version of the price book, insert-only; the highest version is in force and prices all of history.
CREATE TABLE price_book (
    version    BIGINT PRIMARY KEY CHECK (version >= 1),
    currency   TEXT        NOT NULL,
    document   TEXT        NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL,
    applied_by TEXT        NOT NULL
);

-- Issued invoices and notes, insert-only: a document and its lines are written in one transaction, and
-- (tenant, month, sequence) is unique, so a month's invoice exists at most once whatever crashes or retries.
CREATE TABLE invoice_document (
    document_id        TEXT PRIMARY KEY,
    kind               TEXT        NOT NULL CHECK (kind IN ('INVOICE', 'CREDIT_NOTE', 'DEBIT_NOTE')),
    tenant             TEXT        NOT NULL,
    month              TEXT        NOT NULL,
    time_zone          TEXT        NOT NULL,
    currency           TEXT        NOT NULL,
    sequence           INTEGER     NOT NULL CHECK (sequence >= 0),
    corrects           TEXT REFERENCES invoice_document (document_id),
    price_book_version BIGINT      NOT NULL,
    total              NUMERIC     NOT NULL,
    issued_at          TIMESTAMPTZ NOT NULL,
    UNIQUE (tenant, month, sequence),
    CHECK ((sequence = 0) = (kind = 'INVOICE'))
);

CREATE TABLE invoice_line (
    document_id TEXT    NOT NULL REFERENCES invoice_document (document_id),
    line_no     INTEGER NOT NULL,
    job_id      TEXT    NOT NULL,
    gpu_model   TEXT,
    component   TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    reason      TEXT,
    unit_price  NUMERIC,
    quantity    BIGINT  NOT NULL,
    amount      NUMERIC NOT NULL,
    PRIMARY KEY (document_id, line_no)
);
