//! An HTTP connection's socket with a bound on how long its peer may take no
//! data, while a response is written and after its last write.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// An HTTP connection's socket whose writes fail with `TimedOut` once one has
/// waited `limit` for the peer to take data. hyper's HTTP/1.1 server has no
/// write timeout: a client that pipelines requests and never reads the
/// responses would hold its connection forever, even with `GET /healthz`
/// alone. Off (`off`) once the connection is upgraded: the
/// WebSocket session has its own bound on a slow peer.
///
/// Shutting down (the end of a `Connection: close` response, or of a
/// connection the client ended) first waits, under the same bound, until the
/// kernel has sent everything written (at most `TCP_NOTSENT_LOWAT` bytes):
/// each halving of what is left unsent counts as progress, so a peer that
/// reads slowly but steadily gets the end of its download, and one that takes
/// nothing for `limit` is reset. Closing earlier and leaving the rest to the
/// kernel under `TCP_USER_TIMEOUT` cut such peers off: Linux measures that
/// timeout, for a peer whose receive window is full, from a zero-window probe
/// that may date from long before the close, so a download read at 80 KB/s
/// through a small receive buffer for longer than `limit` was reset a moment
/// after its last write, its last tens of KB never delivered.
///
/// Dropped while a write still waits for the peer (a WebSocket writer ended
/// by its session, a write or the wait above past its deadline), the socket
/// is reset (`SO_LINGER` 0) rather than closed: a normal close leaves the
/// unsent data, up to a few MB a socket, in kernel memory in FIN-WAIT-1 for
/// minutes after the server let go, outside every cap (a few hundred such
/// sockets hold hundreds of MB). A peer that takes nothing gets nothing more.
/// Dropped after that wait, the socket is closed normally: all that is left
/// is within the window the peer has offered. Dropped otherwise (the
/// connection ended on an error, or was aborted at the end of a shutdown's
/// drain period), it is closed normally with `TCP_USER_TIMEOUT` set to
/// `limit`, so the kernel drops the orphan instead of keeping it for minutes.
pub(super) struct WriteDeadline {
    inner: TokioIo<TcpStream>,
    limit: Duration,
    /// Set when the socket stops being an HTTP connection.
    pub(super) off: Arc<AtomicBool>,
    /// Running while a write, or the wait before shutting down, waits for the peer.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The last write or flush waits for the peer (returned `Pending`, or
    /// failed past its deadline) and nothing was written since.
    waiting: bool,
    /// Where the wait for the unsent bytes before shutting down is.
    unsent: Unsent,
}

/// The wait, before shutting down, for the kernel to send what was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unsent {
    /// Not started: nothing was shut down yet.
    NotChecked,
    /// Waiting until fewer than `below` bytes are unsent (`TCP_NOTSENT_LOWAT`
    /// set to twice that: the kernel reports writable below half of it).
    Waiting { below: u32 },
    /// Everything written has been sent (or the peer is gone).
    Sent,
}

impl Drop for WriteDeadline {
    fn drop(&mut self) {
        let socket = self.inner.inner();
        if self.waiting {
            let _ = socket.set_zero_linger();
        } else if self.unsent != Unsent::Sent {
            // `TCP_USER_TIMEOUT` (RFC 5482) is Linux's (and Android's):
            // elsewhere such an orphan is left to the kernel's own limits.
            #[cfg(any(target_os = "linux", target_os = "android"))]
            let _ = socket2::SockRef::from(socket).set_tcp_user_timeout(Some(self.limit));
        }
    }
}

impl WriteDeadline {
    pub(super) fn new(inner: TokioIo<TcpStream>, limit: Duration) -> Self {
        Self {
            inner,
            limit,
            off: Arc::new(AtomicBool::new(false)),
            stalled: None,
            waiting: false,
            unsent: Unsent::NotChecked,
        }
    }

    /// After a write returned `Pending`: whether it has now waited too long
    /// (the timer wakes the task when it has).
    fn timed_out(&mut self, cx: &mut Context<'_>) -> bool {
        self.waiting = true;
        if self.off.load(Ordering::Relaxed) {
            self.stalled = None;
            return false;
        }
        let limit = self.limit;
        let timer = self.stalled.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        timer.as_mut().poll(cx).is_ready()
    }

    /// The peer took data: the deadline starts again.
    fn progressed(&mut self) {
        self.stalled = None;
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

    /// Ready once the kernel has sent everything written: first whether it
    /// already has, else down from half of `NOTSENT_LOWAT`, halving each time
    /// fewer bytes than the current step are left. Each step reached resets
    /// the deadline; `TimedOut` when none is reached within `limit`.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn poll_sent(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            let below = match self.unsent {
                Unsent::Sent => return Poll::Ready(Ok(())),
                Unsent::NotChecked => 1,
                Unsent::Waiting { below } => below,
            };
            let stream = self.inner.inner();
            socket2::SockRef::from(stream).set_tcp_notsent_lowat(below.saturating_mul(2))?;
            match poll_writable(stream, cx) {
                Poll::Ready(Ok(())) => {
                    if self.unsent != Unsent::NotChecked {
                        self.progressed();
                    }
                    self.unsent = match below {
                        1 => Unsent::Sent,
                        _ => Unsent::Waiting { below: below / 2 },
                    };
                }
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Pending if self.unsent == Unsent::NotChecked => {
                    self.unsent = Unsent::Waiting {
                        below: super::NOTSENT_LOWAT / 2,
                    };
                }
                Poll::Pending if self.timed_out(cx) => return Poll::Ready(Err(stalled())),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Elsewhere the kernel keeps what is unsent past the close.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn poll_sent(&mut self, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.unsent = Unsent::Sent;
        Poll::Ready(Ok(()))
    }
}

/// The error of a write (or of the wait before shutting down) past its deadline.
fn stalled() -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        "the peer took no data for handshake_timeout_ms",
    )
}

