//! One WebSocket session: a reader (this task) and a writer task joined by a
//! bounded outbound queue.
//!
//! - The reader handles frames in arrival order. Sends are pipelined: each is
//!   queued on its channel's writer and the reader reads on, up to
//!   `max_sends_in_flight` unfinished sends, past which it stops reading
//!   (backpressure to the client). Any other frame, and every ERROR reply,
//!   first waits for the earlier sends to finish, so their effects are in place
//!   before the reply to a later frame.
//! - The writer owns the socket's sink: it sends HELLO first, then whatever is
//!   queued, batching writes (feed, then one flush) and pinging the peer every
//!   `ping_interval_secs`.
//! - Close codes: 1001 on shutdown (after in-flight sends are ACKed), 1008 when
//!   the token expires, after `max_bad_frames` bad frames in a row, or when the
//!   peer sent nothing (not even a pong) for three ping intervals, 1009 for a
//!   message over `max_frame_bytes`, 1011 when the database fails at start,
//!   1013 when the outbound queue is full.
//!
//! A panic in a session ends only its own task; the guards below still
//! unregister it from the hub and fix the connection gauge.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use futures_util::stream::{FuturesOrdered, SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use tokio::sync::{mpsc, oneshot};

use crate::auth::AuthUser;
use crate::fanout::{close_code, CloseSignal, Hub, QueuedBytes, SessionHandle, SessionId};
use crate::ids::{now_ms, UserId};
use crate::limits::ConnectionPermit;
use crate::protocol::{
    decode_client_frame, peek_client_msg_id, peek_send_key, ClientFrame, Command, ErrorCode, ErrorFrame, ReceiptKind,
    ServerFrame,
};
use crate::state::AppState;
use crate::store::{recv_page, NewMessage, StoreError, KEY_USED_FOR_ANOTHER_MESSAGE};
use crate::telemetry;
use crate::writer::SendJob;

/// How long the writer keeps trying to deliver the close frame.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// With the `test-hooks` feature, this text frame makes its session panic.
#[cfg(feature = "test-hooks")]
pub const TEST_PANIC_FRAME: &str = "__chatd_test_panic__";

/// How long to wait for the client's close frame after ours.
const LINGER: Duration = Duration::from_secs(2);
/// Most queued frames written before one flush.
const WRITE_BATCH: usize = 64;
/// Rate-limited frames in a row a session refuses before it pauses reading
/// for [`REFUSED_PAUSE`]: a connection over its rate is refused at most
/// about 64 frames per millisecond, so a flood costs a bounded share of a
/// core and others' latency holds (measured in `tests/abuse.rs`). Far above
/// any rate limit a client can use, and `max_rate_limited` (100) closes a
/// flooder long before it matters by default.
const REFUSED_PER_PAUSE: u32 = 64;
/// See [`REFUSED_PER_PAUSE`].
const REFUSED_PAUSE: Duration = Duration::from_millis(1);

/// Counts a session in `chatd_connections_open` from its start until its
/// socket is gone (writer ended, lingering close done), panics included: the
/// same span as its place under the connection caps. Lowered at
/// unregistration before, the gauge read 0 while ended sessions still held
/// their sockets (up to 12 s; found by a breaker helper).
struct OpenConnection;

impl OpenConnection {
    fn count() -> Self {
        telemetry::connections(1.0);
        Self
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        telemetry::connections(-1.0);
    }
}

/// Unregisters the session on every exit path, panics included.
struct Registration {
    hub: Arc<Hub>,
    user_id: UserId,
    id: SessionId,
    close: Arc<CloseSignal>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // The writer task outlives this one: have it close with 1011.
            self.close.kick(close_code::INTERNAL, "internal error");
        }
        self.hub.unregister(&self.user_id, &self.id);
    }
}

