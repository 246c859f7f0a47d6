//! One task per channel that this node's sessions need: it owns the channel's
//! NATS subscription and its [`Sequencer`], and is the only path by which the
//! channel's MSG_RECV reach this node's sessions.
//!
//! Inputs, all offered to the sequencer: this node's own commits
//! ([`ChannelCmd::Local`], in commit order from the channel's commit task),
//! envelopes from other nodes (NATS), and reads from the database (a gap that
//! did not close within `cluster_gap_wait_ms`, a catch-up after a NATS
//! reconnect, the start of a member who just joined). Whatever the path, each
//! session gets the channel's messages in increasing `seq`, each once, and a
//! read that finds one of this node's commits whose handoff is queued uses
//! that handoff, so the session whose send stored it is spared as well.
//!
//! The channel's TYPING frames, this node's ([`ChannelCmd::Typing`], queued
//! behind its commits) and other nodes' (on the same NATS subject, behind
//! their publisher's messages), go through the same task: each goes out
//! once the messages up to the seq it follows have ([`typing`]).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use bytes::Bytes;
use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::sequencer::{Offer, Sequencer};
use super::wire::{ChannelEnvelope, TypingEnvelope};
use crate::delivery::hub::Hub;
use crate::ids::{ChannelId, UserId};
use crate::outbound::SessionId;
use crate::protocol::ServerFrame;
use crate::store::{Entry, Store, StoreError};
use crate::telemetry;

mod typing;

use typing::HeldTyping;
pub(crate) use typing::TypingFrame;

/// Most messages read from the database at once.
const PAGE: u32 = 500;

/// One message on its way to this node's sessions.
#[derive(Debug)]
pub(crate) struct Handoff {
    /// Its position in the channel.
    pub seq: i64,
    /// The encoded MSG_RECV frame, shared by every recipient.
    pub text: Utf8Bytes,
    /// Who gets it: the members when it was stored (or, read back from the
    /// database, the current ones).
    pub members: Arc<[UserId]>,
    /// The session whose send stored it (it has the ACK); only on the node
    /// that stored it.
    pub except: Option<SessionId>,
}

impl Handoff {
    /// A message read from the database, for the given members.
    pub fn stored(message: &Entry, members: Arc<[UserId]>, except: Option<SessionId>) -> Self {
        Self {
            seq: message.seq,
            text: Utf8Bytes::from(ServerFrame::encode_msg_recv(&crate::view::recv(message))),
            members,
            except,
        }
    }
}

/// What the rest of the node tells a channel's task.
#[derive(Debug)]
pub(crate) enum ChannelCmd {
    /// A message this node's commit task committed.
    Local(Handoff),
    /// A local user joined the channel when its last seq was this: if nothing
    /// was handed out yet, start right after it.
    Floor(i64),
    /// NATS came back: read what was committed meanwhile.
    CatchUp,
    /// A TYPING frame of this node's (already published for the others).
    Typing(TypingFrame),
}

/// What came from NATS on the channel's subject.
enum Inbound {
    Message(Handoff),
    Typing(TypingFrame),
}

/// The recipients of messages read back from the database, in seq order:
/// the members whose `joined_seq` is below each message's seq. Messages in a
/// row with the same recipients share one list.
struct Recipients<'a> {
    /// Earliest join first.
    members: &'a [(UserId, i64)],
    /// `members[..count]` joined before the last seq asked for.
    count: usize,
    shared: Arc<[UserId]>,
}

impl<'a> Recipients<'a> {
    fn new(members: &'a [(UserId, i64)]) -> Self {
        Self {
            members,
            count: 0,
            shared: Arc::from(Vec::new()),
        }
    }

    /// Who gets the message at `seq`; `seq` must not go down between calls.
    fn before(&mut self, seq: i64) -> Arc<[UserId]> {
        let count = self.members.partition_point(|(_, joined)| *joined < seq);
        if count != self.count {
            self.count = count;
            self.shared = self.members[..count].iter().map(|(user, _)| user.clone()).collect();
        }
        self.shared.clone()
    }
}

