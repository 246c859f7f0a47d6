-- Version 1.2 (protocol.md §14): replies and threads. Additive: columns with
-- no default but NULL or a constant (no table rewrite), and one partial index
-- that holds only thread replies.
--
-- message rows: the message it quotes (`replyTo`) and the root of the thread
-- it is a reply in (`threadId`). Ids, never text: a quote's preview is read
-- from the quoted row at read time, so a deletion erases it with the message.
ALTER TABLE messages ADD COLUMN reply_to TEXT;
ALTER TABLE messages ADD COLUMN thread_id TEXT;
-- Thread roots: the summary reads show (`thread`), maintained by the write
-- path in the batch that stores each reply or deletes one, under the
-- channel's lock, so a page of roots reads it with the rows themselves:
-- replies not deleted, the latest reply's ts and seq (NULL: no reply yet),
-- and the first (at most 10) distinct senders of replies (a JSON array).
ALTER TABLE messages ADD COLUMN reply_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN last_reply_at INTEGER;
ALTER TABLE messages ADD COLUMN last_reply_seq INTEGER;
ALTER TABLE messages ADD COLUMN participants TEXT;
-- One thread's replies in seq order (history and SYNC with `threadId`): a
-- range scan of this index whatever the channel's length. A thread id names
-- one channel's message, so the channel need not lead the key.
CREATE INDEX messages_thread ON messages (thread_id, seq) WHERE thread_id IS NOT NULL;
