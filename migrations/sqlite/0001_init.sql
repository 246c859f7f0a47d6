-- chatd schema, SQLite. Same tables and keys as the PostgreSQL schema;
-- message_id is lower-case hyphenated UUID text.
CREATE TABLE channels (
    channel_id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    last_seq   INTEGER NOT NULL DEFAULT 0,
    last_ts    INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE members (
    channel_id TEXT NOT NULL REFERENCES channels (channel_id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL,
    joined_at  INTEGER NOT NULL,
    PRIMARY KEY (channel_id, user_id)
);
CREATE INDEX members_by_user ON members (user_id);

CREATE TABLE messages (
    message_id    TEXT PRIMARY KEY,
    channel_id    TEXT NOT NULL REFERENCES channels (channel_id),
    seq           INTEGER NOT NULL CHECK (seq >= 1),
    sender_id     TEXT NOT NULL,
    client_msg_id TEXT NOT NULL,
    body          TEXT NOT NULL,
    ts            INTEGER NOT NULL,
    CONSTRAINT messages_channel_seq UNIQUE (channel_id, seq),
    CONSTRAINT messages_idempotency_key UNIQUE (sender_id, client_msg_id)
);

CREATE TABLE watermarks (
    channel_id    TEXT NOT NULL,
    user_id       TEXT NOT NULL,
    delivered_seq INTEGER NOT NULL DEFAULT 0,
    read_seq      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (channel_id, user_id),
    CHECK (read_seq <= delivered_seq)
);
