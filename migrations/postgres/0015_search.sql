-- Version 1.2 (protocol.md §18): search. A trigram index (`pg_trgm`, GIN)
-- of the current text of every `message` entry that is not deleted, case
-- folded by `lower()`: a `LIKE '%term%'` on the same expression (the term
-- folded by the same `lower()`) is answered by the index for any term of
-- 3 characters or more, and checked exactly on each row it returns. The
-- folding is the database's `LC_CTYPE`: Unicode under `C.UTF-8`, a glibc
-- UTF-8 locale or ICU; ASCII only under plain `C` (docs/known-issues.md).
-- The partial index holds no deleted message: a delete's new row version
-- is not indexed, and the old version's index entries are never returned
-- (they point to a dead row) and are removed by vacuum.
-- pg_trgm is a trusted extension: a database owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX messages_search ON messages
    USING gin (lower(COALESCE(edited_body, body)) gin_trgm_ops)
    WHERE kind = 'message' AND NOT deleted;
