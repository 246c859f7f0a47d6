//! Fan-out across several nodes through NATS (`nats_url`).
//!
//! PostgreSQL keeps the order and the data; NATS only carries, between nodes,
//! what each node's sessions need (`docs/deployment.md`):
//! - a committed message goes to `<prefix>.c.<channel>` with the members read
//!   in its transaction ([`Cluster::committed`]);
//! - RECEIPT frames and membership changes go to `<prefix>.u.<user>`
//!   ([`Cluster::send_receipt`], [`Cluster::membership_changed`]).
//!
//! A node subscribes to `u.<user>` for each user with a live session on it and
//! to `c.<channel>` for each channel one of those users is a member of
//! (reference-counted by user). Each subscribed channel has one task
//! ([`channel`]) that hands its messages, local or remote, to the sessions in
//! `seq` order, filling gaps from the database.
//!
//! NATS is best effort (core NATS is at-most-once): when it is down, a node
//! keeps storing, ACKing and delivering to its own sessions; publications wait
//! (bounded) for the reconnect, and after it every channel task catches up
//! from the database. Without `nats_url` none of this runs
//! ([`crate::delivery::Delivery::Local`]).

mod channel;
mod presence;
mod sequencer;
mod wire;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use bytes::Bytes;
use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::Config;
use crate::delivery::hub::Hub;
use crate::ids::{ChannelId, UserId};
use crate::nats_addr::parse_nats_urls;
use crate::outbound::SessionId;
use crate::store::{Entry, Store};
use crate::telemetry;

use channel::{ChannelCmd, ChannelCore, Handoff};
pub use sequencer::{Offer, Sequencer};
pub use wire::{
    channel_subject, encode_token, ping_subject, presence_subject, typing_subject, user_subject, ChannelEnvelope,
    PresenceEnvelope, TypingEnvelope, UserEnvelope,
};

/// How long a session start waits for its subscriptions to be confirmed
/// before it sends HELLO anyway (NATS down or slow).
const JOIN_WAIT: Duration = Duration::from_secs(2);
/// How long the round trip that confirms subscriptions may take.
const CONFIRM_WAIT: Duration = Duration::from_secs(1);
/// How long start-up waits for the first NATS connection before serving
/// without it (it keeps retrying in the background).
const CONNECT_WAIT: Duration = Duration::from_secs(2);
/// Publications waiting for NATS (while it is down, or slow); past it new
/// ones are dropped and counted, and other nodes recover from the database.
const PUBLISH_QUEUE: usize = 8192;
/// Pause before retrying a database read that failed.
const RETRY: Duration = Duration::from_secs(1);
/// Longest pause between two reconnect attempts.
const MAX_RECONNECT_DELAY: Duration = Duration::from_secs(2);

/// With the `test-hooks` feature: a message whose body starts with this is
/// stored, ACKed and delivered locally but never published to NATS.
#[cfg(feature = "test-hooks")]
pub const TEST_NATS_DROP: &str = "__chatd_test_nats_drop__";
/// With the `test-hooks` feature: a message whose body starts with this is
/// published to NATS [`TEST_NATS_DELAY_MS`] late.
#[cfg(feature = "test-hooks")]
pub const TEST_NATS_DELAY: &str = "__chatd_test_nats_delay__";
/// See [`TEST_NATS_DELAY`], milliseconds.
#[cfg(feature = "test-hooks")]
pub const TEST_NATS_DELAY_MS: u64 = 400;

/// Why the NATS bridge could not start.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// `nats_url` does not parse.
    #[error("nats_url: {0}")]
    Url(String),
    /// The client could not be created.
    #[error("cannot connect to NATS: {0}")]
    Connect(#[from] async_nats::ConnectError),
}

/// The NATS bridge of this node. Cheap to clone.
#[derive(Clone)]
pub struct Cluster(Arc<Inner>);

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("prefix", &self.0.prefix)
            .field("connected", &self.is_connected())
            .finish_non_exhaustive()
    }
}

