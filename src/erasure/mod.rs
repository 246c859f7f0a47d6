//! Erasing a user (protocol.md §19, guarantee 14): `DELETE
//! /v1/users/{userId}` starts (or joins) an erasure here, and the server's
//! start resumes the ones a stopped server left pending.
//!
//! An erasure first stores its watermark with a pending mark
//! (`store/erasure.rs`, `user_erasures`): from then on the user's earlier
//! tokens are refused ([`crate::auth::ErasedUsers`]) and its sessions are
//! closed with 1008 on every node ([`crate::delivery::Delivery::user_erased`]).
//! Then [`run`] does the work in rounds of at most `erasure_batch`, each
//! idempotent, so a restart simply does them again: the user's messages
//! deleted as by `MSG_DELETE` and its reactions removed, as entries through
//! group commit (the channel's own commit task, so the text, previews, index
//! rows and attachments go as for any delete), its memberships ended as
//! `MEMBER` `leave`s on the channels' commit tasks, its other rows and its
//! idempotency keys erased; last, the pending mark is cleared and the
//! watermark raised to the end. The erasures running on this node are kept
//! in [`crate::erasures::Erasures`], a leaf the state holds.

mod run;
mod watermarks;

use std::time::Duration;

use tokio::sync::watch;

use crate::ids::{now_ms, UserId};
use crate::state::AppState;
use crate::store::{Store, StoreError};

use watermarks::refresh_watermarks;
pub use watermarks::REFRESH;

/// Why an erasure could not be started.
#[derive(Debug, thiserror::Error)]
pub enum EraseError {
    /// The watermark could not be stored: nothing was erased.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The server is shutting down.
    #[error("the server is shutting down")]
    Stopped,
}

/// Starts erasing `user`, or joins the erasure of it already running on
/// this node: the watermark and pending mark are stored and the user's
/// sessions closed before this returns; the returned signal turns `true`
/// when every effect is stored.
///
/// # Errors
/// [`EraseError`] when the watermark cannot be stored (nothing changed).
pub async fn start(state: &AppState, user: &UserId) -> Result<watch::Receiver<bool>, EraseError> {
    if let Some(done) = state.erasures.running(user) {
        return Ok(done);
    }
    if state.shutdown.is_cancelled() {
        return Err(EraseError::Stopped);
    }
    let started = now_ms();
    state.store.begin_erasure(user, started).await?;
    state.auth.erased().record(user, started);
    state.delivery.user_erased(user);
    tracing::info!(user_id = %user, "erasing a user");
    Ok(spawn(state, user, started))
}

/// Whether an erasure of `user` has begun and not ended: running on this
/// node, or pending in the store (begun on any node, or left by a stopped
/// server).
///
/// # Errors
/// The store's error when the pending erasures cannot be read.
pub async fn in_progress(state: &AppState, user: &UserId) -> Result<bool, StoreError> {
    if state.erasures.running(user).is_some() {
        return Ok(true);
    }
    Ok(state.store.pending_erasures().await?.contains(user))
}

/// Spawns [`run::erase`] for `user` (watermark stored at `started`, ms),
/// unless one is running already; returns its "done" signal.
fn spawn(state: &AppState, user: &UserId, started: i64) -> watch::Receiver<bool> {
    let (done_tx, done) = watch::channel(false);
    {
        let mut running = state.erasures.running.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(existing) = running.get(user) {
            return existing.clone();
        }
        running.insert(user.clone(), done.clone());
    }
    let state = state.clone();
    let user = user.clone();
    tokio::spawn(async move {
        let finished = run::erase(&state, &user, started).await;
        state.erasures.remove(&user);
        if finished {
            let _ = done_tx.send(true);
        }
    });
    done
}

/// At the server's start: reads every erasure watermark into the token
/// verifier (before the first request), resumes the erasures left pending,
/// and on PostgreSQL reads the watermarks again every [`REFRESH`] until
/// shutdown.
///
/// # Errors
/// The store's error when the watermarks cannot be read.
pub async fn start_background(state: &AppState) -> Result<(), StoreError> {
    let rows = state.store.erasure_watermarks().await?;
    // No session is open yet: the users whose watermark rose are not needed.
    let _ = state.auth.erased().record_all(&rows);
    let resume = state.clone();
    tokio::spawn(async move { resume_pending(&resume).await });
    if matches!(state.store, Store::Postgres(_)) {
        let refresh = state.clone();
        tokio::spawn(async move { refresh_watermarks(&refresh).await });
    }
    Ok(())
}

/// Resumes every pending erasure (its watermark as stored: tokens issued
/// before it stay refused, and [`run::erase`] raises it at the end).
async fn resume_pending(state: &AppState) {
    let mut backoff = Duration::from_millis(200);
    let pending = loop {
        match state.store.pending_erasures().await {
            Ok(pending) => break pending,
            Err(error) => {
                tracing::warn!(%error, "cannot read the pending erasures; retrying");
                tokio::select! {
                    _ = state.shutdown.cancelled() => return,
                    _ = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(Duration::from_secs(30));
            }
        }
    };
    for user in pending {
        tracing::info!(user_id = %user, "resuming an erasure left pending");
        state.delivery.user_erased(&user);
        let _ = spawn(state, &user, now_ms());
    }
}
