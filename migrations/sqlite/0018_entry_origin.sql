-- Version 1.2 (protocol.md §12, common rules): how a log entry was made.
-- Entries made through an HTTP route show no `clientMsgId` (the key stays
-- stored: a retry of the backend post is still idempotent), and those made
-- with the admin token show `"byAdmin": true`. Additive: constant defaults
-- (no table rewrite).
ALTER TABLE messages ADD COLUMN by_admin INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN via_http INTEGER NOT NULL DEFAULT 0;
-- Deletes stored before this by the delete route (§17) have a key the
-- server made, `http-` and a UUIDv7: they were made through HTTP. Whether
-- with the admin token is not known; they keep `by_admin` false.
UPDATE messages SET via_http = 1
 WHERE kind = 'delete' AND client_msg_id LIKE 'http-________-____-7___-____-____________';