struct Inner {
    client: async_nats::Client,
    prefix: String,
    store: Store,
    hub: Arc<Hub>,
    gap_wait: Duration,
    interest: Mutex<Interest>,
    /// Publications on their way to NATS (see [`PUBLISH_QUEUE`]).
    outbound: mpsc::Sender<Outbound>,
    connected: watch::Sender<bool>,
    /// Every task of the bridge (channels, users, publisher, control).
    tasks: TaskTracker,
    /// Cancelled at shutdown; every task holds a child of it.
    stop: CancellationToken,
}

/// What this node's sessions need, by user and by channel.
#[derive(Default)]
struct Interest {
    users: HashMap<UserId, UserEntry>,
    channels: HashMap<ChannelId, ChannelEntry>,
    next_generation: u64,
}

/// A user with live sessions on this node.
struct UserEntry {
    /// Tells this entry from a later one of the same user.
    generation: u64,
    sessions: usize,
    /// The channels this user holds a reference to.
    channels: HashSet<ChannelId>,
    ready: watch::Receiver<bool>,
    commands: mpsc::UnboundedSender<UserCmd>,
    /// The user's membership changes, for [`run_membership`].
    memberships: mpsc::UnboundedSender<MembershipChange>,
    stop: CancellationToken,
}

/// A channel some local user is a member of.
struct ChannelEntry {
    /// Users holding it.
    refs: usize,
    ready: watch::Receiver<bool>,
    commands: mpsc::UnboundedSender<ChannelCmd>,
    stop: CancellationToken,
}

enum UserCmd {
    /// NATS came back: add channels joined while it was away.
    Reconcile,
}

/// The user joined (`add`) or left `channel`, committed when its last seq
/// was `seq` (on this node or another): see [`Inner::membership`].
struct MembershipChange {
    channel: ChannelId,
    add: bool,
    seq: i64,
}

struct Outbound {
    subject: String,
    payload: Bytes,
}

/// A live session's hold on its user's subscriptions; dropping it (session
/// end, panic included) gives it back.
#[must_use]
pub struct SessionInterest {
    cluster: Cluster,
    user: UserId,
}

impl Drop for SessionInterest {
    fn drop(&mut self) {
        self.cluster.0.leave(&self.user);
    }
}

impl Cluster {
    /// Connects to NATS (in the background: a node starts, degraded, when NATS
    /// is unreachable, and keeps retrying) and starts the publisher. Waits up
    /// to 2 s for the first connection.
    ///
    /// # Errors
    /// [`ClusterError`] when `nats_url` is missing or does not parse.
    pub async fn start(config: &Config, store: Store, hub: Arc<Hub>) -> Result<Self, ClusterError> {
        let url = config.nats_url.as_deref().unwrap_or_default();
        let servers = parse_nats_urls(url).map_err(ClusterError::Url)?;
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        telemetry::nats_connected(false);
        let client = async_nats::ConnectOptions::new()
            .name("chatd")
            .no_echo()
            .retry_on_initial_connect()
            .max_reconnects(None)
            .connection_timeout(Duration::from_secs(2))
            .ping_interval(Duration::from_secs(10))
            .request_timeout(Some(CONFIRM_WAIT))
            // Subscribes and unsubscribes queue here while NATS is down.
            .client_capacity(65_536)
            .reconnect_delay_callback(|attempts| {
                let exp = u32::try_from(attempts.min(6)).unwrap_or(6);
                (Duration::from_millis(25) * 2u32.pow(exp)).min(MAX_RECONNECT_DELAY)
            })
            .event_callback(move |event| {
                let events = events_tx.clone();
                async move {
                    let _ = events.send(event);
                }
            })
            .connect(servers)
            .await?;
        let (outbound, outbound_rx) = mpsc::channel(PUBLISH_QUEUE);
        let (connected, _) = watch::channel(false);
        let inner = Arc::new(Inner {
            client,
            prefix: config.nats_subject_prefix.clone(),
            store,
            hub,
            gap_wait: config.cluster_gap_wait(),
            interest: Mutex::new(Interest::default()),
            outbound,
            connected,
            tasks: TaskTracker::new(),
            stop: CancellationToken::new(),
        });
        inner.tasks.spawn(run_publisher(inner.clone(), outbound_rx));
        inner.tasks.spawn(run_control(inner.clone(), events_rx));
        inner.tasks.spawn(presence::run_presence(inner.clone()));
        let mut up = inner.connected.subscribe();
        if tokio::time::timeout(CONNECT_WAIT, up.wait_for(|c| *c)).await.is_err() {
            tracing::warn!(nats_url = %url, "NATS is not reachable; serving this node's sessions only and retrying in the background");
        }
        Ok(Self(inner))
    }

