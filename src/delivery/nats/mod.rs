//! Fan-out across several nodes through NATS (`nats_url`).
//!
//! PostgreSQL keeps the order and the data; NATS only carries, between nodes,
//! what each node's sessions need (`docs/deployment.md`):
//! - a committed message goes to `<prefix>.c.<channel>` with the members read
//!   in its transaction ([`Cluster::committed`]), and so does each TYPING
//!   frame of the channel, behind the messages it follows ([`Cluster::typing`]);
//! - RECEIPT frames and membership changes go to `<prefix>.u.<user>`
//!   ([`Cluster::send_receipt`], [`Cluster::membership_changed`]).
//!
//! A node subscribes to `u.<user>` for each user with a live session on it and
//! to `c.<channel>` for each channel one of those users is a member of
//! (reference-counted by user). Each subscribed channel has one task
//! ([`channel`]) that hands its messages, local or remote, to the sessions in
//! `seq` order, filling gaps from the database, and its TYPING frames each
//! after the messages it follows.
//!
//! Here: the connection and the public API ([`Cluster`], with the typing
//! and presence it publishes); in [`inner`] the state every task of the
//! bridge shares, in [`tables`] the tables of users and channels, in
//! [`interest`] what this node subscribes to (users, channels), in
//! [`membership`] each user's membership changes and `CHANNEL_ADDED` /
//! `CHANNEL_REMOVED` frames, checked against the database; in
//! [`publisher`] the ordered queue of publications; in [`control`] what the
//! node does when the connection comes and goes; subjects and payloads in
//! [`wire`], what other nodes say of presence and typing, and this node's
//! heartbeat, in [`ephemeral`].
//!
//! NATS is best effort (core NATS is at-most-once): when it is down, a node
//! keeps storing, ACKing and delivering to its own sessions; publications wait
//! (bounded) for the reconnect, and after it every channel task catches up
//! from the database. Without `nats_url` none of this runs
//! ([`crate::delivery::Delivery::Local`]).

mod channel;
mod control;
mod ephemeral;
mod inner;
mod interest;
mod membership;
mod peers;
mod publisher;
mod sequencer;
mod tables;
mod wire;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use bytes::Bytes;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::channel_gate::Kind;
use crate::config::Config;
use crate::delivery::ephemeral::NodeId;
use crate::delivery::hub::Hub;
use crate::ids::{ChannelId, UserId};
use crate::nats_addr::parse_nats_urls;
use crate::outbound::SessionId;
use crate::store::{Entry, Store};
use crate::telemetry;

use channel::{ChannelCmd, Handoff, TypingFrame};
use control::run_control;
use inner::Inner;
use interest::JOIN_WAIT;
use publisher::run_publisher;
pub use sequencer::{Offer, Sequencer};
use tables::Interest;
pub use wire::{
    channel_subject, encode_token, ping_subject, presence_subject, user_subject, ChannelEnvelope, PresenceEnvelope,
    TypingEnvelope, UserEnvelope,
};

/// Users per `unshared` or `shared` presence message (a deleted or a new
/// channel's members; ids
/// of at most 128 bytes keep it well within NATS's default 1 MB payload).
const UNSHARED_CHUNK: usize = 2000;

