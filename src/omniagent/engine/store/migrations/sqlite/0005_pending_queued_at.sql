-- When each queued input was queued, as a column (it was read out of the payload's JSON, which SQLite and
-- PostgreSQL spell differently): the tree scheduler serves the input waiting longest first.
ALTER TABLE pending_inputs ADD COLUMN queued_at_ms INTEGER NOT NULL DEFAULT 0;
UPDATE pending_inputs SET queued_at_ms = coalesce(json_extract(payload, '$.queued_at_ms'), 0);
