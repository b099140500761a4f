-- The job read model. Rows are written from the events on Kafka (and, for speed, by the POST that published
-- the JobSubmitted), so everything here can be rebuilt by replaying the topics into an empty schema.

CREATE TABLE jobs (
    job_id       VARCHAR(64)  PRIMARY KEY,
    tenant       VARCHAR(64)  NOT NULL,
    -- name, spec and submitted_at come from JobSubmitted (or JobQueued/JobDispatched, which carry the spec);
    -- they are null only while no event that carries them has been seen yet
    name         VARCHAR(128),
    spec_json    TEXT,
    submitted_at TIMESTAMPTZ,
    -- derived from status_json by the core, kept as columns to filter and sort on
    state        VARCHAR(16)  NOT NULL,
    attempt      INT          NOT NULL,
    -- the core's JobStatus (a join over every event applied so far)
    status_json  TEXT         NOT NULL,
    updated_at   TIMESTAMPTZ  NOT NULL
);

CREATE INDEX jobs_by_tenant ON jobs (tenant, submitted_at DESC);
CREATE INDEX jobs_by_state ON jobs (state, submitted_at DESC);

-- Every event about a job, once (the primary key is the envelope's eventId): the job's history.
CREATE TABLE job_events (
    event_id    VARCHAR(64)  PRIMARY KEY,
    job_id      VARCHAR(64)  NOT NULL,
    seq         BIGSERIAL    NOT NULL,
    type        VARCHAR(32)  NOT NULL,
    occurred_at TIMESTAMPTZ  NOT NULL,
    attempt     INT,
    detail      TEXT,
    source      VARCHAR(64)  NOT NULL
);

CREATE INDEX job_events_by_job ON job_events (job_id, occurred_at, seq);

-- Idempotency-Key claims: one per (tenant, key). The request hash is the SHA-256 of the normalized spec, so a
-- resubmission that differs only in whitespace, field order or spelled-out defaults is still "the same body".
CREATE TABLE idempotency_keys (
    tenant       VARCHAR(64)  NOT NULL,
    idem_key     VARCHAR(255) NOT NULL,
    request_hash VARCHAR(64)  NOT NULL,
    job_id       VARCHAR(64)  NOT NULL,
    created_at   TIMESTAMPTZ  NOT NULL,
    PRIMARY KEY (tenant, idem_key)
);
