-- The same seed as seed_pg.sql, for SQLite (see there); then `ANALYZE`.
WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n+1 FROM i WHERE n < 999)
INSERT INTO channels (channel_id, created_at, last_seq, last_ts) SELECT printf('c%04d', n), 0, 300, 300 FROM i;
INSERT INTO members (channel_id, user_id, joined_at) SELECT channel_id, u.value, 0 FROM channels, json_each('["u","v","a","w"]') u;
WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM s WHERE n < 300)
INSERT INTO messages (message_id, channel_id, seq, sender_id, client_msg_id, body, ts, kind, mention_all, mentions)
SELECT printf('%08x-0000-7000-8000-%012x', CAST(substr(c.channel_id, 2) AS INTEGER), s.n), c.channel_id, s.n,
       CASE s.n % 3 WHEN 0 THEN 'a' WHEN 1 THEN 'u' ELSE 'v' END, 'k' || c.channel_id || '-' || s.n, 'hello there', s.n,
       CASE WHEN s.n % 10 = 0 THEN 'reaction' ELSE 'message' END,
       s.n % 10 <> 0 AND s.n % 97 = 0,
       CASE WHEN s.n % 10 <> 0 AND s.n % 97 <> 0 AND s.n % 20 = 7 THEN '["u","v"]' END
FROM channels c, s;
INSERT INTO mentions (user_id, channel_id, seq)
SELECT x.value, m.channel_id, m.seq FROM messages m, json_each('["u","v"]') x
WHERE m.mentions IS NOT NULL AND m.sender_id <> x.value;
INSERT INTO mentions (user_id, channel_id, seq) SELECT 'w', channel_id, 51 FROM channels;
INSERT INTO mentions (user_id, channel_id, seq) SELECT 'w', channel_id, 297 FROM channels WHERE substr(channel_id, 5, 1) = '0';
INSERT INTO watermarks (channel_id, user_id, delivered_seq, read_seq)
SELECT channel_id, 'u', 150, 150 FROM channels UNION ALL SELECT channel_id, 'v', 300, 300 FROM channels
UNION ALL SELECT channel_id, 'w', 295, 295 FROM channels;
-- The marks, as migration 0022 sets them.
INSERT INTO watermarks (channel_id, user_id, delivered_seq, read_seq, mention_seq)
SELECT channel_id, user_id, 0, 0, max(seq) FROM mentions WHERE TRUE GROUP BY channel_id, user_id
ON CONFLICT (channel_id, user_id) DO UPDATE SET mention_seq = excluded.mention_seq;
UPDATE channels SET mention_all_seq = (SELECT max(a.seq) FROM messages a
    WHERE a.channel_id = channels.channel_id AND a.mention_all)
WHERE EXISTS (SELECT 1 FROM messages a WHERE a.channel_id = channels.channel_id AND a.mention_all);
