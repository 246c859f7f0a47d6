-- Version 1.2 (protocol.md §15): attachments. Ids are text (UUIDv7, lower-case
-- hyphenated) on both databases.
--
-- One row per upload: its channel and uploader, what it is (type, size,
-- sha256, the filename given, an image's width and height), where its bytes
-- are (storage_key; thumbnail_key once made), and the message it belongs to
-- (NULL until a send claims it, in the transaction that stores the message)
-- and its place in that message's list (position). url_key: the random
-- HMAC key of its signed URLs (never rendered; gone with the row), and
-- their lifetime (attachment_url_ttl_secs when it was uploaded).
-- Deleted with the message, the channel or (orphan) after
-- attachment_orphan_ttl_secs; the storage keys then go to
-- attachment_removals in the same transaction.
CREATE TABLE attachments (
    attachment_id TEXT PRIMARY KEY,
    channel_id    TEXT NOT NULL,
    uploader_id   TEXT NOT NULL,
    content_type  TEXT NOT NULL,
    size          INTEGER NOT NULL,
    sha256        TEXT NOT NULL,
    filename      TEXT,
    width         INTEGER,
    height        INTEGER,
    created_at    INTEGER NOT NULL,
    message_id    TEXT,
    storage_key   TEXT NOT NULL,
    thumbnail_key TEXT,
    position      INTEGER NOT NULL DEFAULT 0,
    url_key       TEXT NOT NULL,
    url_ttl_secs  INTEGER NOT NULL
);
CREATE INDEX attachments_message ON attachments (message_id) WHERE message_id IS NOT NULL;
CREATE INDEX attachments_channel ON attachments (channel_id);
CREATE INDEX attachments_orphans ON attachments (created_at) WHERE message_id IS NULL;

-- The durable queue of storage objects to remove: written in the
-- transaction that deletes their rows, drained after the commit (and after
-- a restart), so a crash between the commit and the removal leaves no bytes
-- behind.
CREATE TABLE attachment_removals (
    storage_key TEXT PRIMARY KEY,
    queued_at   INTEGER NOT NULL
);
