//! An HTTP connection's socket with a bound on how long its peer may take no
//! data, while a response is written and after its last write.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::deadline::Deadline;
use super::unsent::{self, stalled, UnsentWait};

/// An HTTP connection's socket whose writes fail with `TimedOut` once one has
/// waited `limit` for the peer to take data. hyper's HTTP/1.1 server has no
/// write timeout: a client that pipelines requests and never reads the
/// responses would hold its connection forever, even with `GET /healthz`
/// alone. Off (`off`) once the connection is upgraded: the
/// WebSocket session has its own bound on a slow peer.
///
/// Shutting down (the end of a `Connection: close` response, or of a
/// connection the client ended) first waits, under the same bound, until the
/// kernel has sent everything written (at most `TCP_NOTSENT_LOWAT` bytes;
/// [`UnsentWait`]), so a peer that reads slowly but steadily gets the end of
/// its download, and one that takes nothing for `limit` is reset.
///
/// Dropped while a write still waits for the peer (a WebSocket writer ended
/// by its session, a write or that wait past its deadline), the socket is
/// reset (`SO_LINGER` 0) rather than closed: a normal close leaves the
/// unsent data, up to a few MB a socket, in kernel memory in FIN-WAIT-1 for
/// minutes after the server let go, outside every cap (a few hundred such
/// sockets hold hundreds of MB). A peer that takes nothing gets nothing more.
/// Dropped after that wait, it is closed normally. Dropped otherwise (hyper
/// ending a keep-alive connection at its idle bound, which runs from the
/// last write, or on an error), the same wait runs in a task of its own
/// before the close ([`unsent::close_when_sent`]); so does an upgraded
/// socket's, once its WebSocket session is over. One dropped where no
/// runtime runs is closed normally with `TCP_USER_TIMEOUT` set to `limit`,
/// so the kernel drops the orphan instead of keeping it for minutes.
pub(super) struct WriteDeadline {
    /// The socket; `None` only while it is being dropped.
    inner: Option<TokioIo<TcpStream>>,
    /// Running while a write, or the wait for the unsent bytes, waits for the peer.
    deadline: Deadline,
    /// Set when the socket stops being an HTTP connection.
    pub(super) off: Arc<AtomicBool>,
    /// The last write or flush waits for the peer (returned `Pending`, or
    /// failed past its deadline), or the wait for the unsent bytes timed
    /// out, and nothing was written since.
    waiting: bool,
    /// The wait for the unsent bytes before shutting down.
    unsent: UnsentWait,
}

impl Drop for WriteDeadline {
    fn drop(&mut self) {
        let Some(io) = self.inner.take() else { return };
        let stream = io.into_inner();
        if self.waiting {
            let _ = stream.set_zero_linger();
            return;
        }
        if self.unsent.is_over() {
            return;
        }
        // Whatever ended it: `off` is no guide here, as the accept loop sets
        // it when hyper's part ends, before it drops a connection that was
        // not upgraded.
        let Err(stream) = unsent::close_when_sent(stream, self.deadline.limit()) else {
            return;
        };
        // `TCP_USER_TIMEOUT` (RFC 5482) is Linux's (and Android's):
        // elsewhere such an orphan is left to the kernel's own limits.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let _ = socket2::SockRef::from(&stream).set_tcp_user_timeout(Some(self.deadline.limit()));
    }
}

impl WriteDeadline {
    pub(super) fn new(inner: TokioIo<TcpStream>, limit: Duration) -> Self {
        Self {
            inner: Some(inner),
            deadline: Deadline::new(limit),
            off: Arc::new(AtomicBool::new(false)),
            waiting: false,
            unsent: UnsentWait::new(),
        }
    }

    /// After a write returned `Pending`: whether it has now waited too long
    /// (the timer wakes the task when it has).
    fn timed_out(&mut self, cx: &mut Context<'_>) -> bool {
        self.waiting = true;
        if self.off.load(Ordering::Relaxed) {
            self.deadline.reset();
            return false;
        }
        self.deadline.expired(cx)
    }

    /// The peer took data: the deadline starts again.
    fn progressed(&mut self) {
        self.deadline.reset();
        self.waiting = false;
    }

    /// Maps an inner write's outcome: progress resets the timer.
    fn guard<T>(&mut self, cx: &mut Context<'_>, outcome: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        match outcome {
            Poll::Pending if self.timed_out(cx) => Poll::Ready(Err(stalled())),
            Poll::Pending => Poll::Pending,
            ready => {
                self.progressed();
                ready
            }
        }
    }
}

