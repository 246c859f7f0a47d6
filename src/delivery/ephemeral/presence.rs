//! Presence on this node: the users it holds (a session open, or closed
//! less than `presence_grace_ms` ago), the users other nodes hold, the last
//! `lastSeenAt` known per user, and the sessions watching each user.

use std::sync::atomic::Ordering;

use axum::extract::ws::Utf8Bytes;
use tokio::time::Instant;

use super::sharing::unlist;
use super::{Ephemeral, NodeId, SessionClosed, State};
use crate::ids::{now_ms, UserId};
use crate::outbound::{SessionHandle, SessionId};
use crate::protocol::{PresenceStatus, ServerFrame};

/// Another node's hold on a user, as its heartbeats and events say.
#[derive(Debug, Clone, Copy)]
pub(super) struct RemoteHold {
    /// When the entry expires unless refreshed ([`Settings::remote_lifetime`]).
    expires: Instant,
    /// When it was last refreshed (ms): the user's `lastSeenAt` if it expires.
    refreshed_at: i64,
    /// Whether the user has an open session there; false during its grace
    /// period (still online for presence, offline for webhooks).
    sessions: bool,
}

#[derive(Debug)]
pub(super) struct LocalUser {
    sessions: usize,
    /// Tells one grace period from a later one.
    generation: u64,
    /// When the last session closed (ms), while `sessions == 0`.
    closed_at: i64,
}

impl State {
    fn online(&self, user: &UserId) -> bool {
        self.local.contains_key(user) || self.remote.get(user).is_some_and(|nodes| !nodes.is_empty())
    }

    pub(super) fn record_last_seen(&mut self, user: &UserId, at: i64, persist: bool) {
        let entry = self.last_seen.entry(user.clone()).or_insert(at);
        *entry = (*entry).max(at);
        if persist {
            self.pending_last_seen.push((user.clone(), at));
        }
    }

    /// Pushes the user's current presence to every session watching it.
    fn notify(&self, user: &UserId) {
        let Some(watchers) = self.watchers.get(user) else {
            return;
        };
        let text = Utf8Bytes::from(self.frame(user, true).encode());
        for handle in watchers {
            handle.push_ephemeral(text.clone(), "PRESENCE");
        }
    }

    /// The PRESENCE frame of `user` as a watcher sees it (`visible`: shares a
    /// channel with the watcher; a stranger is always offline, no lastSeenAt).
    pub(super) fn frame(&self, user: &UserId, visible: bool) -> ServerFrame {
        let online = visible && self.online(user);
        ServerFrame::Presence {
            user_id: user.as_str().to_owned(),
            status: if online {
                PresenceStatus::Online
            } else {
                PresenceStatus::Offline
            },
            last_seen_at: if online || !visible {
                None
            } else {
                self.last_seen.get(user).copied()
            },
        }
    }

    /// Ends the subscription of `user`'s session `session`, if any: its
    /// shown and hidden ids and the checks noted for it are forgotten.
    fn unsubscribe(&mut self, user: &UserId, session: &SessionId) {
        self.subscription_generations.remove(session);
        self.checks.forget(session);
        self.start_checks.forget(session);
        if let Some(sessions) = self.subscribers.get_mut(user) {
            sessions.remove(session);
            if sessions.is_empty() {
                self.subscribers.remove(user);
            }
        }
        for user in self.subscriptions.remove(session).into_iter().flatten() {
            unlist(&mut self.watchers, &user, session);
        }
        for user in self.hidden.remove(session).into_iter().flatten() {
            unlist(&mut self.hidden_watchers, &user, session);
        }
    }

    /// Whether no subscription is left in any of the maps (tests: nothing
    /// leaks once the sessions closed).
    #[cfg(test)]
    pub(super) fn no_subscriptions(&self) -> bool {
        self.watchers.is_empty()
            && self.subscriptions.is_empty()
            && self.hidden_watchers.is_empty()
            && self.hidden.is_empty()
            && self.subscribers.is_empty()
            && self.subscription_generations.is_empty()
            && self.checks.is_empty()
            && self.start_checks.is_empty()
    }
}

impl Ephemeral {
    // ----- presence: this node's sessions -----

    /// A session of `user` opened on this node. Returns true when the user
    /// had no open session here before (a first session, or one reopened in
    /// the grace period): the other nodes are to be told it is held with a
    /// session again.
    pub fn session_opened(&self, user: &UserId) -> bool {
        let mut state = self.lock();
        let was_online = state.online(user);
        state.next_generation += 1;
        let generation = state.next_generation;
        let first = match state.local.get_mut(user) {
            Some(local) => {
                local.sessions += 1;
                // A reconnect within the grace period: that period is over.
                local.generation = generation;
                local.sessions == 1
            }
            None => {
                state.local.insert(
                    user.clone(),
                    LocalUser {
                        sessions: 1,
                        generation,
                        closed_at: 0,
                    },
                );
                true
            }
        };
        if !was_online {
            state.notify(user);
        }
        first
    }

