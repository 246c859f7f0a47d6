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
//! `postingRole`, blocks, replies, attachments, mentions) is added here, once.

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

/// A channel's settings the rules read under its lock (§17): who may store
/// `message` entries and the slow mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct ChannelRules {
    /// `member` (anyone) or `moderator` (an announcement channel: members'
    /// `message` entries are refused with `read_only`).
    pub(super) posting_role: Role,
    /// At least this many ms between two `message` entries of one `member`
    /// (0: off).
    pub(super) slow_mode_ms: i64,
}

/// What the rules know of a sender who is a member, read under the
/// channel's lock and moved by the batch's earlier entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SenderState {
    pub(super) role: Role,
    /// Muted until then (ms); a time in the past is no mute.
    pub(super) muted_until: Option<i64>,
    /// The `ts` of the sender's last stored `message` entry in the channel,
    /// when known (kept while the channel is in slow mode).
    pub(super) last_message_ts: Option<i64>,
    /// A direct channel's other member blocks the sender.
    pub(super) blocked: bool,
}

impl SenderState {
    /// A member with `role` and nothing else known.
    #[cfg(test)]
    pub(super) fn member(role: Role) -> Self {
        Self {
            role,
            muted_until: None,
            last_message_ts: None,
            blocked: false,
        }
    }
}

/// Why `send` may not be stored at `now` (ms), or `None` when it may.
/// `sender`: what is known of the sender in the channel (locked); `None`
/// when the channel is unknown or the sender is not a member. `rules`: the
/// channel's settings (default for an unknown channel). `target`: for an
/// entry about a message, that message's state (`None`: no stored entry has
/// its id); not looked at for a `message`.
///
/// The order is the contract's (§8): the target's own refusals first
/// (unknown or deleted: `TargetNotFound`; not a `message` entry:
/// `TargetNotAMessage`), then membership of the target's channel
/// (`Forbidden`), then ownership for an edit, or for a delete unless the
/// sender's role may delete anyone's message (§13.1: a moderator or
/// owner) (`NotTheSender`). Then moderation (§17), for every kind but a
/// delete (a muted or blocked member may still take its own words back):
/// a mute in force (`Muted`), a block of the sender in a direct channel
/// (`Blocked`), and for a `message` entry an announcement channel's
/// `postingRole` (`ReadOnly`) and the slow mode of a `member` (`SlowMode`).
/// The idempotency key is decided before any of these, by the caller: a
/// stored key answers the send whatever these rules say.
pub(super) fn refusal(
    send: &NewEntry,
    sender: Option<&SenderState>,
    rules: &ChannelRules,
    target: Option<&TargetState>,
    now: i64,
) -> Option<EntryOutcome> {
    let role = sender.map(|s| s.role);
    let may_send = permissions::may(Actor::User(role), Action::Send).is_ok();
    if send.change.target().is_none() {
        if !may_send {
            return Some(EntryOutcome::Forbidden);
        }
        return sender.and_then(|s| moderation(send, s, rules, now));
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
        Change::Delete { .. } => None,
        _ => sender.and_then(|s| moderation(send, s, rules, now)),
    }
}

