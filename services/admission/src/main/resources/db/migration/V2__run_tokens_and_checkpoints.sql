-- The hash of each run's token (from AllocationGranted.runTokenSha256): a task proves it belongs to its run by
-- presenting the token, which admission never sees except in that request.
CREATE TABLE run_tokens (
    job_id      VARCHAR(64)  NOT NULL,
    attempt     INT          NOT NULL,
    sha256      CHAR(64)     NOT NULL,
    PRIMARY KEY (job_id, attempt)
);

-- Every checkpoint a job's runs reported (from admission.checkpoint-events), once each.
CREATE TABLE checkpoints (
    event_id     VARCHAR(64)   PRIMARY KEY,
    job_id       VARCHAR(64)   NOT NULL,
    attempt      INT           NOT NULL,
    step         BIGINT        NOT NULL,
    path         VARCHAR(1024) NOT NULL,
    size_bytes   BIGINT,
    save_millis  BIGINT,
    committed_at TIMESTAMPTZ   NOT NULL
);

CREATE INDEX checkpoints_by_job ON checkpoints (job_id, committed_at DESC);
