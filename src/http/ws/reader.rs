//! A session's reader: takes the peer's WebSocket messages in arrival order,
//! counts each against the rate limits, decodes and validates it, and hands
//! the command to [`crate::command`]. Generic over the message stream, so it
//! is tested without a socket.
//!
//! Sends are pipelined: each is queued on its channel's commit task and the
//! reader reads on, up to `max_sends_in_flight` unfinished sends, past which
//! it stops reading (backpressure to the client). Any other frame (but a
//! TYPING `stop`), and every ERROR reply, first waits for the earlier sends
//! to finish, so their effects are in place before the reply to a later
//! frame.

use std::fmt::Display;
use std::time::Duration;

use axum::extract::ws::Message;
use futures_util::stream::FuturesOrdered;
use futures_util::{Stream, StreamExt};
use tokio::sync::oneshot;

use crate::close_code;
use crate::command::send::StoredKeyAnswer;
use crate::command::{self, Context};
use crate::commit::answer;
use crate::ids::now_ms;
use crate::limits::presence_sub_weight;
use crate::protocol::{
    decode_client_frame, peek_client_msg_id, peek_send_key, ClientFrame, Command, ErrorCode, ErrorFrame, ServerFrame,
};
use crate::store::{Mentions, References};
use crate::telemetry;

/// With the `test-hooks` feature, this text frame makes its session panic.
#[cfg(feature = "test-hooks")]
pub const TEST_PANIC_FRAME: &str = "__chatd_test_panic__";

/// Rate-limited frames in a row a session refuses before it pauses reading
/// for [`REFUSED_PAUSE`]: a connection over its rate is refused at most
/// about 64 frames per millisecond, so a flood costs a bounded share of a
/// core and others' latency holds (measured in `tests/abuse.rs`). Far above
/// any rate limit a client can use, and `max_rate_limited` (100) closes a
/// flooder long before it matters by default.
const REFUSED_PER_PAUSE: u32 = 64;
/// See [`REFUSED_PER_PAUSE`].
const REFUSED_PAUSE: Duration = Duration::from_millis(1);

/// One session's reader state.
pub struct Reader<'a> {
    ctx: Context<'a>,
    /// Completion signals of this session's unfinished sends, in send order.
    pending: FuturesOrdered<oneshot::Receiver<()>>,
    /// Bad frames in a row (`max_bad_frames`).
    bad_in_row: u32,
    /// This connection's frame-rate bucket (`None`: unlimited).
    rate: Option<governor::DefaultDirectRateLimiter>,
    /// Rate-limited frames in a row (`max_rate_limited`).
    limited_in_row: u32,
}

impl<'a> Reader<'a> {
    /// A reader for the session `ctx` describes.
    pub fn new(ctx: Context<'a>) -> Self {
        Self {
            ctx,
            pending: FuturesOrdered::new(),
            bad_in_row: 0,
            rate: ctx.state.limits.connection_rate(),
            limited_in_row: 0,
        }
    }

