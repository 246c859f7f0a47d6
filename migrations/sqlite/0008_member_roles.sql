-- Version 1.2 (protocol.md §13.1): a member's role. Every member of a channel
-- made before it is a `member`. The primary key (channel_id, user_id), in
-- SQLite's BINARY (byte) collation, serves the members route's paging.
ALTER TABLE members ADD COLUMN role TEXT NOT NULL DEFAULT 'member'
    CHECK (role IN ('member', 'moderator', 'owner'));