/// Runs one session until the peer leaves, the session is closed, or the
/// server shuts down.
pub async fn run(socket: WebSocket, state: AppState, user: AuthUser, _permit: ConnectionPermit) {
    // First, so dropped last: after the socket's halves and the writer.
    let _open = OpenConnection::count();
    let id: SessionId = uuid::Uuid::now_v7().to_string().into();
    // Room for every in-flight send's ACK on top of the fan-out allowance, so a
    // client pipelining up to its limit is never closed for its own ACKs.
    let (outbound, outbound_rx) = mpsc::channel(state.config.outbound_queue + state.config.max_sends_in_flight);
    let close = Arc::new(CloseSignal::default());
    let queued = Arc::new(QueuedBytes::new(state.config.outbound_queue_bytes));
    let handle = SessionHandle::new(
        id.clone(),
        user.user_id.clone(),
        outbound,
        queued.clone(),
        close.clone(),
    );
    // Register before reading the channel states, so nothing stored after the
    // HELLO snapshot is missed (the client drops duplicates by messageId).
    state.hub.register(handle.clone());
    let registration = Registration {
        hub: state.hub.clone(),
        user_id: user.user_id.clone(),
        id: id.clone(),
        close: close.clone(),
    };

    // With NATS: subscribe to what this user needs (confirmed, sequencers
    // started) before the HELLO snapshot, so nothing falls between them.
    let interest = match &state.cluster {
        Some(cluster) => Some(cluster.join(&user.user_id).await),
        None => None,
    };

    let (sink, mut stream) = socket.split();
    let hello = match state.store.channel_states(&user.user_id).await {
        Ok(channels) => ServerFrame::Hello {
            user_id: user.user_id.as_str().to_owned(),
            session_id: id.to_string(),
            server_ts: now_ms(),
            channels,
        },
        Err(error) => {
            tracing::error!(%error, "cannot read channel states");
            close.close_after_drain(close_code::INTERNAL, "database unavailable");
            ServerFrame::Error(ErrorFrame::new(ErrorCode::Unavailable, "database unavailable"))
        }
    };
    let (hello, hello_text) = fit_hello(&state.config, &user, hello, &close);
    telemetry::frame_out(hello.type_name());
    let ping_every = Duration::from_secs(state.config.ping_interval_secs);
    let writer = tokio::spawn(write_loop(
        sink,
        outbound_rx,
        queued,
        hello_text,
        close.clone(),
        ping_every,
    ));
    let hello_failed = matches!(hello, ServerFrame::Error(_));
    // Encoded and handed to the writer: not kept for the session's life (a
    // user in 25,000 channels held several MB of it per session).
    drop(hello);
    tracing::debug!("session open");

    if !hello_failed {
        let mut reader = Reader {
            state: &state,
            user: &user,
            handle: &handle,
            close: &close,
            pending: FuturesOrdered::new(),
            bad_in_row: 0,
            rate: state.limits.connection_rate(),
            limited_in_row: 0,
        };
        reader.run(&mut stream).await;
    }

    // Let the writer drain: it stops once every sender of the queue is gone.
    drop(registration);
    drop(interest);
    drop(handle);
    let mut writer = writer;
    if tokio::time::timeout(CLOSE_TIMEOUT * 2, &mut writer).await.is_err() {
        // Stuck on a peer that takes nothing (a close after draining, say the
        // idle limit, with frames still queued). Ended here, so the socket
        // and its buffers go with the session and its place under the
        // connection caps is not freed while the connection lives; dropping
        // the handle alone left the writer running, detached, for as long as
        // the peer kept the connection open (found by a breaker helper).
        writer.abort();
        let _ = writer.await;
        tracing::warn!("writer did not finish; connection dropped");
    }
    let code = close.reason().map_or(close_code::NORMAL, |r| r.code);
    // Lingering close (RFC 6455 §7.1.1): read, and discard, until the client's
    // close frame. Closing a socket with unread input makes the kernel send a
    // reset, which can destroy frames still on their way to the client.
    let linger_until = tokio::time::Instant::now() + LINGER;
    let got_close = tokio::time::timeout_at(linger_until, async {
        while let Some(Ok(message)) = stream.next().await {
            if matches!(message, Message::Close(_)) {
                return true;
            }
        }
        false
    })
    .await;
    // After a read error (1002, 1007, 1009) the stream has ended with the
    // rest of the bad frame still unread: dropping the socket now resets the
    // connection at once, and a client that reads a little later loses our
    // close frame. Hold the socket for the rest of the linger instead.
    let read_error = matches!(
        code,
        close_code::PROTOCOL_ERROR | close_code::INVALID_DATA | close_code::TOO_BIG
    );
    if got_close == Ok(false) && read_error {
        tokio::time::sleep_until(linger_until).await;
    }
    telemetry::session_closed(code);
    tracing::debug!(code, "session closed");
}

