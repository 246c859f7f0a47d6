-- Version 1.2 (protocol.md §16): mentions and notification settings.
-- Additive: columns that are NULL or a constant by default (no table rewrite),
-- two small tables and one partial index.
--
-- message rows: the mentioned users kept at commit (members then; a JSON
-- array in byte order, NULL: none), the users asked for (the idempotency
-- key covers them: the same JSON of the request's list, sorted and without
-- repeats; NULL: none), whether it mentions all, and (webhooks on) whom the
-- webhook should notify (a JSON array; NULL: not computed). A delete clears
-- the first three with the text.
ALTER TABLE messages ADD COLUMN mentions TEXT;
ALTER TABLE messages ADD COLUMN mentions_asked TEXT;
ALTER TABLE messages ADD COLUMN mention_all BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE messages ADD COLUMN notify_members TEXT;
-- unreadMentions: a channel's messages that mention all, above a watermark,
-- with their sender (an index-only range; a delete clears the flag).
CREATE INDEX messages_mention_all ON messages (channel_id, seq, sender_id) WHERE mention_all;

-- One row per (mentioned user, channel, seq) of a message that is not
-- deleted, not the user's own and does not mention all (those are counted
-- from messages_mention_all, so no message counts twice): unreadMentions
-- counts a user's rows above its read watermark from this key alone. Written in the batch that stores
-- the message; deleted with the message's text, and with the channel.
CREATE TABLE mentions (
    user_id    TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    seq        BIGINT NOT NULL,
    PRIMARY KEY (user_id, channel_id, seq)
);

-- A user's notification settings in a channel (PUT
-- /v1/me/channels/{channelId}/settings): notify 'all' (the default, also
-- when there is no row), 'mentions' or 'none', and a snooze until then (ms;
-- NULL: none). Kept when the user leaves (a rejoin finds them); deleted with
-- the channel.
CREATE TABLE channel_settings (
    channel_id   TEXT NOT NULL,
    user_id      TEXT NOT NULL,
    notify       TEXT NOT NULL DEFAULT 'all' CHECK (notify IN ('all', 'mentions', 'none')),
    snooze_until BIGINT,
    PRIMARY KEY (channel_id, user_id)
);