    /// Reads and handles messages until the peer leaves, the session is
    /// closed (kicked, token expired, idle, too many bad or rate-limited
    /// frames, a read error) or the server shuts down. The close code to use
    /// is left in the session's close switch.
    pub async fn run<S, E>(&mut self, stream: &mut S)
    where
        S: Stream<Item = Result<Message, E>> + Unpin,
        E: Display,
    {
        let ctx = self.ctx;
        // Closed when the token expires (`exp`); a token accepted within the
        // clock leeway but already expired ends its session at once.
        let expires_at_ms = i64::try_from(ctx.user.expires_at_ms).unwrap_or(i64::MAX);
        let expires_in = Duration::from_millis(u64::try_from(expires_at_ms.saturating_sub(now_ms())).unwrap_or(0));
        let expiry = tokio::time::sleep(expires_in);
        tokio::pin!(expiry);
        // A peer that sends nothing, not even a pong to our pings, for three
        // ping intervals is gone.
        let idle_limit = ctx.idle_limit();
        let idle = tokio::time::sleep(idle_limit);
        tokio::pin!(idle);
        let config = &ctx.state.config;
        let max_in_flight = config.max_sends_in_flight;
        loop {
            tokio::select! {
                biased;
                _ = ctx.close.kicked() => return,
                _ = ctx.state.shutdown.cancelled() => {
                    self.drain().await;
                    ctx.close.close_after_drain(close_code::GOING_AWAY, "server shutting down");
                    return;
                }
                _ = &mut expiry => {
                    self.drain().await;
                    ctx.close.close_after_drain(close_code::POLICY, "token expired");
                    return;
                }
                _ = &mut idle => {
                    ctx.close.close_after_drain(close_code::POLICY, "idle timeout");
                    return;
                }
                Some(_) = self.pending.next(), if !self.pending.is_empty() => {}
                message = stream.next(), if self.pending.len() < max_in_flight => {
                    let Some(message) = message else { return };
                    idle.as_mut().reset(tokio::time::Instant::now() + idle_limit);
                    match message {
                        // Boxed: a command's future (a send, a SYNC page,
                        // the store's reads) is several KiB, and inline it
                        // would be part of every idle session's task for
                        // its whole life; boxed it exists while a frame is
                        // handled (docs/performance.md, "100,000 connections").
                        Ok(Message::Text(text)) => Box::pin(self.on_text(text.as_str())).await,
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
                            ctx.close.close_after_drain(code, reason);
                            return;
                        }
                    }
                    if self.bad_in_row > config.max_bad_frames {
                        ctx.close.close_after_drain(close_code::POLICY, "too many bad frames");
                        return;
                    }
                    if self.limited_in_row > config.max_rate_limited {
                        ctx.close.close_after_drain(close_code::POLICY, "rate limit exceeded");
                        return;
                    }
                }
            }
        }
    }

    /// Waits until every earlier send of this session is finished.
    async fn drain(&mut self) {
        while self.pending.next().await.is_some() {}
    }

    /// Answers a frame that is not a valid command with `frame`, after the
    /// session's earlier sends; counts as a bad frame.
    async fn refuse(&mut self, frame: ErrorFrame) {
        self.bad_in_row += 1;
        self.drain().await;
        self.ctx.session.send(&ServerFrame::Error(frame));
    }

    /// A frame that failed its checks: answered by its idempotency key when it
    /// is a send whose key is stored ([`command::send::answer_by_stored_key`],
    /// after the earlier sends finish, so a key they stored is found).
    /// Returns false, having answered nothing, when it is not.
    async fn answered_by_stored_key(&mut self, text: &str) -> bool {
        let Some(key) = peek_send_key(text) else {
            return false;
        };
        self.drain().await;
        match command::send::answer_by_stored_key(self.ctx, key).await {
            StoredKeyAnswer::NotStored => false,
            StoredKeyAnswer::Answered => true,
            StoredKeyAnswer::Conflict => {
                self.bad_in_row += 1;
                true
            }
        }
    }

    /// Counts a frame against the rate limits; when over, answers
    /// `rate_limited` (echoing the send's `clientMsgId`) and returns false.
    async fn within_rate(&mut self, client_msg_id: impl FnOnce() -> Option<String>) -> bool {
        let ctx = self.ctx;
        let checked = ctx.state.limits.check_frame(self.rate.as_ref(), &ctx.user.user_id);
        self.rate_checked(checked, client_msg_id).await
    }

    /// Counts the extra weight of a frame that makes the server send many
    /// (`frames` more frames, after its one frame was counted, see
    /// [`crate::limits::presence_sub_weight`]); when over, answers
    /// `rate_limited` and returns false, like [`Self::within_rate`]. The
    /// `retryAfterMs` covers the extra frames and the one frame a resend
    /// pays again, so a client that waits it is accepted.
    async fn within_rate_for(&mut self, frames: u32) -> bool {
        let ctx = self.ctx;
        let limits = &ctx.state.limits;
        let checked = limits
            .check_frames(self.rate.as_ref(), &ctx.user.user_id, frames)
            .map_err(|wait| wait + limits.frame_interval());
        self.rate_checked(checked, || None).await
    }

    /// Acts on a rate check: resets the refusals in a row, or answers
    /// `rate_limited` (with `retryAfterMs`) and paces a flood.
    async fn rate_checked(
        &mut self,
        checked: Result<(), Duration>,
        client_msg_id: impl FnOnce() -> Option<String>,
    ) -> bool {
        let ctx = self.ctx;
        match checked {
            Ok(()) => {
                self.limited_in_row = 0;
                true
            }
            Err(wait) => {
                self.limited_in_row += 1;
                let mut frame = ErrorFrame::new(ErrorCode::RateLimited, "too many frames; slow down");
                frame.retry_after_ms = Some(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1));
                frame.client_msg_id = client_msg_id();
                self.drain().await;
                answer::refused(ctx.session, frame);
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
        let limited_before = self.limited_in_row;
        if !self.within_rate(|| peek_client_msg_id(text)).await {
            return;
        }
        let frame = match decode_client_frame(text) {
            Ok(frame) => frame,
            Err(error) => {
                telemetry::frame_in("invalid");
                if self.answered_by_stored_key(text).await {
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
            ClientFrame::MsgEdit { .. } => "MSG_EDIT",
            ClientFrame::MsgDelete { .. } => "MSG_DELETE",
            ClientFrame::MsgReact { .. } => "MSG_REACT",
            ClientFrame::Typing { .. } => "TYPING",
            ClientFrame::PresenceSub { .. } => "PRESENCE_SUB",
        });
        let config = &self.ctx.state.config;
        let command = match frame
            .validate(config.max_body_bytes)
            .and_then(|c| c.with_mentions_within(config.max_mentions))
            .and_then(|c| c.with_attachments_within(config.max_attachments_per_message))
        {
            Ok(command) => command,
            Err(error) => {
                if self.answered_by_stored_key(text).await {
                    return;
                }
                self.bad_in_row += 1;
                self.drain().await;
                return answer::refused(self.ctx.session, error.to_error_frame());
            }
        };
        self.bad_in_row = 0;
        let ctx = self.ctx;
        match command {
            Command::Send {
                channel_id,
                client_msg_id,
                body,
                reply_to,
                thread_id,
                mentions,
                mention_all,
                attachments,
            } => {
                let refs = References { reply_to, thread_id };
                let mentions = Mentions {
                    users: mentions,
                    all: mention_all,
                };
                if let Some(finished) =
                    command::send::submit(ctx, channel_id, client_msg_id, body, refs, mentions, attachments).await
                {
                    self.pending.push_back(finished);
                }
            }
            Command::Entry {
                client_msg_id,
                target,
                change,
            } => match command::entry::route(ctx, &client_msg_id, target).await {
                Ok(command::entry::Route::Channel(channel_id)) => {
                    if let Some(finished) = command::entry::submit(ctx, channel_id, client_msg_id, target, change).await
                    {
                        self.pending.push_back(finished);
                    }
                }
                Ok(route) => {
                    self.drain().await;
                    command::entry::answer_unroutable(ctx, client_msg_id, target, change, route).await;
                }
                Err(frame) => {
                    self.drain().await;
                    answer::refused(ctx.session, frame);
                }
            },
            Command::Receipt { message_id, read } => {
                self.drain().await;
                if let Err(frame) = command::receipt::run(ctx, message_id, read).await {
                    ctx.session.send(&ServerFrame::Error(frame));
                }
            }
            Command::Sync {
                channel_id,
                page,
                limit,
                thread_id,
            } => {
                self.drain().await;
                command::sync::run(ctx, channel_id, page, limit, thread_id).await;
            }
            // Ephemeral. A `start` goes behind this session's sends: a
            // message stored ends its sender's typing there (a `stop` after
            // its MSG_RECV) and the throttle with it, so a user typing the
            // next message while the last is being stored must be seen after
            // that `stop` and not throttled by the last `start`. A `stop`
            // need not wait; a refusal waits, like every ERROR.
            Command::Typing { channel_id, start } => {
                if start {
                    self.drain().await;
                }
                if let Err(frame) = command::typing::run(ctx, channel_id, start).await {
                    self.bad_in_row += 1;
                    self.drain().await;
                    ctx.session.send(&ServerFrame::Error(frame));
                }
            }
            Command::PresenceSub { user_ids } => {
                // Its snapshot is one PRESENCE per id: the frame counts as
                // one frame per PRESENCE_IDS_PER_FRAME ids (one is counted).
                // Refused for its weight, it is one more refusal in a row
                // (the one-frame check must not have reset the count).
                let extra = presence_sub_weight(user_ids.len()) - 1;
                if extra > 0 {
                    self.limited_in_row = limited_before;
                    if !self.within_rate_for(extra).await {
                        return;
                    }
                }
                if let Err(frame) = command::presence::run(ctx, user_ids).await {
                    self.bad_in_row += 1;
                    self.drain().await;
                    ctx.session.send(&ServerFrame::Error(frame));
                }
            }
        }
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
pub fn read_error_close(text: &str) -> (u16, &'static str) {
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
