-- Version 1.2 (protocol.md §18): search. An FTS5 index of the current text
-- of every `message` entry that is not deleted, with the `trigram`
-- tokenizer (every 3 characters of the text, case folded), so that any
-- substring of 3 characters or more, in any script and with any
-- punctuation, is found by the index. The text is not stored again:
-- the table is contentless (`content=''`) and its rows are the rowids of
-- `messages`. A row leaves the index by FTS5's `delete` command, given the
-- text it was indexed with (the old row's, in the triggers), and with
-- `secure-delete` its trigrams are removed from the index's pages at once
-- (no delete marker that keeps them until a merge; `contentless_delete=1`
-- would keep them, as it does not know the text), so a deleted or
-- edited-away text is gone from the index's tables when its entry is
-- committed (guarantee 14; the store's `secure_delete=ON` overwrites the
-- freed pages). Kept by the triggers below, in the transaction that
-- changes the row, whatever path changes it (send, edit, delete, erasure,
-- retention). Each trigger deletes exactly what the index holds: a row is
-- indexed when, and with the text, `kind = 'message' AND NOT deleted`.
CREATE VIRTUAL TABLE message_search USING fts5(
    text,
    content = '',
    tokenize = 'trigram case_sensitive 0'
);
INSERT INTO message_search (message_search, rank) VALUES ('secure-delete', 1);
INSERT INTO message_search (rowid, text)
    SELECT rowid, COALESCE(edited_body, body) FROM messages WHERE kind = 'message' AND NOT deleted;

CREATE TRIGGER message_search_insert AFTER INSERT ON messages
    WHEN new.kind = 'message' AND NOT new.deleted
BEGIN
    INSERT INTO message_search (rowid, text) VALUES (new.rowid, COALESCE(new.edited_body, new.body));
END;

-- An edit (`edited_body`), a delete or an erasure (`body`, `deleted`):
-- the old text leaves the index, the current one (if any) enters it.
CREATE TRIGGER message_search_update AFTER UPDATE OF body, edited_body, deleted ON messages
    WHEN old.kind = 'message'
BEGIN
    INSERT INTO message_search (message_search, rowid, text)
        SELECT 'delete', old.rowid, COALESCE(old.edited_body, old.body) WHERE NOT old.deleted;
    INSERT INTO message_search (rowid, text)
        SELECT new.rowid, COALESCE(new.edited_body, new.body) WHERE NOT new.deleted;
END;

CREATE TRIGGER message_search_delete AFTER DELETE ON messages
    WHEN old.kind = 'message' AND NOT old.deleted
BEGIN
    INSERT INTO message_search (message_search, rowid, text)
        VALUES ('delete', old.rowid, COALESCE(old.edited_body, old.body));
END;
