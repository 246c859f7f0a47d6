//! A session's socket-writing task: sends HELLO, then the frames of the
//! session's outbound queue in FIFO order (feeding up to [`WRITE_BATCH`],
//! flushing once), pings the peer every `ping_interval_secs`, and last sends
//! the close frame. Generic over the sink, so it is tested without a socket.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes};
use futures_util::{Sink, SinkExt};
use tokio::sync::mpsc;

use crate::close_code;
use crate::outbound::{CloseReason, CloseSignal, QueuedBytes};

/// How long the task keeps trying to deliver the close frame.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// Most queued frames written before one flush.
const WRITE_BATCH: usize = 64;

/// Writes `hello`, then queued frames, until the queue closes (every
/// [`crate::outbound::SessionHandle`] is gone) or the session is kicked; then
/// sends the close frame with the reason in `close` (1000 when none).
pub async fn run<S>(
    mut sink: S,
    mut queue: mpsc::Receiver<Utf8Bytes>,
    queued: Arc<QueuedBytes>,
    hello: String,
    close: Arc<CloseSignal>,
    ping_every: Duration,
) where
    S: Sink<Message> + Unpin,
{
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
    let reason = close.reason().unwrap_or(CloseReason {
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

#[cfg(test)]
mod tests {
    use tokio_util::sync::PollSender;

    use super::*;

    /// HELLO first, then the queue in order, then the close frame (1000 when
    /// no reason was set, once every queue handle is gone); the byte count
    /// goes back to zero as frames are taken.
    #[tokio::test]
    async fn writes_hello_then_the_queue_then_the_close_frame() {
        let (socket_tx, mut socket) = mpsc::channel::<Message>(16);
        let (queue_tx, queue_rx) = mpsc::channel::<Utf8Bytes>(16);
        let queued = Arc::new(QueuedBytes::new(1024));
        for text in ["one", "two"] {
            assert!(queued.add(text.len()));
            queue_tx.try_send(Utf8Bytes::from_static(text)).unwrap();
        }
        drop(queue_tx);
        let close = Arc::new(CloseSignal::default());
        run(
            PollSender::new(socket_tx),
            queue_rx,
            queued.clone(),
            "hello".into(),
            close,
            Duration::from_secs(30),
        )
        .await;
        let mut got = Vec::new();
        while let Some(message) = socket.recv().await {
            got.push(message);
        }
        let texts: Vec<String> = got
            .iter()
            .filter_map(|m| match m {
                Message::Text(t) => Some(t.to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(texts, ["hello", "one", "two"]);
        match got.last() {
            Some(Message::Close(Some(frame))) => assert_eq!(frame.code, close_code::NORMAL),
            other => panic!("expected a close frame last, got {other:?}"),
        }
        tokio::time::timeout(Duration::from_secs(1), queued.at_most(0))
            .await
            .expect("every queued byte was taken");
    }

    /// A kick ends the task at once with the kick's code; frames still
    /// queued are dropped.
    #[tokio::test]
    async fn a_kick_sends_its_code_and_drops_the_queue() {
        let (socket_tx, mut socket) = mpsc::channel::<Message>(16);
        let (queue_tx, queue_rx) = mpsc::channel::<Utf8Bytes>(16);
        let close = Arc::new(CloseSignal::default());
        close.kick(close_code::TRY_AGAIN_LATER, "too slow");
        queue_tx.try_send(Utf8Bytes::from_static("late")).unwrap();
        run(
            PollSender::new(socket_tx),
            queue_rx,
            Arc::new(QueuedBytes::new(1024)),
            "hello".into(),
            close,
            Duration::from_secs(30),
        )
        .await;
        drop(queue_tx);
        let mut got = Vec::new();
        while let Ok(message) = socket.try_recv() {
            got.push(message);
        }
        assert!(
            !got.iter()
                .any(|m| matches!(m, Message::Text(t) if t.as_str() == "late")),
            "queued frames dropped: {got:?}"
        );
        match got.last() {
            Some(Message::Close(Some(frame))) => assert_eq!(frame.code, close_code::TRY_AGAIN_LATER),
            other => panic!("expected a close frame last, got {other:?}"),
        }
    }
}