/// The error of a call on a socket already let go (none is made: hyper
/// stops calling before it drops the socket).
fn gone() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "the socket was let go")
}

impl hyper::rt::Read for WriteDeadline {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut().inner.as_mut() {
            Some(io) => Pin::new(io).poll_read(cx, buf),
            None => Poll::Ready(Err(gone())),
        }
    }
}

impl hyper::rt::Write for WriteDeadline {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let Some(io) = this.inner.as_mut() else {
            return Poll::Ready(Err(gone()));
        };
        let outcome = Pin::new(io).poll_write(cx, buf);
        this.guard(cx, outcome)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let Some(io) = this.inner.as_mut() else {
            return Poll::Ready(Err(gone()));
        };
        match Pin::new(io).poll_flush(cx) {
            // A finished flush (always, on TCP) writes nothing: only a write
            // that makes progress says the peer takes data again.
            Poll::Pending => this.guard(cx, Poll::Pending),
            ready => ready,
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let Some(io) = this.inner.as_mut() else {
            return Poll::Ready(Err(gone()));
        };
        // An upgraded socket is the WebSocket session's, which bounds its peer itself.
        if !this.off.load(Ordering::Relaxed) {
            if let Err(error) = ready!(this.unsent.poll(io.inner(), &mut this.deadline, cx)) {
                // Past its deadline the socket is reset when dropped.
                this.waiting = error.kind() == io::ErrorKind::TimedOut;
                return Poll::Ready(Err(error));
            }
        }
        Pin::new(io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.as_ref().is_some_and(|io| io.is_write_vectored())
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let Some(io) = this.inner.as_mut() else {
            return Poll::Ready(Err(gone()));
        };
        let outcome = Pin::new(io).poll_write_vectored(cx, bufs);
        this.guard(cx, outcome)
    }
}

#[cfg(all(test, any(target_os = "linux", target_os = "android")))]
mod tests {
    use std::future::poll_fn;

    use tokio::io::AsyncReadExt;
    use tokio::sync::oneshot;

    use super::*;

    /// A connected pair: the server's end with chatd's `TCP_NOTSENT_LOWAT`,
    /// the client's with a 32 KiB receive buffer (a phone's small window).
    async fn pair() -> (TcpStream, TcpStream) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket.set_recv_buffer_size(32 * 1024).expect("rcvbuf");
        let client = socket
            .connect(listener.local_addr().expect("addr"))
            .await
            .expect("connect");
        let (server, _) = listener.accept().await.expect("accept");
        socket2::SockRef::from(&server)
            .set_tcp_notsent_lowat(super::super::NOTSENT_LOWAT)
            .expect("lowat");
        (server, client)
    }

    /// How the server's end is let go after its last write.
    #[derive(Clone, Copy)]
    enum End {
        /// Shut down, as hyper ends a `Connection: close` response.
        ShutDown,
        /// Dropped, as hyper drops a keep-alive connection at its idle bound.
        Dropped,
    }

    /// Writes `len` bytes through a `WriteDeadline` of `limit` in writes as
    /// large as the kernel takes (as hyper does with the chunks it has
    /// queued), says so on `written`, then lets the socket go as `end` says.
    fn write_then_end(
        server: TcpStream,
        len: usize,
        limit: Duration,
        written: oneshot::Sender<()>,
        end: End,
    ) -> tokio::task::JoinHandle<io::Result<()>> {
        tokio::spawn(async move {
            let mut io = WriteDeadline::new(TokioIo::new(server), limit);
            let body = vec![7u8; len];
            let mut at = 0;
            while at < len {
                at += poll_fn(|cx| hyper::rt::Write::poll_write(Pin::new(&mut io), cx, &body[at..])).await?;
            }
            let _ = written.send(());
            match end {
                End::ShutDown => poll_fn(|cx| hyper::rt::Write::poll_shutdown(Pin::new(&mut io), cx)).await,
                End::Dropped => Ok(()),
            }
        })
    }

