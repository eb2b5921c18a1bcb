-- When each queued input was queued, as a column, as sqlite/0005_pending_queued_at.sql.
ALTER TABLE pending_inputs ADD COLUMN queued_at_ms BIGINT NOT NULL DEFAULT 0;
UPDATE pending_inputs SET queued_at_ms = coalesce((payload::jsonb ->> 'queued_at_ms')::bigint, 0);
