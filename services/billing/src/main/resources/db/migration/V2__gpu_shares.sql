-- GPU fractions and MIG instances: a row now also records what was held in thousandths of a GPU (gpu_milli:
-- 1000 per whole GPU plus each share's milli) and the exact usage in GPU-microseconds (gpu_micros =
-- gpu_milli x duration_millis). gpu_millis stays, rounded down from gpu_micros (exact for whole GPUs).
ALTER TABLE usage_entry ADD COLUMN gpu_milli BIGINT;
ALTER TABLE usage_entry ADD COLUMN gpu_micros BIGINT;
UPDATE usage_entry SET gpu_milli = gpu_count::BIGINT * 1000, gpu_micros = gpu_millis * 1000;
ALTER TABLE usage_entry ALTER COLUMN gpu_milli SET NOT NULL;
ALTER TABLE usage_entry ALTER COLUMN gpu_micros SET NOT NULL;

-- the whole-GPU rule gpu_millis = gpu_count x duration_millis no longer holds for fractions: replace it
DO $$
DECLARE c RECORD;
BEGIN
    FOR c IN SELECT conname FROM pg_constraint
             WHERE conrelid = 'usage_entry'::regclass AND contype = 'c'
               AND pg_get_constraintdef(oid) LIKE '%gpu_millis = %gpu_count%'
    LOOP
        EXECUTE format('ALTER TABLE usage_entry DROP CONSTRAINT %I', c.conname);
    END LOOP;
END $$;

ALTER TABLE usage_entry ADD CONSTRAINT usage_entry_gpu_milli CHECK (gpu_milli >= gpu_count::BIGINT * 1000);
ALTER TABLE usage_entry ADD CONSTRAINT usage_entry_gpu_micros CHECK (gpu_micros = gpu_milli * duration_millis);
ALTER TABLE usage_entry ADD CONSTRAINT usage_entry_gpu_millis CHECK (gpu_millis = gpu_micros / 1000);