    /// Whether the NATS connection is up now.
    pub fn is_connected(&self) -> bool {
        *self.0.connected.borrow()
    }

    /// A session of `user` starts: subscribes to the user's subject, reads the
    /// user's channels and subscribes to theirs (each confirmed by a round
    /// trip through the server, and its sequencer started from the database),
    /// then returns, so the HELLO built next misses nothing. Waits at most 2 s
    /// (NATS down or slow: the session starts degraded and the subscriptions
    /// complete in the background).
    pub async fn join(&self, user: &UserId) -> SessionInterest {
        let mut ready = self.0.enter(user);
        let interest = SessionInterest {
            cluster: self.clone(),
            user: user.clone(),
        };
        if tokio::time::timeout(JOIN_WAIT, ready.wait_for(|r| *r)).await.is_err() {
            tracing::warn!(user_id = %user, "session starts before its NATS subscriptions are confirmed");
        }
        interest
    }

    /// A message this node stored: published for the other nodes and handed
    /// to this node's sequencer of the channel (when a local session needs
    /// it). `members` were read in the storing transaction; `except` is the
    /// session whose send stored it.
    pub fn committed(&self, message: &Entry, members: &Arc<[UserId]>, except: Option<&SessionId>) {
        let mut envelope = ChannelEnvelope {
            message: crate::view::recv(message),
            members: Some(members.iter().map(|m| m.as_str().to_owned()).collect()),
        };
        let mut payload = serde_json::to_vec(&envelope).unwrap_or_default();
        if payload.len() > self.0.client.max_payload() {
            // Too many members for one NATS message: receivers read them.
            envelope.members = None;
            payload = serde_json::to_vec(&envelope).unwrap_or_default();
        }
        let subject = channel_subject(&self.0.prefix, &message.channel_id);
        #[cfg(feature = "test-hooks")]
        let publish = test_hook(&self.0, &message.body, &subject, &payload);
        #[cfg(not(feature = "test-hooks"))]
        let publish = true;
        if publish {
            self.0.publish(subject, Bytes::from(payload));
        }
        let local = self
            .0
            .lock()
            .channels
            .get(&message.channel_id)
            .map(|e| e.commands.clone());
        if let Some(commands) = local {
            let handoff = Handoff::stored(message, members.clone(), except.cloned());
            let _ = commands.send(ChannelCmd::Local(handoff));
        }
    }

    /// Delivers a RECEIPT on this node ([`Hub::send_receipt`]) and publishes
    /// it to the nodes holding `user_id`'s sessions, which apply the same
    /// per-session filter.
    pub fn send_receipt(&self, user_id: &UserId, receipt: &crate::outbound::ReceiptFrame, except: Option<&SessionId>) {
        self.0.hub.send_receipt(user_id, receipt, except);
        let key = &receipt.key;
        let envelope = UserEnvelope::Receipt {
            channel_id: key.0.as_str().to_owned(),
            owner: key.1.as_str().to_owned(),
            read: key.2,
            seq: receipt.seq,
            text: receipt.text.as_str().to_owned(),
        };
        if let Ok(payload) = serde_json::to_vec(&envelope) {
            self.0
                .publish(user_subject(&self.0.prefix, user_id), Bytes::from(payload));
        }
    }

