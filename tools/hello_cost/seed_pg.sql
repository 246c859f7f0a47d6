-- HELLO's cost for a user in 1,000 channels (docs/performance.md, "HELLO
-- with `unreadMentions`"): run on a chatd database after its migrations
-- (a server started on it once), then `VACUUM ANALYZE`. 1,000 channels of
-- 300 entries (90 % messages, every tenth a reaction; senders a, u, v in
-- turn); one message in 20 mentions u and v, one in 97 mentions all.
-- Members and where they stand:
--   u: read up to seq 150 everywhere: 135 unread, about 5 unread mentions
--      of u and 2 of all per channel (every channel probed: the worst case);
--   w: read up to seq 295: 5 unread; an unread mention in one channel in
--      ten, an old (read) one in every channel, no unread mention of all;
--   v: read everything.
INSERT INTO channels (channel_id, created_at, last_seq, last_ts)
SELECT 'c' || lpad(i::text, 4, '0'), 0, 300, 300 FROM generate_series(0, 999) i;
INSERT INTO members (channel_id, user_id, joined_at)
SELECT 'c' || lpad(i::text, 4, '0'), u, 0 FROM generate_series(0, 999) i, unnest(ARRAY['u','v','a','w']) u;
INSERT INTO messages (message_id, channel_id, seq, sender_id, client_msg_id, body, ts, kind, mention_all, mentions)
SELECT gen_random_uuid(), 'c' || lpad(i::text, 4, '0'), s,
       (ARRAY['a','u','v'])[s % 3 + 1], 'k' || i || '-' || s, 'hello there', s,
       CASE WHEN s % 10 = 0 THEN 'reaction' ELSE 'message' END,
       s % 10 <> 0 AND s % 97 = 0,
       CASE WHEN s % 10 <> 0 AND s % 97 <> 0 AND s % 20 = 7 THEN '["u","v"]' END
FROM generate_series(0, 999) i, generate_series(1, 300) s;
INSERT INTO mentions (user_id, channel_id, seq)
SELECT x.u, m.channel_id, m.seq FROM messages m, unnest(ARRAY['u','v']) x(u)
WHERE m.mentions IS NOT NULL AND m.sender_id <> x.u;
INSERT INTO mentions (user_id, channel_id, seq) SELECT 'w', channel_id, 51 FROM channels;
INSERT INTO mentions (user_id, channel_id, seq) SELECT 'w', channel_id, 297 FROM channels WHERE right(channel_id, 1) = '0';
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
