-- File checkpoints (engine/session/rewind.py), as sqlite/0003_file_checkpoints.sql.
CREATE TABLE file_checkpoints (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    message_id BIGINT NOT NULL,
    path TEXT NOT NULL,
    content BYTEA,
    mode BIGINT,
    kept BIGINT NOT NULL CHECK (kept IN (0, 1)),
    PRIMARY KEY (session_id, message_id, path)
);
