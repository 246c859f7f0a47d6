//! Delivery: how a frame reaches the sessions it is for, on this node and,
//! with `nats_url`, on every other node. One type, [`Delivery`], held by the
//! app state and the commit path, so a new kind of traffic is one method
//! here, not a branch at every call site.
//!
//! - [`Delivery::Local`]: one node; frames go straight to this node's
//!   [`Hub`].
//! - [`Delivery::Nats`]: several nodes; [`Cluster`] publishes to NATS and
//!   hands each channel's messages, local or from other nodes, to the hub in
//!   `seq` order, filling gaps from the database (`docs/deployment.md`).
//!
//! Delivery never waits on a socket: every session has a bounded outbound
//! queue ([`crate::outbound`]) and a full one closes that session with 1013.

pub mod ephemeral;
pub mod hub;
mod membership;
pub mod nats;
pub mod sharing;

use std::sync::Arc;

use axum::extract::ws::Utf8Bytes;

pub use hub::Hub;

use crate::config::Config;
use crate::ids::{ChannelId, UserId};
use crate::outbound::{ReceiptFrame, SessionHandle, SessionId};
use crate::protocol::{ServerFrame, TypingState};
use crate::store::{Entry, Store};
use crate::view;
use nats::{Cluster, ClusterError, SessionInterest};

/// Where frames go: this node's sessions only, or every node's through NATS.
/// Cheap to clone.
#[derive(Debug, Clone)]
pub enum Delivery {
    /// A single node: in-process fan-out.
    Local(Arc<Hub>),
    /// Several nodes: fan-out through NATS.
    Nats(Cluster),
}

/// What a session holds while it is open: its place in presence (dropping
/// it is the session's close: subscription ended, grace period started when
/// it was the user's last session here, typing stopped) and, with NATS, its
/// user's subscriptions (released when the last session of the user on this
/// node ends).
pub struct Joined {
    _presence: PresenceHold,
    _interest: Option<SessionInterest>,
}

/// A session's place in presence; see [`Joined`].
struct PresenceHold {
    delivery: Delivery,
    user: UserId,
    session: SessionId,
}

impl Drop for PresenceHold {
    fn drop(&mut self) {
        self.delivery.session_closed(&self.user, &self.session);
    }
}

impl std::fmt::Debug for Joined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Joined")
            .field("nats", &self._interest.is_some())
            .finish()
    }
}

/// `offlineMembers` of webhooks: who has no open session on any node, as
/// this node's presence state knows it ([`ephemeral::Ephemeral::offline_among`]).
impl crate::store::OfflineMembers for Delivery {
    fn offline(&self, members: &[UserId]) -> Vec<UserId> {
        self.ephemeral().offline_among(members)
    }
}

impl Delivery {
    /// The delivery `config` asks for, over `hub`: NATS when `nats_url` is
    /// set (connected, or retrying in the background, see [`Cluster::start`]),
    /// else local.
    ///
    /// # Errors
    /// [`ClusterError`] when the NATS bridge cannot be set up.
    pub async fn start(config: &Config, store: Store, hub: Arc<Hub>) -> Result<Self, ClusterError> {
        let delivery = match &config.nats_url {
            Some(_) => Delivery::Nats(Cluster::start(config, store.clone(), hub).await?),
            None => Delivery::Local(hub),
        };
        let upkeep = tokio::spawn(run_upkeep(delivery.clone(), store));
        *delivery.ephemeral().upkeep.lock().unwrap_or_else(|e| e.into_inner()) = Some(upkeep);
        Ok(delivery)
    }

    /// This node's hub.
    pub fn hub(&self) -> &Arc<Hub> {
        match self {
            Delivery::Local(hub) => hub,
            Delivery::Nats(cluster) => cluster.hub(),
        }
    }

    /// This node's typing and presence state.
    pub fn ephemeral(&self) -> &ephemeral::Ephemeral {
        &self.hub().ephemeral
    }