struct Reader<'a> {
    state: &'a AppState,
    user: &'a AuthUser,
    handle: &'a SessionHandle,
    close: &'a CloseSignal,
    /// Completion signals of this session's unfinished sends, in send order.
    pending: FuturesOrdered<oneshot::Receiver<()>>,
    bad_in_row: u32,
    /// This connection's frame-rate bucket (`None`: unlimited).
    rate: Option<governor::DefaultDirectRateLimiter>,
    /// Rate-limited frames in a row.
    limited_in_row: u32,
}

impl Reader<'_> {
    async fn run(&mut self, stream: &mut SplitStream<WebSocket>) {
        // Closed when the token expires (`exp`); a token accepted within the
        // clock leeway but already expired ends its session at once.
        let expires_at_ms = i64::try_from(self.user.expires_at_ms).unwrap_or(i64::MAX);
        let expires_in = Duration::from_millis(u64::try_from(expires_at_ms.saturating_sub(now_ms())).unwrap_or(0));
        let expiry = tokio::time::sleep(expires_in);
        tokio::pin!(expiry);
        // A peer that sends nothing, not even a pong to our pings, for three
        // ping intervals is gone.
        let idle_limit = self.idle_limit();
        let idle = tokio::time::sleep(idle_limit);
        tokio::pin!(idle);
        let max_in_flight = self.state.config.max_sends_in_flight;
        loop {
            tokio::select! {
                biased;
                _ = self.close.kicked() => return,
                _ = self.state.shutdown.cancelled() => {
                    self.drain().await;
                    self.close.close_after_drain(close_code::GOING_AWAY, "server shutting down");
                    return;
                }
                _ = &mut expiry => {
                    self.drain().await;
                    self.close.close_after_drain(close_code::POLICY, "token expired");
                    return;
                }
                _ = &mut idle => {
                    self.close.close_after_drain(close_code::POLICY, "idle timeout");
                    return;
                }
                Some(_) = self.pending.next(), if !self.pending.is_empty() => {}
                message = stream.next(), if self.pending.len() < max_in_flight => {
                    let Some(message) = message else { return };
                    idle.as_mut().reset(tokio::time::Instant::now() + idle_limit);
                    match message {
                        Ok(Message::Text(text)) => self.on_text(text.as_str()).await,
                        Ok(Message::Binary(_)) => {
                            telemetry::frame_in("invalid");
                            if self.within_rate(|| None).await {
                                self.refuse(ErrorFrame::new(ErrorCode::BadFrame, "binary frames are not accepted")).await;
                            }
                        }
                        Ok(Message::Close(_)) => {
                            self.drain().await;
                            return;
                        }
                        // Pings count against the frame rate limits like any
                        // frame (tungstenite answers each with a pong), so a
                        // ping flood is refused and closed with 1008.
                        Ok(Message::Ping(_)) => {
                            self.within_rate(|| None).await;
                        }
                        Ok(Message::Pong(_)) => {}
                        Err(error) => {
                            tracing::debug!(%error, "read failed");
                            let (code, reason) = read_error_close(&error.to_string());
                            self.close.close_after_drain(code, reason);
                            return;
                        }
                    }
                    if self.bad_in_row > self.state.config.max_bad_frames {
                        self.close.close_after_drain(close_code::POLICY, "too many bad frames");
                        return;
                    }
                    if self.limited_in_row > self.state.config.max_rate_limited {
                        self.close.close_after_drain(close_code::POLICY, "rate limit exceeded");
                        return;
                    }
                }
            }
        }
    }

    /// How long a peer may go without sending anything, not even a pong to
    /// our pings, or without taking a queued SYNC page, before it is
    /// considered gone: three ping intervals.
    fn idle_limit(&self) -> Duration {
        Duration::from_secs(self.state.config.ping_interval_secs.saturating_mul(3))
    }

    /// Waits until every earlier send of this session is finished.
    async fn drain(&mut self) {
        while self.pending.next().await.is_some() {}
    }

    /// A MSG_SEND that failed its checks, answered by its idempotency key
    /// when that key is already stored (the wire contract's guarantee 2: the
    /// key "is looked up before anything else about the send"): the stored
    /// send's MSG_ACK with `duplicate: true` when the frame's `channelId` and
    /// `body` are the stored ones (a retry of a long message after
    /// `max_body_bytes` was lowered), else `idempotency_conflict`. Earlier
    /// sends of the session finish first, so a key they stored is found.
    /// When the lookup fails, the answer is the store's error (`unavailable`,
    /// retryable): the frame's own refusal would be final, and might be wrong
    /// for a send that is stored. An `idempotency_conflict` counts as a bad
    /// frame (`max_bad_frames`), like the refusal it stands for. Returns
    /// false, and answers nothing, when the frame is not such a send or the
    /// key is not stored: the frame's own refusal is then the answer.
    async fn answer_by_stored_key(&mut self, text: &str) -> bool {
        let Some(key) = peek_send_key(text) else {
            return false;
        };
        self.drain().await;
        let stored = match self
            .state
            .store
            .message_by_key(&self.user.user_id, &key.client_msg_id)
            .await
        {
            Ok(Some(stored)) => stored,
            Ok(None) => return false,
            Err(error) => {
                tracing::warn!(%error, "idempotency key lookup for a refused send failed");
                let mut frame = store_error(&error);
                frame.client_msg_id = Some(key.client_msg_id.as_str().to_owned());
                self.handle.send(&ServerFrame::Error(frame));
                telemetry::send_result("refused", error.wire_code().as_str(), None);
                return true;
            }
        };
        let retry = match (key.channel_id.as_deref(), key.body.as_deref()) {
            (Some(channel_id), Some(body)) => stored.is_retried_by(channel_id, body),
            _ => false,
        };
        if retry {
            self.handle.send(&ServerFrame::MsgAck(stored.to_ack(true)));
            telemetry::send_result("duplicate", "", None);
        } else {
            let mut frame = ErrorFrame::new(ErrorCode::IdempotencyConflict, KEY_USED_FOR_ANOTHER_MESSAGE);
            frame.client_msg_id = Some(key.client_msg_id.as_str().to_owned());
            frame.channel_id = key.channel_id.filter(|raw| crate::ids::ChannelId::parse(raw).is_ok());
            self.bad_in_row += 1;
            self.handle.send(&ServerFrame::Error(frame));
            telemetry::send_result("refused", ErrorCode::IdempotencyConflict.as_str(), None);
        }
        true
    }

    async fn refuse(&mut self, frame: ErrorFrame) {
        self.bad_in_row += 1;
        self.drain().await;
        self.handle.send(&ServerFrame::Error(frame));
    }

    /// Counts a frame against the rate limits; when over, answers
    /// `rate_limited` (echoing the send's `clientMsgId`) and returns false.
    async fn within_rate(&mut self, client_msg_id: impl FnOnce() -> Option<String>) -> bool {
        match self.state.limits.check_frame(self.rate.as_ref(), &self.user.user_id) {
            Ok(()) => {
                self.limited_in_row = 0;
                true
            }
            Err(wait) => {
                self.limited_in_row += 1;
                let mut frame = ErrorFrame::new(ErrorCode::RateLimited, "too many frames; slow down");
                frame.retry_after_ms = Some(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1));
                frame.client_msg_id = client_msg_id();
                telemetry::send_result("refused", ErrorCode::RateLimited.as_str(), None);
                self.drain().await;
                self.handle.send(&ServerFrame::Error(frame));
                // A flood is read at a bounded pace: after every
                // `REFUSED_PER_PAUSE` refusals in a row the session stops
                // reading for a millisecond, so one connection cannot keep a
                // core busy refusing frames (TCP pushes back on the sender).
                if self.limited_in_row.is_multiple_of(REFUSED_PER_PAUSE) {
                    tokio::time::sleep(REFUSED_PAUSE).await;
                }
                false
            }
        }
    }

    async fn on_text(&mut self, text: &str) {
        #[cfg(feature = "test-hooks")]
        if text == TEST_PANIC_FRAME {
            panic!("test hook: a session panics");
        }
        // The rate check comes first, so a flood costs as little as possible;
        // a refused send still gets its clientMsgId echoed.
        if !self.within_rate(|| peek_client_msg_id(text)).await {
            return;
        }
        let decoded = decode_client_frame(text);
        let frame = match decoded {
            Ok(frame) => frame,
            Err(error) => {
                telemetry::frame_in("invalid");
                if self.answer_by_stored_key(text).await {
                    return;
                }
                return self.refuse(error.to_error_frame()).await;
            }
        };
        telemetry::frame_in(match &frame {
            ClientFrame::MsgSend { .. } => "MSG_SEND",
            ClientFrame::MsgDelivered { .. } => "MSG_DELIVERED",
            ClientFrame::MsgRead { .. } => "MSG_READ",
            ClientFrame::Sync { .. } => "SYNC",
        });
        let command = match frame.validate(self.state.config.max_body_bytes) {
            Ok(command) => command,
            Err(error) => {
                if self.answer_by_stored_key(text).await {
                    return;
                }
                telemetry::send_result("refused", error.code().as_str(), None);
                return self.refuse(error.to_error_frame()).await;
            }
        };
        self.bad_in_row = 0;
        match command {
            Command::Send {
                channel_id,
                client_msg_id,
                body,
            } => {
                let (done, finished) = oneshot::channel();
                let job = SendJob {
                    message: NewMessage {
                        sender_id: self.user.user_id.clone(),
                        channel_id,
                        client_msg_id,
                        body,
                    },
                    session: self.handle.clone(),
                    received: Instant::now(),
                    done,
                };
                match self.state.writers.submit(job).await {
                    Ok(()) => self.pending.push_back(finished),
                    Err(stopped) => {
                        let mut frame = ErrorFrame::new(ErrorCode::Unavailable, "server is shutting down; retry");
                        frame.client_msg_id = Some(stopped.0.message.client_msg_id.as_str().to_owned());
                        self.handle.send(&ServerFrame::Error(frame));
                    }
                }
            }
            Command::Receipt { message_id, read } => {
                self.drain().await;
                if let Err(frame) = self.receipt(message_id, read).await {
                    self.handle.send(&ServerFrame::Error(frame));
                }
            }
            Command::Sync {
                channel_id,
                after_seq,
                limit,
            } => {
                self.drain().await;
                // Backpressure: a page is read only once at most one page
                // waits in the queue, so a client that asks for pages and
                // does not read them is answered as fast as it reads, and
                // one that reads nothing for the idle limit is closed. Before,
                // it could make the server queue `outbound_queue_bytes` (16
                // MiB) per connection, times 100 connections per user.
                tokio::select! {
                    () = self.handle.queued_at_most(self.state.config.max_page_bytes) => {}
                    () = tokio::time::sleep(self.idle_limit()) => {
                        self.handle.kick(close_code::TRY_AGAIN_LATER, "too slow to take its frames");
                        return;
                    }
                    () = self.close.kicked() => return,
                    () = self.state.shutdown.cancelled() => return,
                }
                let store = &self.state.store;
                let result = match store.is_member(&channel_id, &self.user.user_id).await {
                    Ok(true) => store.messages_after(&channel_id, after_seq, limit).await.map(Some),
                    Ok(false) => Ok(None),
                    Err(e) => Err(e),
                };
                let frame = match result {
                    Ok(Some((messages, has_more))) => {
                        // A page stops early past `max_page_bytes`: the
                        // client asks again from its last seq.
                        let (messages, has_more) = recv_page(&messages, has_more, self.state.config.max_page_bytes);
                        ServerFrame::SyncBatch {
                            channel_id: channel_id.as_str().to_owned(),
                            messages,
                            has_more,
                        }
                    }
                    Ok(None) => {
                        let mut frame = ErrorFrame::new(ErrorCode::Forbidden, "not a member of this channel");
                        frame.channel_id = Some(channel_id.as_str().to_owned());
                        ServerFrame::Error(frame)
                    }
                    Err(error) => ServerFrame::Error(store_error(&error)),
                };
                self.handle.send(&frame);
            }
        }
    }

    /// Moves a watermark and sends the RECEIPT when it moved.
    async fn receipt(&self, message_id: uuid::Uuid, read: bool) -> Result<(), ErrorFrame> {
        let store = &self.state.store;
        let with_id = |mut frame: ErrorFrame| {
            frame.message_id = Some(message_id.to_string());
            frame
        };
        let message = store
            .message(message_id)
            .await
            .map_err(|e| with_id(store_error(&e)))?
            .ok_or_else(|| with_id(ErrorFrame::new(ErrorCode::NotFound, "unknown message")))?;
        let member = store
            .is_member(&message.channel_id, &self.user.user_id)
            .await
            .map_err(|e| with_id(store_error(&e)))?;
        if !member {
            return Err(with_id(ErrorFrame::new(
                ErrorCode::Forbidden,
                "not a member of this message's channel",
            )));
        }
        // Held until the RECEIPT is queued, so moves of this watermark reach
        // the hub in the order they committed.
        let _order = self
            .state
            .hub
            .receipt_order(&message.channel_id, &self.user.user_id)
            .await;
        let moved = store
            .advance_watermark(&self.user.user_id, &message, read)
            .await
            .map_err(|e| with_id(store_error(&e)))?;
        if !moved {
            return Ok(());
        }
        let frame = ServerFrame::Receipt {
            channel_id: message.channel_id.as_str().to_owned(),
            user_id: self.user.user_id.as_str().to_owned(),
            kind: if read {
                ReceiptKind::Read
            } else {
                ReceiptKind::Delivered
            },
            message_id: message.message_id,
            seq: message.seq,
            ts: now_ms(),
        };
        let text = Utf8Bytes::from(frame.encode());
        let state = self.state;
        let key = (message.channel_id.clone(), self.user.user_id.clone(), read);
        // The wire contract's recipients: "the sessions of that message's
        // sender" (every one of them, so when users mark their own message
        // the session that sent the receipt gets it too) and, for `read`,
        // "the reader's other sessions".
        state.send_receipt(&message.sender_id, &key, message.seq, &text, None);
        if read && message.sender_id != self.user.user_id {
            state.send_receipt(&self.user.user_id, &key, message.seq, &text, Some(&self.handle.id));
        }
        Ok(())
    }
}

