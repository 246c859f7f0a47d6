//! Typing and presence on this node: signals that are never stored and may
//! be lost (`docs/protocol.md`, "Typing and presence").
//!
//! [`Ephemeral`] is a state machine under one std lock (never held across an
//! await, and only for map work and `try_send`s), kept in the node's
//! [`super::Hub`]; [`super::Delivery`] drives it and carries what it decides
//! to other nodes. It holds:
//! - **presence**: the users this node *holds* (a session open, or closed
//!   less than `presence_grace_ms` ago), the users other nodes hold (each
//!   entry expiring unless refreshed by that node's heartbeat), the last
//!   `lastSeenAt` known per user, and the sessions watching each user
//!   (PRESENCE_SUB). A user is online when any node holds it; every change of
//!   that is pushed to the watchers.
//! - **typing**: per (user, channel) typed on this node, when the last
//!   `start` was forwarded (the throttle) and until when it lasts, so that a
//!   stop can be sent when the user's message is stored or their last session
//!   here closes.
//! - a short-lived cache of channel members, so a TYPING frame costs no
//!   database read while its channel is warm.
//!
//! Every frame it queues goes through [`SessionHandle::push_ephemeral`]: a
//! session that is behind drops them, and is never closed for them.
//!
//! Here: the state, its lock and the settings; presence in [`presence`],
//! typing in [`typing`], the members cache in [`members_cache`], presence
//! of users who stop or start sharing a channel in [`sharing`].

mod members_cache;
mod presence;
mod sharing;
mod typing;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::config::Config;
use crate::ids::{ChannelId, UserId};
use crate::outbound::{SessionHandle, SessionId};

pub use members_cache::MEMBERS_FRESH;
use members_cache::{CachedMembers, CachedMutes};
use presence::{LocalUser, RemoteHold};
use sharing::PendingChecks;
pub use sharing::SharingCheck;
use typing::Typing;
pub use typing::{TypingDecision, TypingStop};

/// The typing and presence settings (`typing_*`, `presence_*`).
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// How long a `start` lasts (`typing_ttl_ms`).
    pub typing_ttl: Duration,
    /// At most one `start` per (user, channel) per this (`typing_throttle_ms`).
    pub typing_throttle: Duration,
    /// No TYPING fan-out in channels with more members (`typing_max_members`).
    pub typing_max_members: usize,
    /// `offline` is announced this long after the last session closed
    /// (`presence_grace_ms`).
    pub presence_grace: Duration,
    /// A node's entries expire this long after its last heartbeat
    /// (`presence_ttl_ms`).
    pub presence_ttl: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self::from_config(&Config::default())
    }
}

impl Settings {
    /// The typing and presence settings of `config`, as durations.
    pub fn from_config(config: &Config) -> Self {
        Self {
            typing_ttl: Duration::from_millis(config.typing_ttl_ms),
            typing_throttle: Duration::from_millis(config.typing_throttle_ms),
            typing_max_members: config.typing_max_members,
            presence_grace: Duration::from_millis(config.presence_grace_ms),
            presence_ttl: Duration::from_millis(config.presence_ttl_ms),
        }
    }

    /// The period of the node's upkeep (expiring entries, flushing
    /// `lastSeenAt`): a tenth of `presence_ttl`, between 20 ms and 1 s.
    pub fn tick(&self) -> Duration {
        (self.presence_ttl / 10).clamp(Duration::from_millis(20), Duration::from_secs(1))
    }

    /// How long another node's entry lives after a heartbeat: `presence_ttl`
    /// less one upkeep tick, so it is gone within `presence_ttl` of the
    /// node's last heartbeat even when the expiry is seen a tick late.
    pub fn remote_lifetime(&self) -> Duration {
        self.presence_ttl.saturating_sub(self.tick())
    }

    /// How often a node sends its heartbeat: a third of `presence_ttl`.
    pub fn heartbeat_every(&self) -> Duration {
        (self.presence_ttl / 3).max(Duration::from_millis(10))
    }
}