/// Ready when `stream` is writable now (with `TCP_NOTSENT_LOWAT`: fewer than
/// half of it unsent), or has an error or hang-up pending (the shutdown that
/// follows reports it); else `Pending`, woken when that changes. tokio keeps
/// the last readiness it saw, so the socket's own (level) state is asked with
/// `poll(2)`, and tokio's cleared when it is not writable.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn poll_writable(stream: &TcpStream, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    loop {
        ready!(stream.poll_write_ready(cx))?;
        let now = stream.try_io(tokio::io::Interest::WRITABLE, || {
            let mut fds = [PollFd::new(stream, PollFlags::OUT)];
            let at_once = Timespec { tv_sec: 0, tv_nsec: 0 };
            poll(&mut fds, Some(&at_once)).map_err(io::Error::from)?;
            let revents = fds[0].revents();
            if revents.intersects(PollFlags::OUT | PollFlags::ERR | PollFlags::HUP) {
                Ok(())
            } else {
                Err(io::ErrorKind::WouldBlock.into())
            }
        });
        match now {
            Ok(()) => return Poll::Ready(Ok(())),
            // Readiness cleared: the next `poll_write_ready` waits for the kernel.
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
            Err(error) => return Poll::Ready(Err(error)),
        }
    }
}

impl hyper::rt::Read for WriteDeadline {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for WriteDeadline {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let outcome = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.guard(cx, outcome)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_flush(cx) {
            // A finished flush (always, on TCP) writes nothing: only a write
            // that makes progress says the peer takes data again.
            Poll::Pending => this.guard(cx, Poll::Pending),
            ready => ready,
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        // An upgraded socket is the WebSocket session's, which bounds its peer itself.
        if !this.off.load(Ordering::Relaxed) {
            ready!(this.poll_sent(cx))?;
        }
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let outcome = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
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

    /// Writes `len` bytes through a `WriteDeadline` of `limit` in writes as
    /// large as the kernel takes (as hyper does with the chunks it has
    /// queued), says so on `written`, then shuts down (the end of a
    /// `Connection: close` download) and drops the socket.
    fn write_then_shut_down(
        server: TcpStream,
        len: usize,
        limit: Duration,
        written: oneshot::Sender<()>,
    ) -> tokio::task::JoinHandle<io::Result<()>> {
        tokio::spawn(async move {
            let mut io = WriteDeadline::new(TokioIo::new(server), limit);
            let body = vec![7u8; len];
            let mut at = 0;
            while at < len {
                at += poll_fn(|cx| hyper::rt::Write::poll_write(Pin::new(&mut io), cx, &body[at..])).await?;
            }
            let _ = written.send(());
            poll_fn(|cx| hyper::rt::Write::poll_shutdown(Pin::new(&mut io), cx)).await
        })
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
        const LEN: usize = 600_000;
        let (server, mut client) = pair().await;
        let (written, _) = oneshot::channel();
        let writer = write_then_shut_down(server, LEN, Duration::from_secs(5), written);
        let started = std::time::Instant::now();
        let mut got = 0;
        let mut chunk = [0u8; 2048];
        loop {
            match client.read(&mut chunk).await {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(error) => panic!(
                    "cut off after {:?} and {got} of {LEN} bytes: {error}",
                    started.elapsed()
                ),
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert_eq!(got, LEN);
        assert!(started.elapsed() > Duration::from_secs(5), "read faster than the limit");
        writer
            .await
            .expect("the writer's task")
            .expect("the shutdown after everything was sent");
    }

    /// A reader that stops taking data once everything is written is not
    /// waited for beyond the limit: the shutdown fails with `TimedOut` (and
    /// the socket, dropped then, is reset).
    #[tokio::test]
    async fn a_reader_that_stops_before_the_end_times_the_shutdown_out() {
        let (server, mut client) = pair().await;
        let (written, mut all_written) = oneshot::channel();
        let writer = write_then_shut_down(server, 600_000, Duration::from_secs(1), written);
        let mut chunk = [0u8; 2048];
        loop {
            tokio::select! {
                _ = &mut all_written => break,
                read = client.read(&mut chunk) => assert!(read.expect("read") > 0, "the end came before the last write"),
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let outcome = writer.await.expect("the writer's task");
        let error = outcome.expect_err("the shutdown waits for a reader that takes nothing");
        assert_eq!(error.kind(), io::ErrorKind::TimedOut, "{error}");
        let mut rest = Vec::new();
        let end = client.read_to_end(&mut rest).await;
        assert!(
            end.is_err(),
            "the socket is reset, not closed: read {} more bytes and an end",
            rest.len()
        );
    }
}
