//! Fan-out: the registry of this node's live sessions and delivery of frames
//! to them.
//!
//! Delivery never waits on a socket: each session has a bounded outbound queue
//! and [`Hub`] only calls `try_send`. A session whose queue is full is closed
//! with 1013 (try again later) and recovers by reconnecting and syncing, so one
//! slow reader never slows anyone else (backpressure ends at the queue).
//!
//! This is the node's own bus. With `nats_url` set, the writers and receipts
//! go through [`crate::cluster::Cluster`] instead, which publishes to NATS and
//! hands each channel's messages, local or from other nodes, to this hub in
//! `seq` order ([`Hub::deliver`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use axum::extract::ws::Utf8Bytes;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::ids::{ChannelId, UserId};
use crate::protocol::ServerFrame;
use crate::store::StoredMessage;
use crate::telemetry;

/// WebSocket close codes used by the server (RFC 6455 §7.4.1, IANA registry).
pub mod close_code {
    /// Normal closure.
    pub const NORMAL: u16 = 1000;
    /// Server going away (shutdown).
    pub const GOING_AWAY: u16 = 1001;
    /// Protocol error (a frame that breaks RFC 6455).
    pub const PROTOCOL_ERROR: u16 = 1002;
    /// Invalid frame payload data (a text frame that is not UTF-8).
    pub const INVALID_DATA: u16 = 1007;
    /// Abnormal closure: the connection dropped without a close frame. Only
    /// recorded (metrics); RFC 6455 forbids sending it.
    pub const ABNORMAL: u16 = 1006;
    /// Policy violation (token expired, too many bad frames).
    pub const POLICY: u16 = 1008;
    /// Message too big (over `max_frame_bytes`).
    pub const TOO_BIG: u16 = 1009;
    /// Internal error.
    pub const INTERNAL: u16 = 1011;
    /// Try again later: the session could not keep up with its frames.
    pub const TRY_AGAIN_LATER: u16 = 1013;
}

/// How and why a session is being closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloseReason {
    /// WebSocket close code (see [`close_code`]).
    pub code: u16,
    /// Short text sent in the close frame.
    pub reason: &'static str,
}

/// A session's close switch, shared by its reader, its writer and the hub.
/// The first reason set wins.
#[derive(Debug, Default)]
pub struct CloseSignal {
    token: CancellationToken,
    reason: OnceLock<CloseReason>,
}

impl CloseSignal {
    /// Closes the session now with `code`, dropping frames still queued.
    pub fn kick(&self, code: u16, reason: &'static str) {
        let _ = self.reason.set(CloseReason { code, reason });
        self.token.cancel();
    }

    /// Records the code to close with once the queue has drained, without
    /// closing now (graceful shutdown).
    pub fn close_after_drain(&self, code: u16, reason: &'static str) {
        let _ = self.reason.set(CloseReason { code, reason });
    }

    /// Resolves when [`Self::kick`] was called.
    pub async fn kicked(&self) {
        self.token.cancelled().await;
    }

    /// Whether [`Self::kick`] was called.
    pub fn is_kicked(&self) -> bool {
        self.token.is_cancelled()
    }

    /// The reason in force, if any.
    pub fn reason(&self) -> Option<CloseReason> {
        self.reason.get().cloned()
    }
}

/// A watermark: (channel, owner, `read`? else `delivered`).
pub type WatermarkKey = (ChannelId, UserId, bool);

/// A process-unique session id (UUIDv7 text), also sent in HELLO.
pub type SessionId = Arc<str>;

/// What the hub holds for one live session.
#[derive(Debug, Clone)]
pub struct SessionHandle {
    /// This session's id.
    pub id: SessionId,
    /// The authenticated user.
    pub user_id: UserId,
    outbound: mpsc::Sender<Utf8Bytes>,
    queued: Arc<QueuedBytes>,
    close: Arc<CloseSignal>,
    /// The highest RECEIPT `seq` queued to this session per (channel,
    /// watermark owner, read?). Two watermark moves can commit in one order
    /// and reach the hub in the other; a RECEIPT below one already queued is
    /// stale and dropped, so a session never sees a watermark go back.
    receipts: Arc<Mutex<HashMap<WatermarkKey, i64>>>,
}