/// The state of one channel's task, apart from its inputs.
pub(crate) struct ChannelCore {
    channel: ChannelId,
    store: Store,
    hub: Arc<Hub>,
    gap_wait: Duration,
    seq: Sequencer<Handoff>,
    /// When to fill the gap (or retry a failed catch-up) from the database.
    deadline: Option<Instant>,
    /// A catch-up failed (database unreachable) and is retried at `deadline`.
    catch_up_due: bool,
    /// Whether anything was handed out yet (see [`ChannelCmd::Floor`]).
    delivered_any: bool,
    /// The highest seq offered, shared with the node's channel table
    /// (`tables::ChannelEntry::known`).
    known: Arc<AtomicI64>,
    /// TYPING frames waiting for the messages they follow.
    typing: HeldTyping,
    /// What the rest of the node tells this task.
    commands: mpsc::UnboundedReceiver<ChannelCmd>,
    /// Commands taken from `commands` while a read from the database was
    /// offered ([`Self::prefer_local`]), handled before any newer one.
    backlog: VecDeque<ChannelCmd>,
}

impl ChannelCore {
    /// A channel whose next message to hand out is `next`, told what to do
    /// through `commands`.
    pub fn new(
        channel: ChannelId,
        store: Store,
        hub: Arc<Hub>,
        gap_wait: Duration,
        next: i64,
        commands: mpsc::UnboundedReceiver<ChannelCmd>,
    ) -> Self {
        Self {
            channel,
            store,
            gap_wait,
            seq: Sequencer::new(next),
            deadline: None,
            catch_up_due: false,
            delivered_any: false,
            known: Arc::new(AtomicI64::new(next - 1)),
            typing: HeldTyping::new(hub.ephemeral().settings().typing_ttl),
            hub,
            commands,
            backlog: VecDeque::new(),
        }
    }

    /// Records the highest seq offered in `known` (the node's channel table
    /// holds the same), from now on.
    pub fn sharing_known(mut self, known: Arc<AtomicI64>) -> Self {
        known.fetch_max(self.known.load(Ordering::Acquire), Ordering::AcqRel);
        self.known = known;
        self
    }

    /// Hands a TYPING frame to the sessions now, or holds it until the
    /// messages it follows are out.
    fn offer_typing(&mut self, frame: TypingFrame) {
        if let Some(frame) = self.typing.offer(frame, self.seq.next(), Instant::now()) {
            self.deliver_typing(&frame);
        }
    }

    fn deliver_typing(&self, frame: &TypingFrame) {
        self.hub
            .deliver_ephemeral(&self.channel, &frame.text, &frame.members, &frame.typer, "TYPING");
    }

    /// Offers one message to the sequencer and delivers what became ready.
    /// TYPING frames held behind them go out after them.
    fn offer(&mut self, delivery: Handoff) {
        let seq = delivery.seq;
        match self.seq.offer(seq, delivery) {
            Offer::Stale => telemetry::cluster_stale(),
            Offer::Held => {
                self.known.fetch_max(seq, Ordering::AcqRel);
                telemetry::cluster_held();
                self.rearm(false);
            }
            Offer::Ready(ready) => {
                self.known.fetch_max(seq, Ordering::AcqRel);
                for d in ready {
                    self.hub.deliver(&self.channel, &d.text, &d.members, d.except.as_ref());
                }
                self.delivered_any = true;
                self.rearm(true);
                for frame in self.typing.ready(self.seq.next(), Instant::now()) {
                    self.deliver_typing(&frame);
                }
            }
        }
    }

    /// Sets the deadline while something is held or a catch-up is due; a
    /// `fresh` gap waits the whole `gap_wait` again.
    fn rearm(&mut self, fresh: bool) {
        if self.seq.held() == 0 && !self.catch_up_due {
            self.deadline = None;
        } else if fresh || self.deadline.is_none() {
            self.deadline = Some(Instant::now() + self.gap_wait);
        }
    }

