-- A tenant's jobs that have not ended, counted at every submission against gantry.admission.max-open-jobs: a partial
-- index holds only those, so the count does not grow with the tenant's history.
CREATE INDEX jobs_open_by_tenant ON jobs (tenant) WHERE state NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED');
