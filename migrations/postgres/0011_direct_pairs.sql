-- Version 1.2 (protocol.md §13.2): a direct channel's pair of users, as one
-- text (the two user ids in byte order, a space between them: a space is in
-- no user id). Unique, so the one channel of a pair is made once however many
-- ask at the same time, and found by the index.
ALTER TABLE channels ADD COLUMN direct_pair TEXT;
CREATE UNIQUE INDEX channels_direct_pair ON channels (direct_pair) WHERE direct_pair IS NOT NULL;
