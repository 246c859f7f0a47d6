-- unreadMentions (protocol.md §16) without a probe where there is nothing
-- to count: on a member's watermarks row, the seq of the newest message
-- that mentions it (its newest `mentions` row in the channel), and on the
-- channel, the seq of its newest message that mentions all (0: none).
-- Written in the batch that stores the message (a member without a
-- watermarks row gets one with delivered_seq = read_seq = 0, which reads
-- the same as none); never lowered: a deleted or expired message leaves
-- them as upper bounds, and the count itself stays exact from `mentions`
-- and `messages_mention_all`. HELLO probes those only where the mark is
-- above the user's read watermark. Watermarks rows outlive a leave, like
-- the `mentions` rows, so a member who comes back finds its mark.
-- Additive: constant defaults (no table rewrite), then the marks of the
-- rows already stored.
ALTER TABLE watermarks ADD COLUMN mention_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE channels ADD COLUMN mention_all_seq INTEGER NOT NULL DEFAULT 0;

INSERT INTO watermarks (channel_id, user_id, delivered_seq, read_seq, mention_seq)
SELECT channel_id, user_id, 0, 0, max(seq) FROM mentions WHERE TRUE GROUP BY channel_id, user_id
ON CONFLICT (channel_id, user_id) DO UPDATE SET mention_seq = excluded.mention_seq;
UPDATE channels SET mention_all_seq = (SELECT max(a.seq) FROM messages a
    WHERE a.channel_id = channels.channel_id AND a.mention_all)
WHERE EXISTS (SELECT 1 FROM messages a WHERE a.channel_id = channels.channel_id AND a.mention_all);
