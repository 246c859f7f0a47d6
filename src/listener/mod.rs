//! The accept loop: HTTP/1.1 with upgrades (hyper), a bound on
//! the time a client may take to send its request head (the WebSocket
//! handshake included), and graceful shutdown of HTTP connections.
//!
//! `axum::serve` does not expose hyper's `header_read_timeout`, so a client
//! that opens a connection and never finishes its request (slowloris) would
//! hold it forever; here it is closed after `handshake_timeout_ms`.
//! Upgraded WebSocket connections leave this loop's accounting at the upgrade:
//! their limits live in [`crate::http::ws`].

mod deadline;
mod unsent;
mod write_deadline;

use std::io;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpSocket};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use write_deadline::WriteDeadline;

/// `TCP_NOTSENT_LOWAT` of every connection, bytes: a writer is woken when
/// fewer than half of this wait unsent, so a peer that takes at least
/// `NOTSENT_LOWAT / 2` bytes per `handshake_timeout_ms` (6.4 KB/s at the
/// default 10 s) is never taken for a stalled one, while the response is
/// written and after its last write (see [`WriteDeadline`]). "Takes" is what
/// the peer's kernel acknowledges: an application that drains a large
/// receive buffer slowly shows progress only each time its kernel reopens
/// the window (docs/configuration.md, `handshake_timeout_ms`).
const NOTSENT_LOWAT: u32 = 128 * 1024;

/// How long HTTP connections get to finish after shutdown starts.
const HTTP_DRAIN: Duration = Duration::from_secs(5);

/// Binds `addr` (`host:port`; a host name is resolved, and its first address
/// that binds is taken, as [`TcpListener::bind`] does) with `SO_REUSEADDR`
/// and a queue of `backlog` connections not yet accepted (`listen(2)`; the
/// kernel caps it at `net.core.somaxconn`). tokio's own `bind` asks for
/// 1024, which a reconnect storm of tens of thousands of clients overflows:
/// the kernel then drops their SYNs, and they come back only after their
/// retries (1, 3, 7 s).
///
/// # Errors
/// The resolver's error, else the last address's bind or listen error
/// (`AddrInUse`, `PermissionDenied`, …); `InvalidInput` when `addr`
/// resolves to no address.
pub async fn bind(addr: &str, backlog: u32) -> io::Result<TcpListener> {
    let mut last_error = None;
    for address in tokio::net::lookup_host(addr).await? {
        let socket = if address.is_ipv4() {
            TcpSocket::new_v4()?
        } else {
            TcpSocket::new_v6()?
        };
        #[cfg(unix)]
        socket.set_reuseaddr(true)?;
        if let Err(error) = socket.bind(address) {
            last_error = Some(error);
            continue;
        }
        match socket.listen(backlog) {
            Ok(listener) => return Ok(listener),
            Err(error) => last_error = Some(error),
        }
    }
    Err(last_error.unwrap_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("{addr} names no address"))))
}

/// Serves `router` on `listener` until `shutdown` is cancelled, then stops
/// accepting and waits (at most 5 s) for HTTP connections in progress.
///
/// HTTP/1.1 only. hyper's HTTP/2 server has no idle or header timeout: a
/// client that sent the h2c preface and then nothing would hold its
/// connection forever, and a few hundred such clients would lock every other
/// client out.
/// Nothing here needs HTTP/2: the WebSocket upgrade is HTTP/1.1 (RFC 6455),
/// and TLS, where browsers would use h2, ends at the reverse proxy. An h2c
/// preface is answered as a malformed HTTP/1.1 request and the connection closed.
pub async fn serve(listener: TcpListener, router: Router, handshake_timeout: Duration, shutdown: CancellationToken) {
    let mut builder = http1::Builder::new();
    // A client may half-close after its request (RFC 9112 §9.6) and still
    // wait for the response; hyper's default dropped such a connection.
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(handshake_timeout)
        .half_close(true);
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
        // The kernel wakes a writer blocked on a full send buffer only once
        // a third of it has drained: with the buffer Linux grows for a bulk
        // download (MBs), a client that reads steadily but slowly (a phone
        // at 20 KB/s) looked stalled to `WriteDeadline` for over
        // `handshake_timeout_ms` and was cut off mid-download. A bound on the
        // bytes not yet sent makes the wake-ups come every half of it; what
        // is in flight, and so the throughput, is not bounded by it.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let _ = socket2::SockRef::from(&stream).set_tcp_notsent_lowat(NOTSENT_LOWAT);
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
            let io = WriteDeadline::new(TokioIo::new(stream), handshake_timeout);
            let upgraded = io.off.clone();
            let connection = builder.serve_connection(io, service).with_upgrades();
            tokio::pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => result,
                () = draining.cancelled() => {
                    // Finish the request in progress, then close.
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            // Past hyper's part (an upgrade, or the end) the socket is the
            // WebSocket session's, which bounds slow peers itself (1013).
            upgraded.store(true, Ordering::Relaxed);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Connects `count` clients to `listener`, which never accepts, and
    /// returns how many connections the kernel completed within `wait`.
    async fn completed_without_accept(listener: &TcpListener, count: usize, wait: Duration) -> usize {
        let addr = listener.local_addr().expect("local addr");
        let mut attempts = tokio::task::JoinSet::new();
        for _ in 0..count {
            attempts.spawn(async move { tokio::time::timeout(wait, tokio::net::TcpStream::connect(addr)).await });
        }
        let mut streams = Vec::new();
        while let Some(attempt) = attempts.join_next().await {
            if let Ok(Ok(Ok(stream))) = attempt {
                streams.push(stream);
            }
        }
        streams.len()
    }

    /// A reconnect storm needs a longer accept queue than tokio's 1024:
    /// with it, 1,200 clients arriving before the server accepts any all
    /// complete their handshake; with `TcpListener::bind` about 175 of them
    /// wait for SYN retries.
    #[tokio::test]
    async fn the_listen_backlog_holds_a_storm_longer_than_tokios_default() {
        const CLIENTS: usize = 1_200;
        let somaxconn: usize = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(0);
        assert!(
            somaxconn >= 2_048,
            "net.core.somaxconn is {somaxconn}: this test needs at least 2048 (Linux's default since 5.4 is 4096)"
        );
        let limit = crate::fd_limit::raise_to_hard().expect("raise the descriptor limit");
        assert!(
            limit.soft.is_none_or(|soft| soft >= 2 * CLIENTS as u64 + 100),
            "the descriptor limit {limit:?} is too low for {CLIENTS} clients"
        );
        let wait = Duration::from_secs(2);
        let tokios = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let with_default = completed_without_accept(&tokios, CLIENTS, wait).await;
        drop(tokios);
        let ours = bind("127.0.0.1:0", 2_048).await.expect("bind");
        let with_backlog = completed_without_accept(&ours, CLIENTS, wait).await;
        assert!(
            with_default < CLIENTS,
            "tokio's default queue took all {CLIENTS}: the test shows nothing"
        );
        assert_eq!(with_backlog, CLIENTS, "with a backlog of 2048 every client completes");
    }

    #[tokio::test]
    async fn an_address_that_is_taken_is_an_error() {
        let taken = bind("127.0.0.1:0", 16).await.expect("bind");
        let addr = taken.local_addr().expect("addr").to_string();
        let error = bind(&addr, 16).await.expect_err("the port is taken");
        assert_eq!(error.kind(), io::ErrorKind::AddrInUse);
    }
}
