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

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use tokio::time::Instant;

use crate::config::Config;
use crate::ids::{now_ms, ChannelId, UserId};
use crate::outbound::{SessionHandle, SessionId};
use crate::protocol::{PresenceStatus, ServerFrame, TypingState};

/// How long a channel's member list read for TYPING is reused, at most. A
/// membership change or a deletion on this node forgets it at once; one made
/// on another node as soon as its news reaches this node on the user's NATS
/// subject, which a node holding that user's sessions subscribes to (so a
/// removed member's TYPING is refused by the node it types on). Other nodes'
/// lists may lag by up to this for the recipients of a TYPING.
pub const MEMBERS_FRESH: Duration = Duration::from_secs(1);

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

/// A channel's members and when they were read.
type CachedMembers = (Instant, Arc<[UserId]>);

/// What the typing throttle decided about one TYPING frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypingDecision {
    /// Forward it with this state (and `expiresAt` for a start).
    Forward(TypingState, Option<i64>),
    /// Drop it silently (throttled, or a stop with nothing to stop).
    Drop,
}

/// A typing state to end with a server `stop`: the channel and its members
/// as read when the typing started.
pub type TypingStop = (ChannelId, Arc<[UserId]>);

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
    typing: HashMap<(UserId, ChannelId), Typing>,
    /// `lastSeenAt` values not yet written to the database.
    pending_last_seen: Vec<(UserId, i64)>,
}

/// Another node's hold on a user, as its heartbeats and events say.
#[derive(Debug, Clone, Copy)]
struct RemoteHold {
    /// When the entry expires unless refreshed ([`Settings::remote_lifetime`]).
    expires: Instant,
    /// When it was last refreshed (ms): the user's `lastSeenAt` if it expires.
    refreshed_at: i64,
    /// Whether the user has an open session there; false during its grace
    /// period (still online for presence, offline for webhooks).
    sessions: bool,
}

#[derive(Debug)]
struct LocalUser {
    sessions: usize,
    /// Tells one grace period from a later one.
    generation: u64,
    /// When the last session closed (ms), while `sessions == 0`.
    closed_at: i64,
}

#[derive(Debug)]
struct Typing {
    /// When the last `start` was forwarded (the throttle).
    forwarded_at: Instant,
    /// Until when the forwarded `start` lasts; `None` once stopped.
    until: Option<Instant>,
    members: Arc<[UserId]>,
}

impl Default for Ephemeral {
    fn default() -> Self {
        Self::new(Settings::default())
    }
}

impl State {
    fn online(&self, user: &UserId) -> bool {
        self.local.contains_key(user) || self.remote.get(user).is_some_and(|nodes| !nodes.is_empty())
    }

    fn record_last_seen(&mut self, user: &UserId, at: i64, persist: bool) {
        let entry = self.last_seen.entry(user.clone()).or_insert(at);
        *entry = (*entry).max(at);
        if persist {
            self.pending_last_seen.push((user.clone(), at));
        }
    }

    /// Pushes the user's current presence to every session watching it.
    fn notify(&self, user: &UserId) {
        let Some(watchers) = self.watchers.get(user) else {
            return;
        };
        let text = Utf8Bytes::from(self.frame(user, true).encode());
        for handle in watchers {
            handle.push_ephemeral(text.clone(), "PRESENCE");
        }
    }

    /// The PRESENCE frame of `user` as a watcher sees it (`visible`: shares a
    /// channel with the watcher; a stranger is always offline, no lastSeenAt).
    fn frame(&self, user: &UserId, visible: bool) -> ServerFrame {
        let online = visible && self.online(user);
        ServerFrame::Presence {
            user_id: user.as_str().to_owned(),
            status: if online {
                PresenceStatus::Online
            } else {
                PresenceStatus::Offline
            },
            last_seen_at: if online || !visible {
                None
            } else {
                self.last_seen.get(user).copied()
            },
        }
    }

