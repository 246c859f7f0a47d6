//! One task per channel that this node's sessions need: it owns the channel's
//! NATS subscription and its [`Sequencer`], and is the only path by which the
//! channel's MSG_RECV reach this node's sessions.
//!
//! Inputs, all offered to the sequencer: this node's own commits
//! ([`ChannelCmd::Local`], in commit order from the channel's commit task),
//! envelopes from other nodes (NATS), and reads from the database (a gap that
//! did not close within `cluster_gap_wait_ms`, a catch-up after a NATS
//! reconnect, the start of a member who just joined). Whatever the path, each
//! session gets the channel's messages in increasing `seq`, each once.

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
use super::wire::ChannelEnvelope;
use crate::delivery::hub::Hub;
use crate::ids::{ChannelId, UserId};
use crate::outbound::SessionId;
use crate::protocol::ServerFrame;
use crate::store::{Entry, Store, StoreError};
use crate::telemetry;

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
            text: Utf8Bytes::from(ServerFrame::MsgRecv(crate::view::recv(message)).encode()),
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
}

impl ChannelCore {
    /// A channel whose next message to hand out is `next`.
    pub fn new(channel: ChannelId, store: Store, hub: Arc<Hub>, gap_wait: Duration, next: i64) -> Self {
        Self {
            channel,
            store,
            hub,
            gap_wait,
            seq: Sequencer::new(next),
            deadline: None,
            catch_up_due: false,
            delivered_any: false,
        }
    }

