-- When each user's last session closed (ms since the epoch): presence's
-- lastSeenAt, kept across restarts. Written in batches, only forward.
CREATE TABLE presence (
    user_id      TEXT PRIMARY KEY,
    last_seen_at BIGINT NOT NULL
);
