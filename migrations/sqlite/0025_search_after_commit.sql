-- Issue 34: the search index (`message_search`, migration 0015) is no
-- longer written in the send's transaction. FTS5's work per trigram
-- (about 100 postings per 100-byte text) inside every send batch, on the
-- one SQLite writer, cost sends about 40 % (docs/performance.md). Now a
-- new message is indexed after its batch's commit, by the store's indexer
-- (`src/store/search_indexer.rs`), in write transactions of its own:
--
-- - `search_indexed.upto` is the watermark: every row of `messages` whose
--   rowid is at most `upto` is in the index exactly when, and with the
--   text, `kind = 'message' AND NOT deleted` (as before); the rows above
--   it are in no part of the index. The indexer adds the rows above it,
--   reading their current text (an edit's) and skipping deleted ones, and
--   raises `upto` in the same transaction: a crash between a send's commit
--   and its indexing loses nothing (the indexer catches up at start).
-- - A search reads the index for the rows up to `upto` and the rows above
--   it from `messages` itself (`src/store/search.rs`), so a message is
--   found once its send is ACKed.
-- - An edit, a delete, an erasure or a retention sweep of a row up to
--   `upto` still takes its text out of the index in its own transaction
--   (the triggers below; guarantee 14). A row above `upto` holds nothing
--   in the index, and the indexer, which reads the row in its own write
--   transaction, never indexes a deleted text.
-- - A row inserted with a rowid not above `upto` (SQLite reuses the
--   highest rowids after the newest rows were deleted, by a channel's
--   deletion or the retention sweep) is indexed by its insert, as before,
--   so that the watermark's rule holds for it.
CREATE TABLE search_indexed (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    upto INTEGER NOT NULL
);
INSERT INTO search_indexed (id, upto) SELECT 1, COALESCE(MAX(rowid), 0) FROM messages;

DROP TRIGGER message_search_insert;
DROP TRIGGER message_search_update;
DROP TRIGGER message_search_delete;

CREATE TRIGGER message_search_insert AFTER INSERT ON messages
    WHEN new.kind = 'message' AND NOT new.deleted
        AND new.rowid <= (SELECT upto FROM search_indexed)
BEGIN
    INSERT INTO message_search (rowid, text) VALUES (new.rowid, COALESCE(new.edited_body, new.body));
END;

-- An edit (`edited_body`), a delete or an erasure (`body`, `deleted`) of
-- an indexed row: the old text leaves the index, the current one (if
-- any) enters it.
CREATE TRIGGER message_search_update AFTER UPDATE OF body, edited_body, deleted ON messages
    WHEN old.kind = 'message' AND old.rowid <= (SELECT upto FROM search_indexed)
BEGIN
    INSERT INTO message_search (message_search, rowid, text)
        SELECT 'delete', old.rowid, COALESCE(old.edited_body, old.body) WHERE NOT old.deleted;
    INSERT INTO message_search (rowid, text)
        SELECT new.rowid, COALESCE(new.edited_body, new.body) WHERE NOT new.deleted;
END;

CREATE TRIGGER message_search_delete AFTER DELETE ON messages
    WHEN old.kind = 'message' AND NOT old.deleted
        AND old.rowid <= (SELECT upto FROM search_indexed)
BEGIN
    INSERT INTO message_search (message_search, rowid, text)
        VALUES ('delete', old.rowid, COALESCE(old.edited_body, old.body));
END;
