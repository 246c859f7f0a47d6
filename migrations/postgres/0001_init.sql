-- chatd schema, PostgreSQL. One row per channel holds the channel's sequence
-- watermark (last_seq) and the newest ts, locked by writers to assign seqs.
CREATE TABLE channels (
    channel_id TEXT PRIMARY KEY,
    created_at BIGINT NOT NULL,
    last_seq   BIGINT NOT NULL DEFAULT 0,
    last_ts    BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE members (
    channel_id TEXT NOT NULL REFERENCES channels (channel_id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL,
    joined_at  BIGINT NOT NULL,
    PRIMARY KEY (channel_id, user_id)
);
CREATE INDEX members_by_user ON members (user_id);

CREATE TABLE messages (
    message_id    UUID PRIMARY KEY,
    channel_id    TEXT NOT NULL REFERENCES channels (channel_id),
    seq           BIGINT NOT NULL CHECK (seq >= 1),
    sender_id     TEXT NOT NULL,
    client_msg_id TEXT NOT NULL,
    body          TEXT NOT NULL,
    ts            BIGINT NOT NULL,
    CONSTRAINT messages_channel_seq UNIQUE (channel_id, seq),
    CONSTRAINT messages_idempotency_key UNIQUE (sender_id, client_msg_id)
);

-- Per-(channel, user) receipts watermarks; kept when a member leaves so they never go back.
CREATE TABLE watermarks (
    channel_id    TEXT NOT NULL,
    user_id       TEXT NOT NULL,
    delivered_seq BIGINT NOT NULL DEFAULT 0,
    read_seq      BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (channel_id, user_id),
    CHECK (read_seq <= delivered_seq)
);
