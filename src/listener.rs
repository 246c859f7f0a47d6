//! The accept loop: HTTP/1.1 and HTTP/2 with upgrades (hyper-util), a bound on
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
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// How long HTTP connections get to finish after shutdown starts.
const HTTP_DRAIN: Duration = Duration::from_secs(5);

/// Serves `router` on `listener` until `shutdown` is cancelled, then stops
/// accepting and waits (at most 5 s) for HTTP connections in progress.
pub async fn serve(listener: TcpListener, router: Router, handshake_timeout: Duration, shutdown: CancellationToken) {
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(handshake_timeout);
    builder.http2().timer(TokioTimer::new());
    let graceful = GracefulShutdown::new();
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
        let watcher = graceful.watcher();
        let service = TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            // hyper's header timeout starts with the first byte; a client that
            // sends nothing at all gets the same allowance here.
            let mut first = [0u8; 1];
            match tokio::time::timeout(handshake_timeout, stream.peek(&mut first)).await {
                Ok(Ok(n)) if n > 0 => {}
                _ => return,
            }
            let connection = builder
                .serve_connection_with_upgrades(TokioIo::new(stream), service)
                .into_owned();
            if let Err(error) = watcher.watch(connection).await {
                tracing::debug!(%error, "http connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(HTTP_DRAIN, graceful.shutdown()).await.is_err() {
        tracing::debug!("http connections still open after the drain period");
    }
}
