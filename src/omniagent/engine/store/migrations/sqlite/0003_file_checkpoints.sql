-- File checkpoints (engine/session/rewind.py): the content a file had before the engine's own tools (write, edit) first
-- changed it during one assistant message, so `session.rewind` can put the workspace back as it was at a message.
-- Keyed by the message's id, which orders checkpoints in time: the state of a path at message M is the earliest
-- checkpoint of that path with message_id >= M (none: the tools never changed it since). Rows outlive a rewind
-- (they stay true facts about the file's past) and go with their session.
-- `content` NULL with `kept` 1: the file did not exist. `kept` 0: the content was withheld (it held a secret answer
-- of the session), so a rewind leaves that file as it is.
CREATE TABLE file_checkpoints (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    message_id INTEGER NOT NULL,
    path TEXT NOT NULL,
    content BLOB,
    mode INTEGER,
    kept INTEGER NOT NULL CHECK (kept IN (0, 1)),
    PRIMARY KEY (session_id, message_id, path)
) STRICT, WITHOUT ROWID;
