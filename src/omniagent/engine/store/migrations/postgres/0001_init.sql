-- The event log and the tables derived from it (the PostgreSQL spelling of sqlite/0001_init.sql: the same tables,
-- columns and keys; integers are BIGINT, since times are milliseconds since the epoch).
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    root TEXT NOT NULL,
    profile TEXT NOT NULL,
    model TEXT NOT NULL,
    reasoning TEXT NOT NULL,
    config_rev BIGINT NOT NULL,
    max_rounds BIGINT,
    system_prompt TEXT,
    title TEXT NOT NULL,
    message_count BIGINT NOT NULL DEFAULT 0,
    usage_input BIGINT NOT NULL DEFAULT 0,
    usage_output BIGINT NOT NULL DEFAULT 0,
    usage_reasoning BIGINT NOT NULL DEFAULT 0,
    usage_cache_read BIGINT NOT NULL DEFAULT 0,
    usage_cache_write BIGINT NOT NULL DEFAULT 0,
    last_input BIGINT NOT NULL DEFAULT 0,
    last_output BIGINT NOT NULL DEFAULT 0,
    last_reasoning BIGINT NOT NULL DEFAULT 0,
    last_cache_read BIGINT NOT NULL DEFAULT 0,
    last_cache_write BIGINT NOT NULL DEFAULT 0,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL,
    origin_type TEXT NOT NULL CHECK (origin_type IN ('root', 'child', 'fork')),
    parent_id TEXT,
    parent_message_id BIGINT,
    parent_part_id BIGINT,
    source_id TEXT,
    agent TEXT,
    name TEXT,
    seq_high BIGINT NOT NULL DEFAULT 0,
    message_id_high BIGINT NOT NULL DEFAULT 0,
    run_id_high BIGINT NOT NULL DEFAULT 0,
    input_id_high BIGINT NOT NULL DEFAULT 0,
    open_run_id BIGINT,
    open_run_kind TEXT,
    open_run_started_at_ms BIGINT,
    CHECK ((origin_type = 'child') = (parent_id IS NOT NULL)),
    CHECK ((origin_type = 'fork') = (source_id IS NOT NULL))
);
CREATE INDEX sessions_recent ON sessions (updated_at_ms DESC, id DESC);
CREATE INDEX sessions_children ON sessions (parent_id, updated_at_ms DESC, id DESC);

CREATE TABLE events (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    committed_at_ms BIGINT NOT NULL,
    name TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);

CREATE TABLE configs (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    config_rev BIGINT NOT NULL,
    model TEXT NOT NULL,
    reasoning TEXT NOT NULL,
    max_rounds BIGINT,
    PRIMARY KEY (session_id, config_rev)
);

CREATE TABLE messages (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    id BIGINT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'compaction')),
    run_id BIGINT,
    config_rev BIGINT,
    payload TEXT NOT NULL,
    PRIMARY KEY (session_id, id)
);

CREATE TABLE parts (
    session_id TEXT NOT NULL,
    message_id BIGINT NOT NULL,
    part_id BIGINT NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (session_id, message_id, part_id),
    FOREIGN KEY (session_id, message_id) REFERENCES messages (session_id, id) ON DELETE CASCADE
);

CREATE TABLE runs (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id BIGINT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('turn', 'compaction')),
    config_rev BIGINT NOT NULL,
    started_at_ms BIGINT,
    ended_at_ms BIGINT,
    outcome TEXT,
    PRIMARY KEY (session_id, run_id)
);

CREATE TABLE pending_inputs (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    input_id BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (session_id, input_id)
);
