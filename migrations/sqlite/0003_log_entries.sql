-- The channel log (protocol §8): every row of `messages` is an entry of its
-- channel's one gapless sequence, of kind message, edit, delete or reaction.
-- Rows written before this migration are messages (the default). Additive:
-- v1 reads and writes keep working on the same rows.
ALTER TABLE messages ADD COLUMN kind TEXT NOT NULL DEFAULT 'message'
    CHECK (kind IN ('message', 'edit', 'delete', 'reaction'));
-- edit, delete, reaction: the target message (UUID text).
ALTER TABLE messages ADD COLUMN target_id TEXT;
-- reaction: the emoji and 'add' or 'remove'.
ALTER TABLE messages ADD COLUMN emoji TEXT;
ALTER TABLE messages ADD COLUMN op TEXT CHECK (op IN ('add', 'remove'));
-- reaction rows: the entry changed nothing (an `add` of a held reaction, a
-- `remove` of one not held), so a client folding entries onto a read state
-- knows without the holders' list.
ALTER TABLE messages ADD COLUMN noop INTEGER NOT NULL DEFAULT 0;
-- message rows: the current text when edited (the latest edit's) and its ts.
-- `body` keeps the text as sent, so a retried MSG_SEND still matches it.
ALTER TABLE messages ADD COLUMN edited_body TEXT;
ALTER TABLE messages ADD COLUMN edited_at INTEGER;
-- message rows: deleted (1); `body`, `edited_body` and every edit's `body`
-- are then erased ('' / NULL). The store runs with secure_delete=ON, so the
-- old bytes are overwritten in the file too.
ALTER TABLE messages ADD COLUMN deleted INTEGER NOT NULL DEFAULT 0;
CREATE INDEX messages_by_target ON messages (target_id) WHERE target_id IS NOT NULL;

CREATE TABLE reactions (
    message_id TEXT NOT NULL,
    emoji      TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    PRIMARY KEY (message_id, emoji, user_id)
);
CREATE TABLE reaction_counts (
    message_id TEXT NOT NULL,
    emoji      TEXT NOT NULL,
    count      INTEGER NOT NULL CHECK (count > 0),
    first_seq  INTEGER NOT NULL,
    PRIMARY KEY (message_id, emoji)
);
-- HELLO's unread counts (message entries after a seq, not deleted, not the
-- reader's): a covering range scan per channel (docs/performance.md).
CREATE INDEX messages_unread ON messages (channel_id, seq, sender_id)
    WHERE kind = 'message' AND NOT deleted;