/// The close code for a failed read (RFC 6455 §7.4.1), recognised from
/// tungstenite's error text (axum does not expose the error type): 1009 for
/// an over-long message, 1007 for a text frame that is not UTF-8, 1002 for
/// other protocol violations. A peer that went away without a close
/// handshake (its socket closed or reset) gets 1006, abnormal closure:
/// recorded, never sent (§7.4.1 reserves it; spec section 6). tungstenite
/// reports a close without handshake as a protocol error, so that case is
/// checked first.
fn read_error_close(text: &str) -> (u16, &'static str) {
    if text.contains("without closing handshake") {
        (close_code::ABNORMAL, "connection lost")
    } else if text.contains("Control frame too big") {
        // A ping, pong or close over 125 bytes breaks RFC 6455 §5.5; it is
        // not a message over max_frame_bytes.
        (close_code::PROTOCOL_ERROR, "websocket protocol error")
    } else if text.contains("Space limit exceeded") || text.contains("too long") || text.contains("too big") {
        (close_code::TOO_BIG, "message too big")
    } else if text.contains("UTF-8") || text.contains("utf-8") || text.contains("Utf8") {
        (close_code::INVALID_DATA, "text frame is not UTF-8")
    } else if text.to_ascii_lowercase().contains("protocol") {
        (close_code::PROTOCOL_ERROR, "websocket protocol error")
    } else {
        (close_code::ABNORMAL, "connection lost")
    }
}