    /// `user` joined (`add`) or left `channel`, committed when the channel's
    /// last seq was `seq`: handed to this node's interest at once (applied as
    /// the database has it, see [`Inner::membership`]) and published to the
    /// nodes holding the user's sessions.
    pub fn membership_changed(&self, user: &UserId, channel: &ChannelId, add: bool, seq: i64) {
        self.0.membership(user, channel, add, seq);
        let envelope = UserEnvelope::Membership {
            channel_id: channel.as_str().to_owned(),
            add,
            seq,
        };
        if let Ok(payload) = serde_json::to_vec(&envelope) {
            self.0.publish(user_subject(&self.0.prefix, user), Bytes::from(payload));
        }
    }

    /// `channel` was deleted: each member leaves the channel, so no node
    /// carries it for them any more; then its encoded CHANNEL_REMOVED
    /// (`text`) goes to this node's sessions of each member and, on each
    /// member's user subject, to the other nodes holding their sessions. The
    /// leave goes first on the same subject, so a node has forgotten the
    /// channel's members (TYPING refused) before a member reads the frame.
    pub fn channel_removed(&self, channel: &ChannelId, members: &[UserId], text: &Utf8Bytes) {
        let envelope = UserEnvelope::Frame {
            frame_type: "CHANNEL_REMOVED".to_owned(),
            text: text.as_str().to_owned(),
        };
        let payload = serde_json::to_vec(&envelope).ok().map(Bytes::from);
        for member in members {
            self.membership_changed(member, channel, false, 0);
            self.0.hub.send_to_user(member, text, "CHANNEL_REMOVED", None);
            if let Some(payload) = &payload {
                self.0.publish(user_subject(&self.0.prefix, member), payload.clone());
            }
        }
    }

    /// Stops the bridge after the sessions have closed: publishes what is
    /// still queued (while connected), then drains and closes the NATS
    /// connection. Bounded to about 3 s.
    pub async fn shutdown(&self) {
        // Queued before the stop, so the publisher sends it with the rest.
        self.presence_leaving();
        self.0.stop.cancel();
        self.0.tasks.close();
        if tokio::time::timeout(Duration::from_secs(2), self.0.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!("NATS tasks did not stop in time");
        }
        if self.is_connected() {
            let _ = tokio::time::timeout(Duration::from_secs(1), self.0.client.drain()).await;
        }
        telemetry::nats_connected(false);
    }
}

