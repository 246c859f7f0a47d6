//! Abuse limits of the WebSocket gateway: how many sessions a node and a user
//! may hold, and how fast a connection and a user may send frames (GCRA token
//! buckets from the `governor` crate). Every limit is a setting; a rate of 0
//! switches that limit off (for benchmarks).
//!
//! Limits are per node: a user spread over several nodes gets each node's
//! allowance.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::config::Config;
use crate::ids::UserId;

/// Why a new session was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ConnectionRefused {
    /// `max_connections` sessions are open on this node.
    #[error("too many connections on this server")]
    Total,
    /// The user has `max_connections_per_user` sessions open on this node.
    #[error("too many connections for this user")]
    PerUser,
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    per_user: HashMap<UserId, usize>,
}

/// The node's limits. Shared by every session.
#[derive(Debug)]
pub struct Limits {
    max_connections: usize,
    max_connections_per_user: usize,
    connection_quota: Option<Quota>,
    user_quota: Option<Quota>,
    user_rates: Option<DefaultKeyedRateLimiter<UserId>>,
    /// Made once: making a quanta clock runs CPUID, which a virtual machine
    /// traps (it cost about a tenth of the server's CPU per frame).
    clock: DefaultClock,
    /// A std lock held only to update counters, never across an await.
    counts: Mutex<Counts>,
}

/// Ids of a `PRESENCE_SUB` that count as one frame against the rate limits.
///
/// A PRESENCE_SUB is answered with one PRESENCE per id it lists (its
/// snapshot), so counted as one frame it let a connection within its rate
/// make the server send up to 500 times as many (docs/known-issues.md).
/// Counted as one frame per this many ids, a connection at
/// `rate_limit_per_sec` makes at most ten times as many PRESENCE frames.
pub const PRESENCE_IDS_PER_FRAME: usize = 10;

/// How many frames a `PRESENCE_SUB` listing `ids` ids counts as: one per
/// [`PRESENCE_IDS_PER_FRAME`] ids, at least one (an empty list, which ends
/// the subscription, is one frame).
pub fn presence_sub_weight(ids: usize) -> u32 {
    u32::try_from(ids.div_ceil(PRESENCE_IDS_PER_FRAME).max(1)).unwrap_or(u32::MAX)
}

/// One session's place in the connection counts; released on drop.
#[derive(Debug)]
pub struct ConnectionPermit {
    limits: Arc<Limits>,
    user_id: UserId,
}

impl Drop for ConnectionPermit {
    fn drop(&mut self) {
        let mut counts = self.limits.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.total = counts.total.saturating_sub(1);
        if let Some(n) = counts.per_user.get_mut(&self.user_id) {
            *n -= 1;
            if *n == 0 {
                counts.per_user.remove(&self.user_id);
            }
        }
    }
}

fn quota(per_sec: u32, burst: u32) -> Option<Quota> {
    let per_sec = NonZeroU32::new(per_sec)?;
    Some(Quota::per_second(per_sec).allow_burst(NonZeroU32::new(burst).unwrap_or(per_sec)))
}

impl Limits {
    /// The limits configured in `config`.
    pub fn new(config: &Config) -> Self {
        Self {
            max_connections: config.max_connections,
            max_connections_per_user: config.max_connections_per_user,
            connection_quota: quota(config.rate_limit_per_sec, config.rate_limit_burst),
            user_quota: quota(config.user_rate_limit_per_sec, config.user_rate_limit_burst),
            user_rates: quota(config.user_rate_limit_per_sec, config.user_rate_limit_burst).map(RateLimiter::keyed),
            clock: DefaultClock::default(),
            counts: Mutex::new(Counts::default()),
        }
    }

    /// Takes a place for a new session of `user_id`.
    ///
    /// # Errors
    /// [`ConnectionRefused`] when the node or the user is at its limit.
    pub fn acquire(self: &Arc<Self>, user_id: &UserId) -> Result<ConnectionPermit, ConnectionRefused> {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        if counts.total >= self.max_connections {
            return Err(ConnectionRefused::Total);
        }
        let mine = counts.per_user.entry(user_id.clone()).or_insert(0);
        if *mine >= self.max_connections_per_user {
            return Err(ConnectionRefused::PerUser);
        }
        *mine += 1;
        counts.total += 1;
        Ok(ConnectionPermit {
            limits: self.clone(),
            user_id: user_id.clone(),
        })
    }

