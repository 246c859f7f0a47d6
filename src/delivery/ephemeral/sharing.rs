//! Presence of users who stop or start sharing a channel with a subscriber
//! (§9: "only users who share a channel with the subscriber are reported").
//! A PRESENCE_SUB is judged on one read when it arrives; memberships change
//! afterwards, in both directions:
//!
//! - **ended** (a leave, a removal, a ban, an erasure, a deleted channel):
//!   the last channel two users share may be gone, and the subscription
//!   would otherwise keep reporting the other until it is renewed.
//!   [`Ephemeral::hide_unshared`] shows them `offline` (no `lastSeenAt`) and
//!   stops reporting them, as a block does.
//! - **started** (an add, a join, a rejoin, a new group or direct channel):
//!   a requested id that was hidden (a stranger then, or a blocker) may now
//!   share a channel with the subscriber. [`Ephemeral::show_shared`] pushes
//!   its current presence, as a snapshot would, and reports it from then on.
//!
//! Each subscription keeps its requested ids in two sets: the shown ones
//! (`watchers`/`subscriptions`) and the hidden ones (`hidden_watchers`/
//! `hidden`), each with an index by user; both are bounded by
//! `max_presence_subscriptions` per session and emptied when the
//! subscription is replaced or ends.
//!
//! [`Ephemeral::sharing_may_have_ended`] and
//! [`Ephemeral::sharing_may_have_started`] note, on this node, the sessions
//! that requested one of the users concerned (shown or hidden) and the
//! sessions of those users that requested anyone; the node's upkeep takes
//! them ([`Ephemeral::take_sharing_checks`],
//! [`Ephemeral::take_start_checks`]) and reads once per session which of
//! them it may see. A session that subscribed again after its check was
//! taken is left alone: its new subscription was judged on its own read.
//!
//! Both directions note shown and hidden ids, so a check in flight that
//! meets a change the other way is followed by a check of that change: the
//! upkeep judges the ended checks, then takes and judges the started ones,
//! one after the other, and a started check takes only ids hidden then.

use std::collections::{HashMap, HashSet};

use axum::extract::ws::Utf8Bytes;

use super::{Ephemeral, State};
use crate::ids::UserId;
use crate::outbound::{SessionHandle, SessionId};

/// One session's requested users to judge again, with the subscription they
/// belong to (a check of an older one is ignored).
#[derive(Debug)]
pub struct SharingCheck {
    /// The subscribed session.
    pub session: SessionHandle,
    /// Users it requested whose sharing with it may have changed (never its
    /// own user).
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

    /// Forgets what was noted for `session` (its subscription ended).
    pub(super) fn forget(&mut self, session: &SessionId) {
        self.0.remove(session);
    }

    #[cfg(test)]
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Which way sharing may have changed.
#[derive(Debug, Clone, Copy)]
enum Direction {
    Ended,
    Started,
}

/// Removes `session` from `user`'s list in `index`, dropping an empty list.
/// Returns whether it was there.
pub(super) fn unlist(index: &mut HashMap<UserId, Vec<SessionHandle>>, user: &UserId, session: &SessionId) -> bool {
    let Some(list) = index.get_mut(user) else {
        return false;
    };
    let before = list.len();
    list.retain(|h| &h.id != session);
    let found = list.len() != before;
    if list.is_empty() {
        index.remove(user);
    }
    found
}

/// Removes `user` from `session`'s set in `sets`, dropping an empty set.
fn unset(sets: &mut HashMap<SessionId, Vec<UserId>>, session: &SessionId, user: &UserId) {
    if let Some(users) = sets.get_mut(session) {
        users.retain(|u| u != user);
        if users.is_empty() {
            sets.remove(session);
        }
    }
}

impl State {
    /// Notes, for the upkeep, the sessions that requested one of `users`
    /// (for it) and the sessions of `users` (for all they requested).
    fn note_sharing(&mut self, users: &[UserId], direction: Direction) {
        let State {
            watchers,
            hidden_watchers,
            subscriptions,
            hidden,
            subscribers,
            checks,
            start_checks,
            ..
        } = self;
        let pending = match direction {
            Direction::Ended => checks,
            Direction::Started => start_checks,
        };
        for user in users {
            for session in [watchers.get(user), hidden_watchers.get(user)]
                .into_iter()
                .flatten()
                .flatten()
            {
                pending.note(session, user);
            }
            let Some(sessions) = subscribers.get(user) else {
                continue;
            };
            for (id, session) in sessions {
                for requested in [subscriptions.get(id), hidden.get(id)].into_iter().flatten().flatten() {
                    pending.note(session, requested);
                }
            }
        }
    }