/// How long the round trip that confirms subscriptions may take.
const CONFIRM_WAIT: Duration = Duration::from_secs(1);
/// How long start-up waits for the first NATS connection before serving
/// without it (it keeps retrying in the background).
const CONNECT_WAIT: Duration = Duration::from_secs(2);
/// Publications waiting for NATS (while it is down, or slow); past it new
/// ones are dropped and counted, and other nodes recover from the database.
const PUBLISH_QUEUE: usize = 8192;
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
/// With the `test-hooks` feature: a node started with this environment
/// variable set to a number of milliseconds publishes everything on users'
/// subjects (`<prefix>.u.*`: membership frames, RECEIPTs) that late, in
/// order. Not a `CHATD_` setting (the settings refuse unknown keys).
#[cfg(feature = "test-hooks")]
pub const TEST_NATS_USER_DELAY_ENV: &str = "TEST_CHATD_NATS_USER_DELAY_MS";

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
        telemetry::feature_on(telemetry::catalog::When::Nats);
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
        #[cfg(feature = "test-hooks")]
        let outbound_tx = outbound.clone();
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
            #[cfg(feature = "test-hooks")]
            user_delay: inner::test_user_delay(&config.nats_subject_prefix, &outbound_tx),
        });
        inner.tasks.spawn(run_publisher(inner.clone(), outbound_rx));
        inner.tasks.spawn(run_control(inner.clone(), events_rx));
        inner.tasks.spawn(ephemeral::run_presence(inner.clone()));
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
        let mut envelope = ChannelEnvelope::message(
            crate::view::recv(message),
            Some(members.iter().map(|m| m.as_str().to_owned()).collect()),
        );
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
        // Known before this node's TYPING frames of the channel read it
        // ([`Self::typing`]): the typer's `stop` and next `start` follow it.
        let local = self.0.lock().channels.get(&message.channel_id).map(|e| {
            e.known.fetch_max(message.seq, Ordering::AcqRel);
            e.commands.clone()
        });
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

    /// `blocker` now blocks `blocked`: published to the nodes holding the
    /// blocked user's sessions, which hide the blocker's presence from them
    /// (this node did already, [`super::Delivery::user_blocked`]).
    pub fn user_blocked(&self, blocked: &UserId, blocker: &UserId) {
        let envelope = UserEnvelope::Blocked {
            blocker: blocker.as_str().to_owned(),
        };
        if let Ok(payload) = serde_json::to_vec(&envelope) {
            self.0
                .publish(user_subject(&self.0.prefix, blocked), Bytes::from(payload));
        }
    }

    /// A membership of each of `users` ended: published to every node,
    /// which judges again the presence subscriptions watching them or of
    /// them (this node noted its own already,
    /// [`super::Delivery::sharing_may_have_ended`]). In messages of at most
    /// [`UNSHARED_CHUNK`] users.
    pub fn sharing_may_have_ended(&self, users: &[UserId]) {
        let node = self.node().to_string();
        for chunk in users.chunks(UNSHARED_CHUNK) {
            self.publish_presence(&PresenceEnvelope::Unshared {
                node: node.clone(),
                users: chunk.iter().map(|u| u.as_str().to_owned()).collect(),
            });
        }
    }

    /// A membership of each of `users` started (or one of them unblocked
    /// someone): published to every node, which judges again the presence
    /// subscriptions that requested them or are theirs (this node noted its
    /// own already, [`super::Delivery::sharing_may_have_started`]). In
    /// messages of at most [`UNSHARED_CHUNK`] users.
    pub fn sharing_may_have_started(&self, users: &[UserId]) {
        let node = self.node().to_string();
        for chunk in users.chunks(UNSHARED_CHUNK) {
            self.publish_presence(&PresenceEnvelope::Shared {
                node: node.clone(),
                users: chunk.iter().map(|u| u.as_str().to_owned()).collect(),
            });
        }
    }

    /// `user` was erased: published to the nodes holding its sessions,
    /// which close them with 1008 (this node did already,
    /// [`super::Delivery::user_erased`]).
    pub fn user_erased(&self, user: &UserId) {
        if let Ok(payload) = serde_json::to_vec(&UserEnvelope::Erased) {
            self.0.publish(user_subject(&self.0.prefix, user), Bytes::from(payload));
        }
    }

    /// Queues an encoded frame of `channel` to this node's sessions of each
    /// of `users` and publishes it on each user's subject for the other
    /// nodes holding their sessions (in publication order per user); every
    /// node hands it through each session's channel gate, and a
    /// `CHANNEL_ADDED` or `CHANNEL_REMOVED` first through the user's
    /// membership task, which sends it and then, if the database says
    /// otherwise, what the database says ([`membership`]).
    pub fn frame_to_users(&self, users: &[UserId], channel: &ChannelId, text: &Utf8Bytes, type_name: &'static str) {
        let envelope = UserEnvelope::Frame {
            frame_type: type_name.to_owned(),
            channel_id: Some(channel.as_str().to_owned()),
            text: text.as_str().to_owned(),
        };
        let payload = serde_json::to_vec(&envelope).ok().map(Bytes::from);
        let kind = Kind::of_frame(type_name);
        for user in users {
            match kind {
                // Read against the database first, like another node's.
                Kind::Added | Kind::Removed => {
                    self.0
                        .membership_frame(user, channel, kind == Kind::Added, text.clone(), type_name);
                }
                Kind::Of | Kind::Ephemeral => self.0.hub.send_to_user(user, Some(channel), text, type_name, None),
            }
            if let Some(payload) = &payload {
                self.0.publish(user_subject(&self.0.prefix, user), payload.clone());
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

/// Typing and presence for the other nodes (the channel tasks receive
/// TYPING, `ephemeral.rs` presence).
impl Cluster {
    /// This node's hub.
    pub(crate) fn hub(&self) -> &Arc<Hub> {
        &self.0.hub
    }

    /// A TYPING frame of `typer` in `channel` for every session of
    /// `members` but the typer's, on every node, in the channel's order: it
    /// follows the highest seq of the channel this node knows of (at least
    /// `after`), so no member gets it before those messages. Published on
    /// the channel's subject (behind this node's earlier publications of the
    /// channel) and handed to this node's channel task (behind its earlier
    /// commits); without a task here (no local session carries the channel
    /// yet), straight to this node's sessions.
    pub fn typing(&self, channel: &ChannelId, typer: &UserId, text: &Utf8Bytes, members: &Arc<[UserId]>, after: i64) {
        let local = self
            .0
            .lock()
            .channels
            .get(channel)
            .map(|e| (e.commands.clone(), e.known.load(Ordering::Acquire)));
        let after = local.as_ref().map_or(after, |(_, known)| after.max(*known));
        let envelope = ChannelEnvelope::typing(TypingEnvelope {
            typer: typer.as_str().to_owned(),
            text: text.as_str().to_owned(),
            members: members.iter().map(|m| m.as_str().to_owned()).collect(),
            after,
        });
        if let Ok(payload) = serde_json::to_vec(&envelope) {
            self.0
                .publish(channel_subject(&self.0.prefix, channel), Bytes::from(payload));
        }
        let frame = TypingFrame {
            after,
            typer: typer.clone(),
            text: text.clone(),
            members: members.clone(),
        };
        match local {
            Some((commands, _)) => {
                if let Err(mpsc::error::SendError(ChannelCmd::Typing(frame))) = commands.send(ChannelCmd::Typing(frame))
                {
                    // The task just ended: no local session carries it.
                    self.0
                        .hub
                        .deliver_ephemeral(channel, &frame.text, &frame.members, typer, "TYPING");
                }
            }
            None => self.0.hub.deliver_ephemeral(channel, text, members, typer, "TYPING"),
        }
    }

    /// Tells the other nodes this node now holds `user`.
    pub fn presence_held(&self, user: &UserId) {
        self.publish_presence(&PresenceEnvelope::Held {
            node: self.node().to_string(),
            user: user.as_str().to_owned(),
        });
    }

    /// Tells the other nodes `user`'s last session on this node closed (its
    /// grace period starts here).
    pub fn presence_idle(&self, user: &UserId) {
        self.publish_presence(&PresenceEnvelope::Idle {
            node: self.node().to_string(),
            user: user.as_str().to_owned(),
        });
    }

    /// Tells the other nodes this node let go of `user`, last seen at
    /// `last_seen_at` (ms).
    pub fn presence_released(&self, user: &UserId, last_seen_at: i64) {
        self.publish_presence(&PresenceEnvelope::Released {
            node: self.node().to_string(),
            user: user.as_str().to_owned(),
            last_seen_at,
        });
    }

    /// Tells the other nodes this node is leaving (shutdown).
    fn presence_leaving(&self) {
        self.publish_presence(&PresenceEnvelope::Leaving {
            node: self.node().to_string(),
        });
    }

    fn node(&self) -> &NodeId {
        self.0.hub.ephemeral().node()
    }

    fn publish_presence(&self, envelope: &PresenceEnvelope) {
        if let Ok(payload) = serde_json::to_vec(envelope) {
            self.0.publish(presence_subject(&self.0.prefix), Bytes::from(payload));
        }
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