    /// A fresh frame-rate limiter for one connection (`None`: unlimited).
    pub fn connection_rate(&self) -> Option<DefaultDirectRateLimiter> {
        self.connection_quota.map(RateLimiter::direct)
    }

    /// Counts one frame against the connection's and the user's rate.
    ///
    /// # Errors
    /// How long to wait before the next frame would be accepted.
    pub fn check_frame(&self, connection: Option<&DefaultDirectRateLimiter>, user_id: &UserId) -> Result<(), Duration> {
        // The clock is read only to say how long a refused frame must wait.
        if let Some(limiter) = connection {
            limiter
                .check()
                .map_err(|not_until| not_until.wait_time_from(self.clock.now()))?;
        }
        if let Some(users) = &self.user_rates {
            users
                .check_key(user_id)
                .map_err(|not_until| not_until.wait_time_from(self.clock.now()))?;
        }
        Ok(())
    }

    /// How long the slower of the two buckets takes to refill one frame
    /// (`1 / rate_limit_per_sec` or `1 / user_rate_limit_per_sec`; zero when
    /// both are off).
    pub fn frame_interval(&self) -> Duration {
        [self.connection_quota, self.user_quota]
            .into_iter()
            .flatten()
            .map(|q| q.replenish_interval())
            .max()
            .unwrap_or(Duration::ZERO)
    }

