//! The wait, before an HTTP connection's socket is let go, until the kernel
//! has sent what was written to it.
//!
//! Letting a socket go with bytes still unsent leaves them to the kernel, and
//! Linux then bounds the orphan only by `TCP_USER_TIMEOUT`, which for a peer
//! whose receive window fills it measures from a zero-window probe that may
//! date from long before: a peer still reading steadily was reset a moment
//! after the close, the end of its download never delivered. So the server
//! waits itself, with the same rule as for a write: each step of progress
//! starts the deadline again, and none for the deadline resets the socket.

use std::io;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::net::TcpStream;

use super::deadline::Deadline;

/// Where one wait for the unsent bytes of a socket is; its time bound is the
/// connection's [`Deadline`].
pub(super) struct UnsentWait {
    step: Step,
}

/// Where a wait is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Not asked yet whether anything is left.
    NotChecked,
    /// Waiting until fewer than this many bytes are unsent.
    Below(u32),
    /// Everything written has been sent (or the peer is gone).
    Sent,
}

impl UnsentWait {
    /// A wait not started.
    pub(super) fn new() -> Self {
        Self { step: Step::NotChecked }
    }

    /// Whether the wait found everything sent.
    pub(super) fn is_over(&self) -> bool {
        self.step == Step::Sent
    }

    /// Ready once the kernel has sent everything written to `stream`: first
    /// whether it already has, else down from half of `NOTSENT_LOWAT`,
    /// halving each time fewer bytes than the current step are left. Each
    /// step reached starts `deadline` again.
    ///
    /// # Errors
    /// `TimedOut` when no step is reached within the deadline; the socket's
    /// own error when setting `TCP_NOTSENT_LOWAT` or asking its state fails.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub(super) fn poll(
        &mut self,
        stream: &TcpStream,
        deadline: &mut Deadline,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let below = match self.step {
                Step::Sent => return Poll::Ready(Ok(())),
                Step::NotChecked => 1,
                Step::Below(below) => below,
            };
            // The kernel says writable when fewer than half of it are unsent.
            socket2::SockRef::from(stream).set_tcp_notsent_lowat(below.saturating_mul(2))?;
            match poll_writable(stream, cx) {
                Poll::Ready(Ok(())) => {
                    deadline.reset();
                    self.step = match below {
                        1 => Step::Sent,
                        _ => Step::Below(below / 2),
                    };
                }
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Pending if self.step == Step::NotChecked => {
                    self.step = Step::Below(super::NOTSENT_LOWAT / 2);
                }
                Poll::Pending if deadline.expired(cx) => return Poll::Ready(Err(stalled())),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Elsewhere the kernel keeps what is unsent past the close.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub(super) fn poll(
        &mut self,
        _stream: &TcpStream,
        _deadline: &mut Deadline,
        _cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        self.step = Step::Sent;
        Poll::Ready(Ok(()))
    }
}

/// Lets `stream` go once the kernel has sent what was written to it (at
/// once when it has, the common case), from a task of its own; reset
/// (`SO_LINGER` 0) if the peer reaches no step of [`UnsentWait::poll`] for
/// `limit`. For a socket dropped without a shutdown, as hyper drops a
/// keep-alive connection at its idle bound, which runs from the response's
/// last write, not from its last byte sent.
///
/// # Errors
/// The stream back when bytes are left and no tokio runtime runs here.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(super) fn close_when_sent(stream: TcpStream, limit: Duration) -> Result<(), TcpStream> {
    if matches!(sent_now(&stream), Ok(true) | Err(_)) {
        return Ok(());
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return Err(stream);
    };
    runtime.spawn(async move {
        let (mut wait, mut deadline) = (UnsentWait::new(), Deadline::new(limit));
        let outcome = std::future::poll_fn(|cx| wait.poll(&stream, &mut deadline, cx)).await;
        if outcome.is_err_and(|error| error.kind() == io::ErrorKind::TimedOut) {
            let _ = stream.set_zero_linger();
        }
    });
    Ok(())
}

/// Elsewhere the kernel keeps what is unsent past the close.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(super) fn close_when_sent(stream: TcpStream, _limit: Duration) -> Result<(), TcpStream> {
    drop(stream);
    Ok(())
}

/// The error of a write, or of a wait for the unsent bytes, past its deadline.
pub(super) fn stalled() -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        "the peer took no data for handshake_timeout_ms",
    )
}

/// Whether everything written to `stream` has been sent (or it has an error
/// or hang-up pending), asked now. Leaves `TCP_NOTSENT_LOWAT` at 2 bytes.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn sent_now(stream: &TcpStream) -> io::Result<bool> {
    socket2::SockRef::from(stream).set_tcp_notsent_lowat(2)?;
    writable_now(stream)
}

/// Whether `stream` is writable now (with `TCP_NOTSENT_LOWAT`: fewer than
/// half of it unsent), or has an error or hang-up pending (what follows
/// reports it): the socket's own (level) state, by `poll(2)` without waiting.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn writable_now(stream: &TcpStream) -> io::Result<bool> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let mut fds = [PollFd::new(stream, PollFlags::OUT)];
    let at_once = Timespec { tv_sec: 0, tv_nsec: 0 };
    poll(&mut fds, Some(&at_once)).map_err(io::Error::from)?;
    Ok(fds[0]
        .revents()
        .intersects(PollFlags::OUT | PollFlags::ERR | PollFlags::HUP))
}

/// Ready when `stream` is [`writable_now`]; else `Pending`, woken when that
/// changes. tokio keeps the last readiness it saw, so it is cleared when the
/// socket is not writable, and the next `poll_write_ready` waits for the kernel.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn poll_writable(stream: &TcpStream, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
    loop {
        std::task::ready!(stream.poll_write_ready(cx))?;
        let now = stream.try_io(tokio::io::Interest::WRITABLE, || match writable_now(stream) {
            Ok(true) => Ok(()),
            Ok(false) => Err(io::ErrorKind::WouldBlock.into()),
            Err(error) => Err(error),
        });
        match now {
            Ok(()) => return Poll::Ready(Ok(())),
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => continue,
            Err(error) => return Poll::Ready(Err(error)),
        }
    }
}
