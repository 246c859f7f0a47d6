//! A short-lived cache of channel members and their mutes (§17), so a
//! TYPING frame costs no database read while its channel is warm.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::Ephemeral;
use crate::ids::{ChannelId, UserId};

/// How long a channel's member list read for TYPING is reused, at most. A
/// membership change or a deletion on this node forgets it at once; one made
/// on another node as soon as its news reaches this node on the user's NATS
/// subject, which a node holding that user's sessions subscribes to (so a
/// removed member's TYPING is refused by the node it types on). Other nodes'
/// lists may lag by up to this for the recipients of a TYPING.
pub const MEMBERS_FRESH: Duration = Duration::from_secs(1);

/// A channel's members and when they were read.
pub(super) type CachedMembers = (Instant, Arc<[UserId]>);
/// A channel's muted members with the end of each mute (ms), and when they
/// were read.
pub(super) type CachedMutes = (Instant, Arc<[(UserId, i64)]>);

impl Ephemeral {
    // ----- members cache -----

    /// The channel's members read less than [`MEMBERS_FRESH`] ago.
    pub fn cached_members(&self, channel: &ChannelId) -> Option<Arc<[UserId]>> {
        let cache = self.members.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .get(channel)
            .filter(|(read, _)| read.elapsed() < MEMBERS_FRESH)
            .map(|(_, members)| members.clone())
    }

    /// Keeps `members` (sorted) of `channel` for [`MEMBERS_FRESH`].
    pub fn cache_members(&self, channel: &ChannelId, members: Arc<[UserId]>) {
        let mut cache = self.members.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() > 10_000 {
            cache.retain(|_, (read, _)| read.elapsed() < MEMBERS_FRESH);
        }
        cache.insert(channel.clone(), (Instant::now(), members));
    }

    /// Forgets the cached members and mutes of `channel` (its membership changed).
    pub fn forget_members(&self, channel: &ChannelId) {
        self.members.lock().unwrap_or_else(|e| e.into_inner()).remove(channel);
        self.mutes.lock().unwrap_or_else(|e| e.into_inner()).remove(channel);
    }

    /// The channel's mutes (member, until when in ms) read less than
    /// [`MEMBERS_FRESH`] ago.
    pub fn cached_mutes(&self, channel: &ChannelId) -> Option<Arc<[(UserId, i64)]>> {
        let cache = self.mutes.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .get(channel)
            .filter(|(read, _)| read.elapsed() < MEMBERS_FRESH)
            .map(|(_, mutes)| mutes.clone())
    }

    /// Keeps the `mutes` of `channel` for [`MEMBERS_FRESH`].
    pub fn cache_mutes(&self, channel: &ChannelId, mutes: Arc<[(UserId, i64)]>) {
        let mut cache = self.mutes.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() > 10_000 {
            cache.retain(|_, (read, _)| read.elapsed() < MEMBERS_FRESH);
        }
        cache.insert(channel.clone(), (Instant::now(), mutes));
    }
}
