-- session.list counts its population (top-level sessions, or one parent's children) on every page: an index on the
-- origin lets that count read the index alone instead of every session row.
CREATE INDEX sessions_population ON sessions (origin_type);