    /// Reads up to `limit` messages after `after`, each for the current
    /// members who joined before it (`joined_seq` below its seq): a member
    /// who joined later, or left and came back, is not handed what was stored
    /// while it was not one. (A member who left and came back also misses, in
    /// this read, what was stored during its earlier membership; it sees the
    /// seq jump and can SYNC it.)
    async fn read(&mut self, after: i64, limit: u32) -> Result<(Vec<Handoff>, bool), StoreError> {
        let (messages, more) = self.store.messages_after(&self.channel, after, limit).await?;
        if messages.is_empty() {
            return Ok((Vec::new(), more));
        }
        let members = self.store.members_since(&self.channel).await?;
        let mut recipients = Recipients::new(&members);
        let deliveries = messages
            .iter()
            .map(|m| Handoff::stored(m, recipients.before(m.seq), None))
            .collect();
        Ok((self.prefer_local(deliveries), more))
    }

    /// A read from the database can return a message this node committed
    /// whose [`ChannelCmd::Local`] is still queued (committed while the read
    /// ran, or while this task was busy): that handoff knows the session
    /// whose send stored it, which must not get the MSG_RECV (it has the
    /// ACK), and the members of the storing transaction. Takes the queued
    /// commands into the backlog and uses their `Local` handoffs in place
    /// of the read copies of the same seq; the rest keep their order.
    ///
    /// Left: a message committed before the read whose `Local` is queued
    /// only after the read returns (a few microseconds of the commit task's
    /// loop over its batch) still reaches its sender's session once, as a
    /// copy of its ACK (delivery is at least once; clients drop it by
    /// `messageId`).
    fn prefer_local(&mut self, read: Vec<Handoff>) -> Vec<Handoff> {
        while let Ok(command) = self.commands.try_recv() {
            self.backlog.push_back(command);
        }
        let (Some(first), Some(last)) = (read.first().map(|d| d.seq), read.last().map(|d| d.seq)) else {
            return read;
        };
        let mut local: HashMap<i64, Handoff> = HashMap::new();
        for command in std::mem::take(&mut self.backlog) {
            match command {
                ChannelCmd::Local(handoff) if (first..=last).contains(&handoff.seq) => {
                    local.insert(handoff.seq, handoff);
                }
                other => self.backlog.push_back(other),
            }
        }
        if local.is_empty() {
            return read;
        }
        let read: Vec<Handoff> = read.into_iter().map(|d| local.remove(&d.seq).unwrap_or(d)).collect();
        // Not in the read (it cannot be, the read is gapless): offered later.
        self.backlog.extend(local.into_values().map(ChannelCmd::Local));
        read
    }

    /// The deadline passed: retry the catch-up, or fill the gap below the
    /// lowest held message from the database.
    async fn on_deadline(&mut self) {
        self.deadline = None;
        if self.catch_up_due {
            return self.catch_up().await;
        }
        let Some((first, last)) = self.seq.gap() else { return };
        let limit = u32::try_from(last - first + 1).unwrap_or(PAGE).clamp(1, PAGE);
        match self.read(first - 1, limit).await {
            Ok((deliveries, _)) => {
                telemetry::cluster_filled("gap", deliveries.len());
                tracing::debug!(channel_id = %self.channel, first, last, read = deliveries.len(), "gap filled from the database");
                for d in deliveries {
                    self.offer(d);
                }
            }
            Err(error) => {
                tracing::warn!(channel_id = %self.channel, %error, "cannot fill a gap from the database; retrying")
            }
        }
        self.rearm(false);
    }

    /// Delivers everything stored after the last seq handed out.
    pub async fn catch_up(&mut self) {
        self.catch_up_due = false;
        loop {
            match self.read(self.seq.next() - 1, PAGE).await {
                Ok((deliveries, more)) => {
                    telemetry::cluster_filled("catch_up", deliveries.len());
                    for d in deliveries {
                        self.offer(d);
                    }
                    if !more {
                        break;
                    }
                }
                Err(error) => {
                    tracing::warn!(channel_id = %self.channel, %error, "cannot catch up from the database; retrying");
                    self.catch_up_due = true;
                    break;
                }
            }
        }
        self.rearm(false);
    }

    /// A local user joined after `seq`: when nothing was handed out yet,
    /// start after it and deliver what came since.
    async fn floor(&mut self, seq: i64) {
        if !self.delivered_any && seq + 1 < self.seq.next() {
            self.seq.rewind(seq + 1);
            self.catch_up().await;
        }
    }