    /// A session of `user` closed on this node: its subscription ends; when
    /// it was the user's last session here, the grace period starts and the
    /// user's typing here ends.
    pub fn session_closed(&self, user: &UserId, session: &SessionId) -> SessionClosed {
        let mut state = self.lock();
        state.unsubscribe(user, session);
        let mut closed = SessionClosed::default();
        let Some(local) = state.local.get_mut(user) else {
            return closed;
        };
        local.sessions = local.sessions.saturating_sub(1);
        if local.sessions > 0 {
            return closed;
        }
        local.closed_at = now_ms();
        closed.grace = Some(local.generation);
        let now = Instant::now();
        for ((typer, channel), typing) in state.typing.iter_mut() {
            if typer == user && typing.until.take().is_some_and(|until| until > now) {
                closed.typing_stops.push((channel.clone(), typing.members.clone()));
            }
        }
        closed
    }

    /// The grace period `generation` of `user` ended. When no session of the
    /// user reopened here meanwhile, this node lets go of the user: returns
    /// the user's `lastSeenAt` (the other nodes are to be told), queues it for
    /// the database, and tells the watchers when no other node holds the
    /// user either.
    pub fn grace_over(&self, user: &UserId, generation: u64) -> Option<i64> {
        let mut state = self.lock();
        let local = state.local.get(user)?;
        if local.sessions > 0 || local.generation != generation {
            return None;
        }
        let closed_at = local.closed_at;
        state.local.remove(user);
        state.record_last_seen(user, closed_at, true);
        if !state.online(user) {
            state.notify(user);
        }
        Some(closed_at)
    }

    /// Those of `members` with no open session on any node, in their order
    /// (webhooks' `offlineMembers`, asked by the commit path). On this node
    /// a user counts while a session is open (not during the grace period),
    /// and so on another node, which announces the start of a user's grace
    /// period ([`Self::remote_idle`]). One lock for the whole list.
    pub fn offline_among(&self, members: &[UserId]) -> Vec<UserId> {
        let state = self.lock();
        members
            .iter()
            .filter(|user| {
                let here = state.local.get(*user).is_some_and(|local| local.sessions > 0);
                let elsewhere = state
                    .remote
                    .get(*user)
                    .is_some_and(|nodes| nodes.values().any(|hold| hold.sessions));
                !here && !elsewhere
            })
            .cloned()
            .collect()
    }

    /// The users this node holds (for its heartbeat), each with whether it
    /// has an open session here (false: in its grace period).
    pub fn held_users(&self) -> Vec<(UserId, bool)> {
        self.lock()
            .local
            .iter()
            .map(|(user, local)| (user.clone(), local.sessions > 0))
            .collect()
    }

    // ----- presence: other nodes -----

    /// Node `node` holds `users` with an open session (a heartbeat or an
    /// online event): each entry lives [`Settings::remote_lifetime`] from now.
    pub fn remote_held(&self, node: &NodeId, users: &[UserId]) {
        self.remote_hold(node, users, true);
    }

    /// Node `node` holds `users` with no open session: their grace period
    /// there started (or a heartbeat says it goes on). Still online, but no
    /// longer counted by [`Self::offline_among`] as having a session.
    pub fn remote_idle(&self, node: &NodeId, users: &[UserId]) {
        self.remote_hold(node, users, false);
    }

    fn remote_hold(&self, node: &NodeId, users: &[UserId], sessions: bool) {
        if node == &self.node {
            return;
        }
        let hold = RemoteHold {
            expires: Instant::now() + self.settings.remote_lifetime(),
            refreshed_at: now_ms(),
            sessions,
        };
        let mut state = self.lock();
        for user in users {
            let was_online = state.online(user);
            state.remote.entry(user.clone()).or_default().insert(node.clone(), hold);
            if !was_online {
                state.notify(user);
            }
        }
    }

    /// Node `node` let go of `user`, last seen at `last_seen`.
    pub fn remote_released(&self, node: &NodeId, user: &UserId, last_seen: i64) {
        let mut state = self.lock();
        state.record_last_seen(user, last_seen, false);
        let Some(nodes) = state.remote.get_mut(user) else {
            return;
        };
        if nodes.remove(node).is_none() {
            return;
        }
        if nodes.is_empty() {
            state.remote.remove(user);
        }
        if !state.online(user) {
            state.notify(user);
        }
    }

    /// Node `node` is shutting down: its users' sessions are moving to other
    /// nodes, so its entries live at most another `presence_grace`.
    pub fn remote_leaving(&self, node: &NodeId) {
        let until = Instant::now() + self.settings.presence_grace;
        let mut state = self.lock();
        for nodes in state.remote.values_mut() {
            if let Some(hold) = nodes.get_mut(node) {
                hold.expires = hold.expires.min(until);
            }
        }
    }

