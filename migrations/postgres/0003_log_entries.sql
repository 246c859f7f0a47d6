-- The channel log (protocol §8): every row of `messages` is an entry of its
-- channel's one gapless sequence, of kind message, edit, delete or reaction.
-- Rows written before this migration are messages (the default). Additive:
-- v1 reads and writes keep working on the same rows.
ALTER TABLE messages ADD COLUMN kind TEXT NOT NULL DEFAULT 'message'
    CHECK (kind IN ('message', 'edit', 'delete', 'reaction'));
-- edit, delete, reaction: the target message.
ALTER TABLE messages ADD COLUMN target_id UUID;
-- reaction: the emoji and 'add' or 'remove'.
ALTER TABLE messages ADD COLUMN emoji TEXT;
ALTER TABLE messages ADD COLUMN op TEXT CHECK (op IN ('add', 'remove'));
-- reaction rows: the entry changed nothing (an `add` of a held reaction, a
-- `remove` of one not held), so a client folding entries onto a read state
-- knows without the holders' list.
ALTER TABLE messages ADD COLUMN noop BOOLEAN NOT NULL DEFAULT FALSE;
-- message rows: the current text when edited (the latest edit's) and its ts.
-- `body` keeps the text as sent, so a retried MSG_SEND still matches it.
ALTER TABLE messages ADD COLUMN edited_body TEXT;
ALTER TABLE messages ADD COLUMN edited_at BIGINT;
-- message rows: deleted; `body`, `edited_body` and every edit's `body` are
-- then erased ('' / NULL).
ALTER TABLE messages ADD COLUMN deleted BOOLEAN NOT NULL DEFAULT FALSE;
-- Finds a message's edits, to erase them when it is deleted.
CREATE INDEX messages_by_target ON messages (target_id) WHERE target_id IS NOT NULL;

-- Who holds which reaction on which message now (rows go on remove).
CREATE TABLE reactions (
    message_id UUID NOT NULL,
    emoji      TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    PRIMARY KEY (message_id, emoji, user_id)
);
-- Per (message, emoji): how many hold it, and the seq at which the count
-- last rose from 0 (the "first use" reads sort by). The row goes when the
-- count reaches 0.
CREATE TABLE reaction_counts (
    message_id UUID NOT NULL,
    emoji      TEXT NOT NULL,
    count      BIGINT NOT NULL CHECK (count > 0),
    first_seq  BIGINT NOT NULL,
    PRIMARY KEY (message_id, emoji)
);
-- HELLO's unread counts (message entries after a seq, not deleted, not the
-- reader's): an index-only range scan per channel (docs/performance.md).
CREATE INDEX messages_unread ON messages (channel_id, seq) INCLUDE (sender_id)
    WHERE kind = 'message' AND NOT deleted;
