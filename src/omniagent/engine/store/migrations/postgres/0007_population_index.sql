-- The population count of session.list from the index alone, as sqlite/0007_population_index.sql.
CREATE INDEX sessions_population ON sessions (origin_type);