    fn unsubscribe(&mut self, session: &SessionId) {
        let Some(users) = self.subscriptions.remove(session) else {
            return;
        };
        for user in users {
            if let Some(list) = self.watchers.get_mut(&user) {
                list.retain(|h| &h.id != session);
                if list.is_empty() {
                    self.watchers.remove(&user);
                }
            }
        }
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

    // ----- presence: this node's sessions -----

    /// A session of `user` opened on this node. Returns true when the user
    /// had no open session here before (a first session, or one reopened in
    /// the grace period): the other nodes are to be told it is held with a
    /// session again.
    pub fn session_opened(&self, user: &UserId) -> bool {
        let mut state = self.lock();
        let was_online = state.online(user);
        state.next_generation += 1;
        let generation = state.next_generation;
        let first = match state.local.get_mut(user) {
            Some(local) => {
                local.sessions += 1;
                // A reconnect within the grace period: that period is over.
                local.generation = generation;
                local.sessions == 1
            }
            None => {
                state.local.insert(
                    user.clone(),
                    LocalUser {
                        sessions: 1,
                        generation,
                        closed_at: 0,
                    },
                );
                true
            }
        };
        if !was_online {
            state.notify(user);
        }
        first
    }

    /// A session of `user` closed on this node: its subscription ends; when
    /// it was the user's last session here, the grace period starts and the
    /// user's typing here ends.
    pub fn session_closed(&self, user: &UserId, session: &SessionId) -> SessionClosed {
        let mut state = self.lock();
        state.unsubscribe(session);
        let mut closed = SessionClosed::default();
        let Some(local) = state.local.get_mut(user) else {
            return closed;
        };
        local.sessions = local.sessions.saturating_sub(1);
        if local.sessions > 0 {
            return closed;
        }
        local.closed_at = now_ms();
        closed.grace = Some(local.generation);
        let now = Instant::now();
        for ((typer, channel), typing) in state.typing.iter_mut() {
            if typer == user && typing.until.take().is_some_and(|until| until > now) {
                closed.typing_stops.push((channel.clone(), typing.members.clone()));
            }
        }
        closed
    }

    /// The grace period `generation` of `user` ended. When no session of the
    /// user reopened here meanwhile, this node lets go of the user: returns
    /// the user's `lastSeenAt` (the other nodes are to be told), queues it for
    /// the database, and tells the watchers when no other node holds the
    /// user either.
    pub fn grace_over(&self, user: &UserId, generation: u64) -> Option<i64> {
        let mut state = self.lock();
        let local = state.local.get(user)?;
        if local.sessions > 0 || local.generation != generation {
            return None;
        }
        let closed_at = local.closed_at;
        state.local.remove(user);
        state.record_last_seen(user, closed_at, true);
        if !state.online(user) {
            state.notify(user);
        }
        Some(closed_at)
    }

    /// Those of `members` with no open session on any node, in their order
    /// (webhooks' `offlineMembers`, asked by the commit path). On this node
    /// a user counts while a session is open (not during the grace period),
    /// and so on another node, which announces the start of a user's grace
    /// period ([`Self::remote_idle`]). One lock for the whole list.
    pub fn offline_among(&self, members: &[UserId]) -> Vec<UserId> {
        let state = self.lock();
        members
            .iter()
            .filter(|user| {
                let here = state.local.get(*user).is_some_and(|local| local.sessions > 0);
                let elsewhere = state
                    .remote
                    .get(*user)
                    .is_some_and(|nodes| nodes.values().any(|hold| hold.sessions));
                !here && !elsewhere
            })
            .cloned()
            .collect()
    }

    /// The users this node holds (for its heartbeat), each with whether it
    /// has an open session here (false: in its grace period).
    pub fn held_users(&self) -> Vec<(UserId, bool)> {
        self.lock()
            .local
            .iter()
            .map(|(user, local)| (user.clone(), local.sessions > 0))
            .collect()
    }

    // ----- presence: other nodes -----

    /// Node `node` holds `users` with an open session (a heartbeat or an
    /// online event): each entry lives [`Settings::remote_lifetime`] from now.
    pub fn remote_held(&self, node: &NodeId, users: &[UserId]) {
        self.remote_hold(node, users, true);
    }

    /// Node `node` holds `users` with no open session: their grace period
    /// there started (or a heartbeat says it goes on). Still online, but no
    /// longer counted by [`Self::offline_among`] as having a session.
    pub fn remote_idle(&self, node: &NodeId, users: &[UserId]) {
        self.remote_hold(node, users, false);
    }

    fn remote_hold(&self, node: &NodeId, users: &[UserId], sessions: bool) {
        if node == &self.node {
            return;
        }
        let hold = RemoteHold {
            expires: Instant::now() + self.settings.remote_lifetime(),
            refreshed_at: now_ms(),
            sessions,
        };
        let mut state = self.lock();
        for user in users {
            let was_online = state.online(user);
            state.remote.entry(user.clone()).or_default().insert(node.clone(), hold);
            if !was_online {
                state.notify(user);
            }
        }
    }

    /// Node `node` let go of `user`, last seen at `last_seen`.
    pub fn remote_released(&self, node: &NodeId, user: &UserId, last_seen: i64) {
        let mut state = self.lock();
        state.record_last_seen(user, last_seen, false);
        let Some(nodes) = state.remote.get_mut(user) else {
            return;
        };
        if nodes.remove(node).is_none() {
            return;
        }
        if nodes.is_empty() {
            state.remote.remove(user);
        }
        if !state.online(user) {
            state.notify(user);
        }
    }

    /// Node `node` is shutting down: its users' sessions are moving to other
    /// nodes, so its entries live at most another `presence_grace`.
    pub fn remote_leaving(&self, node: &NodeId) {
        let until = Instant::now() + self.settings.presence_grace;
        let mut state = self.lock();
        for nodes in state.remote.values_mut() {
            if let Some(hold) = nodes.get_mut(node) {
                hold.expires = hold.expires.min(until);
            }
        }
    }

    /// Ends what has run out at `now`: other nodes' entries not refreshed in
    /// time (those users go offline here unless held elsewhere; their
    /// `lastSeenAt` is the last time a heartbeat held them) and typing
    /// entries past both their throttle and their lifetime.
    pub fn expire(&self, now: Instant) {
        let mut state = self.lock();
        let mut gone = Vec::new();
        state.remote.retain(|user, nodes| {
            nodes.retain(|_, hold| {
                if hold.expires <= now {
                    gone.push((user.clone(), hold.refreshed_at));
                    false
                } else {
                    true
                }
            });
            !nodes.is_empty()
        });
        for (user, at) in gone {
            state.record_last_seen(&user, at, true);
            if !state.online(&user) {
                state.notify(&user);
            }
        }
        let throttle = self.settings.typing_throttle;
        state
            .typing
            .retain(|_, t| t.forwarded_at + throttle > now || t.until.is_some_and(|until| until > now));
        self.typing_entries.store(state.typing.len(), Ordering::Release);
    }

    // ----- presence: subscriptions -----

    /// Replaces `session`'s subscription: it watches `visible` (the listed
    /// users that share a channel with it) from now on, and gets one PRESENCE
    /// per id of `listed` at once (strangers: offline, no `lastSeenAt`).
    /// `stored` holds `lastSeenAt` values read from the database for listed
    /// users this node knew none of. Done under the lock, so no change falls
    /// between the snapshot and the watching.
    pub fn subscribe(
        &self,
        session: &SessionHandle,
        listed: &[UserId],
        visible: &std::collections::HashSet<UserId>,
        stored: &[(UserId, i64)],
    ) {
        let mut state = self.lock();
        for (user, at) in stored {
            state.record_last_seen(user, *at, false);
        }
        state.unsubscribe(&session.id);
        for user in listed {
            let shown = visible.contains(user);
            session.push_ephemeral(Utf8Bytes::from(state.frame(user, shown).encode()), "PRESENCE");
            if shown {
                state.watchers.entry(user.clone()).or_default().push(session.clone());
            }
        }
        let watched: Vec<UserId> = listed.iter().filter(|u| visible.contains(*u)).cloned().collect();
        if !watched.is_empty() {
            state.subscriptions.insert(session.id.clone(), watched);
        }
    }

    /// The listed users whose `lastSeenAt` this node does not know and who
    /// are not online (their snapshot needs the database's value).
    pub fn unknown_last_seen(&self, users: &[UserId]) -> Vec<UserId> {
        let state = self.lock();
        users
            .iter()
            .filter(|u| !state.online(u) && !state.last_seen.contains_key(*u))
            .cloned()
            .collect()
    }

    /// `lastSeenAt` values waiting for the database, taken.
    pub fn take_pending_last_seen(&self) -> Vec<(UserId, i64)> {
        std::mem::take(&mut self.lock().pending_last_seen)
    }

    /// At shutdown: every user whose last session here closed (still in its
    /// grace period) gets `lastSeenAt` = that close, with what was pending.
    pub fn drain_last_seen(&self) -> Vec<(UserId, i64)> {
        let mut state = self.lock();
        let closed: Vec<(UserId, i64)> = state
            .local
            .iter()
            .filter(|(_, l)| l.sessions == 0)
            .map(|(u, l)| (u.clone(), l.closed_at))
            .collect();
        let mut out = std::mem::take(&mut state.pending_last_seen);
        out.extend(closed);
        out
    }

    // ----- typing -----

    /// Applies the throttle to a TYPING frame of `user` in `channel`
    /// (`members`: the channel's, for a later server `stop`).
    pub fn typing(&self, user: &UserId, channel: &ChannelId, start: bool, members: &Arc<[UserId]>) -> TypingDecision {
        let now = Instant::now();
        let mut state = self.lock();
        let key = (user.clone(), channel.clone());
        let decision = if start {
            let throttle = self.settings.typing_throttle;
            if state.typing.get(&key).is_some_and(|t| t.forwarded_at + throttle > now) {
                TypingDecision::Drop
            } else {
                let typing = Typing {
                    forwarded_at: now,
                    until: Some(now + self.settings.typing_ttl),
                    members: members.clone(),
                };
                state.typing.insert(key, typing);
                let ttl = i64::try_from(self.settings.typing_ttl.as_millis()).unwrap_or(i64::MAX);
                TypingDecision::Forward(TypingState::Start, Some(now_ms().saturating_add(ttl)))
            }
        } else {
            let active = state
                .typing
                .get_mut(&key)
                .and_then(|typing| typing.until.take())
                .is_some_and(|until| until > now);
            if active {
                TypingDecision::Forward(TypingState::Stop, None)
            } else {
                TypingDecision::Drop
            }
        };
        self.typing_entries.store(state.typing.len(), Ordering::Release);
        decision
    }

    /// A message from `user` was stored in `channel`: when the user is
    /// typing there (through this node), that typing ends; returns the
    /// members to send the `stop` to. Lock-free when nobody types.
    pub fn typing_ends_with_message(&self, user: &UserId, channel: &ChannelId) -> Option<Arc<[UserId]>> {
        if self.typing_entries.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut state = self.lock();
        let typing = state.typing.get_mut(&(user.clone(), channel.clone()))?;
        let now = Instant::now();
        typing
            .until
            .take()
            .filter(|until| *until > now)
            .map(|_| typing.members.clone())
    }

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

    /// Forgets the cached members of `channel` (its membership changed).
    pub fn forget_members(&self, channel: &ChannelId) {
        self.members.lock().unwrap_or_else(|e| e.into_inner()).remove(channel);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use tokio::sync::mpsc;

    use super::*;
    use crate::outbound::{CloseSignal, QueuedBytes};

    /// Short timers: these tests sleep for real.
    fn settings() -> Settings {
        Settings {
            typing_ttl: Duration::from_millis(300),
            typing_throttle: Duration::from_millis(100),
            typing_max_members: 1000,
            presence_grace: Duration::from_millis(5000),
            presence_ttl: Duration::from_millis(600),
        }
    }

    async fn advance(by: Duration) {
        tokio::time::sleep(by).await;
    }

    fn user(id: &str) -> UserId {
        UserId::parse(id).unwrap()
    }

    fn watcher(id: &str) -> (SessionHandle, mpsc::Receiver<Utf8Bytes>) {
        let (tx, rx) = mpsc::channel(64);
        let handle = SessionHandle::new(
            uuid::Uuid::now_v7().to_string().into(),
            user(id),
            tx,
            Arc::new(QueuedBytes::new(usize::MAX)),
            Arc::new(CloseSignal::default()),
        );
        (handle, rx)
    }

    fn frames(rx: &mut mpsc::Receiver<Utf8Bytes>) -> Vec<serde_json::Value> {
        std::iter::from_fn(|| rx.try_recv().ok())
            .map(|t| serde_json::from_str(t.as_str()).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn typing_is_throttled_and_stopped_once() {
        let e = Ephemeral::new(settings());
        let (alice, room) = (user("alice"), ChannelId::parse("room").unwrap());
        let members: Arc<[UserId]> = Arc::from([user("alice"), user("bob")]);
        assert!(matches!(
            e.typing(&alice, &room, true, &members),
            TypingDecision::Forward(TypingState::Start, Some(_))
        ));
        assert_eq!(
            e.typing(&alice, &room, true, &members),
            TypingDecision::Drop,
            "throttled"
        );
        advance(Duration::from_millis(110)).await;
        assert!(matches!(
            e.typing(&alice, &room, true, &members),
            TypingDecision::Forward(TypingState::Start, _)
        ));
        assert_eq!(
            e.typing(&alice, &room, false, &members),
            TypingDecision::Forward(TypingState::Stop, None)
        );
        assert_eq!(
            e.typing(&alice, &room, false, &members),
            TypingDecision::Drop,
            "one stop"
        );
        assert!(e.typing_ends_with_message(&alice, &room).is_none(), "nothing to stop");
        advance(Duration::from_millis(110)).await;
        e.typing(&alice, &room, true, &members);
        assert_eq!(e.typing_ends_with_message(&alice, &room).as_deref(), Some(&members[..]));
        advance(Duration::from_millis(350)).await;
        e.expire(Instant::now());
        assert_eq!(e.typing_entries.load(Ordering::Acquire), 0, "swept");
    }

    #[tokio::test]
    async fn a_typer_whose_last_session_closes_is_stopped() {
        let e = Ephemeral::new(settings());
        let (alice, room) = (user("alice"), ChannelId::parse("room").unwrap());
        let members: Arc<[UserId]> = Arc::from([user("alice"), user("bob")]);
        let (s1, _) = watcher("alice");
        let (s2, _) = watcher("alice");
        e.session_opened(&alice);
        e.session_opened(&alice);
        e.typing(&alice, &room, true, &members);
        assert!(e.session_closed(&alice, &s1.id).typing_stops.is_empty(), "one left");
        let closed = e.session_closed(&alice, &s2.id);
        assert_eq!(closed.typing_stops.len(), 1);
        assert!(closed.grace.is_some());
    }

    #[tokio::test]
    async fn presence_goes_offline_after_the_grace_and_a_reconnect_does_not_flap() {
        let e = Ephemeral::new(settings());
        let (bob, mut rx) = watcher("bob");
        let alice = user("alice");
        let visible: HashSet<UserId> = [alice.clone()].into();
        e.subscribe(&bob, &[alice.clone(), user("eve")], &visible, &[(alice.clone(), 5)]);
        let snapshot = frames(&mut rx);
        assert_eq!(snapshot[0]["status"], "offline");
        assert_eq!(snapshot[0]["lastSeenAt"], 5);
        assert_eq!(snapshot[1]["userId"], "eve");
        assert!(snapshot[1].get("lastSeenAt").is_none());

        let (a1, _) = watcher("alice");
        assert!(e.session_opened(&alice));
        assert_eq!(frames(&mut rx)[0]["status"], "online");
        let gen = e.session_closed(&alice, &a1.id).grace.unwrap();
        assert!(frames(&mut rx).is_empty(), "no offline during the grace");
        // A reconnect within the grace: the old period is void, and the
        // other nodes are told the user has a session again.
        assert!(e.session_opened(&alice), "announced: a session again");
        let (a2, _) = watcher("alice");
        assert!(!e.session_opened(&alice), "a second session changes nothing");
        e.session_closed(&alice, &a2.id);
        assert_eq!(e.grace_over(&alice, gen), None);
        assert!(frames(&mut rx).is_empty(), "no flap");
        let gen = e.session_closed(&alice, &a1.id).grace.unwrap();
        let seen = e.grace_over(&alice, gen).expect("released");
        let offline = frames(&mut rx);
        assert_eq!(offline.len(), 1);
        assert_eq!(offline[0]["status"], "offline");
        assert_eq!(offline[0]["lastSeenAt"], seen);
        assert_eq!(e.take_pending_last_seen(), vec![(alice.clone(), seen)]);
    }

    #[tokio::test]
    async fn another_nodes_users_expire_without_heartbeats() {
        let e = Ephemeral::new(settings());
        let (bob, mut rx) = watcher("bob");
        let alice = user("alice");
        e.subscribe(&bob, std::slice::from_ref(&alice), &[alice.clone()].into(), &[]);
        frames(&mut rx);
        let other: NodeId = "other".into();
        e.remote_held(&other, std::slice::from_ref(&alice));
        assert_eq!(frames(&mut rx)[0]["status"], "online");
        advance(Duration::from_millis(200)).await;
        e.remote_held(&other, std::slice::from_ref(&alice));
        advance(Duration::from_millis(200)).await;
        e.expire(Instant::now());
        assert!(frames(&mut rx).is_empty(), "refreshed by the heartbeat");
        advance(settings().remote_lifetime()).await;
        e.expire(Instant::now());
        let offline = frames(&mut rx);
        assert_eq!(offline[0]["status"], "offline");
        assert!(offline[0]["lastSeenAt"].is_i64());
        // Our own heartbeats are not another node's.
        e.remote_held(e.node(), std::slice::from_ref(&alice));
        assert!(frames(&mut rx).is_empty());
    }

    #[tokio::test]
    async fn a_user_in_its_grace_on_another_node_is_online_but_has_no_session() {
        let e = Ephemeral::new(settings());
        let (bob, mut rx) = watcher("bob");
        let alice = user("alice");
        e.subscribe(&bob, std::slice::from_ref(&alice), &[alice.clone()].into(), &[]);
        frames(&mut rx);
        let other: NodeId = "other".into();
        e.remote_held(&other, std::slice::from_ref(&alice));
        assert_eq!(frames(&mut rx)[0]["status"], "online");
        assert!(
            e.offline_among(std::slice::from_ref(&alice)).is_empty(),
            "a session there"
        );
        e.remote_idle(&other, std::slice::from_ref(&alice));
        assert!(frames(&mut rx).is_empty(), "no flap: still online in the grace");
        assert_eq!(
            e.offline_among(std::slice::from_ref(&alice)),
            vec![alice.clone()],
            "no session"
        );
        e.remote_held(&other, std::slice::from_ref(&alice));
        assert!(
            e.offline_among(std::slice::from_ref(&alice)).is_empty(),
            "a session again"
        );
        assert!(frames(&mut rx).is_empty());
    }
}
