//! Presence subscriptions judged again when memberships change (§9: "only
//! users who share a channel with the subscriber are reported"), the
//! [`Delivery`] side of [`ephemeral`]'s sharing checks: the commit paths
//! say which users' memberships ended or started, every node notes its
//! sessions concerned, and the node's upkeep reads once per noted session
//! ([`check_sharing`]) with the same read a PRESENCE_SUB uses
//! ([`shown_among`]).

use std::collections::HashSet;

use super::{ephemeral, Delivery};
use crate::ids::UserId;
use crate::store::{Store, StoreError};

impl Delivery {
    /// A membership of each of `users` ended, or a channel of theirs was
    /// deleted: on every node, the sessions that requested one of them and
    /// their own sessions that requested anyone are judged again by the
    /// next upkeep, and shown `offline` whom they no longer share a channel
    /// with ([`ephemeral::Ephemeral::sharing_may_have_ended`]).
    pub fn sharing_may_have_ended(&self, users: &[UserId]) {
        if users.is_empty() {
            return;
        }
        self.ephemeral().sharing_may_have_ended(users);
        if let Delivery::Nats(cluster) = self {
            cluster.sharing_may_have_ended(users);
        }
    }

    /// A membership of each of `users` started (an add, a join, a rejoin, a
    /// new channel), or one of them unblocked someone: on every node, the
    /// sessions that requested one of them and their own sessions that
    /// requested anyone are judged again by the next upkeep, and shown
    /// (their current presence, then every change) those hidden users they
    /// may now see ([`ephemeral::Ephemeral::sharing_may_have_started`]).
    pub fn sharing_may_have_started(&self, users: &[UserId]) {
        if users.is_empty() {
            return;
        }
        self.ephemeral().sharing_may_have_started(users);
        if let Delivery::Nats(cluster) = self {
            cluster.sharing_may_have_started(users);
        }
    }
}

/// Which of `others` a PRESENCE_SUB of `me` shows: those sharing a channel
/// with `me` and not blocking `me` (§17), in no particular order (never
/// `me` itself: the caller adds it when listed). Two reads, none when
/// `others` is empty.
///
/// # Errors
/// The store's error.
pub async fn shown_among(store: &Store, me: &UserId, others: &[UserId]) -> Result<HashSet<UserId>, StoreError> {
    let mut shown: HashSet<UserId> = store.sharing_a_channel(me, others).await?.into_iter().collect();
    shown.remove(me);
    // A user who blocks the subscriber is shown offline to it (§17).
    let sharing: Vec<UserId> = shown.iter().cloned().collect();
    for blocker in store.blockers_among(me, &sharing).await? {
        shown.remove(&blocker);
    }
    Ok(shown)
}

/// Judges the sharing checks noted since the last tick, ended ones first,
/// then started ones (the order [`ephemeral`]'s sharing module relies on):
/// - ended: one read per watching session of which users it watches still
///   share a channel with it; the others are hidden from it
///   ([`ephemeral::Ephemeral::hide_unshared`]);
/// - started: one read per session ([`shown_among`]) of which users hidden
///   from it it may now see, and their `lastSeenAt` as a snapshot reads it;
///   those are shown ([`ephemeral::Ephemeral::show_shared`]).
///
/// A read that fails leaves that session's subscription as it is (logged;
/// its next PRESENCE_SUB judges).
pub(super) async fn check_sharing(store: &Store, ephemeral: &ephemeral::Ephemeral) {
    for check in ephemeral.take_sharing_checks() {
        match store.sharing_a_channel(&check.session.user_id, &check.users).await {
            Ok(sharing) => {
                let unshared: Vec<UserId> = check.users.iter().filter(|u| !sharing.contains(u)).cloned().collect();
                if !unshared.is_empty() {
                    ephemeral.hide_unshared(&check, &unshared);
                }
            }
            Err(error) => tracing::warn!(%error, "cannot judge a presence subscription after a membership ended"),
        }
    }
    for check in ephemeral.take_start_checks() {
        let shown = match shown_among(store, &check.session.user_id, &check.users).await {
            Ok(shown) => shown.into_iter().collect::<Vec<UserId>>(),
            Err(error) => {
                tracing::warn!(%error, "cannot judge a presence subscription after a membership started");
                continue;
            }
        };
        if shown.is_empty() {
            continue;
        }
        let unknown = ephemeral.unknown_last_seen(&shown);
        match store.last_seen(&unknown).await {
            Ok(stored) => {
                ephemeral.show_shared(&check, &shown, &stored);
            }
            Err(error) => tracing::warn!(%error, "cannot read lastSeenAt for a presence subscription"),
        }
    }
}