    /// `"local"` or `"nats"`, for logs.
    pub fn kind(&self) -> &'static str {
        match self {
            Delivery::Local(_) => "local",
            Delivery::Nats(_) => "nats",
        }
    }

    /// Whether NATS is connected; `None` on a single node (`/readyz`).
    pub fn nats_connected(&self) -> Option<bool> {
        match self {
            Delivery::Local(_) => None,
            Delivery::Nats(cluster) => Some(cluster.is_connected()),
        }
    }

    /// A session of `user` starts. Returns once it will get every frame for
    /// its user from now on (with NATS: its subscriptions are confirmed, or
    /// 2 s passed), so a HELLO read after it misses nothing.
    pub async fn join(&self, user: &UserId, session: &SessionHandle) -> Joined {
        if self.ephemeral().session_opened(user) {
            if let Delivery::Nats(cluster) = self {
                cluster.presence_held(user);
            }
        }
        let presence = PresenceHold {
            delivery: self.clone(),
            user: user.clone(),
            session: session.id.clone(),
        };
        match self {
            Delivery::Local(_) => Joined {
                _presence: presence,
                _interest: None,
            },
            Delivery::Nats(cluster) => Joined {
                _presence: presence,
                _interest: Some(cluster.join(user).await),
            },
        }
    }

    /// A session closed (its [`Joined`] dropped): see [`Joined`]. The grace
    /// period runs on a timer task; without a runtime (process exit) there
    /// is none, and the user is released at shutdown instead.
    fn session_closed(&self, user: &UserId, session: &SessionId) {
        let closed = self.ephemeral().session_closed(user, session);
        for (channel, members) in closed.typing_stops {
            self.typing(&channel, user, TypingState::Stop, None, &members);
        }
        if let (Some(_), Delivery::Nats(cluster)) = (closed.grace, self) {
            cluster.presence_idle(user);
        }
        let (Some(generation), Ok(runtime)) = (closed.grace, tokio::runtime::Handle::try_current()) else {
            return;
        };
        let delivery = self.clone();
        let user = user.clone();
        let grace = self.ephemeral().settings().presence_grace;
        runtime.spawn(async move {
            tokio::time::sleep(grace).await;
            if let Some(last_seen) = delivery.ephemeral().grace_over(&user, generation) {
                if let Delivery::Nats(cluster) = &delivery {
                    cluster.presence_released(&user, last_seen);
                }
            }
        });
    }

    /// A TYPING frame of `typer` in `channel` that passed the throttle:
    /// queued (lossily) to every session of every member in `members` but
    /// the typer's own, on every node, never before a message of the channel
    /// this node fanned out or handed out before it (with NATS, see
    /// [`Cluster::typing`]).
    pub fn typing(
        &self,
        channel: &ChannelId,
        typer: &UserId,
        state: TypingState,
        expires_at: Option<i64>,
        members: &Arc<[UserId]>,
    ) {
        self.typing_after(channel, typer, state, expires_at, members, 0);
    }

    /// [`Self::typing`], following at least the message at seq `after`.
    fn typing_after(
        &self,
        channel: &ChannelId,
        typer: &UserId,
        state: TypingState,
        expires_at: Option<i64>,
        members: &Arc<[UserId]>,
        after: i64,
    ) {
        let frame = ServerFrame::Typing {
            channel_id: channel.as_str().to_owned(),
            user_id: typer.as_str().to_owned(),
            state,
            expires_at,
        };
        let text = Utf8Bytes::from(frame.encode());
        match self {
            // Fan-out is synchronous here: the frame is queued behind every
            // MSG_RECV fanned out before it.
            Delivery::Local(hub) => hub.deliver_ephemeral(channel, &text, members, typer, "TYPING"),
            Delivery::Nats(cluster) => cluster.typing(channel, typer, &text, members, after),
        }
    }

    /// A message from `sender` was stored in `channel` at `seq` (the commit
    /// path, after its fan-out): ends the sender's typing there, if any,
    /// with a `stop` that every member gets after the message. Costs one
    /// atomic load when nobody types on this node.
    pub fn message_sent(&self, sender: &UserId, channel: &ChannelId, seq: i64) {
        if let Some(members) = self.ephemeral().typing_ends_with_message(sender, channel) {
            self.typing_after(channel, sender, TypingState::Stop, None, &members, seq);
        }
    }

    /// A message this node committed: fanned out as MSG_RECV to every live
    /// session of every member in `members` (read in the storing
    /// transaction), except `except`, the session whose copy was stored (it
    /// has the ACK; `None` for a send that came over HTTP). The frame is serialised once for every recipient.
    pub fn entry_committed(&self, message: &Entry, members: &Arc<[UserId]>, except: Option<&SessionId>) {
        match self {
            Delivery::Local(hub) => {
                let text = Utf8Bytes::from(ServerFrame::encode_msg_recv(&view::recv(message)));
                hub.deliver(&message.channel_id, &text, members, except);
            }
            Delivery::Nats(cluster) => cluster.committed(message, members, except),
        }
    }

    /// Queues `receipt` to every session of `user_id` on every node, except
    /// `except`; a session never gets one below a RECEIPT it already got for
    /// that watermark ([`crate::outbound::SessionHandle::receipt_is_fresh`]).
    pub fn receipt(&self, user_id: &UserId, receipt: &ReceiptFrame, except: Option<&SessionId>) {
        match self {
            Delivery::Local(hub) => hub.send_receipt(user_id, receipt, except),
            Delivery::Nats(cluster) => cluster.send_receipt(user_id, receipt, except),
        }
    }

    /// `user` joined (`add`) or left `channel`, committed when the channel's
    /// last seq was `seq`. On a single node the commit path reads members
    /// under the channel lock, so there is nothing to do; with NATS, the nodes
    /// holding the user's sessions (this one included) start or stop
    /// carrying the channel for them.
    pub fn membership_changed(&self, user: &UserId, channel: &ChannelId, add: bool, seq: i64) {
        self.ephemeral().forget_members(channel);
        match self {
            Delivery::Local(_) => {}
            Delivery::Nats(cluster) => cluster.membership_changed(user, channel, add, seq),
        }
    }

    /// `blocker` now blocks `blocked` (§17): the blocked user's open presence
    /// subscriptions, on this node and (with NATS) every node holding its
    /// sessions, show the blocker `offline` at once and stop watching it.
    pub fn user_blocked(&self, blocked: &UserId, blocker: &UserId) {
        self.ephemeral().hide_blocker(blocked, blocker);
        if let Delivery::Nats(cluster) = self {
            cluster.user_blocked(blocked, blocker);
        }
    }

    /// `user` was erased (§19): its live sessions, on this node and (with
    /// NATS) every node holding one, close with 1008.
    pub fn user_erased(&self, user: &UserId) {
        self.hub().kick_user(user, crate::close_code::POLICY, "user erased");
        if let Delivery::Nats(cluster) = self {
            cluster.user_erased(user);
        }
    }

    /// Stops delivery after the sessions have closed (with NATS: publishes
    /// what is still queued and closes the connection, bounded to about 3 s).
    pub async fn shutdown(&self) {
        let ephemeral = self.ephemeral();
        ephemeral.stop.cancel();
        let upkeep = ephemeral.upkeep.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(upkeep) = upkeep {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(3), upkeep).await;
        }
        match self {
            Delivery::Local(_) => {}
            Delivery::Nats(cluster) => cluster.shutdown().await,
        }
    }
}

