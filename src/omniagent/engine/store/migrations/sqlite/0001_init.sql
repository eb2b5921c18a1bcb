-- The event log and the tables derived from it. Every durable broadcast is one `events` row written in the same
-- transaction as the projection change it describes.
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    root TEXT NOT NULL,
    profile TEXT NOT NULL,
    model TEXT NOT NULL,
    reasoning TEXT NOT NULL,
    config_rev INTEGER NOT NULL,
    max_rounds INTEGER,
    system_prompt TEXT,
    title TEXT NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0,
    usage_input INTEGER NOT NULL DEFAULT 0,
    usage_output INTEGER NOT NULL DEFAULT 0,
    usage_reasoning INTEGER NOT NULL DEFAULT 0,
    usage_cache_read INTEGER NOT NULL DEFAULT 0,
    usage_cache_write INTEGER NOT NULL DEFAULT 0,
    last_input INTEGER NOT NULL DEFAULT 0,
    last_output INTEGER NOT NULL DEFAULT 0,
    last_reasoning INTEGER NOT NULL DEFAULT 0,
    last_cache_read INTEGER NOT NULL DEFAULT 0,
    last_cache_write INTEGER NOT NULL DEFAULT 0,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    origin_type TEXT NOT NULL CHECK (origin_type IN ('root', 'child', 'fork')),
    parent_id TEXT,
    parent_message_id INTEGER,
    parent_part_id INTEGER,
    source_id TEXT,
    agent TEXT,
    name TEXT,
    -- High-water marks: ids are never reused, even for drafts lost in a crash.
    seq_high INTEGER NOT NULL DEFAULT 0,
    message_id_high INTEGER NOT NULL DEFAULT 0,
    run_id_high INTEGER NOT NULL DEFAULT 0,
    input_id_high INTEGER NOT NULL DEFAULT 0,
    -- The open-run marker: set while a run is open, so a crash leaves "a terminal event is owed".
    open_run_id INTEGER,
    open_run_kind TEXT,
    open_run_started_at_ms INTEGER,
    CHECK ((origin_type = 'child') = (parent_id IS NOT NULL)),
    CHECK ((origin_type = 'fork') = (source_id IS NOT NULL))
) STRICT;
CREATE INDEX sessions_recent ON sessions (updated_at_ms DESC, id DESC);
CREATE INDEX sessions_children ON sessions (parent_id, updated_at_ms DESC, id DESC);

CREATE TABLE events (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    committed_at_ms INTEGER NOT NULL,
    name TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE configs (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    config_rev INTEGER NOT NULL,
    model TEXT NOT NULL,
    reasoning TEXT NOT NULL,
    max_rounds INTEGER,
    PRIMARY KEY (session_id, config_rev)
) STRICT, WITHOUT ROWID;

CREATE TABLE messages (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    id INTEGER NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'compaction')),
    run_id INTEGER,
    config_rev INTEGER,
    payload TEXT NOT NULL,
    PRIMARY KEY (session_id, id)
) STRICT, WITHOUT ROWID;

CREATE TABLE parts (
    session_id TEXT NOT NULL,
    message_id INTEGER NOT NULL,
    part_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (session_id, message_id, part_id),
    FOREIGN KEY (session_id, message_id) REFERENCES messages (session_id, id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

CREATE TABLE runs (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('turn', 'compaction')),
    config_rev INTEGER NOT NULL,
    started_at_ms INTEGER,
    ended_at_ms INTEGER,
    outcome TEXT,
    PRIMARY KEY (session_id, run_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE pending_inputs (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    input_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (session_id, input_id)
) STRICT, WITHOUT ROWID;
