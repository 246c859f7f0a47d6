//! The rules that decide each entry of a batch, in one place for both write
//! paths: the per-row path (every SQLite batch, and PostgreSQL batches that
//! repeat or hit a stored key) and PostgreSQL's set-based path. Each path
//! reads the state (the channel's members under its lock, the entry's
//! target) its own way and writes the outcome its own way; what is allowed,
//! in which order the checks run and how a reaction moves its holders and
//! counts is decided here, against the state the earlier entries of the
//! batch left.
//!
//! A new rule of the log (version 1.2: roles, mute, slow mode,
//! `postingRole`, replies, attachments, mentions) is added here, once.

use super::{Change, Entry, EntryKind, EntryOutcome, NewEntry};
use crate::ids::{ChannelId, UserId};
use crate::permissions::{self, Action, Actor, Role};

/// An entry's target as far as the §8 checks look at it, as the batch has
/// left it so far.
#[derive(Debug, Clone)]
pub(super) struct TargetState {
    pub(super) kind: EntryKind,
    pub(super) deleted: bool,
    pub(super) channel_id: ChannelId,
    pub(super) sender_id: UserId,
}

impl From<Entry> for TargetState {
    fn from(stored: Entry) -> Self {
        Self {
            kind: stored.kind,
            deleted: stored.deleted,
            channel_id: stored.channel_id,
            sender_id: stored.sender_id,
        }
    }
}

/// Why `send` may not be stored, or `None` when it may. `role`: the
/// sender's role in the channel, known (and locked); `None` when the
/// channel is unknown or the sender is not a member.
/// `target`: for an entry about a message, that message's state (`None`:
/// no stored entry has its id); not looked at for a `message`.
///
/// The order is the contract's (§8): the target's own refusals first
/// (unknown or deleted: `TargetNotFound`; not a `message` entry:
/// `TargetNotAMessage`), then membership of the target's channel
/// (`Forbidden`), then ownership for an edit, or for a delete unless the
/// sender's role may delete anyone's message (§13.1: a moderator or
/// owner) (`NotTheSender`).
/// The idempotency key is decided before any of these, by the caller: a
/// stored key answers the send whatever these rules say.
pub(super) fn refusal(send: &NewEntry, role: Option<Role>, target: Option<&TargetState>) -> Option<EntryOutcome> {
    let may_send = permissions::may(Actor::User(role), Action::Send).is_ok();
    if send.change.target().is_none() {
        return (!may_send).then_some(EntryOutcome::Forbidden);
    }
    let Some(target) = target else {
        return Some(EntryOutcome::TargetNotFound);
    };
    if target.kind != EntryKind::Message {
        return Some(EntryOutcome::TargetNotAMessage);
    }
    if target.deleted {
        return Some(EntryOutcome::TargetNotFound);
    }
    if target.channel_id != send.channel_id || !may_send {
        return Some(EntryOutcome::Forbidden);
    }
    let own = target.sender_id == send.sender_id;
    let moderates = || permissions::may(Actor::User(role), Action::DeleteAnyMessage).is_ok();
    match send.change {
        Change::Edit { .. } if !own => Some(EntryOutcome::NotTheSender),
        Change::Delete { .. } if !own && !moderates() => Some(EntryOutcome::NotTheSender),
        _ => None,
    }
}

/// A reaction count and the seq of its first use (`None`: no one holds it).
pub(super) type Count = Option<(i64, i64)>;

/// Whether a reaction entry (`add`, or remove) by a user who `held` it
/// before changes anything: an `add` of a held reaction and a `remove` of
/// one not held are stored as no-op entries (§8).
pub(super) fn reaction_changes(held: bool, add: bool) -> bool {
    held != add
}