    /// Decodes an envelope from NATS; `None` (logged) when it is not one of
    /// this channel's. Without members in a message's, the current ones
    /// are read.
    async fn decode(&self, payload: &[u8]) -> Option<Inbound> {
        let envelope: ChannelEnvelope = match serde_json::from_slice(payload) {
            Ok(envelope) => envelope,
            Err(error) => {
                tracing::warn!(channel_id = %self.channel, %error, "undecodable message from NATS");
                return None;
            }
        };
        let message = match (envelope.message, envelope.typing) {
            (Some(message), _) => message,
            (None, Some(typing)) => return self.decode_typing(typing).map(Inbound::Typing),
            (None, None) => {
                tracing::warn!(channel_id = %self.channel, "empty envelope from NATS");
                return None;
            }
        };
        if message.channel_id != self.channel.as_str() || message.seq < 1 {
            tracing::warn!(channel_id = %self.channel, "message from NATS for another channel");
            return None;
        }
        let members: Arc<[UserId]> = match envelope.members {
            Some(list) => match list.iter().map(|m| UserId::parse(m)).collect::<Result<Vec<_>, _>>() {
                Ok(members) => members.into(),
                Err(error) => {
                    tracing::warn!(channel_id = %self.channel, %error, "bad member id from NATS");
                    return None;
                }
            },
            // Too many members for one NATS message: the current ones who
            // joined before it.
            None => match self.store.members_since(&self.channel).await {
                Ok(members) => Recipients::new(&members).before(message.seq),
                Err(error) => {
                    // Dropped; the next message finds the gap and fills it.
                    tracing::warn!(channel_id = %self.channel, %error, "cannot read the members");
                    return None;
                }
            },
        };
        let seq = message.seq;
        Some(Inbound::Message(Handoff {
            seq,
            text: Utf8Bytes::from(ServerFrame::encode_msg_recv(&message)),
            members,
            except: None,
        }))
    }

    /// A TYPING frame from another node; `None` (logged) with a bad typer.
    fn decode_typing(&self, typing: TypingEnvelope) -> Option<TypingFrame> {
        let typer = match UserId::parse(&typing.typer) {
            Ok(typer) => typer,
            Err(error) => {
                tracing::debug!(channel_id = %self.channel, %error, "bad typer from NATS");
                return None;
            }
        };
        Some(TypingFrame {
            after: typing.after,
            typer,
            text: Utf8Bytes::from(typing.text),
            members: typing.members.into_iter().map(UserId::from_trusted).collect(),
        })
    }

    /// Handles one command.
    async fn command(&mut self, command: ChannelCmd) {
        match command {
            ChannelCmd::Local(delivery) => self.offer(delivery),
            ChannelCmd::Floor(seq) => self.floor(seq).await,
            ChannelCmd::CatchUp => self.catch_up().await,
            ChannelCmd::Typing(frame) => self.offer_typing(frame),
        }
    }

    /// Runs until `stop` or until every command sender is gone: offers what
    /// comes from `inbound` (NATS payloads) and the commands, and fills gaps.
    pub async fn run(mut self, mut inbound: BoxStream<'static, Bytes>, stop: CancellationToken) {
        loop {
            if let Some(command) = self.backlog.pop_front() {
                if stop.is_cancelled() {
                    return;
                }
                self.command(command).await;
                continue;
            }
            let deadline = self.deadline;
            tokio::select! {
                _ = stop.cancelled() => return,
                command = self.commands.recv() => match command {
                    None => return,
                    Some(command) => self.command(command).await,
                },
                payload = inbound.next() => match payload {
                    Some(payload) => match self.decode(&payload).await {
                        Some(Inbound::Message(delivery)) => self.offer(delivery),
                        Some(Inbound::Typing(frame)) => self.offer_typing(frame),
                        None => {}
                    },
                    // The subscription ended (the client closed): local only.
                    None => inbound = futures_util::stream::pending().boxed(),
                },
                _ = tokio::time::sleep_until(deadline.unwrap_or_else(Instant::now)), if deadline.is_some() => {
                    self.on_deadline().await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
