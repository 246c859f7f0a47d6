-- unreadMentions (protocol.md §16) of a user with unread mentions of all:
-- HELLO counts the unread messages that mention all in the same
-- index-only range of `messages_unread` that counts `unread` (a filter on
-- `mention_all`), instead of a second range of `messages_mention_all` per
-- channel (docs/performance.md, "One range for unread and the mentions of
-- all"). So `messages_unread` now includes `mention_all`, and
-- `messages_mention_all`, which no statement reads any longer, goes: a
-- message that mentions all adds one index entry fewer. The included bool
-- usually fits in the alignment padding of the index tuple, so the index
-- grows little. `channels.mention_all_seq` stays written (SQLite still
-- reads it, and a node of the previous version reads it during an
-- upgrade).
--
-- The new index is built under another name while the old one serves
-- reads (CREATE INDEX blocks writes of `messages`, not reads, as the
-- indexes of 0020 did), then takes the old one's place; the brief
-- exclusive lock of the DROP is held only until this migration commits.
-- A previous version's statements still find what they read: its unread
-- count uses this index as before, and its count of the mentions of all
-- a range of it with a filter.
CREATE INDEX messages_unread_next ON messages (channel_id, seq) INCLUDE (sender_id, mention_all)
    WHERE kind = 'message' AND NOT deleted;
DROP INDEX messages_unread;
ALTER INDEX messages_unread_next RENAME TO messages_unread;
DROP INDEX messages_mention_all;
