-- The channel's last seq when the member (last) joined: messages after it
-- were stored with this member. A node that starts delivering a channel to a
-- member catches up from here, never from before the join (0 for members
-- added with the channel, and for rows from before this column).
ALTER TABLE members ADD COLUMN joined_seq INTEGER NOT NULL DEFAULT 0;
