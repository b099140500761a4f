-- MIG instances held per open allocation node, by profile, as the release's ledger row will keep them
-- (usage_entry.mig_instances), so a running job's budget spend prices a profile with a price of its own as its
-- invoice will; rows written before are '' (their instances count by their share until the release is rated).
ALTER TABLE open_allocation_node ADD COLUMN mig_instances TEXT NOT NULL DEFAULT '';
