-- GET /v1/directory pages through the public group channels in byte order of
-- the id: a partial index holds only them.
CREATE INDEX channels_public_by_id ON channels (channel_id)
    WHERE visibility = 'public' AND kind = 'group';
