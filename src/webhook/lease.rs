//! Which node drives which channels' feeds (several nodes, PostgreSQL).
//!
//! Channels are split into [`BUCKETS`] buckets by a hash of their id that
//! every node computes alike (FNV-1a of the id's bytes, not `DefaultHasher`,
//! whose output Rust does not promise to keep across versions). A bucket is
//! driven by the node holding its row in `webhook_leases` (owner, expiry on
//! the database's clock): each node takes free or expired buckets and renews
//! its own every [`RENEW_EVERY`] ([`crate::store::Store::take_webhook_leases`],
//! one statement for all of them). A node drives a bucket only while its
//! last renewal, counted from when that renewal *started*, is younger than
//! [`TTL`] minus [`MARGIN`]: it stops before any other node can take the
//! bucket, even when it cannot reach the database. A node that dies is
//! replaced within [`TTL`] (a clean shutdown gives its leases back at once).
//! On SQLite (one node) every bucket is this node's.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::ids::ChannelId;
use crate::store::Store;
use crate::telemetry;

/// Buckets of channels; a lease covers one.
pub const BUCKETS: i32 = 64;
/// How long a lease lasts after a renewal.
pub const TTL: Duration = Duration::from_secs(6);
/// How often the holder renews.
pub const RENEW_EVERY: Duration = Duration::from_secs(2);
/// How long before a lease's end its holder stops driving it.
pub const MARGIN: Duration = Duration::from_secs(1);

/// The bucket of `channel`.
pub fn bucket(channel: &ChannelId) -> i32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in channel.as_str().bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    (hash % BUCKETS as u32) as i32
}

/// This node's leases.
#[derive(Debug)]
pub struct Leases {
    /// This node's owner id (random at every start).
    owner: String,
    held: Mutex<Held>,
}

#[derive(Debug)]
struct Held {
    buckets: HashSet<i32>,
    /// Until when they may be driven.
    until: Instant,
}

impl Leases {
    /// No lease yet, for a fresh owner id.
    pub fn new() -> Self {
        Self {
            owner: uuid::Uuid::now_v7().to_string(),
            held: Mutex::new(Held {
                buckets: HashSet::new(),
                until: Instant::now(),
            }),
        }
    }

    /// This node's owner id in `webhook_leases`.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// Whether this node may drive `bucket`'s feeds now.
    pub fn holds(&self, bucket: i32) -> bool {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        Instant::now() < held.until && held.buckets.contains(&bucket)
    }

    /// Takes what is free and renews what is ours. A failed renewal keeps
    /// what was held until its time is up.
    pub async fn renew(&self, store: &Store) {
        let started = Instant::now();
        let all: Vec<i32> = (0..BUCKETS).collect();
        let ttl_ms = i64::try_from(TTL.as_millis()).unwrap_or(i64::MAX);
        match store.take_webhook_leases(&self.owner, &all, ttl_ms).await {
            Ok(buckets) => {
                let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
                let before = held.buckets.len();
                held.buckets = buckets.into_iter().collect();
                held.until = started + TTL - MARGIN;
                if held.buckets.len() != before {
                    tracing::info!(buckets = held.buckets.len(), of = BUCKETS, "webhook leases held");
                }
                telemetry::webhook_leases(held.buckets.len());
            }
            Err(error) => tracing::warn!(%error, "webhook leases not renewed"),
        }
    }

    /// Gives the leases back (clean shutdown).
    pub async fn release(&self, store: &Store) {
        {
            let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
            held.buckets.clear();
        }
        telemetry::webhook_leases(0);
        if let Err(error) = store.release_webhook_leases(&self.owner).await {
            tracing::warn!(%error, "webhook leases not given back; other nodes take them when they expire");
        }
    }
}

impl Default for Leases {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_stable_and_spread() {
        // FNV-1a 32 of "room1" is 0x6e962c11 (computed with Python), so
        // bucket 17: pinned, so that nodes of two versions never disagree.
        assert_eq!(bucket(&ChannelId::from_trusted("room1".into())), 17);
        let spread: HashSet<i32> = (0..1000)
            .map(|n| bucket(&ChannelId::from_trusted(format!("c{n}"))))
            .collect();
        assert!(spread.len() > BUCKETS as usize / 2);
        assert!(spread.iter().all(|b| (0..BUCKETS).contains(b)));
    }
}