/// Most `lastSeenAt` values written per transaction.
const LAST_SEEN_BATCH: usize = 1000;

/// The node's typing and presence upkeep, every [`ephemeral::Settings::tick`]:
/// expires other nodes' entries and finished typing, and writes the
/// `lastSeenAt` values gathered since the last tick in one transaction
/// (batched: presence never writes per event). At shutdown, writes those of
/// the users still in their grace period too.
async fn run_upkeep(delivery: Delivery, store: Store) {
    let ephemeral = delivery.ephemeral();
    let mut tick = tokio::time::interval(ephemeral.settings().tick());
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ephemeral.stop.cancelled() => break,
            _ = tick.tick() => {}
        }
        ephemeral.expire(tokio::time::Instant::now());
        let pending = ephemeral.take_pending_last_seen();
        write_last_seen(&store, pending).await;
        sharing::check_sharing(&store, ephemeral).await;
    }
    write_last_seen(&store, ephemeral.drain_last_seen()).await;
}

async fn write_last_seen(store: &Store, mut pending: Vec<(UserId, i64)>) {
    if pending.is_empty() {
        return;
    }
    // The latest per user only.
    pending.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    pending.dedup_by(|a, b| a.0 == b.0);
    for chunk in pending.chunks(LAST_SEEN_BATCH) {
        if let Err(error) = store.record_last_seen(chunk).await {
            // Presence may be lost; the next close writes again.
            tracing::warn!(%error, users = chunk.len(), "cannot write lastSeenAt");
        }
    }
}

#[cfg(test)]
mod tests;