/// The count of a (target, emoji) pair after a reaction entry at `seq` that
/// changed something (`add`: one more holder, else one fewer). The first
/// use is the seq at which the count last rose from 0.
pub(super) fn next_count(count: Count, add: bool, seq: i64) -> Count {
    match (count, add) {
        (None, true) => Some((1, seq)),
        (Some((n, first)), true) => Some((n + 1, first)),
        (Some((1, _)), false) | (None, false) => None,
        (Some((n, first)), false) => Some((n - 1, first)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ClientMsgId;

    fn entry(change: Change, sender: &str) -> NewEntry {
        NewEntry {
            sender_id: UserId::parse(sender).expect("user"),
            channel_id: ChannelId::parse("room").expect("channel"),
            client_msg_id: ClientMsgId::parse("k").expect("key"),
            body: String::new(),
            change,
        }
    }

    fn target(kind: EntryKind, deleted: bool, channel: &str, sender: &str) -> TargetState {
        TargetState {
            kind,
            deleted,
            channel_id: ChannelId::parse(channel).expect("channel"),
            sender_id: UserId::parse(sender).expect("user"),
        }
    }

    #[test]
    fn a_message_needs_only_membership() {
        let send = entry(Change::Message, "alice");
        assert!(refusal(&send, Some(Role::Member), None).is_none());
        assert!(matches!(refusal(&send, None, None), Some(EntryOutcome::Forbidden)));
    }

    #[test]
    fn an_entrys_checks_run_in_the_contracts_order() {
        let t = uuid::Uuid::from_u128(1);
        let edit = entry(Change::Edit { target: t }, "alice");
        let mine = target(EntryKind::Message, false, "room", "alice");
        // The target's own refusals come before membership.
        assert!(matches!(refusal(&edit, None, None), Some(EntryOutcome::TargetNotFound)));
        let not_a_message = target(EntryKind::Reaction, false, "room", "alice");
        assert!(matches!(
            refusal(&edit, None, Some(&not_a_message)),
            Some(EntryOutcome::TargetNotAMessage)
        ));
        let deleted = target(EntryKind::Message, true, "room", "alice");
        assert!(matches!(
            refusal(&edit, None, Some(&deleted)),
            Some(EntryOutcome::TargetNotFound)
        ));
        assert!(matches!(
            refusal(&edit, None, Some(&mine)),
            Some(EntryOutcome::Forbidden)
        ));
        let elsewhere = target(EntryKind::Message, false, "other", "alice");
        assert!(matches!(
            refusal(&edit, Some(Role::Member), Some(&elsewhere)),
            Some(EntryOutcome::Forbidden)
        ));
        assert!(refusal(&edit, Some(Role::Member), Some(&mine)).is_none());
        // Only the sender edits or deletes; any member reacts.
        let bobs = target(EntryKind::Message, false, "room", "bob");
        assert!(matches!(
            refusal(&edit, Some(Role::Member), Some(&bobs)),
            Some(EntryOutcome::NotTheSender)
        ));
        let delete = entry(Change::Delete { target: t }, "alice");
        assert!(matches!(
            refusal(&delete, Some(Role::Member), Some(&bobs)),
            Some(EntryOutcome::NotTheSender)
        ));
        let react = entry(
            Change::React {
                target: t,
                emoji: "👍".into(),
                add: true,
            },
            "alice",
        );
        assert!(refusal(&react, Some(Role::Member), Some(&bobs)).is_none());
        // A moderator or owner deletes anyone's message, edits only its own.
        for role in [Role::Moderator, Role::Owner] {
            assert!(refusal(&delete, Some(role), Some(&bobs)).is_none(), "{role}");
            assert!(matches!(
                refusal(&edit, Some(role), Some(&bobs)),
                Some(EntryOutcome::NotTheSender)
            ));
        }
    }

    #[test]
    fn reactions_move_holders_and_counts() {
        assert!(reaction_changes(false, true));
        assert!(!reaction_changes(true, true), "an add of a held reaction is a no-op");
        assert!(!reaction_changes(false, false), "a remove of one not held is a no-op");
        assert_eq!(next_count(None, true, 7), Some((1, 7)));
        assert_eq!(next_count(Some((1, 7)), true, 9), Some((2, 7)), "first use kept");
        assert_eq!(next_count(Some((2, 7)), false, 9), Some((1, 7)));
        assert_eq!(next_count(Some((1, 7)), false, 9), None);
    }
}
