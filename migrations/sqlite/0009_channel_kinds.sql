-- Version 1.2 (protocol.md §13.1): a channel's kind and visibility. Every
-- channel made before it is a private group (the defaults fill existing rows;
-- on PostgreSQL without rewriting the table).
ALTER TABLE channels ADD COLUMN kind TEXT NOT NULL DEFAULT 'group'
    CHECK (kind IN ('group', 'direct'));
ALTER TABLE channels ADD COLUMN visibility TEXT NOT NULL DEFAULT 'private'
    CHECK (visibility IN ('private', 'public'));
