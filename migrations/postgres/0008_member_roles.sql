-- Version 1.2 (protocol.md §13.1): a member's role. Every member of a channel
-- made before it is a `member` (the default fills existing rows without
-- rewriting the table).
ALTER TABLE members ADD COLUMN role TEXT NOT NULL DEFAULT 'member'
    CHECK (role IN ('member', 'moderator', 'owner'));
-- GET /v1/channels/{channelId}/members pages in byte order of the user id,
-- whatever the database's collation: this index serves
-- `WHERE channel_id = $1 ... ORDER BY user_id COLLATE "C"`.
CREATE INDEX members_by_channel_user_bytes ON members (channel_id, user_id COLLATE "C");