    /// Reads everything `client` gets, 2 KiB every 25 ms (about 80 KB/s),
    /// until the end of the stream; panics when it is reset first.
    async fn read_slowly(client: &mut TcpStream, len: usize) -> (usize, std::time::Duration) {
        let started = std::time::Instant::now();
        let mut got = 0;
        let mut chunk = [0u8; 2048];
        loop {
            match client.read(&mut chunk).await {
                Ok(0) => return (got, started.elapsed()),
                Ok(n) => got += n,
                Err(error) => panic!(
                    "cut off after {:?} and {got} of {len} bytes: {error}",
                    started.elapsed()
                ),
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// A reader taking 2 KiB every 25 ms (about 80 KB/s) through a small
    /// window for longer than `limit` gets every byte and then the end of the
    /// stream. Before, the socket was closed right after the last write
    /// under `TCP_USER_TIMEOUT` = `limit`, which Linux counts from a
    /// zero-window probe sent long before: it was reset about a second after
    /// the last write, with tens of KB unread (CI failed on
    /// `a_slow_steady_reader_downloads_the_whole_file`).
    #[tokio::test]
    async fn a_slow_steady_reader_gets_everything_written_before_the_shutdown() {
        reads_everything_written_before(End::ShutDown).await;
    }

    /// The same reader gets everything when the socket is dropped without a
    /// shutdown after the last write, as hyper drops a keep-alive connection
    /// whose idle bound (`handshake_timeout_ms` from the last write) ran out
    /// while the kernel still held the response's end. Before, the drop set
    /// `TCP_USER_TIMEOUT` and the end was reset (the thirteenth hostile run:
    /// a keep-alive download at 7 KB/s, 272,384 of 280,000 bytes).
    #[tokio::test]
    async fn a_slow_steady_reader_gets_everything_written_before_a_drop() {
        reads_everything_written_before(End::Dropped).await;
    }

    /// 600,000 bytes read slowly (`read_slowly`) for longer than the 5 s
    /// limit, the server's end let go as `end` says after its last write:
    /// every byte arrives, then the end of the stream.
    async fn reads_everything_written_before(end: End) {
        const LEN: usize = 600_000;
        let (server, mut client) = pair().await;
        let (written, _) = oneshot::channel();
        let writer = write_then_end(server, LEN, Duration::from_secs(5), written, end);
        let (got, took) = read_slowly(&mut client, LEN).await;
        assert_eq!(got, LEN);
        assert!(took > Duration::from_secs(5), "read faster than the limit");
        writer
            .await
            .expect("the writer's task")
            .expect("the writes and the end");
    }

    /// A reader that stops taking data once everything is written is not
    /// waited for beyond the limit: the shutdown fails with `TimedOut` (and
    /// the socket, dropped then, is reset).
    #[tokio::test]
    async fn a_reader_that_stops_before_the_end_times_the_shutdown_out() {
        let (server, mut client) = pair().await;
        let (written, mut all_written) = oneshot::channel();
        let writer = write_then_end(server, 600_000, Duration::from_secs(1), written, End::ShutDown);
        read_until(&mut client, &mut all_written).await;
        let outcome = writer.await.expect("the writer's task");
        let error = outcome.expect_err("the shutdown waits for a reader that takes nothing");
        assert_eq!(error.kind(), io::ErrorKind::TimedOut, "{error}");
        assert_reset(&mut client).await;
    }

    /// A reader that stops once everything is written is not waited for
    /// beyond the limit after a drop either: the task that waits for the
    /// unsent bytes resets the socket.
    #[tokio::test]
    async fn a_reader_that_stops_before_the_end_of_a_dropped_socket_is_reset() {
        let (server, mut client) = pair().await;
        let (written, mut all_written) = oneshot::channel();
        let writer = write_then_end(server, 600_000, Duration::from_secs(1), written, End::Dropped);
        read_until(&mut client, &mut all_written).await;
        writer.await.expect("the writer's task").expect("the writes");
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert_reset(&mut client).await;
    }

    /// Reads what `client` gets until the writer says it wrote its last byte,
    /// then stops reading.
    async fn read_until(client: &mut TcpStream, all_written: &mut oneshot::Receiver<()>) {
        let mut chunk = [0u8; 2048];
        loop {
            tokio::select! {
                _ = &mut *all_written => return,
                read = client.read(&mut chunk) => assert!(read.expect("read") > 0, "the end came before the last write"),
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The rest of `client`'s stream ends in a reset, not a normal end.
    async fn assert_reset(client: &mut TcpStream) {
        let mut rest = Vec::new();
        let end = client.read_to_end(&mut rest).await;
        assert!(
            end.is_err(),
            "the socket is reset, not closed: read {} more bytes and an end",
            rest.len()
        );
    }
}
