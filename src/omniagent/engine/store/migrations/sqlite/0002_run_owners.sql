-- Run ownership (engine/store/ownership.py): each process serving the store registers with a lease it renews;
-- an open run and a reserved compaction name the owner that opened them, so a process ends only runs whose owner
-- is gone. Runs opened before this migration have no owner and count as orphans.
CREATE TABLE owners (
    id TEXT PRIMARY KEY,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    started_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL
) STRICT;
ALTER TABLE sessions ADD COLUMN open_run_owner TEXT;
ALTER TABLE runs ADD COLUMN owner TEXT;
