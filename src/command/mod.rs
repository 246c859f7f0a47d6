//! The command layer: one file per client command. Each takes a validated
//! [`crate::protocol::Command`] and the session's [`Context`], does its work
//! through the store, group commit or delivery, and answers on the session's
//! outbound queue. The session's reader ([`crate::http::ws::reader`]) decodes
//! frames, checks rates, keeps arrival order and hands each command here, so
//! commands know nothing of sockets (their unit tests use a queue).
//!
//! A new frame kind is a new file here, plus a [`crate::delivery::Delivery`]
//! method and a [`crate::store::Store`] method when it needs them.

pub mod entry;
pub mod presence;
pub mod receipt;
pub mod send;
pub mod sync;
pub mod typing;

#[cfg(test)]
mod tests;

use std::time::Duration;

use crate::auth::AuthUser;
use crate::outbound::{CloseSignal, SessionHandle};
use crate::state::AppState;

/// What a command gets of its session.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The server's shared state.
    pub state: &'a AppState,
    /// Who is connected (from the token).
    pub user: &'a AuthUser,
    /// The session's outbound queue: every answer goes here.
    pub session: &'a SessionHandle,
    /// The session's close switch.
    pub close: &'a CloseSignal,
}

impl Context<'_> {
    /// How long a peer may go without sending anything, not even a pong to
    /// our pings, or without taking a queued SYNC page, before it is
    /// considered gone: three ping intervals.
    pub fn idle_limit(&self) -> Duration {
        Duration::from_secs(self.state.config.ping_interval_secs.saturating_mul(3))
    }
}
