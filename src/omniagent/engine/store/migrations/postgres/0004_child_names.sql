-- Child sessions' names are unique among their parent's children, as sqlite/0004_child_names.sql.
CREATE UNIQUE INDEX sessions_child_name ON sessions (parent_id, name) WHERE parent_id IS NOT NULL;
