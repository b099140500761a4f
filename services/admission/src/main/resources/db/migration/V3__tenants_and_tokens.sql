-- Tenants and API tokens admins manage (published on admission.access-events, which every service reads).
CREATE TABLE tenants (
    name         VARCHAR(63)  PRIMARY KEY,
    display_name VARCHAR(128),
    state        VARCHAR(16)  NOT NULL CHECK (state IN ('ACTIVE', 'DISABLED')),
    created_at   TIMESTAMPTZ  NOT NULL,
    updated_at   TIMESTAMPTZ  NOT NULL
);

-- Only the SHA-256 of a token's secret is stored: the secret is shown once, in the answer that created it.
CREATE TABLE api_tokens (
    token_id     VARCHAR(28)  PRIMARY KEY,
    tenant       VARCHAR(63)  NOT NULL REFERENCES tenants (name),
    role         VARCHAR(16)  NOT NULL CHECK (role IN ('TENANT', 'ADMIN')),
    sha256       CHAR(64)     NOT NULL UNIQUE,
    label        VARCHAR(128),
    created_at   TIMESTAMPTZ  NOT NULL,
    expires_at   TIMESTAMPTZ  NOT NULL,
    revoked_at   TIMESTAMPTZ,
    replaced_by  VARCHAR(28)
);

CREATE INDEX api_tokens_by_tenant ON api_tokens (tenant, created_at);
