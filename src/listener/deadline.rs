//! A bound on the time a socket's peer may take no data.

use std::future::Future;
use std::pin::Pin;
use std::task::Context;
use std::time::Duration;

/// `limit` from the first check that found no progress since the last
/// [`Deadline::reset`]; the same timer serves a connection's writes and the
/// wait for its unsent bytes, which never run at once.
pub(super) struct Deadline {
    /// Longest time without progress (`handshake_timeout_ms`).
    limit: Duration,
    /// Running since the first check without progress.
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Deadline {
    /// A deadline of `limit`, not running.
    pub(super) fn new(limit: Duration) -> Self {
        Self { limit, timer: None }
    }

    /// Its length.
    pub(super) fn limit(&self) -> Duration {
        self.limit
    }

    /// Progress: the next check without it starts the time again.
    pub(super) fn reset(&mut self) {
        self.timer = None;
    }

    /// No progress now: whether `limit` has passed since the first such
    /// check after the last reset (the timer wakes the task when it has).
    pub(super) fn expired(&mut self, cx: &mut Context<'_>) -> bool {
        let limit = self.limit;
        let timer = self.timer.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        timer.as_mut().poll(cx).is_ready()
    }
}
