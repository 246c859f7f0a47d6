-- GET /v1/directory pages through the public group channels in byte order of
-- the id: a partial index holds only them, so a page costs the same whatever
-- the number of private and direct channels.
CREATE INDEX channels_public_by_id ON channels (channel_id COLLATE "C")
    WHERE visibility = 'public' AND kind = 'group';
