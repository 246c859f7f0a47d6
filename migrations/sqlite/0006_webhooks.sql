-- Webhooks (protocol §12, docs/protocol.md "Webhooks").
-- Each entry's offlineMembers: the members other than the sender with no
-- open session when the entry was committed, a JSON array of user ids,
-- written in the entry's transaction while `webhook_url` is set (NULL when
-- it was not).
ALTER TABLE messages ADD COLUMN offline_members TEXT;
-- Per channel, the last seq the receiver answered 2xx for (or an operator
-- set, to replay: docs/reliability.md). No row: nothing delivered yet.
CREATE TABLE webhook_cursors (
    channel_id    TEXT PRIMARY KEY,
    delivered_seq INTEGER NOT NULL CHECK (delivered_seq >= 0),
    updated_at    INTEGER NOT NULL
);
-- Leases are a PostgreSQL matter (several nodes); the table exists on both
-- so the schemas stay alike. SQLite serves one node, which drives every feed.
CREATE TABLE webhook_leases (
    bucket     INTEGER PRIMARY KEY,
    owner      TEXT NOT NULL,
    expires_at INTEGER NOT NULL
);