    /// Counts `frames` more frames against the connection's and the user's
    /// rate, all or none per bucket: the extra weight of a frame that makes
    /// the server send many (a `PRESENCE_SUB`, see
    /// [`presence_sub_weight`]). A weight over a bucket's size is charged
    /// as the whole bucket, so a large frame is still possible with a full
    /// bucket. `0` charges nothing.
    ///
    /// # Errors
    /// How long to wait before that many frames would be accepted.
    pub fn check_frames(
        &self,
        connection: Option<&DefaultDirectRateLimiter>,
        user_id: &UserId,
        frames: u32,
    ) -> Result<(), Duration> {
        let Some(n) = NonZeroU32::new(frames) else {
            return Ok(());
        };
        let wait = |not_until: governor::NotUntil<_>| not_until.wait_time_from(self.clock.now());
        if let Some(limiter) = connection {
            match limiter.check_n(n) {
                Ok(result) => result.map_err(wait)?,
                Err(governor::InsufficientCapacity(most)) => {
                    if let Some(most) = NonZeroU32::new(most) {
                        limiter.check_n(most).unwrap_or(Ok(())).map_err(wait)?;
                    }
                }
            }
        }
        if let Some(users) = &self.user_rates {
            match users.check_key_n(user_id, n) {
                Ok(result) => result.map_err(wait)?,
                Err(governor::InsufficientCapacity(most)) => {
                    if let Some(most) = NonZeroU32::new(most) {
                        users.check_key_n(user_id, most).unwrap_or(Ok(())).map_err(wait)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Forgets users whose buckets are full again (bounds memory); run periodically.
    pub fn retain_recent(&self) {
        if let Some(users) = &self.user_rates {
            users.retain_recent();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(adjust: impl FnOnce(&mut Config)) -> Arc<Limits> {
        let mut config = Config::default();
        adjust(&mut config);
        Arc::new(Limits::new(&config))
    }

    #[test]
    fn connection_counts_per_user_and_total() {
        let l = limits(|c| {
            c.max_connections = 3;
            c.max_connections_per_user = 2;
        });
        let alice = UserId::parse("alice").unwrap();
        let bob = UserId::parse("bob").unwrap();
        let a1 = l.acquire(&alice).unwrap();
        let _a2 = l.acquire(&alice).unwrap();
        assert_eq!(l.acquire(&alice).unwrap_err(), ConnectionRefused::PerUser);
        let _b1 = l.acquire(&bob).unwrap();
        assert_eq!(l.acquire(&bob).unwrap_err(), ConnectionRefused::Total);
        drop(a1);
        assert!(l.acquire(&alice).is_ok(), "a released place is free again");
    }

    #[test]
    fn frame_rates_allow_the_burst_then_refuse() {
        let l = limits(|c| {
            c.rate_limit_per_sec = 1;
            c.rate_limit_burst = 5;
            c.user_rate_limit_per_sec = 0;
        });
        let alice = UserId::parse("alice").unwrap();
        let conn = l.connection_rate();
        for _ in 0..5 {
            assert!(l.check_frame(conn.as_ref(), &alice).is_ok());
        }
        let wait = l.check_frame(conn.as_ref(), &alice).unwrap_err();
        assert!(wait > Duration::ZERO && wait <= Duration::from_secs(1));
    }

    #[test]
    fn the_user_rate_is_shared_by_its_connections() {
        let l = limits(|c| {
            c.rate_limit_per_sec = 0;
            c.user_rate_limit_per_sec = 1;
            c.user_rate_limit_burst = 4;
        });
        let alice = UserId::parse("alice").unwrap();
        let bob = UserId::parse("bob").unwrap();
        let (one, two) = (l.connection_rate(), l.connection_rate());
        for _ in 0..2 {
            assert!(l.check_frame(one.as_ref(), &alice).is_ok());
            assert!(l.check_frame(two.as_ref(), &alice).is_ok());
        }
        assert!(
            l.check_frame(one.as_ref(), &alice).is_err(),
            "alice's connections share her allowance"
        );
        assert!(l.check_frame(one.as_ref(), &bob).is_ok(), "bob has his own");
    }

    #[test]
    fn a_presence_sub_weighs_one_frame_per_ten_ids() {
        assert_eq!(presence_sub_weight(0), 1);
        assert_eq!(presence_sub_weight(1), 1);
        assert_eq!(presence_sub_weight(10), 1);
        assert_eq!(presence_sub_weight(11), 2);
        assert_eq!(presence_sub_weight(500), 50);
    }

    #[test]
    fn extra_frames_are_charged_all_or_none() {
        let l = limits(|c| {
            c.rate_limit_per_sec = 1;
            c.rate_limit_burst = 100;
            c.user_rate_limit_per_sec = 0;
        });
        let alice = UserId::parse("alice").unwrap();
        let conn = l.connection_rate();
        assert!(l.check_frames(conn.as_ref(), &alice, 60).is_ok());
        assert!(
            l.check_frames(conn.as_ref(), &alice, 60).is_err(),
            "40 left: 60 more are refused"
        );
        for _ in 0..40 {
            assert!(
                l.check_frame(conn.as_ref(), &alice).is_ok(),
                "a refused charge took nothing"
            );
        }
        assert!(l.check_frame(conn.as_ref(), &alice).is_err());
        assert!(l.check_frames(conn.as_ref(), &alice, 0).is_ok(), "0 charges nothing");
    }

    #[test]
    fn a_weight_over_the_bucket_takes_the_whole_bucket() {
        let l = limits(|c| {
            c.rate_limit_per_sec = 1;
            c.rate_limit_burst = 20;
            c.user_rate_limit_per_sec = 1;
            c.user_rate_limit_burst = 30;
        });
        let alice = UserId::parse("alice").unwrap();
        let conn = l.connection_rate();
        assert!(
            l.check_frames(conn.as_ref(), &alice, 50).is_ok(),
            "a full bucket lets it through"
        );
        assert!(l.check_frame(conn.as_ref(), &alice).is_err(), "and is empty after");
    }

    #[test]
    fn the_frame_interval_is_the_slower_buckets() {
        let l = limits(|c| {
            c.rate_limit_per_sec = 10;
            c.user_rate_limit_per_sec = 100;
        });
        assert_eq!(l.frame_interval(), Duration::from_millis(100));
        let off = limits(|c| {
            c.rate_limit_per_sec = 0;
            c.user_rate_limit_per_sec = 0;
        });
        assert_eq!(off.frame_interval(), Duration::ZERO);
    }

    #[test]
    fn zero_rate_means_unlimited() {
        let l = limits(|c| {
            c.rate_limit_per_sec = 0;
            c.user_rate_limit_per_sec = 0;
        });
        let alice = UserId::parse("alice").unwrap();
        assert!(l.connection_rate().is_none());
        for _ in 0..100_000 {
            assert!(l.check_frame(None, &alice).is_ok());
        }
    }
}
