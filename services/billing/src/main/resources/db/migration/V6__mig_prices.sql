-- MIG instances held per ledger row, by profile ("1g.10gb=2;3g.40gb=1"), so a price book may price a profile on
-- its own; rows written before are '' (every share priced by its thousandths, as they were).
ALTER TABLE usage_entry ADD COLUMN mig_instances TEXT NOT NULL DEFAULT '';
-- the profile of an invoice line priced per MIG instance (component MIG); NULL for every other line
ALTER TABLE invoice_line ADD COLUMN mig_profile TEXT;