/// With the test hooks: whether to publish now (and a delayed publication).
#[cfg(feature = "test-hooks")]
fn test_hook(inner: &Arc<Inner>, body: &str, subject: &str, payload: &[u8]) -> bool {
    if body.starts_with(TEST_NATS_DROP) {
        return false;
    }
    if body.starts_with(TEST_NATS_DELAY) {
        let inner = inner.clone();
        let (subject, payload) = (subject.to_owned(), Bytes::copy_from_slice(payload));
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(TEST_NATS_DELAY_MS)).await;
            inner.publish(subject, payload);
        });
        return false;
    }
    true
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, Interest> {
        self.interest.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues a publication without waiting; a full queue drops it (counted).
    fn publish(&self, subject: String, payload: Bytes) {
        if let Err(mpsc::error::TrySendError::Full(_)) = self.outbound.try_send(Outbound { subject, payload }) {
            telemetry::nats_publish_failed("queue_full");
        }
    }

    /// Subscribes and confirms the subscription by a round trip.
    async fn subscribe(&self, subject: String) -> BoxStream<'static, Bytes> {
        match self.client.subscribe(subject.clone()).await {
            Ok(subscriber) => {
                self.confirm().await;
                subscriber.map(|message| message.payload).boxed()
            }
            Err(error) => {
                tracing::error!(%subject, %error, "cannot subscribe; this node delivers only its own messages there");
                futures_util::stream::pending().boxed()
            }
        }
    }

    /// A request nobody answers: the server's "no responders" reply comes
    /// after it has processed every earlier command of this connection, so
    /// our subscriptions are active once it is back. Skipped while
    /// disconnected (the catch-up after the reconnect covers that case).
    async fn confirm(&self) {
        if !*self.connected.borrow() {
            return;
        }
        match self.client.request(ping_subject(&self.prefix), Bytes::new()).await {
            Ok(_) => {}
            Err(error) if error.kind() == async_nats::client::RequestErrorKind::NoResponders => {}
            Err(error) => tracing::debug!(%error, "subscriptions not confirmed"),
        }
    }

    /// Counts a session of `user`, creating the user's entry (and its task)
    /// for the first one. Returns the entry's readiness.
    fn enter(self: &Arc<Self>, user: &UserId) -> watch::Receiver<bool> {
        let mut interest = self.lock();
        if let Some(entry) = interest.users.get_mut(user) {
            entry.sessions += 1;
            return entry.ready.clone();
        }
        let generation = interest.next_generation;
        interest.next_generation += 1;
        let (ready_tx, ready) = watch::channel(false);
        let (commands, commands_rx) = mpsc::unbounded_channel();
        let (memberships, memberships_rx) = mpsc::unbounded_channel();
        let stop = self.stop.child_token();
        interest.users.insert(
            user.clone(),
            UserEntry {
                generation,
                sessions: 1,
                channels: HashSet::new(),
                ready: ready.clone(),
                commands,
                memberships,
                stop: stop.clone(),
            },
        );
        self.tasks.spawn(run_membership(
            self.clone(),
            user.clone(),
            generation,
            memberships_rx,
            stop.clone(),
        ));
        telemetry::nats_subscriptions("user", 1.0);
        self.tasks.spawn(run_user(
            self.clone(),
            user.clone(),
            generation,
            ready_tx,
            commands_rx,
            stop,
        ));
        ready
    }

    /// A session of `user` ended; the last one gives back the user's
    /// subscription and channel references.
    fn leave(&self, user: &UserId) {
        let mut guard = self.lock();
        let interest = &mut *guard;
        let Some(entry) = interest.users.get_mut(user) else {
            return;
        };
        entry.sessions = entry.sessions.saturating_sub(1);
        if entry.sessions > 0 {
            return;
        }
        if let Some(entry) = interest.users.remove(user) {
            entry.stop.cancel();
            telemetry::nats_subscriptions("user", -1.0);
            for channel in &entry.channels {
                release(&mut interest.channels, channel);
            }
        }
    }

    /// Adds channels to a user's entry (only if it is still `generation`),
    /// returning the readiness of each newly held channel.
    fn add_channels(
        self: &Arc<Self>,
        user: &UserId,
        generation: u64,
        channels: Vec<ChannelId>,
    ) -> Vec<watch::Receiver<bool>> {
        let mut guard = self.lock();
        let interest = &mut *guard;
        let Some(entry) = interest.users.get_mut(user).filter(|e| e.generation == generation) else {
            return Vec::new();
        };
        let mut ready = Vec::new();
        for channel in channels {
            if entry.channels.insert(channel.clone()) {
                ready.push(self.acquire(&mut interest.channels, &channel, None));
            }
        }
        ready
    }

    /// Hands a membership change to the user's membership task (no-op for
    /// a user without local sessions), which applies them one at a time as
    /// the database has them ([`run_membership`]). Changes made on different
    /// nodes arrive here in any order (each node applies its own at once,
    /// the others' come through NATS later), so the event's `add` cannot be
    /// applied as it is: an older removal arriving after a newer add would
    /// end the member's delivery for good.
    fn membership(&self, user: &UserId, channel: &ChannelId, add: bool, seq: i64) {
        if let Some(entry) = self.lock().users.get(user) {
            let _ = entry.memberships.send(MembershipChange {
                channel: channel.clone(),
                add,
                seq,
            });
        }
    }

    /// Takes (`member`) or gives back `channel` for the user's entry, if it
    /// is still `generation`. `floor`: the seq after which a newly taken
    /// channel starts delivering (the join's own seq).
    fn set_membership(self: &Arc<Self>, user: &UserId, generation: u64, channel: &ChannelId, member: bool, floor: i64) {
        let mut guard = self.lock();
        let interest = &mut *guard;
        let Some(entry) = interest.users.get_mut(user).filter(|e| e.generation == generation) else {
            return;
        };
        if member {
            if entry.channels.insert(channel.clone()) {
                let _ = self.acquire(&mut interest.channels, channel, Some(floor));
            }
        } else if entry.channels.remove(channel) {
            release(&mut interest.channels, channel);
        }
    }

    /// Takes a reference to a channel, starting its task for the first one.
    /// `floor`: a user joined when the channel's last seq was this.
    fn acquire(
        self: &Arc<Self>,
        channels: &mut HashMap<ChannelId, ChannelEntry>,
        channel: &ChannelId,
        floor: Option<i64>,
    ) -> watch::Receiver<bool> {
        if let Some(entry) = channels.get_mut(channel) {
            entry.refs += 1;
            if let Some(seq) = floor {
                let _ = entry.commands.send(ChannelCmd::Floor(seq));
            }
            return entry.ready.clone();
        }
        let (ready_tx, ready) = watch::channel(false);
        let (commands, commands_rx) = mpsc::unbounded_channel();
        let stop = self.stop.child_token();
        channels.insert(
            channel.clone(),
            ChannelEntry {
                refs: 1,
                ready: ready.clone(),
                commands,
                stop: stop.clone(),
            },
        );
        telemetry::nats_subscriptions("channel", 1.0);
        self.tasks.spawn(run_channel(
            self.clone(),
            channel.clone(),
            floor,
            ready_tx,
            commands_rx,
            stop,
        ));
        ready
    }
}