    /// `session` no longer sees `user`: moved from its shown ids to its
    /// hidden ones. Returns whether it was shown.
    pub(super) fn hide(&mut self, session: &SessionHandle, user: &UserId) -> bool {
        if !unlist(&mut self.watchers, user, &session.id) {
            return false;
        }
        unset(&mut self.subscriptions, &session.id, user);
        self.hidden_watchers
            .entry(user.clone())
            .or_default()
            .push(session.clone());
        self.hidden.entry(session.id.clone()).or_default().push(user.clone());
        true
    }

    /// `session` now sees `user`: moved from its hidden ids to its shown
    /// ones. Returns whether it was hidden.
    fn show(&mut self, session: &SessionHandle, user: &UserId) -> bool {
        if !unlist(&mut self.hidden_watchers, user, &session.id) {
            return false;
        }
        unset(&mut self.hidden, &session.id, user);
        self.watchers.entry(user.clone()).or_default().push(session.clone());
        self.subscriptions
            .entry(session.id.clone())
            .or_default()
            .push(user.clone());
        true
    }
}

impl Ephemeral {
    /// A membership of each of `users` ended (or a channel of theirs was
    /// deleted): notes, for the next upkeep, every session of this node that
    /// requested one of them, and every session of theirs here that
    /// requested anyone. Map work only; the reads are the upkeep's.
    pub fn sharing_may_have_ended(&self, users: &[UserId]) {
        self.lock().note_sharing(users, Direction::Ended);
    }

    /// A membership of each of `users` started (an add, a join, a rejoin, a
    /// new channel): notes, for the next upkeep, every session of this node
    /// that requested one of them, and every session of theirs here that
    /// requested anyone. Map work only; the reads are the upkeep's.
    pub fn sharing_may_have_started(&self, users: &[UserId]) {
        self.lock().note_sharing(users, Direction::Started);
    }

    /// The ended checks noted since the last call, taken (one per session).
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

    /// The started checks noted since the last call, taken (one per
    /// session), each with only the users its session has hidden now.
    pub fn take_start_checks(&self) -> Vec<SharingCheck> {
        let mut state = self.lock();
        let pending = std::mem::take(&mut state.start_checks.0);
        pending
            .into_values()
            .filter_map(|(session, users)| {
                let generation = *state.subscription_generations.get(&session.id)?;
                let hidden = state.hidden.get(&session.id)?;
                let users: Vec<UserId> = users.into_iter().filter(|u| hidden.contains(u)).collect();
                (!users.is_empty()).then_some(SharingCheck {
                    session,
                    users,
                    generation,
                })
            })
            .collect()
    }

    /// The check `check` found that its session shares no channel with
    /// `unshared` any more: each of them it still shows under the same
    /// subscription gets `offline` (no `lastSeenAt`) at once and is no
    /// longer reported to it (it is hidden, so a later start may show it
    /// again). Returns how many were hidden.
    pub fn hide_unshared(&self, check: &SharingCheck, unshared: &[UserId]) -> usize {
        let mut state = self.lock();
        let session = &check.session;
        if state.subscription_generations.get(&session.id) != Some(&check.generation) {
            return 0;
        }
        let mut hidden = 0;
        for user in unshared {
            if state.hide(session, user) {
                let text = Utf8Bytes::from(state.frame(user, false).encode());
                session.push_ephemeral(text, "PRESENCE");
                hidden += 1;
            }
        }
        hidden
    }

    /// The started check `check` found that its session may now see
    /// `visible` (they share a channel with it and do not block it, the
    /// read of a PRESENCE_SUB): each of them it still hides under the same
    /// subscription gets its current presence at once (with `lastSeenAt`
    /// as a snapshot has it; `stored` holds values read from the database
    /// for users this node knew none of) and is reported from then on.
    /// Returns how many were shown.
    pub fn show_shared(&self, check: &SharingCheck, visible: &[UserId], stored: &[(UserId, i64)]) -> usize {
        let mut state = self.lock();
        let session = &check.session;
        if state.subscription_generations.get(&session.id) != Some(&check.generation) {
            return 0;
        }
        for (user, at) in stored {
            state.record_last_seen(user, *at, false);
        }
        let mut shown = 0;
        for user in visible {
            if check.users.contains(user) && state.show(session, user) {
                let text = Utf8Bytes::from(state.frame(user, true).encode());
                session.push_ephemeral(text, "PRESENCE");
                shown += 1;
            }
        }
        shown
    }
}
