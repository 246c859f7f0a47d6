-- Version 1.2 (protocol.md §17): moderation.
--
-- A channel's posting role (an announcement channel: only moderators store
-- messages) and slow mode (ms between two messages of one member; 0: off).
-- The defaults fill existing rows without rewriting the table.
ALTER TABLE channels ADD COLUMN posting_role TEXT NOT NULL DEFAULT 'member'
    CHECK (posting_role IN ('member', 'moderator'));
ALTER TABLE channels ADD COLUMN slow_mode_ms BIGINT NOT NULL DEFAULT 0
    CHECK (slow_mode_ms BETWEEN 0 AND 3600000);

-- What moderation keeps of a user in a channel, apart from the membership so
-- that leaving and joining again clears neither: until when the user is
-- muted (ms; NULL: not muted) and the ts of its last stored `message` entry
-- (kept while the channel is in slow mode; NULL: none known). Read with the
-- members under the channel lock by every batch; deleted with the channel.
CREATE TABLE member_limits (
    channel_id      TEXT NOT NULL,
    user_id         TEXT NOT NULL,
    muted_until     BIGINT,
    last_message_ts BIGINT,
    PRIMARY KEY (channel_id, user_id)
);

-- Users banned from a channel: refused when they join a public channel again,
-- until the ban is lifted or a moderator or the admin adds them back.
CREATE TABLE bans (
    channel_id TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    banned_at  BIGINT NOT NULL,
    -- The moderator who banned; NULL for the admin token.
    banned_by  TEXT,
    PRIMARY KEY (channel_id, user_id)
);
-- GET /v1/channels/{channelId}/bans pages in byte order of the user id.
CREATE INDEX bans_by_channel_user_bytes ON bans (channel_id, user_id COLLATE "C");

-- A user's blocks of other users (PUT /v1/me/blocks/{userId}).
CREATE TABLE blocks (
    blocker_id TEXT NOT NULL,
    blocked_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
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
    created_at  BIGINT NOT NULL,
    UNIQUE (message_id, reporter_id)
);
CREATE INDEX flags_by_channel ON flags (channel_id);