/// Gives back a reference to a channel, stopping its task after the last.
fn release(channels: &mut HashMap<ChannelId, ChannelEntry>, channel: &ChannelId) {
    let Some(entry) = channels.get_mut(channel) else { return };
    entry.refs = entry.refs.saturating_sub(1);
    if entry.refs == 0 {
        if let Some(entry) = channels.remove(channel) {
            entry.stop.cancel();
            telemetry::nats_subscriptions("channel", -1.0);
        }
    }
}

/// Retries a database read every [`RETRY`] until it succeeds or `stop`.
async fn read_retrying<T, F, Fut>(stop: &CancellationToken, what: &str, mut read: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, crate::store::StoreError>>,
{
    loop {
        match read().await {
            Ok(value) => return Some(value),
            Err(error) => {
                tracing::warn!(%error, "cannot read {what}; retrying");
                tokio::select! {
                    _ = stop.cancelled() => return None,
                    _ = tokio::time::sleep(RETRY) => {}
                }
            }
        }
    }
}

/// One channel's task: subscribe (confirmed), then start the sequencer at
/// the channel's last seq read after that (or at the join's `floor`), then
/// run it.
async fn run_channel(
    inner: Arc<Inner>,
    channel: ChannelId,
    floor: Option<i64>,
    ready: watch::Sender<bool>,
    commands: mpsc::UnboundedReceiver<ChannelCmd>,
    stop: CancellationToken,
) {
    let inbound = inner.subscribe(channel_subject(&inner.prefix, &channel)).await;
    let store = inner.store.clone();
    let Some(last) = read_retrying(&stop, "a channel's last seq", || store.channel(&channel)).await else {
        return;
    };
    let last = last.map_or(0, |c| c.last_seq);
    let start = floor.map_or(last, |f| f.clamp(0, last));
    let mut core = ChannelCore::new(
        channel.clone(),
        inner.store.clone(),
        inner.hub.clone(),
        inner.gap_wait,
        start + 1,
    );
    if start < last {
        core.catch_up().await;
    }
    let _ = ready.send(true);
    inner
        .tasks
        .spawn(presence::run_typing(inner.clone(), channel, stop.clone()));
    drop(inner);
    core.run(inbound, commands, stop).await;
}

/// One user's task: subscribe to the user's subject (confirmed), read the
/// user's channels and take them (waiting for their subscriptions), then
/// handle what comes for the user: RECEIPT frames, membership changes.
async fn run_user(
    inner: Arc<Inner>,
    user: UserId,
    generation: u64,
    ready: watch::Sender<bool>,
    mut commands: mpsc::UnboundedReceiver<UserCmd>,
    stop: CancellationToken,
) {
    let mut inbound = inner.subscribe(user_subject(&inner.prefix, &user)).await;
    let store = inner.store.clone();
    let Some(states) = read_retrying(&stop, "a user's channels", || store.channel_states(&user)).await else {
        return;
    };
    let channels = states.into_iter().map(|s| s.channel_id).collect();
    let deadline = tokio::time::Instant::now() + JOIN_WAIT;
    for mut channel_ready in inner.add_channels(&user, generation, channels) {
        let _ = tokio::time::timeout_at(deadline, channel_ready.wait_for(|r| *r)).await;
    }
    let _ = ready.send(true);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            command = commands.recv() => match command {
                None => return,
                Some(UserCmd::Reconcile) => {
                    // Only adds: a channel left meanwhile costs a subscription
                    // until the user's last session ends, never a delivery
                    // (recipients come with each message).
                    match inner.store.channel_states(&user).await {
                        Ok(states) => {
                            let channels = states
                                .into_iter()
                                .map(|s| s.channel_id)
                                .collect();
                            let _ = inner.add_channels(&user, generation, channels);
                        }
                        Err(error) => tracing::warn!(user_id = %user, %error, "cannot re-read a user's channels"),
                    }
                }
            },
            payload = inbound.next() => match payload {
                Some(payload) => on_user_payload(&inner, &user, &payload),
                None => inbound = futures_util::stream::pending().boxed(),
            },
        }
    }
}

