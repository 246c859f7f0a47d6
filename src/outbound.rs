//! A session's outbound side as the rest of the server sees it: the bounded
//! queue of encoded frames its socket task drains ([`SessionHandle`],
//! [`QueuedBytes`]), and its close switch ([`CloseSignal`], [`crate::close_code`]).
//!
//! Nothing that queues a frame ever waits on a socket: [`SessionHandle::push`]
//! only calls `try_send`, and a full queue closes that session with 1013 (try
//! again later); it recovers by reconnecting and syncing, so one slow reader
//! never slows anyone else (backpressure ends at the queue).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::ws::Utf8Bytes;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::channel_gate::{ChannelGate, Kind, Offer};
use crate::ids::{ChannelId, UserId};
use crate::protocol::ServerFrame;
use crate::telemetry;

/// How and why a session is being closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloseReason {
    /// WebSocket close code (see [`crate::close_code`]).
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

/// An encoded RECEIPT on its way to a user's sessions: the watermark it is
/// about, its new `seq`, and the frame's text.
#[derive(Debug, Clone)]
pub struct ReceiptFrame {
    /// The watermark that moved.
    pub key: WatermarkKey,
    /// The watermark's new seq.
    pub seq: i64,
    /// The encoded RECEIPT frame.
    pub text: Utf8Bytes,
}

/// A process-unique session id (UUIDv7 text), also sent in HELLO.
pub type SessionId = Arc<str>;

/// What the hub holds for one live session.
#[derive(Debug, Clone)]
pub struct SessionHandle {
    /// This session's id.
    pub id: SessionId,
    /// The authenticated user.
    pub user_id: UserId,
    /// The session's token `iat` (ms; `None`: none usable), which an
    /// erasure of the user made later refuses (§19, [`Self::issued_at`]).
    pub issued_at_ms: Option<u64>,
    outbound: mpsc::Sender<Utf8Bytes>,
    queued: Arc<QueuedBytes>,
    close: Arc<CloseSignal>,
    /// The highest RECEIPT `seq` queued to this session per (channel,
    /// watermark owner, read?). Two watermark moves can commit in one order
    /// and reach the hub in the other; a RECEIPT below one already queued is
    /// stale and dropped, so a session never sees a watermark go back.
    receipts: Arc<Mutex<HashMap<WatermarkKey, i64>>>,
    /// The channels this session was told of, judging its channel frames
    /// (§13.3 order; [`crate::channel_gate`]); `None`: every frame goes out
    /// as it comes (handles of unit tests).
    gate: Option<Arc<Mutex<ChannelGate<GatedFrame>>>>,
}

