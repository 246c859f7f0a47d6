SELECT c.channel_id, c.last_seq, COALESCE(w.delivered_seq, 0), COALESCE(w.read_seq, 0),
     CASE WHEN COALESCE(w.read_seq, 0) >= c.last_seq THEN 0 ELSE
     (SELECT CASE WHEN count(*) < 2147483648 THEN count(*) * 4294967296
      + count(*) FILTER (WHERE x.mention_all) END FROM messages x
      WHERE x.channel_id = m.channel_id AND x.seq > COALESCE(w.read_seq, 0)
      AND x.kind = 'message' AND NOT x.deleted AND x.sender_id <> m.user_id) END, c.name, c.metadata,
     c.kind, c.visibility, (SELECT count(*) FROM members y WHERE y.channel_id = m.channel_id), m.role,
     CASE WHEN COALESCE(w.mention_seq, 0) > COALESCE(w.read_seq, 0) THEN
     (SELECT count(*) FROM mentions z WHERE z.user_id = m.user_id AND z.channel_id = m.channel_id
      AND z.seq > COALESCE(w.read_seq, 0)) ELSE 0 END,
     s.notify, s.snooze_until, c.posting_role, c.slow_mode_ms, c.retention_secs
     FROM members m JOIN channels c ON c.channel_id = m.channel_id
     LEFT JOIN watermarks w ON w.channel_id = m.channel_id AND w.user_id = m.user_id
     LEFT JOIN channel_settings s ON s.channel_id = m.channel_id AND s.user_id = m.user_id
     WHERE m.user_id = :u ORDER BY c.channel_id COLLATE "C";