impl SessionHandle {
    /// A handle over the session's outbound queue, its byte count (the
    /// session's writer calls [`QueuedBytes::taken`] for each frame it takes)
    /// and close switch.
    pub fn new(
        id: SessionId,
        user_id: UserId,
        outbound: mpsc::Sender<Utf8Bytes>,
        queued: Arc<QueuedBytes>,
        close: Arc<CloseSignal>,
    ) -> Self {
        Self {
            id,
            user_id,
            outbound,
            queued,
            close,
            receipts: Arc::default(),
        }
    }

    /// Queues an encoded frame without waiting. A full queue (in frames, or
    /// in bytes: [`QueuedBytes`]) closes the session with 1013; a session
    /// already gone is ignored. Returns whether the frame was queued.
    pub fn push(&self, text: Utf8Bytes, type_name: &'static str) -> bool {
        let len = text.len();
        if self.queued.add(len) {
            match self.outbound.try_send(text) {
                Ok(()) => {
                    telemetry::frame_out(type_name);
                    return true;
                }
                Err(mpsc::error::TrySendError::Full(_)) => self.queued.taken(len),
                Err(mpsc::error::TrySendError::Closed(_)) => {
                    self.queued.taken(len);
                    return false;
                }
            }
        }
        self.close
            .kick(close_code::TRY_AGAIN_LATER, "too slow to take its frames");
        false
    }

    /// Waits until at most `bytes` of this session's encoded frames are
    /// queued ([`QueuedBytes::at_most`]).
    pub async fn queued_at_most(&self, bytes: usize) {
        self.queued.at_most(bytes).await;
    }

    /// Closes the session now with `code` (see [`CloseSignal::kick`]).
    pub fn kick(&self, code: u16, reason: &'static str) {
        self.close.kick(code, reason);
    }

    /// Encodes and queues a frame (see [`Self::push`]).
    pub fn send(&self, frame: &ServerFrame) -> bool {
        self.push(Utf8Bytes::from(frame.encode()), frame.type_name())
    }
}

/// Bytes of encoded frames in one session's outbound queue, against its
/// bound (`outbound_queue_bytes`). Shared by the session's handles, which
/// add each frame they queue, and its writer, which takes them off.
#[derive(Debug)]
pub struct QueuedBytes {
    queued: AtomicUsize,
    limit: usize,
    /// Set while a task waits in [`QueuedBytes::at_most`], so that
    /// [`QueuedBytes::taken`] wakes it only then.
    waiting: AtomicBool,
    drained: tokio::sync::Notify,
}

impl QueuedBytes {
    /// An empty queue that may hold `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Self {
            queued: AtomicUsize::new(0),
            limit,
            waiting: AtomicBool::new(false),
            drained: tokio::sync::Notify::new(),
        }
    }

    /// Waits until at most `level` bytes are queued (backpressure for work
    /// that queues a lot at once, such as a SYNC_BATCH page). One waiter at
    /// a time: the session's reader is the only caller.
    pub async fn at_most(&self, level: usize) {
        loop {
            let notified = self.drained.notified();
            tokio::pin!(notified);
            // Registered before the check, so a `taken` after it wakes us.
            notified.as_mut().enable();
            self.waiting.store(true, Ordering::SeqCst);
            if self.queued.load(Ordering::SeqCst) <= level {
                self.waiting.store(false, Ordering::SeqCst);
                return;
            }
            notified.await;
        }
    }

    /// Counts `len` more bytes queued; `false` (and nothing counted) when
    /// that would pass the bound.
    pub fn add(&self, len: usize) -> bool {
        self.queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |q| {
                q.checked_add(len).filter(|&n| n <= self.limit)
            })
            .is_ok()
    }

    /// Counts `len` bytes taken off the queue.
    pub fn taken(&self, len: usize) {
        let _ = self
            .queued
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |q| Some(q.saturating_sub(len)));
        if self.waiting.load(Ordering::SeqCst) {
            self.drained.notify_waiters();
        }
    }
}

