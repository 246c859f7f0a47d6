-- Version 1.2 (protocol.md §19): retention and export. Same columns and
-- indexes as the PostgreSQL migration (SQLite's BINARY collation orders by
-- bytes). Numbered 0020 (not 0019) so that it never clashes with the user
-- erasure's migration.
--
-- A message erased by the retention sweep: deleted as by a delete but with
-- no delete entry; reads show it with `"expired": true`.
ALTER TABLE messages ADD COLUMN expired INTEGER NOT NULL DEFAULT 0;

-- A channel's own retention (`retentionSecs`), seconds; NULL: the server's
-- `retention_secs`; 0: forever. retention_swept_seq: every entry at or below
-- it has been looked at by the sweep.
ALTER TABLE channels ADD COLUMN retention_secs INTEGER
    CHECK (retention_secs BETWEEN 0 AND 3155760000);
ALTER TABLE channels ADD COLUMN retention_swept_seq INTEGER NOT NULL DEFAULT 0;

-- The export's keyset pages, each by an index that starts with the user.
CREATE INDEX IF NOT EXISTS messages_by_sender_id ON messages (sender_id, message_id);
CREATE INDEX IF NOT EXISTS reactions_by_user ON reactions (user_id, message_id, emoji);
CREATE INDEX IF NOT EXISTS attachments_by_uploader ON attachments (uploader_id, attachment_id);
CREATE INDEX IF NOT EXISTS members_by_user_channel ON members (user_id, channel_id);