/// The ERROR for a failed store call; details go to the log, not the client.
fn store_error(error: &StoreError) -> ErrorFrame {
    let code = error.wire_code();
    if code == ErrorCode::Internal {
        tracing::error!(%error, cause = ?std::error::Error::source(error), "store call failed");
    }
    let message = match (code, error) {
        (ErrorCode::Unavailable, _) => "database unavailable; retry",
        (_, StoreError::InDoubt(_)) => "the database failed while committing; it may have been done; retry",
        _ => "internal error; retry",
    };
    ErrorFrame::new(code, message)
}

/// The HELLO and its text, or, when the text cannot fit the session's
/// WebSocket write buffer, an `ERROR` `internal` in its place and a close
/// with 1011. tungstenite refuses a frame larger than
/// `max_write_buffer_size` (`ws_write_buffer_bytes` + `outbound_queue_bytes`)
/// with `WriteBufferFull`, which ended such a session with no frame and no
/// close code. A HELLO takes 60 to 200 bytes per channel of the user, so
/// this is a user in tens of thousands of channels; the warning names the
/// setting to raise.
fn fit_hello(
    config: &crate::config::Config,
    user: &AuthUser,
    hello: ServerFrame,
    close: &CloseSignal,
) -> (ServerFrame, String) {
    /// The largest WebSocket frame header (RFC 6455 §5.2), counted by
    /// tungstenite against the buffer with the payload.
    const MAX_FRAME_HEADER: usize = 14;
    let text = hello.encode();
    let limit = config.ws_write_buffer_bytes.saturating_add(config.outbound_queue_bytes);
    if text.len().saturating_add(MAX_FRAME_HEADER) <= limit {
        return (hello, text);
    }
    let channels = match &hello {
        ServerFrame::Hello { channels, .. } => channels.len(),
        _ => 0,
    };
    tracing::warn!(
        user_id = %user.user_id,
        channels,
        hello_bytes = text.len(),
        limit_bytes = limit,
        "the user's HELLO does not fit the session's write buffer; raise outbound_queue_bytes"
    );
    close.close_after_drain(close_code::INTERNAL, "HELLO too large for outbound_queue_bytes");
    let refusal = ServerFrame::Error(ErrorFrame::new(
        ErrorCode::Internal,
        "HELLO too large for this server's outbound_queue_bytes",
    ));
    let text = refusal.encode();
    (refusal, text)
}

