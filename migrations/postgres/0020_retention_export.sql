-- Version 1.2 (protocol.md §19): retention and export. Numbered 0020 (not
-- 0019) so that it never clashes with the user erasure's migration.
--
-- A message erased by the retention sweep: deleted as by a delete (its text,
-- edits, previews, mentions, reactions and attachments gone) but with no
-- delete entry; reads show it with `"expired": true`. Additive: a constant
-- default (no table rewrite).
ALTER TABLE messages ADD COLUMN expired BOOLEAN NOT NULL DEFAULT FALSE;

-- A channel's own retention (`retentionSecs`, PATCH), seconds; NULL: the
-- server's `retention_secs`; 0: kept forever whatever the server says.
-- retention_swept_seq: every entry at or below it has been looked at by the
-- sweep (`ts` never decreases as `seq` grows, so the next sweep starts above
-- it and reads only entries it has not judged).
ALTER TABLE channels ADD COLUMN retention_secs BIGINT
    CHECK (retention_secs BETWEEN 0 AND 3155760000);
ALTER TABLE channels ADD COLUMN retention_swept_seq BIGINT NOT NULL DEFAULT 0;

-- The export (GET /v1/users/{userId}/export) pages through a user's
-- messages, reactions and uploads by keyset, each by an index that starts
-- with the user: a page costs the same at the start and at the millionth row.
CREATE INDEX IF NOT EXISTS messages_by_sender_id ON messages (sender_id, message_id);
CREATE INDEX IF NOT EXISTS reactions_by_user ON reactions (user_id, message_id, emoji COLLATE "C");
CREATE INDEX IF NOT EXISTS attachments_by_uploader ON attachments (uploader_id, attachment_id COLLATE "C");
CREATE INDEX IF NOT EXISTS members_by_user_channel_bytes ON members (user_id, channel_id COLLATE "C");
