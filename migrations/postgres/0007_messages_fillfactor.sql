-- Leave 15 % of each new page of `messages` free, so an edit's update of its
-- target (`edited_body`, `edited_at`) fits on the target's own page as a
-- heap-only tuple: no new entry in any of the table's five indexes (at the
-- default fillfactor of 100 the page is full and three updates in four
-- wrote every index). Pages written before keep their layout; a delete
-- changes `deleted`, a column of `messages_unread`'s predicate, and is never
-- heap-only. Additive: a storage parameter, taken with a brief lock, that
-- a running v1.1 server does not notice.
ALTER TABLE messages SET (fillfactor = 85);
