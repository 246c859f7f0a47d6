//! The accept loop: HTTP/1.1 with upgrades (hyper), a bound on
//! the time a client may take to send its request head (the WebSocket
//! handshake included), and graceful shutdown of HTTP connections.
//!
//! `axum::serve` does not expose hyper's `header_read_timeout`, so a client
//! that opens a connection and never finishes its request (slowloris) would
//! hold it forever; here it is closed after `handshake_timeout_ms`.
//! Upgraded WebSocket connections leave this loop's accounting at the upgrade:
//! their limits live in [`crate::gateway`].

use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// How long HTTP connections get to finish after shutdown starts.
const HTTP_DRAIN: Duration = Duration::from_secs(5);

/// Serves `router` on `listener` until `shutdown` is cancelled, then stops
/// accepting and waits (at most 5 s) for HTTP connections in progress.
///
/// HTTP/1.1 only. hyper's HTTP/2 server has no idle or header timeout: a
/// client that sent the h2c preface and then nothing held its connection
/// forever, and a breaker helper locked every client out with 300 of them.
/// Nothing here needs HTTP/2: the WebSocket upgrade is HTTP/1.1 (RFC 6455),
/// and TLS, where browsers would use h2, ends at the reverse proxy. An h2c
/// preface is answered as a malformed HTTP/1.1 request and the connection closed.
pub async fn serve(listener: TcpListener, router: Router, handshake_timeout: Duration, shutdown: CancellationToken) {
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(handshake_timeout);
    let connections = TaskTracker::new();
    let draining = CancellationToken::new();
    // Ends the connections still open when the drain period is over, so none
    // outlives the listener (each holds the router, and with it the writers).
    let abort = CancellationToken::new();
    loop {
        let stream = tokio::select! {
            biased;
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(error) => {
                    // Out of file descriptors and the like: back off, keep serving.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let builder = builder.clone();
        let draining = draining.clone();
        let abort = abort.clone();
        let service = TowerToHyperService::new(router.clone());
        let connection_task = async move {
            // hyper's header timeout starts with the first byte; a client that
            // sends nothing at all gets the same allowance here.
            // Shutdown does not wait for a connection that has sent nothing.
            let mut first = [0u8; 1];
            tokio::select! {
                peeked = tokio::time::timeout(handshake_timeout, stream.peek(&mut first)) => match peeked {
                    Ok(Ok(n)) if n > 0 => {}
                    _ => return,
                },
                () = draining.cancelled() => return,
            }
            let connection = builder.serve_connection(TokioIo::new(stream), service).with_upgrades();
            tokio::pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => result,
                () = draining.cancelled() => {
                    // Finish the request in progress, then close.
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(error) = result {
                tracing::debug!(%error, "http connection ended with an error");
            }
        };
        connections.spawn(async move {
            tokio::select! {
                () = connection_task => {}
                () = abort.cancelled() => {}
            }
        });
    }
    drop(listener);
    draining.cancel();
    connections.close();
    if tokio::time::timeout(HTTP_DRAIN, connections.wait()).await.is_err() {
        tracing::debug!("http connections still open after the drain period; closing them");
        abort.cancel();
        connections.wait().await;
    }
}
