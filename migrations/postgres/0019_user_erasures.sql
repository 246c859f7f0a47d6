-- Version 1.2 (protocol.md §19): erasing a user. One row per user ever
-- erased: `erased_at` (ms) is the user's erasure watermark, tokens for the
-- user issued before it (by `iat`) are refused; `pending` is true from the
-- moment the erasure is asked until every effect is stored, so a server
-- that stops mid-way resumes it at its next start.
CREATE TABLE user_erasures (
    user_id    TEXT PRIMARY KEY,
    erased_at  BIGINT NOT NULL,
    started_at BIGINT NOT NULL,
    pending    BOOLEAN NOT NULL
);
-- A user's reactions, uploads no message claimed and flags, found without
-- a scan of their tables.
CREATE INDEX reactions_by_user ON reactions (user_id);
CREATE INDEX attachments_unclaimed_by_uploader ON attachments (uploader_id) WHERE message_id IS NULL;
CREATE INDEX flags_by_reporter ON flags (reporter_id);