/// The registry of live sessions on this node, by user.
#[derive(Debug)]
pub struct Hub {
    /// A std lock, not tokio's: it is held only to clone handles or call
    /// `try_send`, never across an await.
    sessions: RwLock<HashMap<UserId, Vec<SessionHandle>>>,
    /// Striped locks that order watermark moves with their RECEIPTs: a
    /// session holds the stripe of (channel, owner) from the store update
    /// until its RECEIPT is queued, so two moves of one watermark reach the
    /// hub in commit order.
    receipt_stripes: Box<[tokio::sync::Mutex<()>]>,
}

/// Stripes of [`Hub::receipt_order`].
const RECEIPT_STRIPES: usize = 64;

impl Default for Hub {
    fn default() -> Self {
        Self {
            sessions: RwLock::default(),
            receipt_stripes: (0..RECEIPT_STRIPES).map(|_| tokio::sync::Mutex::new(())).collect(),
        }
    }
}

impl Hub {
    /// Waits for, and holds, the lock that orders moves of the watermarks of
    /// `owner` in `channel` with their RECEIPTs (see [`Self::send_receipt`]).
    pub async fn receipt_order(&self, channel: &ChannelId, owner: &UserId) -> tokio::sync::MutexGuard<'_, ()> {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        (channel, owner).hash(&mut hasher);
        let stripe = (hasher.finish() % self.receipt_stripes.len() as u64) as usize;
        self.receipt_stripes[stripe].lock().await
    }

    /// Registers a session; from now on it receives its user's frames.
    pub fn register(&self, handle: SessionHandle) {
        let mut sessions = self.sessions.write().unwrap_or_else(|e| e.into_inner());
        sessions.entry(handle.user_id.clone()).or_default().push(handle);
    }

    /// Removes a session (no-op when absent).
    pub fn unregister(&self, user_id: &UserId, id: &SessionId) {
        let mut sessions = self.sessions.write().unwrap_or_else(|e| e.into_inner());
        if let Some(list) = sessions.get_mut(user_id) {
            list.retain(|h| &h.id != id);
            if list.is_empty() {
                sessions.remove(user_id);
            }
        }
    }

    /// Number of live sessions on this node.
    pub fn session_count(&self) -> usize {
        self.sessions
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .map(Vec::len)
            .sum()
    }

    /// Every live session of every user, for shutdown.
    pub fn all_sessions(&self) -> Vec<SessionHandle> {
        self.sessions
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .flatten()
            .cloned()
            .collect()
    }

    /// Queues an already-encoded frame to every live session of `user_id`
    /// except `except`.
    pub fn send_to_user(
        &self,
        user_id: &UserId,
        text: &Utf8Bytes,
        type_name: &'static str,
        except: Option<&SessionId>,
    ) {
        let sessions = self.sessions.read().unwrap_or_else(|e| e.into_inner());
        for handle in sessions.get(user_id).into_iter().flatten() {
            if Some(&handle.id) != except {
                handle.push(text.clone(), type_name);
            }
        }
    }

    /// Queues an encoded RECEIPT for watermark `key` = (channel, owner,
    /// read?) at `seq` to every live session of `user_id` except `except`,
    /// skipping sessions that already got a RECEIPT at or above `seq` for
    /// that watermark (so receipts never go back, whatever order concurrent
    /// watermark moves reach the hub in).
    pub fn send_receipt(
        &self,
        user_id: &UserId,
        key: &WatermarkKey,
        seq: i64,
        text: &Utf8Bytes,
        except: Option<&SessionId>,
    ) {
        let sessions = self.sessions.read().unwrap_or_else(|e| e.into_inner());
        for handle in sessions.get(user_id).into_iter().flatten() {
            if Some(&handle.id) == except {
                continue;
            }
            let fresh = {
                let mut seen = handle.receipts.lock().unwrap_or_else(|e| e.into_inner());
                let last = seen.entry(key.clone()).or_insert(0);
                let fresh = seq > *last;
                *last = (*last).max(seq);
                fresh
            };
            if fresh {
                handle.push(text.clone(), "RECEIPT");
            }
        }
    }

    /// Fans a stored message out as MSG_RECV to every live session of every
    /// member, except the session whose copy was stored (it has the ACK).
    /// The frame is serialised once and shared by every recipient.
    pub fn publish_message(&self, message: &StoredMessage, members: &[UserId], except: &SessionId) {
        let text = Utf8Bytes::from(ServerFrame::MsgRecv(message.to_recv()).encode());
        self.deliver(&text, members, Some(except));
    }

    /// Queues an encoded MSG_RECV to every live session of every member,
    /// except `except`.
    pub fn deliver(&self, text: &Utf8Bytes, members: &[UserId], except: Option<&SessionId>) {
        for member in members {
            self.send_to_user(member, text, "MSG_RECV", except);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ClientMsgId;

    fn session(hub: &Hub, user: &str, n: usize) -> (SessionHandle, mpsc::Receiver<Utf8Bytes>) {
        let (tx, rx) = mpsc::channel(n);
        let handle = SessionHandle::new(
            uuid::Uuid::now_v7().to_string().into(),
            UserId::parse(user).unwrap(),
            tx,
            Arc::new(QueuedBytes::new(usize::MAX)),
            Arc::new(CloseSignal::default()),
        );
        hub.register(handle.clone());
        (handle, rx)
    }

    fn message() -> StoredMessage {
        StoredMessage {
            message_id: uuid::Uuid::now_v7(),
            channel_id: ChannelId::parse("room").unwrap(),
            sender_id: UserId::parse("alice").unwrap(),
            client_msg_id: ClientMsgId::parse("c1").unwrap(),
            seq: 1,
            body: "hello".into(),
            ts: 1,
        }
    }

    #[test]
    fn msg_recv_is_serialised_once_and_shared() {
        let hub = Hub::default();
        let (sender, mut sender_rx) = session(&hub, "alice", 4);
        let (_other, mut other_rx) = session(&hub, "alice", 4);
        let (_b1, mut b1) = session(&hub, "bob", 4);
        let (_b2, mut b2) = session(&hub, "bob", 4);
        let (_eve, mut eve) = session(&hub, "eve", 4);
        let members = [UserId::parse("alice").unwrap(), UserId::parse("bob").unwrap()];
        hub.publish_message(&message(), &members, &sender.id);
        let frames: Vec<Utf8Bytes> = [&mut other_rx, &mut b1, &mut b2]
            .into_iter()
            .map(|rx| rx.try_recv().unwrap())
            .collect();
        assert!(
            frames
                .iter()
                .all(|f| f.as_str().as_ptr() == frames[0].as_str().as_ptr()),
            "one buffer for all"
        );
        assert!(frames[0].as_str().contains("\"MSG_RECV\""));
        assert!(sender_rx.try_recv().is_err(), "not the sending session");
        assert!(eve.try_recv().is_err(), "never a non-member");
    }

    #[test]
    fn a_receipt_below_one_already_queued_is_dropped() {
        let hub = Hub::default();
        let (_alice, mut rx) = session(&hub, "alice", 8);
        let key = (ChannelId::parse("room").unwrap(), UserId::parse("bob").unwrap(), true);
        let alice = UserId::parse("alice").unwrap();
        for (seq, text) in [(5, "r5"), (3, "r3"), (5, "r5-again"), (6, "r6")] {
            hub.send_receipt(&alice, &key, seq, &Utf8Bytes::from_static(text), None);
        }
        let other_kind = (key.0.clone(), key.1.clone(), false);
        hub.send_receipt(&alice, &other_kind, 4, &Utf8Bytes::from_static("d4"), None);
        let got: Vec<String> = std::iter::from_fn(|| rx.try_recv().ok())
            .map(|t| t.to_string())
            .collect();
        assert_eq!(
            got,
            ["r5", "r6", "d4"],
            "stale and repeated receipts dropped, kinds apart"
        );
    }

    #[test]
    fn a_full_queue_closes_the_session_with_1013() {
        let hub = Hub::default();
        let (sender, _rx) = session(&hub, "alice", 1);
        let (slow, _slow_rx) = session(&hub, "bob", 1);
        let members = [UserId::parse("bob").unwrap()];
        hub.publish_message(&message(), &members, &sender.id);
        assert!(!slow.close.is_kicked());
        hub.publish_message(&message(), &members, &sender.id);
        assert!(slow.close.is_kicked());
        assert_eq!(slow.close.reason().map(|r| r.code), Some(close_code::TRY_AGAIN_LATER));
    }
}