    /// Ends what has run out at `now`: other nodes' entries not refreshed in
    /// time (those users go offline here unless held elsewhere; their
    /// `lastSeenAt` is the last time a heartbeat held them) and typing
    /// entries past both their throttle and their lifetime.
    pub fn expire(&self, now: Instant) {
        let mut state = self.lock();
        let mut gone = Vec::new();
        state.remote.retain(|user, nodes| {
            nodes.retain(|_, hold| {
                if hold.expires <= now {
                    gone.push((user.clone(), hold.refreshed_at));
                    false
                } else {
                    true
                }
            });
            !nodes.is_empty()
        });
        for (user, at) in gone {
            state.record_last_seen(&user, at, true);
            if !state.online(&user) {
                state.notify(&user);
            }
        }
        let throttle = self.settings.typing_throttle;
        state
            .typing
            .retain(|_, t| t.forwarded_at + throttle > now || t.until.is_some_and(|until| until > now));
        self.typing_entries.store(state.typing.len(), Ordering::Release);
    }

    // ----- presence: subscriptions -----

    /// Replaces `session`'s subscription: it watches `visible` (the listed
    /// users that share a channel with it) from now on, and gets one PRESENCE
    /// per id of `listed` at once (strangers: offline, no `lastSeenAt`); the
    /// other listed ids are kept hidden, for a membership that starts to
    /// show them ([`super::sharing`]).
    /// `stored` holds `lastSeenAt` values read from the database for listed
    /// users this node knew none of. Done under the lock, so no change falls
    /// between the snapshot and the watching.
    pub fn subscribe(
        &self,
        session: &SessionHandle,
        listed: &[UserId],
        visible: &std::collections::HashSet<UserId>,
        stored: &[(UserId, i64)],
    ) {
        let mut state = self.lock();
        for (user, at) in stored {
            state.record_last_seen(user, *at, false);
        }
        state.unsubscribe(&session.user_id, &session.id);
        state.next_generation += 1;
        let generation = state.next_generation;
        state.subscription_generations.insert(session.id.clone(), generation);
        let (mut watched, mut hidden) = (Vec::new(), Vec::new());
        for user in listed {
            let shown = visible.contains(user);
            session.push_ephemeral(Utf8Bytes::from(state.frame(user, shown).encode()), "PRESENCE");
            if shown {
                state.watchers.entry(user.clone()).or_default().push(session.clone());
                watched.push(user.clone());
            } else {
                state
                    .hidden_watchers
                    .entry(user.clone())
                    .or_default()
                    .push(session.clone());
                hidden.push(user.clone());
            }
        }
        let any = !watched.is_empty() || !hidden.is_empty();
        if !watched.is_empty() {
            state.subscriptions.insert(session.id.clone(), watched);
        }
        if !hidden.is_empty() {
            state.hidden.insert(session.id.clone(), hidden);
        }
        if any {
            state
                .subscribers
                .entry(session.user_id.clone())
                .or_default()
                .insert(session.id.clone(), session.clone());
        }
    }

    /// `blocker` now blocks `blocked` (§17): every session of `blocked` on
    /// this node that watches `blocker` gets `blocker` `offline` (no
    /// `lastSeenAt`) at once and stops watching it (it is hidden, as a
    /// stranger is); its next PRESENCE_SUB, or a membership that starts
    /// after an unblock, judges the block again. Doing nothing when no such
    /// session watches.
    pub fn hide_blocker(&self, blocked: &UserId, blocker: &UserId) {
        let mut state = self.lock();
        let of_blocked: Vec<SessionHandle> = state
            .watchers
            .get(blocker)
            .into_iter()
            .flatten()
            .filter(|h| &h.user_id == blocked)
            .cloned()
            .collect();
        if of_blocked.is_empty() {
            return;
        }
        let text = Utf8Bytes::from(state.frame(blocker, false).encode());
        for handle in of_blocked {
            if state.hide(&handle, blocker) {
                handle.push_ephemeral(text.clone(), "PRESENCE");
            }
        }
    }

    /// The listed users whose `lastSeenAt` this node does not know and who
    /// are not online (their snapshot needs the database's value).
    pub fn unknown_last_seen(&self, users: &[UserId]) -> Vec<UserId> {
        let state = self.lock();
        users
            .iter()
            .filter(|u| !state.online(u) && !state.last_seen.contains_key(*u))
            .cloned()
            .collect()
    }

    /// `lastSeenAt` values waiting for the database, taken.
    pub fn take_pending_last_seen(&self) -> Vec<(UserId, i64)> {
        std::mem::take(&mut self.lock().pending_last_seen)
    }

    /// At shutdown: every user whose last session here closed (still in its
    /// grace period) gets `lastSeenAt` = that close, with what was pending.
    pub fn drain_last_seen(&self) -> Vec<(UserId, i64)> {
        let mut state = self.lock();
        let closed: Vec<(UserId, i64)> = state
            .local
            .iter()
            .filter(|(_, l)| l.sessions == 0)
            .map(|(u, l)| (u.clone(), l.closed_at))
            .collect();
        let mut out = std::mem::take(&mut state.pending_last_seen);
        out.extend(closed);
        out
    }
}
