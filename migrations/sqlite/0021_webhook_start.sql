-- The webhook feed's first start on this database (`webhook_start`,
-- docs/protocol.md "Webhooks"): one row once a feed has started here. With
-- `webhook_start = "now"` that start put every channel's cursor at its last
-- seq in the same transaction, so entries stored before it are not sent.
-- started_at: ms since the epoch; start: "now" or "beginning".
CREATE TABLE webhook_feed (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    started_at INTEGER NOT NULL,
    start TEXT NOT NULL
);

-- A database whose feed already ran before this table existed (it has
-- cursors) counts as started: its cursors say where each channel is.
INSERT INTO webhook_feed (id, started_at, start)
SELECT 1, 0, 'beginning' WHERE EXISTS (SELECT 1 FROM webhook_cursors);