/// A node's identity in presence traffic: random at every start, so a
/// restarted node never speaks for the users of its former life.
pub type NodeId = Arc<str>;

/// What closing a session changed.
#[derive(Debug, Default)]
pub struct SessionClosed {
    /// The user's last session on this node closed: the grace period of this
    /// generation starts (see [`Ephemeral::grace_over`]).
    pub grace: Option<u64>,
    /// Typing the user had going in these channels, to end with a `stop`.
    pub typing_stops: Vec<TypingStop>,
}

/// The node's typing and presence state. See the module documentation.
#[derive(Debug)]
pub struct Ephemeral {
    settings: Settings,
    node: NodeId,
    state: Mutex<State>,
    /// Entries of the typing map, read without the lock on the commit path.
    typing_entries: AtomicUsize,
    members: Mutex<HashMap<ChannelId, CachedMembers>>,
    /// The mutes of channels TYPING was sent in ([`members_cache`]).
    mutes: Mutex<HashMap<ChannelId, CachedMutes>>,
    /// Cancelled at shutdown: ends the upkeep task.
    pub(crate) stop: tokio_util::sync::CancellationToken,
    /// The upkeep task, awaited at shutdown (its last `lastSeenAt` flush).
    pub(crate) upkeep: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

#[derive(Debug, Default)]
struct State {
    local: HashMap<UserId, LocalUser>,
    next_generation: u64,
    /// Users held by other nodes, per node.
    remote: HashMap<UserId, HashMap<NodeId, RemoteHold>>,
    last_seen: HashMap<UserId, i64>,
    /// Sessions watching each user (only users that share a channel with them).
    watchers: HashMap<UserId, Vec<SessionHandle>>,
    /// What each subscribed session watches, to undo it.
    subscriptions: HashMap<SessionId, Vec<UserId>>,
    /// Sessions that requested each user but are shown it `offline` (no
    /// shared channel, or it blocks them), so that a membership that starts
    /// can show it ([`sharing`]).
    hidden_watchers: HashMap<UserId, Vec<SessionHandle>>,
    /// What each subscribed session requested and is hidden from it, to
    /// undo it (at most `max_presence_subscriptions` ids, as `subscriptions`).
    hidden: HashMap<SessionId, Vec<UserId>>,
    /// The subscribed sessions of each user (those with an entry in
    /// `subscriptions` or `hidden` when subscribing), so that a user's own
    /// subscriptions are found without walking every watcher ([`sharing`]).
    subscribers: HashMap<UserId, HashMap<SessionId, SessionHandle>>,
    /// Each session's last PRESENCE_SUB, numbered (from `next_generation`),
    /// so that a sharing check of an older one is ignored ([`sharing`]).
    subscription_generations: HashMap<SessionId, u64>,
    /// Sessions whose watched users may no longer share a channel with
    /// them, for the upkeep to judge ([`sharing`]).
    checks: PendingChecks,
    /// Sessions whose hidden users may now share a channel with them, for
    /// the upkeep to judge ([`sharing`]).
    start_checks: PendingChecks,
    typing: HashMap<(UserId, ChannelId), Typing>,
    /// `lastSeenAt` values not yet written to the database.
    pending_last_seen: Vec<(UserId, i64)>,
}

impl Default for Ephemeral {
    fn default() -> Self {
        Self::new(Settings::default())
    }
}

impl Ephemeral {
    /// An empty state with these settings and a fresh node id.
    pub fn new(settings: Settings) -> Self {
        Self {
            settings,
            node: uuid::Uuid::now_v7().to_string().into(),
            state: Mutex::default(),
            typing_entries: AtomicUsize::new(0),
            members: Mutex::default(),
            mutes: Mutex::default(),
            stop: tokio_util::sync::CancellationToken::new(),
            upkeep: Mutex::new(None),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The settings in force.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// This node's id in presence traffic.
    pub fn node(&self) -> &NodeId {
        &self.node
    }
}