/// A channel frame as the gate holds it.
#[derive(Debug)]
struct GatedFrame {
    text: Utf8Bytes,
    type_name: &'static str,
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
            issued_at_ms: None,
            outbound,
            queued,
            close,
            receipts: Arc::default(),
            gate: None,
        }
    }

    /// This handle for a session whose token was issued at `issued_at_ms`
    /// (ms since the epoch; `None`, as [`Self::new`] leaves it: no usable
    /// `iat`, which an erasure of the user refuses whenever it was made).
    #[must_use]
    pub fn issued_at(mut self, issued_at_ms: Option<u64>) -> Self {
        self.issued_at_ms = issued_at_ms;
        self
    }

    /// This handle with a channel gate ([`crate::channel_gate`]): from now
    /// on its channel frames are held until [`Self::hello`], then judged by
    /// the channels the session was told of. A WebSocket session's handle
    /// is gated before it is registered.
    #[must_use]
    pub fn gated(mut self) -> Self {
        self.gate = Some(Arc::new(Mutex::new(ChannelGate::new())));
        self
    }

    /// The session's HELLO listed `channels` (its snapshot was read): the
    /// channel frames held since the handle was registered are judged
    /// against it and queued, in order (see [`ChannelGate::hello`]).
    pub fn hello<'a>(&self, channels: impl IntoIterator<Item = &'a ChannelId>) {
        let Some(gate) = &self.gate else { return };
        let mut gate = gate.lock().unwrap_or_else(|e| e.into_inner());
        gate.hello(channels, std::time::Instant::now(), |frame| {
            self.emit(frame);
        });
    }

    /// Queues an encoded frame of `channel` (`MSG_RECV`, `MEMBER`,
    /// `CHANNEL_ADDED`, `CHANNEL_REMOVED`, `RECEIPT`, `CHANNEL_UPDATED`,
    /// `CHANNEL_SETTINGS`, `TYPING`: the kind is read from `type_name`)
    /// through the session's gate: now, after the `CHANNEL_ADDED` that
    /// announces the channel, or never (§13.3; [`crate::channel_gate`]).
    /// `TYPING` is queued lossily ([`Self::push_ephemeral`]). Returns
    /// whether the frame was queued now.
    pub fn push_of(&self, channel: &ChannelId, text: Utf8Bytes, type_name: &'static str) -> bool {
        let frame = GatedFrame { text, type_name };
        let Some(gate) = &self.gate else {
            return self.emit(frame);
        };
        // The offered frame is the first one out (released ones follow it).
        let mut queued = None;
        let mut gate = gate.lock().unwrap_or_else(|e| e.into_inner());
        let offer = gate.offer(
            channel,
            Kind::of_frame(type_name),
            frame,
            std::time::Instant::now,
            |frame| {
                let out = self.emit(frame);
                queued.get_or_insert(out);
            },
        );
        match offer {
            Offer::Out => queued.unwrap_or(false),
            Offer::Held | Offer::Dropped => false,
            Offer::Overflow => {
                self.close
                    .kick(crate::close_code::TRY_AGAIN_LATER, "too slow to take its frames");
                false
            }
        }
    }

    /// Queues a frame the gate let through, lossily when its kind is
    /// ephemeral (the gate's one reading of `type_name`).
    fn emit(&self, frame: GatedFrame) -> bool {
        if Kind::of_frame(frame.type_name) == Kind::Ephemeral {
            self.push_ephemeral(frame.text, frame.type_name)
        } else {
            self.push(frame.text, frame.type_name)
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
            .kick(crate::close_code::TRY_AGAIN_LATER, "too slow to take its frames");
        false
    }

    /// Queues an ephemeral frame (TYPING, PRESENCE) without waiting, only
    /// while the session keeps up: when its queue is over half full (in
    /// frames or in bytes) the frame is dropped, and counted. Never closes
    /// the session, so a slow session loses these first and is closed with
    /// 1013 only for the frames that matter (messages, ACKs, receipts).
    /// Returns whether the frame was queued.
    pub fn push_ephemeral(&self, text: Utf8Bytes, type_name: &'static str) -> bool {
        let len = text.len();
        let half_frames = self.outbound.max_capacity() / 2;
        if self.outbound.capacity() <= half_frames || !self.queued.add_within(len, self.queued.limit / 2) {
            telemetry::ephemeral_dropped(type_name);
            return false;
        }
        match self.outbound.try_send(text) {
            Ok(()) => {
                telemetry::frame_out(type_name);
                true
            }
            Err(_) => {
                self.queued.taken(len);
                telemetry::ephemeral_dropped(type_name);
                false
            }
        }
    }

    /// Whether a RECEIPT for watermark `key` at `seq` is news to this
    /// session, recording it: false when one at or above `seq` was already
    /// queued to it for that watermark.
    pub fn receipt_is_fresh(&self, key: &WatermarkKey, seq: i64) -> bool {
        let mut seen = self.receipts.lock().unwrap_or_else(|e| e.into_inner());
        let last = seen.entry(key.clone()).or_insert(0);
        let fresh = seq > *last;
        *last = (*last).max(seq);
        fresh
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

    /// Counts `len` more bytes queued when the queue stays within `bound`
    /// (below the full limit); `false` (and nothing counted) otherwise.
    pub fn add_within(&self, len: usize, bound: usize) -> bool {
        let bound = bound.min(self.limit);
        self.queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |q| {
                q.checked_add(len).filter(|&n| n <= bound)
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