/// The moderation rules of §17 for a member's entry other than a delete.
fn moderation(send: &NewEntry, sender: &SenderState, rules: &ChannelRules, now: i64) -> Option<EntryOutcome> {
    if let Some(until) = sender.muted_until.filter(|&until| until > now) {
        return Some(EntryOutcome::Muted {
            retry_after_ms: until - now,
        });
    }
    if sender.blocked {
        return Some(EntryOutcome::Blocked);
    }
    if send.change != Change::Message {
        return None;
    }
    if sender.role < rules.posting_role {
        return Some(EntryOutcome::ReadOnly);
    }
    if rules.slow_mode_ms > 0 && sender.role == Role::Member {
        let next = sender
            .last_message_ts
            .map_or(now, |last| last.saturating_add(rules.slow_mode_ms));
        if next > now {
            return Some(EntryOutcome::SlowMode {
                retry_after_ms: next - now,
            });
        }
    }
    None
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

    /// The §8 rules alone: a sender with `role`, no moderation in force.
    fn judge(send: &NewEntry, role: Option<Role>, target: Option<&TargetState>) -> Option<EntryOutcome> {
        refusal(
            send,
            role.map(SenderState::member).as_ref(),
            &ChannelRules::default(),
            target,
            0,
        )
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
        assert!(judge(&send, Some(Role::Member), None).is_none());
        assert!(matches!(judge(&send, None, None), Some(EntryOutcome::Forbidden)));
    }

    #[test]
    fn an_entrys_checks_run_in_the_contracts_order() {
        let t = uuid::Uuid::from_u128(1);
        let edit = entry(Change::Edit { target: t }, "alice");
        let mine = target(EntryKind::Message, false, "room", "alice");
        // The target's own refusals come before membership.
        assert!(matches!(judge(&edit, None, None), Some(EntryOutcome::TargetNotFound)));
        let not_a_message = target(EntryKind::Reaction, false, "room", "alice");
        assert!(matches!(
            judge(&edit, None, Some(&not_a_message)),
            Some(EntryOutcome::TargetNotAMessage)
        ));
        let deleted = target(EntryKind::Message, true, "room", "alice");
        assert!(matches!(
            judge(&edit, None, Some(&deleted)),
            Some(EntryOutcome::TargetNotFound)
        ));
        assert!(matches!(judge(&edit, None, Some(&mine)), Some(EntryOutcome::Forbidden)));
        let elsewhere = target(EntryKind::Message, false, "other", "alice");
        assert!(matches!(
            judge(&edit, Some(Role::Member), Some(&elsewhere)),
            Some(EntryOutcome::Forbidden)
        ));
        assert!(judge(&edit, Some(Role::Member), Some(&mine)).is_none());
        // Only the sender edits or deletes; any member reacts.
        let bobs = target(EntryKind::Message, false, "room", "bob");
        assert!(matches!(
            judge(&edit, Some(Role::Member), Some(&bobs)),
            Some(EntryOutcome::NotTheSender)
        ));
        let delete = entry(Change::Delete { target: t }, "alice");
        assert!(matches!(
            judge(&delete, Some(Role::Member), Some(&bobs)),
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
        assert!(judge(&react, Some(Role::Member), Some(&bobs)).is_none());
        // A moderator or owner deletes anyone's message, edits only its own.
        for role in [Role::Moderator, Role::Owner] {
            assert!(judge(&delete, Some(role), Some(&bobs)).is_none(), "{role}");
            assert!(matches!(
                judge(&edit, Some(role), Some(&bobs)),
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

    #[test]
    fn a_mute_in_force_refuses_all_but_a_delete_until_it_ends() {
        let t = uuid::Uuid::from_u128(1);
        let mine = target(EntryKind::Message, false, "room", "alice");
        let muted = SenderState {
            muted_until: Some(10_000),
            ..SenderState::member(Role::Member)
        };
        let rules = ChannelRules::default();
        let react = entry(
            Change::React {
                target: t,
                emoji: "x".into(),
                add: true,
            },
            "alice",
        );
        for send in [
            entry(Change::Message, "alice"),
            entry(Change::Edit { target: t }, "alice"),
            react,
        ] {
            assert_eq!(
                refusal(&send, Some(&muted), &rules, Some(&mine), 9_000),
                Some(EntryOutcome::Muted { retry_after_ms: 1_000 }),
                "{send:?}"
            );
            assert_eq!(refusal(&send, Some(&muted), &rules, Some(&mine), 10_000), None, "ended");
        }
        let delete = entry(Change::Delete { target: t }, "alice");
        assert_eq!(refusal(&delete, Some(&muted), &rules, Some(&mine), 9_000), None);
        // The §8 refusals come first.
        let bobs = target(EntryKind::Message, false, "room", "bob");
        assert_eq!(
            refusal(
                &entry(Change::Edit { target: t }, "alice"),
                Some(&muted),
                &rules,
                Some(&bobs),
                0
            ),
            Some(EntryOutcome::NotTheSender)
        );
    }

    #[test]
    fn an_announcement_channel_takes_messages_from_moderators_only() {
        let rules = ChannelRules {
            posting_role: Role::Moderator,
            slow_mode_ms: 0,
        };
        let send = entry(Change::Message, "alice");
        let member = SenderState::member(Role::Member);
        assert_eq!(
            refusal(&send, Some(&member), &rules, None, 0),
            Some(EntryOutcome::ReadOnly)
        );
        for role in [Role::Moderator, Role::Owner] {
            assert_eq!(refusal(&send, Some(&SenderState::member(role)), &rules, None, 0), None);
        }
        // A member still reacts.
        let t = uuid::Uuid::from_u128(1);
        let react = entry(
            Change::React {
                target: t,
                emoji: "x".into(),
                add: true,
            },
            "alice",
        );
        let theirs = target(EntryKind::Message, false, "room", "olive");
        assert_eq!(refusal(&react, Some(&member), &rules, Some(&theirs), 0), None);
    }

    #[test]
    fn slow_mode_spaces_a_members_messages_exactly() {
        let rules = ChannelRules {
            posting_role: Role::Member,
            slow_mode_ms: 5_000,
        };
        let send = entry(Change::Message, "alice");
        let posted = SenderState {
            last_message_ts: Some(100_000),
            ..SenderState::member(Role::Member)
        };
        assert_eq!(
            refusal(&send, Some(&posted), &rules, None, 101_000),
            Some(EntryOutcome::SlowMode { retry_after_ms: 4_000 })
        );
        assert_eq!(
            refusal(&send, Some(&posted), &rules, None, 104_999),
            Some(EntryOutcome::SlowMode { retry_after_ms: 1 })
        );
        assert_eq!(refusal(&send, Some(&posted), &rules, None, 105_000), None);
        let first = SenderState::member(Role::Member);
        assert_eq!(refusal(&send, Some(&first), &rules, None, 101_000), None);
        let moderator = SenderState {
            role: Role::Moderator,
            ..posted
        };
        assert_eq!(refusal(&send, Some(&moderator), &rules, None, 101_000), None);
    }

    #[test]
    fn a_blocked_sender_is_refused() {
        let blocked = SenderState {
            blocked: true,
            ..SenderState::member(Role::Member)
        };
        let send = entry(Change::Message, "alice");
        assert_eq!(
            refusal(&send, Some(&blocked), &ChannelRules::default(), None, 0),
            Some(EntryOutcome::Blocked)
        );
    }
}
