-- Webhooks (protocol §12, docs/protocol.md "Webhooks").
-- Each entry's offlineMembers: the members other than the sender with no
-- open session on any node when the entry was committed, a JSON array of
-- user ids, written in the entry's transaction while `webhook_url` is set
-- (NULL when it was not).
ALTER TABLE messages ADD COLUMN offline_members TEXT;
-- Per channel, the last seq the receiver answered 2xx for (or an operator
-- set, to replay: docs/reliability.md). No row: nothing delivered yet.
CREATE TABLE webhook_cursors (
    channel_id    TEXT PRIMARY KEY,
    delivered_seq BIGINT NOT NULL CHECK (delivered_seq >= 0),
    updated_at    BIGINT NOT NULL
);
-- Which node drives the feed of the channels of each bucket (a hash of the
-- channel id), until when (ms since the epoch, on the database's clock).
CREATE TABLE webhook_leases (
    bucket     INTEGER PRIMARY KEY,
    owner      TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
