//! Where a message lives: a bounded, in-memory map from a message entry's id
//! to its channel, so an edit, delete or reaction finds the commit task of
//! its target's channel without a database read.
//!
//! A message's channel never changes, so an entry is never stale in the
//! sense that matters: it may name a channel that was deleted since (or
//! deleted and created again under the same id), and then the batch, which
//! reads the target under the channel's lock, answers `not_found` exactly as
//! a routing miss would. It is only a routing hint; every §8 check is still
//! made in the batch's transaction. Only `message` entries are kept (the
//! others are not targets), and only ids the store read or stored itself.

use quick_cache::sync::Cache;

use crate::ids::ChannelId;

/// Message ids remembered per node. About 100 bytes each (a UUID, the
/// channel id, the cache's own bookkeeping): some 10 MB at most. The
/// eviction is quick_cache's S3-FIFO, so the recent messages that edits and
/// reactions mostly target stay.
pub const CAPACITY: usize = 100_000;

/// The map (message id → channel id). Cheap to share behind an `Arc`; all
/// methods take `&self`.
pub struct ChannelOfCache {
    cache: Cache<uuid::Uuid, ChannelId>,
}

impl ChannelOfCache {
    /// An empty map holding up to `capacity` ids (approximately: the cache
    /// rounds to its shards).
    pub fn new(capacity: usize) -> Self {
        Self {
            cache: Cache::new(capacity.max(1)),
        }
    }

    /// The channel of message `message_id`, if remembered.
    pub fn get(&self, message_id: &uuid::Uuid) -> Option<ChannelId> {
        self.cache.get(message_id)
    }

    /// Remembers that message `message_id` is in `channel_id`.
    pub fn remember(&self, message_id: uuid::Uuid, channel_id: &ChannelId) {
        self.cache.insert(message_id, channel_id.clone());
    }
}

impl std::fmt::Debug for ChannelOfCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChannelOfCache")
            .field("len", &self.cache.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_message_routes_to_its_channel_and_others_do_not() {
        let cache = ChannelOfCache::new(10);
        let (a, b) = (uuid::Uuid::now_v7(), uuid::Uuid::now_v7());
        cache.remember(a, &ChannelId::from_trusted("general".into()));
        assert_eq!(cache.get(&a).map(|c| c.as_str().to_owned()), Some("general".to_owned()));
        assert!(cache.get(&b).is_none());
    }

    #[test]
    fn the_map_stays_within_its_capacity() {
        let cache = ChannelOfCache::new(100);
        let channel = ChannelId::from_trusted("c".into());
        for _ in 0..10_000 {
            cache.remember(uuid::Uuid::now_v7(), &channel);
        }
        assert!(cache.cache.len() <= 200, "{} ids kept", cache.cache.len());
    }
}