    /// Offers one message to the sequencer and delivers what became ready.
    fn offer(&mut self, delivery: Handoff) {
        match self.seq.offer(delivery.seq, delivery) {
            Offer::Stale => telemetry::cluster_stale(),
            Offer::Held => {
                telemetry::cluster_held();
                self.rearm(false);
            }
            Offer::Ready(ready) => {
                for d in ready {
                    self.hub.deliver(&d.text, &d.members, d.except.as_ref());
                }
                self.delivered_any = true;
                self.rearm(true);
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
    async fn read(&self, after: i64, limit: u32) -> Result<(Vec<Handoff>, bool), StoreError> {
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
        Ok((deliveries, more))
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
    /// this channel's. Without members in it, the current ones are read.
    async fn decode(&self, payload: &[u8]) -> Option<Handoff> {
        let envelope: ChannelEnvelope = match serde_json::from_slice(payload) {
            Ok(envelope) => envelope,
            Err(error) => {
                tracing::warn!(channel_id = %self.channel, %error, "undecodable message from NATS");
                return None;
            }
        };
        if envelope.message.channel_id != self.channel.as_str() || envelope.message.seq < 1 {
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
                Ok(members) => Recipients::new(&members).before(envelope.message.seq),
                Err(error) => {
                    // Dropped; the next message finds the gap and fills it.
                    tracing::warn!(channel_id = %self.channel, %error, "cannot read the members");
                    return None;
                }
            },
        };
        let seq = envelope.message.seq;
        Some(Handoff {
            seq,
            text: Utf8Bytes::from(ServerFrame::MsgRecv(envelope.message).encode()),
            members,
            except: None,
        })
    }

    /// Runs until `stop` or until every command sender is gone: offers what
    /// comes from `inbound` (NATS payloads) and `commands`, and fills gaps.
    pub async fn run(
        mut self,
        mut inbound: BoxStream<'static, Bytes>,
        mut commands: mpsc::UnboundedReceiver<ChannelCmd>,
        stop: CancellationToken,
    ) {
        loop {
            let deadline = self.deadline;
            tokio::select! {
                _ = stop.cancelled() => return,
                command = commands.recv() => match command {
                    None => return,
                    Some(ChannelCmd::Local(delivery)) => self.offer(delivery),
                    Some(ChannelCmd::Floor(seq)) => self.floor(seq).await,
                    Some(ChannelCmd::CatchUp) => self.catch_up().await,
                },
                payload = inbound.next() => match payload {
                    Some(payload) => {
                        if let Some(delivery) = self.decode(&payload).await {
                            self.offer(delivery);
                        }
                    }
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
mod tests {
    //! The sequencer inside a channel's task, fed directly (no NATS): a later
    //! seq that arrives first waits for the earlier one; a gap that does not
    //! close is filled from a real database after the wait.

    use super::*;
    use crate::ids::ClientMsgId;
    use crate::outbound::{CloseSignal, SessionHandle};
    use crate::store::{EntryOutcome, NewEntry, StoreOptions};

    struct Fixture {
        store: Store,
        hub: Arc<Hub>,
        bob: mpsc::Receiver<Utf8Bytes>,
        stored: Vec<Entry>,
        members: Arc<[UserId]>,
        _dir: tempfile::TempDir,
    }

    async fn fixture(messages: usize) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::connect(&StoreOptions {
            url: format!("sqlite://{}", dir.path().join("t.db").display()),
            max_connections: 2,
            timeout: Duration::from_secs(5),
        })
        .await
        .unwrap();
        store.migrate().await.unwrap();
        let room = ChannelId::parse("room").unwrap();
        let members = vec![UserId::parse("alice").unwrap(), UserId::parse("bob").unwrap()];
        store.create_channel(&room, &members, 1).await.unwrap();
        let sends: Vec<NewEntry> = (0..messages)
            .map(|n| NewEntry {
                sender_id: members[0].clone(),
                channel_id: room.clone(),
                client_msg_id: ClientMsgId::parse(&format!("m{n}")).unwrap(),
                body: format!("body {n}"),
                change: crate::store::Change::Message,
                mentions: Default::default(),
                origin: Default::default(),
                attachments: Vec::new(),
            })
            .collect();
        let batch = store.write_batch(&sends, 10).await.unwrap();
        let stored = batch
            .outcomes
            .into_iter()
            .map(|o| match o {
                EntryOutcome::Stored(m) => m,
                other => panic!("{other:?}"),
            })
            .collect();
        let hub = Arc::new(Hub::default());
        let (tx, bob) = mpsc::channel(64);
        hub.register(SessionHandle::new(
            "bob-1".into(),
            members[1].clone(),
            tx,
            Arc::new(crate::outbound::QueuedBytes::new(usize::MAX)),
            Arc::new(CloseSignal::default()),
        ));
        Fixture {
            store,
            hub,
            bob,
            stored,
            members: members.into(),
            _dir: dir,
        }
    }

    fn envelope(message: &Entry, members: &[UserId]) -> Bytes {
        let envelope = ChannelEnvelope {
            message: crate::view::recv(message),
            members: Some(members.iter().map(|m| m.as_str().to_owned()).collect()),
        };
        Bytes::from(serde_json::to_vec(&envelope).unwrap())
    }

    fn seq_of(frame: &Utf8Bytes) -> i64 {
        let value: serde_json::Value = serde_json::from_str(frame.as_str()).unwrap();
        assert_eq!(value["type"], "MSG_RECV");
        value["seq"].as_i64().unwrap()
    }

    async fn next_seq(rx: &mut mpsc::Receiver<Utf8Bytes>) -> i64 {
        let frame = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .expect("a MSG_RECV in time")
            .expect("queue open");
        seq_of(&frame)
    }

    /// A catch-up hands what it reads back only to the members who joined
    /// before each message, never to the current members as such: a member
    /// who left and came back must not get what was stored while it was
    /// away.
    #[tokio::test]
    async fn a_catch_up_skips_members_who_joined_after_the_message() {
        let mut f = fixture(2).await;
        let room = ChannelId::parse("room").unwrap();
        // Bob leaves and comes back when the last seq is 2; seq 3 follows.
        f.store.set_member(&room, &f.members[1], false, 20).await.unwrap();
        assert_eq!(f.store.set_member(&room, &f.members[1], true, 30).await.unwrap(), 2);
        let third = NewEntry {
            sender_id: f.members[0].clone(),
            channel_id: room.clone(),
            client_msg_id: ClientMsgId::parse("m-after").unwrap(),
            body: "after bob came back".into(),
            change: crate::store::Change::Message,
            mentions: Default::default(),
            origin: Default::default(),
            attachments: Vec::new(),
        };
        f.store.write_batch(&[third], 40).await.unwrap();
        // A catch-up from the channel's start (a NATS reconnect, or a floor
        // from a stale event).
        let mut core = ChannelCore::new(room, f.store.clone(), f.hub.clone(), Duration::from_secs(30), 1);
        core.catch_up().await;
        assert_eq!(next_seq(&mut f.bob).await, 3, "nothing from before bob came back");
        assert!(f.bob.try_recv().is_err());
    }

    #[tokio::test]
    async fn a_later_seq_is_held_until_the_earlier_one_arrives() {
        let mut f = fixture(3).await;
        let room = ChannelId::parse("room").unwrap();
        // A long wait: the gap must close by the late message, not by a fill.
        let core = ChannelCore::new(room, f.store.clone(), f.hub.clone(), Duration::from_secs(30), 1);
        let (inbound_tx, inbound_rx) = mpsc::unbounded_channel::<Bytes>();
        let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
        let stop = CancellationToken::new();
        let task = tokio::spawn(core.run(tokio_stream_from(inbound_rx), cmd_rx, stop.clone()));
        // seq 3 from NATS, then 1 committed locally by alice's session, then 2 from NATS.
        inbound_tx.send(envelope(&f.stored[2], &f.members)).unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(f.bob.try_recv().is_err(), "seq 3 is held while 1 and 2 are missing");
        cmd_tx
            .send(ChannelCmd::Local(Handoff::stored(
                &f.stored[0],
                f.members.clone(),
                Some("alice-1".into()),
            )))
            .unwrap();
        assert_eq!(next_seq(&mut f.bob).await, 1);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(f.bob.try_recv().is_err(), "seq 3 still waits for 2");
        inbound_tx.send(envelope(&f.stored[1], &f.members)).unwrap();
        assert_eq!(next_seq(&mut f.bob).await, 2);
        assert_eq!(next_seq(&mut f.bob).await, 3);
        // A copy of an old one is not delivered again.
        inbound_tx.send(envelope(&f.stored[1], &f.members)).unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(f.bob.try_recv().is_err(), "seq 2 only once");
        stop.cancel();
        task.await.unwrap();
    }

    #[tokio::test]
    async fn a_gap_that_does_not_close_is_filled_from_the_database_after_the_wait() {
        let mut f = fixture(4).await;
        let room = ChannelId::parse("room").unwrap();
        let wait = Duration::from_millis(300);
        let core = ChannelCore::new(room, f.store.clone(), f.hub.clone(), wait, 1);
        let (inbound_tx, inbound_rx) = mpsc::unbounded_channel::<Bytes>();
        let (_cmd_tx, cmd_rx) = mpsc::unbounded_channel();
        let stop = CancellationToken::new();
        let task = tokio::spawn(core.run(tokio_stream_from(inbound_rx), cmd_rx, stop.clone()));
        // Only seq 4 arrives; 1..=3 never come through NATS.
        let started = std::time::Instant::now();
        inbound_tx.send(envelope(&f.stored[3], &f.members)).unwrap();
        let seqs = [
            next_seq(&mut f.bob).await,
            next_seq(&mut f.bob).await,
            next_seq(&mut f.bob).await,
            next_seq(&mut f.bob).await,
        ];
        assert!(
            started.elapsed() >= wait,
            "held for the wait first: {:?}",
            started.elapsed()
        );
        assert_eq!(seqs, [1, 2, 3, 4], "filled from the database, in order");
        stop.cancel();
        task.await.unwrap();
    }

    fn tokio_stream_from(mut rx: mpsc::UnboundedReceiver<Bytes>) -> BoxStream<'static, Bytes> {
        futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx)).boxed()
    }
}
