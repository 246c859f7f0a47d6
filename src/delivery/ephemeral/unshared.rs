//! Presence of users who stop sharing a channel (§9: "only users who share a
//! channel with the subscriber are reported"): a membership that ends (a
//! leave, a removal, a ban, an erasure, a deleted channel) may end the last
//! channel two users share, and a subscription made while they shared one
//! would otherwise keep reporting the other until it is renewed.
//!
//! [`Ephemeral::sharing_may_have_ended`] notes, on this node, the sessions
//! that watch one of the users concerned and the sessions of those users
//! that watch anyone; the node's upkeep takes them
//! ([`Ephemeral::take_sharing_checks`]), reads once per session which of the
//! watched users still share a channel with it, and
//! [`Ephemeral::hide_unshared`] shows the others `offline` (no `lastSeenAt`)
//! and stops reporting them, as a block does. A session that subscribed
//! again after its check was taken is left alone: its new subscription was
//! judged on its own read.

use std::collections::{HashMap, HashSet};

use axum::extract::ws::Utf8Bytes;

use super::Ephemeral;
use crate::ids::UserId;
use crate::outbound::{SessionHandle, SessionId};

/// One session's watched users to judge again, with the subscription they
/// belong to ([`Ephemeral::hide_unshared`] ignores a check of an older one).
#[derive(Debug)]
pub struct SharingCheck {
    /// The watching session.
    pub session: SessionHandle,
    /// Users it watches whose sharing with it may have ended (never its own user).
    pub users: Vec<UserId>,
    /// Its subscription's generation when the check was taken.
    generation: u64,
}

/// The checks noted since the upkeep last took them, per session.
#[derive(Debug, Default)]
pub(super) struct PendingChecks(HashMap<SessionId, (SessionHandle, HashSet<UserId>)>);

impl PendingChecks {
    fn note(&mut self, session: &SessionHandle, user: &UserId) {
        if &session.user_id == user {
            return;
        }
        self.0
            .entry(session.id.clone())
            .or_insert_with(|| (session.clone(), HashSet::new()))
            .1
            .insert(user.clone());
    }
}

impl Ephemeral {
    /// A membership of each of `users` ended (or a channel of theirs was
    /// deleted): notes, for the next upkeep, every session of this node that
    /// watches one of them, and every session of theirs here that watches
    /// anyone. Map work only; the reads are the upkeep's.
    pub fn sharing_may_have_ended(&self, users: &[UserId]) {
        let mut state = self.lock();
        let state = &mut *state;
        for user in users {
            if let Some(watchers) = state.watchers.get(user) {
                for session in watchers {
                    state.checks.note(session, user);
                }
            }
        }
        for user in users {
            let Some(sessions) = state.subscribers.get(user) else {
                continue;
            };
            for (id, session) in sessions {
                for watched in state.subscriptions.get(id).into_iter().flatten() {
                    state.checks.note(session, watched);
                }
            }
        }
    }

    /// The checks noted since the last call, taken (one per session).
    pub fn take_sharing_checks(&self) -> Vec<SharingCheck> {
        let mut state = self.lock();
        let pending = std::mem::take(&mut state.checks.0);
        pending
            .into_values()
            .filter_map(|(session, users)| {
                let generation = *state.subscription_generations.get(&session.id)?;
                Some(SharingCheck {
                    session,
                    users: users.into_iter().collect(),
                    generation,
                })
            })
            .collect()
    }

    /// The check `check` found that its session shares no channel with
    /// `unshared` any more: each of them it still watches under the same
    /// subscription gets `offline` (no `lastSeenAt`) at once and is no
    /// longer reported to it. Returns how many were hidden.
    pub fn hide_unshared(&self, check: &SharingCheck, unshared: &[UserId]) -> usize {
        let mut state = self.lock();
        let session = &check.session;
        if state.subscription_generations.get(&session.id) != Some(&check.generation) {
            return 0;
        }
        let mut hidden = 0;
        for user in unshared {
            let Some(watchers) = state.watchers.get_mut(user) else {
                continue;
            };
            let before = watchers.len();
            watchers.retain(|h| h.id != session.id);
            if watchers.len() == before {
                continue;
            }
            if watchers.is_empty() {
                state.watchers.remove(user);
            }
            if let Some(watched) = state.subscriptions.get_mut(&session.id) {
                watched.retain(|u| u != user);
                if watched.is_empty() {
                    state.subscriptions.remove(&session.id);
                }
            }
            let text = Utf8Bytes::from(state.frame(user, false).encode());
            session.push_ephemeral(text, "PRESENCE");
            hidden += 1;
        }
        hidden
    }
}
