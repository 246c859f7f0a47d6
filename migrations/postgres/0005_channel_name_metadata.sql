-- A channel's display name (0..200 characters) and metadata (a JSON object,
-- stored as its serialized text); NULL when never set or cleared.
ALTER TABLE channels ADD COLUMN name TEXT;
ALTER TABLE channels ADD COLUMN metadata TEXT;
-- GET /v1/channels pages in byte order of the id, whatever the database's
-- collation: this index serves `ORDER BY channel_id COLLATE "C"`.
CREATE INDEX channels_by_id_bytes ON channels (channel_id COLLATE "C");
