-- Issue 34: the search index's merge settings (FTS5, migration 0015),
-- kept in the index's own `message_search_config` table.
--
-- Each committed write batch adds one small segment to the index (its
-- trigrams, about one term per character of the texts), and FTS5 merges
-- segments as it goes. With the default `automerge` of 4, a level is
-- merged into the next as soon as it holds 4 segments, so every posting is
-- rewritten once per level, at each send batch's commit, inside the
-- send's transaction. With 16, a level waits for 16 segments: far fewer
-- rewrites per send, for more (at most 16 per level) segments that a
-- search reads. `crisismerge` (default 16) is the count at which a level
-- is merged all at once; above `automerge` it must be larger, or every
-- 16th commit would merge a whole level in one go.
--
-- Neither setting changes what the index holds (every trigram of every
-- current text; a deleted text's trigrams removed at its commit by
-- `secure-delete`), only when its segments are merged.
INSERT INTO message_search (message_search, rank) VALUES ('automerge', 16);
INSERT INTO message_search (message_search, rank) VALUES ('crisismerge', 64);
