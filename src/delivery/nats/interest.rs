//! What this node subscribes to: a `u.<user>` subscription (and its task)
//! per user with a live session here, a `c.<channel>` subscription (and its
//! channel task) per channel one of those users is a member of,
//! reference-counted by user, and taking or giving back a channel when a
//! membership changes (decided by the user's membership task,
//! [`super::membership`]).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicI64;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use futures_util::StreamExt;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::channel::{ChannelCmd, ChannelCore};
use super::inner::Inner;
use super::membership::run_membership;
use super::tables::{ChannelEntry, UserEntry};
use super::wire::{channel_subject, user_subject, UserEnvelope};
use crate::channel_gate::Kind;
use crate::ids::{ChannelId, UserId};
use crate::telemetry;

/// How long a session start waits for its subscriptions to be confirmed
/// before it sends HELLO anyway (NATS down or slow).
pub(super) const JOIN_WAIT: Duration = Duration::from_secs(2);
/// Pause before retrying a database read that failed.
const RETRY: Duration = Duration::from_secs(1);

impl Inner {
    /// Counts a session of `user`, creating the user's entry (and its task)
    /// for the first one. Returns the entry's readiness.
    pub(super) fn enter(self: &Arc<Self>, user: &UserId) -> watch::Receiver<bool> {
        let mut interest = self.lock();
        if let Some(entry) = interest.users.get_mut(user) {
            entry.sessions += 1;
            return entry.ready.clone();
        }
        let generation = interest.next_generation;
        interest.next_generation += 1;
        let (ready_tx, ready) = watch::channel(false);
        let (memberships, memberships_rx) = mpsc::unbounded_channel();
        let stop = self.stop.child_token();
        interest.users.insert(
            user.clone(),
            UserEntry {
                generation,
                sessions: 1,
                channels: HashSet::new(),
                ready: ready.clone(),
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
        self.tasks
            .spawn(run_user(self.clone(), user.clone(), generation, ready_tx, stop));
        ready
    }

    /// A session of `user` ended; the last one gives back the user's
    /// subscription and channel references.
    pub(super) fn leave(&self, user: &UserId) {
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
    pub(super) fn add_channels(
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

    /// The channels the user's entry holds, if it is still `generation`.
    pub(super) fn held_channels(&self, user: &UserId, generation: u64) -> Option<HashSet<ChannelId>> {
        self.lock()
            .users
            .get(user)
            .filter(|e| e.generation == generation)
            .map(|e| e.channels.clone())
    }

    /// Takes (`member`) or gives back `channel` for the user's entry, if it
    /// is still `generation`. `floor`: the seq after which a newly taken
    /// channel starts delivering (the join's own seq).
    pub(super) fn set_membership(
        self: &Arc<Self>,
        user: &UserId,
        generation: u64,
        channel: &ChannelId,
        member: bool,
        floor: i64,
    ) {
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
        let known = Arc::new(AtomicI64::new(0));
        channels.insert(
            channel.clone(),
            ChannelEntry {
                refs: 1,
                ready: ready.clone(),
                commands,
                known: known.clone(),
                stop: stop.clone(),
            },
        );
        telemetry::nats_subscriptions("channel", 1.0);
        self.tasks.spawn(run_channel(
            self.clone(),
            channel.clone(),
            ChannelStart {
                floor,
                known,
                ready: ready_tx,
                commands: commands_rx,
                stop,
            },
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

/// What a channel's task starts with, besides the channel.
struct ChannelStart {
    /// A local user joined when the channel's last seq was this.
    floor: Option<i64>,
    /// The channel table's highest known seq (`ChannelEntry::known`).
    known: Arc<AtomicI64>,
    ready: watch::Sender<bool>,
    commands: mpsc::UnboundedReceiver<ChannelCmd>,
    stop: CancellationToken,
}

/// One channel's task: subscribe (confirmed), then start the sequencer at
/// the channel's last seq read after that (or at the join's `floor`), then
/// run it.
async fn run_channel(inner: Arc<Inner>, channel: ChannelId, start: ChannelStart) {
    let ChannelStart {
        floor,
        known,
        ready,
        commands,
        stop,
    } = start;
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
        commands,
    )
    .sharing_known(known);
    if start < last {
        core.catch_up().await;
    }
    let _ = ready.send(true);
    drop(inner);
    core.run(inbound, stop).await;
}

/// One user's task: subscribe to the user's subject (confirmed), read the
/// user's channels and take them (waiting for their subscriptions), then
/// handle what comes for the user on NATS: RECEIPT frames, membership
/// changes (those go on to the user's membership task, `membership.rs`,
/// which also brings the user's channels back to the database's after a
/// NATS reconnect).
async fn run_user(
    inner: Arc<Inner>,
    user: UserId,
    generation: u64,
    ready: watch::Sender<bool>,
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
            payload = inbound.next() => match payload {
                Some(payload) => on_user_payload(&inner, &user, &payload),
                None => inbound = futures_util::stream::pending().boxed(),
            },
        }
    }
}

fn on_user_payload(inner: &Arc<Inner>, user: &UserId, payload: &[u8]) {
    match serde_json::from_slice::<UserEnvelope>(payload) {
        Ok(UserEnvelope::Frame {
            frame_type,
            channel_id,
            text,
        }) => {
            let Some(type_name) = crate::protocol::ServerFrame::known_type_name(&frame_type) else {
                tracing::debug!(%frame_type, "unknown frame type from NATS");
                return;
            };
            let channel = match channel_id.as_deref().map(ChannelId::parse).transpose() {
                Ok(channel) => channel,
                Err(error) => {
                    tracing::warn!(%error, "bad channel id from NATS");
                    return;
                }
            };
            let text = Utf8Bytes::from(text);
            match (channel, Kind::of_frame(type_name)) {
                // Another node's membership frame: read against the database
                // in order with this user's other membership changes.
                (Some(channel), kind @ (Kind::Added | Kind::Removed)) => {
                    inner.membership_frame(user, &channel, kind == Kind::Added, text, type_name);
                }
                (channel, _) => inner.hub.send_to_user(user, channel.as_ref(), &text, type_name, None),
            }
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
        Ok(UserEnvelope::Blocked { blocker }) => match UserId::parse(&blocker) {
            Ok(blocker) => inner.hub.ephemeral.hide_blocker(user, &blocker),
            Err(error) => tracing::warn!(%error, "bad user id from NATS"),
        },
        Ok(UserEnvelope::Erased) => {
            inner.hub.kick_user(user, crate::close_code::POLICY, "user erased");
        }
        Err(error) => tracing::warn!(user_id = %user, %error, "undecodable message from NATS"),
    }
}