/// Writes HELLO, then queued frames, until the queue closes or the session is
/// kicked; then sends the close frame.
async fn write_loop(
    mut sink: SplitSink<WebSocket, Message>,
    mut queue: mpsc::Receiver<Utf8Bytes>,
    queued: Arc<QueuedBytes>,
    hello: String,
    close: Arc<CloseSignal>,
    ping_every: Duration,
) {
    let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + ping_every, ping_every);
    let mut healthy = tokio::select! {
        biased;
        _ = close.kicked() => true,
        sent = sink.send(Message::Text(hello.into())) => sent.is_ok(),
    };
    while healthy && !close.is_kicked() {
        tokio::select! {
            biased;
            _ = close.kicked() => break,
            item = queue.recv() => {
                let Some(text) = item else { break };
                queued.taken(text.len());
                let write = async {
                    sink.feed(Message::Text(text)).await?;
                    for _ in 1..WRITE_BATCH {
                        match queue.try_recv() {
                            Ok(more) => {
                                queued.taken(more.len());
                                sink.feed(Message::Text(more)).await?
                            }
                            Err(_) => break,
                        }
                    }
                    sink.flush().await
                };
                healthy = tokio::select! {
                    biased;
                    _ = close.kicked() => true,
                    written = write => written.is_ok(),
                };
            }
            _ = ping.tick() => healthy = sink.send(Message::Ping(Default::default())).await.is_ok(),
        }
    }
    if !healthy {
        // A write failed: the peer is gone or has closed. Tell the reader
        // (1006, abnormal closure: recorded, never sent on the wire).
        close.kick(close_code::ABNORMAL, "connection lost");
    }
    let reason = close.reason().unwrap_or(crate::fanout::CloseReason {
        code: close_code::NORMAL,
        reason: "bye",
    });
    // When the peer closed first, tungstenite has queued its reply and refuses
    // ours; the flush and close below still deliver that reply.
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, async {
        if reason.code != close_code::ABNORMAL {
            let frame = CloseFrame {
                code: reason.code,
                reason: Utf8Bytes::from_static(reason.reason),
            };
            let _ = sink.send(Message::Close(Some(frame))).await;
        }
        // Not `sink.close()`: it waits for the peer's close reply, which only
        // the reader half sees (the session's lingering read does).
        sink.flush().await
    })
    .await;
}
