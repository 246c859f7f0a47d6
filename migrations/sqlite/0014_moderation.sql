-- Version 1.2 (protocol.md §17): moderation. Same tables and keys as the
-- PostgreSQL migration (SQLite's BINARY collation orders by bytes).
--
-- A channel's posting role (an announcement channel: only moderators store
-- messages) and slow mode (ms between two messages of one member; 0: off).
ALTER TABLE channels ADD COLUMN posting_role TEXT NOT NULL DEFAULT 'member'
    CHECK (posting_role IN ('member', 'moderator'));
ALTER TABLE channels ADD COLUMN slow_mode_ms INTEGER NOT NULL DEFAULT 0
    CHECK (slow_mode_ms BETWEEN 0 AND 3600000);

-- What moderation keeps of a user in a channel, apart from the membership so
-- that leaving and joining again clears neither: until when the user is
-- muted (ms; NULL: not muted) and the ts of its last stored `message` entry
-- (kept while the channel is in slow mode; NULL: none known).
CREATE TABLE member_limits (
    channel_id      TEXT NOT NULL,
    user_id         TEXT NOT NULL,
    muted_until     INTEGER,
    last_message_ts INTEGER,
    PRIMARY KEY (channel_id, user_id)
);

-- Users banned from a channel.
CREATE TABLE bans (
    channel_id TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    banned_at  INTEGER NOT NULL,
    banned_by  TEXT,
    PRIMARY KEY (channel_id, user_id)
);

-- A user's blocks of other users.
CREATE TABLE blocks (
    blocker_id TEXT NOT NULL,
    blocked_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (blocker_id, blocked_id)
);
CREATE INDEX blocks_by_blocked ON blocks (blocked_id);

-- Flags (reports) of messages: one per (message, reporter), listed for the
-- admin in flag order (flag_id is a UUIDv7 as lower-case text, so text order
-- is time order). A flag keeps no text of the message: a flagged message that
-- is deleted later keeps its flag and loses its text. Deleted with the channel.
CREATE TABLE flags (
    flag_id     TEXT PRIMARY KEY,
    message_id  TEXT NOT NULL,
    channel_id  TEXT NOT NULL,
    reporter_id TEXT NOT NULL,
    reason      TEXT NOT NULL CHECK (reason IN ('spam', 'abuse', 'other')),
    note        TEXT,
    created_at  INTEGER NOT NULL,
    UNIQUE (message_id, reporter_id)
);
CREATE INDEX flags_by_channel ON flags (channel_id);
