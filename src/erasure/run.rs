//! One erasure's work, in rounds of at most `erasure_batch` (see the
//! module above): every round is idempotent, so a failed one is simply done
//! again, here after a pause or by the next start of the server.

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use tokio::sync::oneshot;

use super::watermarks::REFRESH;
use crate::commit::answer::SendAnswer;
use crate::commit::{ReplyTo, SendJob};
use crate::ids::{now_ms, ChannelId, ClientMsgId, UserId};
use crate::state::AppState;
use crate::store::{Change, MembershipChange, NewEntry, Origin, Store, StoreError};

/// Why a pass of the erasure stopped before the end.
#[derive(Debug, thiserror::Error)]
enum PassError {
    /// A store call failed: the pass is tried again after a pause.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A round changed nothing although work was left (each entry refused
    /// for a reason that does not go away by itself): tried again later.
    #[error("{0} entries of the user were refused; retrying later")]
    Stuck(usize),
    /// The server is shutting down: the erasure stays pending.
    #[error("the server is shutting down")]
    Stopped,
}

/// Erases `user`, whose watermark was stored at `started` (ms), until
/// done; returns `false` when the server shut down first (the erasure
/// stays pending and is resumed at the next start).
pub(super) async fn erase(state: &AppState, user: &UserId, started: i64) -> bool {
    let began = Instant::now();
    let mut backoff = Duration::from_millis(200);
    loop {
        match pass(state, user).await {
            Ok(()) => break,
            Err(PassError::Stopped) => {
                tracing::info!(user_id = %user, "erasure interrupted by shutdown; resumed at the next start");
                return false;
            }
            Err(error) => {
                tracing::warn!(user_id = %user, %error, "erasure round failed; retrying");
                tokio::select! {
                    _ = state.shutdown.cancelled() => return false,
                    _ = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(Duration::from_secs(30));
            }
        }
    }
    // Every node reads the watermark within REFRESH: the answer waits for
    // that, so no node takes an old token once the erasure is answered.
    if matches!(state.store, Store::Postgres(_)) {
        let settle = (REFRESH * 2).saturating_sub(began.elapsed());
        tokio::time::sleep(settle).await;
    }
    // A session opened with an old token on a node that had not read the
    // watermark yet is closed now.
    state.delivery.user_erased(user);
    tracing::info!(
        user_id = %user,
        started,
        elapsed_ms = began.elapsed().as_millis() as u64,
        "user erased"
    );
    true
}

/// One pass over everything the user left; `Ok` when all of it is erased
/// and the pending mark cleared.
async fn pass(state: &AppState, user: &UserId) -> Result<(), PassError> {
    let batch = state.config.erasure_batch;
    delete_messages(state, user, batch).await?;
    remove_reactions(state, user, batch).await?;
    // No membership is gained while the erasure is pending (the store
    // refuses adds and joins, `StoreError::Erasing`), but one committed
    // just as the erasure began may be missed by a read of the channels:
    // ended, and what was sent there deleted, until a read finds none.
    loop {
        end_memberships(state, user, batch).await?;
        // Anything a session stored before it was closed is found now: with
        // no membership left, nothing more can come.
        delete_messages(state, user, batch).await?;
        remove_reactions(state, user, batch).await?;
        if state.store.erasure_channels(user).await?.is_empty() {
            break;
        }
    }
    state.store.erase_user_rows(user, now_ms()).await?;
    while state.store.erase_user_keys(user, batch).await? > 0 {
        stop_if_shutting_down(state)?;
    }
    let finished = now_ms();
    state.store.finish_erasure(user, finished).await?;
    state.auth.erased().record(user, finished);
    Ok(())
}

fn stop_if_shutting_down(state: &AppState) -> Result<(), PassError> {
    if state.shutdown.is_cancelled() {
        return Err(PassError::Stopped);
    }
    Ok(())
}

/// Deletes the user's messages as `MSG_DELETE` does, a round of at most
/// `batch` at a time, until none is left.
async fn delete_messages(state: &AppState, user: &UserId, batch: u32) -> Result<(), PassError> {
    loop {
        stop_if_shutting_down(state)?;
        let left = state.store.erasure_messages(user, batch).await?;
        if left.is_empty() {
            return Ok(());
        }
        let changes = left
            .into_iter()
            .map(|(channel, target)| (channel, Change::Delete { target }))
            .collect();
        commit_round(state, user, changes).await?;
    }
}

/// Removes the user's reactions (a `reaction` entry `op: "remove"` each),
/// a round of at most `batch` at a time, until none is left.
async fn remove_reactions(state: &AppState, user: &UserId, batch: u32) -> Result<(), PassError> {
    loop {
        stop_if_shutting_down(state)?;
        let left = state.store.erasure_reactions(user, batch).await?;
        if left.is_empty() {
            return Ok(());
        }
        let changes = left
            .into_iter()
            .map(|(channel, target, emoji)| {
                (
                    channel,
                    Change::React {
                        target,
                        emoji,
                        add: false,
                    },
                )
            })
            .collect();
        commit_round(state, user, changes).await?;
    }
}

/// Stores one round of entries by `user` on the admin token's authority
/// (`byAdmin`), each on its channel's commit task, and waits for all of
/// them. A refusal for a target deleted meanwhile is fine (the next listing
/// no longer holds it); a round where nothing was stored is an error.
async fn commit_round(state: &AppState, user: &UserId, changes: Vec<(ChannelId, Change)>) -> Result<(), PassError> {
    let count = changes.len();
    let mut answers = Vec::with_capacity(count);
    for (channel, change) in changes {
        let key = ClientMsgId::parse(&format!("erase-{}", uuid::Uuid::now_v7()))
            .map_err(|e| StoreError::Corrupt(format!("erasure key: {e}")))?;
        let (reply_to, answered) = oneshot::channel();
        let job = SendJob {
            message: NewEntry {
                sender_id: user.clone(),
                channel_id: channel,
                client_msg_id: key,
                body: String::new(),
                change,
                mentions: Default::default(),
                origin: Origin::Admin,
                attachments: Vec::new(),
            },
            reply_to: ReplyTo::Caller(reply_to),
            received: Instant::now(),
        };
        if state.commits.submit(job).await.is_err() {
            return Err(PassError::Stopped);
        }
        answers.push(answered);
    }
    let mut stored = 0usize;
    for answer in join_all(answers).await {
        match answer {
            Ok(SendAnswer::Acked { .. }) => stored += 1,
            Ok(SendAnswer::Refused(frame)) => {
                tracing::debug!(user_id = %user, code = ?frame.code, "an erasure entry was refused");
            }
            Err(_) => return Err(PassError::Stopped),
        }
    }
    if stored == 0 {
        return Err(PassError::Stuck(count));
    }
    Ok(())
}

/// Ends each of the user's memberships (a `MEMBER` `leave` each, in the
/// channel's commit order), at most `batch` at a time.
async fn end_memberships(state: &AppState, user: &UserId, batch: u32) -> Result<(), PassError> {
    state.store.forget_direct_pairs(user).await?;
    let channels = state.store.erasure_channels(user).await?;
    for round in channels.chunks(batch as usize) {
        stop_if_shutting_down(state)?;
        let changes = round.iter().map(|channel| {
            state
                .commits
                .change_membership(channel, user, MembershipChange::Erase, None)
        });
        for outcome in join_all(changes).await {
            match outcome {
                Ok(_) | Err(crate::commit::MembershipError::Store(StoreError::NotFound)) => {}
                Err(crate::commit::MembershipError::Store(error)) => return Err(error.into()),
                Err(crate::commit::MembershipError::Stopped) => return Err(PassError::Stopped),
            }
        }
    }
    Ok(())
}