/// One user's membership changes, one at a time, in a task of their own so
/// that the database reads never hold up the user's RECEIPT frames.
///
/// The database decides, read after the change committed: every change is
/// followed by its own event, so the last one handled reads the final state,
/// whatever order the events came in. When the read fails, the node keeps (or
/// takes) the channel: delivery goes by each message's own member list, so a
/// channel held for a user who left costs traffic until the user's last
/// session here ends, never a delivery, while one given up for a member would
/// lose that member's messages for good.
async fn run_membership(
    inner: Arc<Inner>,
    user: UserId,
    generation: u64,
    mut changes: mpsc::UnboundedReceiver<MembershipChange>,
    stop: CancellationToken,
) {
    loop {
        let change = tokio::select! {
            _ = stop.cancelled() => return,
            change = changes.recv() => match change {
                Some(change) => change,
                None => return,
            },
        };
        let MembershipChange { channel, add, seq } = change;
        // The floor of a join is the join's own seq from the database, not
        // the event's: a stale event (an earlier join, or a removal) has a
        // lower seq, and catching up from it would hand the member what was
        // stored while it was not one.
        let (member, floor) = match inner.store.member_since(&channel, &user).await {
            Ok(Some(joined)) => (true, joined),
            Ok(None) => (false, seq),
            Err(error) => {
                tracing::warn!(user_id = %user, channel_id = %channel, add, %error, "cannot read a membership; keeping the channel");
                (true, seq)
            }
        };
        inner.set_membership(&user, generation, &channel, member, floor);
    }
}

