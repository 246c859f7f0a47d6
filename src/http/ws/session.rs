//! One WebSocket session's lifecycle: register with this node's hub and
//! join delivery, send HELLO, run the reader ([`super::reader`]) beside the
//! socket-writing task ([`super::sink`]), joined by the session's bounded
//! outbound queue ([`crate::outbound`]), then close.
//!
//! - Close codes: 1001 on shutdown (after in-flight sends are ACKed), 1008
//!   when the token expires, after `max_bad_frames` bad frames in a row, or
//!   when the peer sent nothing (not even a pong) for three ping intervals,
//!   1009 for a message over `max_frame_bytes`, 1011 when the database fails
//!   at start, 1013 when the outbound queue is full.
//!
//! A panic in a session ends only its own task; the guards below still
//! unregister it from the hub and fix the connection gauge.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket};
use futures_util::StreamExt;
use tokio::sync::mpsc;

use super::reader::Reader;
use super::sink::{self, CLOSE_TIMEOUT};
use crate::auth::AuthUser;
use crate::close_code;
use crate::command::Context;
use crate::delivery::Hub;
use crate::ids::{now_ms, UserId};
use crate::limits::ConnectionPermit;
use crate::outbound::{CloseSignal, QueuedBytes, SessionHandle, SessionId};
use crate::protocol::{ErrorCode, ErrorFrame, ServerFrame};
use crate::state::AppState;
use crate::telemetry;
use crate::view;

/// With the `test-hooks` feature, this text frame makes its session panic.
#[cfg(feature = "test-hooks")]
pub use super::reader::TEST_PANIC_FRAME;

/// How long to wait for the client's close frame after ours.
const LINGER: Duration = Duration::from_secs(2);

/// Counts a session in `chatd_connections_open` from its start until its
/// socket is gone (socket task ended, lingering close done), panics
/// included: the same span as its place under the connection caps, so the
/// gauge never reads lower than the sockets the server still holds.
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
            // The socket task outlives this one: have it close with 1011.
            self.close.kick(close_code::INTERNAL, "internal error");
        }
        self.hub.unregister(&self.user_id, &self.id);
    }
}

/// Runs one session until the peer leaves, the session is closed, or the
/// server shuts down.
pub async fn run(socket: WebSocket, state: AppState, user: AuthUser, _permit: ConnectionPermit) {
    // First, so dropped last: after the socket's halves and its task.
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
    )
    .issued_at(user.issued_at_ms)
    // Channel frames wait for the HELLO, then go by what it and the later
    // CHANNEL_ADDED / CHANNEL_REMOVED told the client (§13.3).
    .gated();
    // Register before reading the channel states, so nothing stored after the
    // HELLO snapshot is missed (the client drops duplicates by messageId).
    state.hub.register(handle.clone());
    // A watermark read between the token's check and the registration
    // found no session of this one to close: checked again now (§19).
    if state.auth.erased().refuses(&user.user_id, user.issued_at_ms) {
        close.kick(close_code::POLICY, "user erased");
    }
    let registration = Registration {
        hub: state.hub.clone(),
        user_id: user.user_id.clone(),
        id: id.clone(),
        close: close.clone(),
    };

    // With NATS: subscribe to what this user needs (confirmed, sequencers
    // started) before the HELLO snapshot, so nothing falls between them.
    // The start's futures (the NATS join, the store's read of the channel
    // states) are boxed: inline they would size the session's task for its
    // whole life, although they run once (docs/performance.md, "100,000
    // connections").
    let joined = Box::pin(state.delivery.join(&user.user_id, &handle)).await;

    let (sink, mut stream) = socket.split();
    let hello = match Box::pin(state.store.channel_states(&user.user_id)).await {
        Ok(positions) => {
            handle.hello(positions.iter().map(|p| &p.channel_id));
            ServerFrame::Hello {
                user_id: user.user_id.as_str().to_owned(),
                session_id: id.to_string(),
                server_ts: now_ms(),
                channels: positions.iter().map(view::channel_state).collect(),
            }
        }
        Err(error) => {
            handle.hello(std::iter::empty());
            tracing::error!(%error, "cannot read channel states");
            close.close_after_drain(close_code::INTERNAL, "database unavailable");
            ServerFrame::Error(ErrorFrame::new(ErrorCode::Unavailable, "database unavailable"))
        }
    };
    let (hello, hello_text) = fit_hello(&state.config, &user, hello, &close);
    telemetry::frame_out(hello.type_name());
    let ping_every = Duration::from_secs(state.config.ping_interval_secs);
    let socket_task = tokio::spawn(sink::run(
        sink,
        outbound_rx,
        queued,
        hello_text,
        close.clone(),
        ping_every,
    ));
    let hello_failed = matches!(hello, ServerFrame::Error(_));
    // Encoded and handed to the socket task: not kept for the session's life
    // (a user in 25,000 channels would hold several MB of it per session).
    drop(hello);
    tracing::info!(user_id = %user.user_id, session_id = %id, "session opened");

    if !hello_failed {
        let ctx = Context {
            state: &state,
            user: &user,
            session: &handle,
            close: &close,
        };
        Reader::new(ctx).run(&mut stream).await;
    }

    // Let the socket task drain: it stops once every sender of the queue is
    // gone.
    drop(registration);
    drop(joined);
    drop(handle);
    let mut socket_task = socket_task;
    if tokio::time::timeout(CLOSE_TIMEOUT * 2, &mut socket_task).await.is_err() {
        // Stuck on a peer that takes nothing (a close after draining, say the
        // idle limit, with frames still queued). Ended here, so the socket
        // and its buffers go with the session, and its place under the
        // connection caps is not kept while a peer holds the connection open
        // without reading.
        socket_task.abort();
        let _ = socket_task.await;
        tracing::warn!("socket task did not finish; connection dropped");
    }
    let reason = close.reason();
    let code = reason.as_ref().map_or(close_code::NORMAL, |r| r.code);
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
    // The server's reason when it closed the session, else the client's doing.
    let why = reason.map_or("closed by the client", |r| r.reason);
    tracing::info!(user_id = %user.user_id, session_id = %id, code, reason = why, "session closed");
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
