-- A channel's display name (0..200 characters) and metadata (a JSON object,
-- stored as its serialized text); NULL when never set or cleared.
ALTER TABLE channels ADD COLUMN name TEXT;
ALTER TABLE channels ADD COLUMN metadata TEXT;