fn on_user_payload(inner: &Arc<Inner>, user: &UserId, payload: &[u8]) {
    match serde_json::from_slice::<UserEnvelope>(payload) {
        Ok(UserEnvelope::Frame { frame_type, text }) => {
            let Some(type_name) = known_frame_type(&frame_type) else {
                tracing::debug!(%frame_type, "unknown frame type from NATS");
                return;
            };
            inner.hub.send_to_user(user, &Utf8Bytes::from(text), type_name, None);
        }
        Ok(UserEnvelope::Receipt {
            channel_id,
            owner,
            read,
            seq,
            text,
        }) => match (ChannelId::parse(&channel_id), UserId::parse(&owner)) {
            (Ok(channel), Ok(owner)) => {
                let receipt = crate::outbound::ReceiptFrame {
                    key: (channel, owner, read),
                    seq,
                    text: Utf8Bytes::from(text),
                };
                inner.hub.send_receipt(user, &receipt, None);
            }
            _ => tracing::warn!("bad receipt ids from NATS"),
        },
        Ok(UserEnvelope::Membership { channel_id, add, seq }) => match ChannelId::parse(&channel_id) {
            Ok(channel) => {
                // The node that made the change forgot its cached members;
                // this one must too, or it would take (or refuse) the user's
                // TYPING by the old list for up to MEMBERS_FRESH.
                inner.hub.ephemeral.forget_members(&channel);
                inner.membership(user, &channel, add, seq);
            }
            Err(error) => tracing::warn!(%error, "bad channel id from NATS"),
        },
        Err(error) => tracing::warn!(user_id = %user, %error, "undecodable message from NATS"),
    }
}

/// The static name of a server frame type (for the metrics label).
fn known_frame_type(name: &str) -> Option<&'static str> {
    [
        "RECEIPT",
        "MSG_RECV",
        "MSG_ACK",
        "ERROR",
        "HELLO",
        "SYNC_BATCH",
        "CHANNEL_REMOVED",
        "TYPING",
        "PRESENCE",
    ]
    .into_iter()
    .find(|known| *known == name)
}

/// Publishes queued envelopes in order; holds them while NATS is down (they
/// go out after the reconnect). At shutdown, sends what is left while
/// connected.
async fn run_publisher(inner: Arc<Inner>, mut queue: mpsc::Receiver<Outbound>) {
    let mut connected = inner.connected.subscribe();
    let stop = inner.stop.clone();
    loop {
        let item = tokio::select! {
            item = queue.recv() => item,
            _ = stop.cancelled() => None,
        };
        let Some(item) = item else { break };
        if !*connected.borrow_and_update() {
            tokio::select! {
                up = connected.wait_for(|c| *c) => if up.is_err() { break },
                _ = stop.cancelled() => break,
            }
        }
        if let Err(error) = inner.client.publish(item.subject, item.payload).await {
            tracing::warn!(%error, "NATS publish failed");
            telemetry::nats_publish_failed("error");
        }
    }
    if *connected.borrow() {
        while let Ok(item) = queue.try_recv() {
            if inner.client.publish(item.subject, item.payload).await.is_err() {
                break;
            }
        }
        let _ = inner.client.flush().await;
    }
}

/// Follows the connection: the `/readyz` detail and gauge, and after every
/// (re)connect a catch-up of every channel and a re-read of every user's
/// channels.
async fn run_control(inner: Arc<Inner>, mut events: mpsc::UnboundedReceiver<async_nats::Event>) {
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            _ = inner.stop.cancelled() => None,
        };
        let Some(event) = event else { return };
        match event {
            async_nats::Event::Connected => {
                tracing::info!("NATS connected");
                inner.connected.send_replace(true);
                telemetry::nats_connected(true);
                // The client has re-sent our subscriptions; once the server
                // has them, read what was committed while they were away.
                inner.confirm().await;
                let (channels, users): (Vec<_>, Vec<_>) = {
                    let interest = inner.lock();
                    (
                        interest.channels.values().map(|c| c.commands.clone()).collect(),
                        interest.users.values().map(|u| u.commands.clone()).collect(),
                    )
                };
                for channel in channels {
                    let _ = channel.send(ChannelCmd::CatchUp);
                }
                for user in users {
                    let _ = user.send(UserCmd::Reconcile);
                }
            }
            async_nats::Event::Disconnected => {
                tracing::warn!("NATS disconnected; storing and delivering locally until it is back");
                inner.connected.send_replace(false);
                telemetry::nats_connected(false);
            }
            async_nats::Event::SlowConsumer(_) => {
                tracing::warn!("NATS subscription too slow; messages dropped (filled from the database)");
                telemetry::nats_slow_consumer();
            }
            other => tracing::info!(event = %other, "NATS event"),
        }
    }
}
