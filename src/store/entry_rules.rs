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
//! `postingRole`, blocks, replies, attachments, mentions, the bound on
//! distinct emoji per message) is added here, once.

use super::batch_types::{Change, EntryOutcome, Mentions, NewEntry, Reference};
use super::channel_types::ChannelSettings;
use super::entry_types::{AttachmentRow, Entry, EntryKind, ReplyPreview};
use crate::ids::{ChannelId, UserId};
use crate::permissions::{self, Action, Actor, Role};
use crate::protocol::{preview_text, Notify};

/// The most senders a thread summary's `participants` holds (§14).
pub(super) const MAX_PARTICIPANTS: usize = 10;

/// An entry's target (or a reply's reference, §14) as far as the checks
/// look at it, as the batch has left it so far.
#[derive(Debug, Clone)]
pub(super) struct TargetState {
    pub(super) kind: EntryKind,
    pub(super) deleted: bool,
    pub(super) channel_id: ChannelId,
    pub(super) sender_id: UserId,
    /// A message: the root of the thread it is a reply in.
    pub(super) thread_id: Option<uuid::Uuid>,
    /// A message: its current text cut for a preview (`""` once deleted).
    pub(super) preview: String,
    /// A thread root: the first senders of its replies.
    pub(super) participants: Vec<UserId>,
}

impl From<Entry> for TargetState {
    fn from(stored: Entry) -> Self {
        Self {
            preview: preview_text(stored.current_body()).to_owned(),
            kind: stored.kind,
            deleted: stored.deleted,
            channel_id: stored.channel_id,
            sender_id: stored.sender_id,
            thread_id: stored.thread_id,
            participants: stored.thread.map(|t| t.participants).unwrap_or_default(),
        }
    }
}

impl TargetState {
    /// The quote of this message a reply shows (§14): its sender and its
    /// current text cut to `PREVIEW_BYTES`, or `""` once deleted.
    pub(super) fn reply_preview(&self) -> ReplyPreview {
        ReplyPreview {
            sender_id: self.sender_id.clone(),
            body: if self.deleted {
                String::new()
            } else {
                self.preview.clone()
            },
            deleted: self.deleted,
        }
    }

    /// A new text (an edit) for this message.
    pub(super) fn edited(&mut self, body: &str) {
        self.preview = preview_text(body).to_owned();
    }

    /// This message deleted: its text is gone.
    pub(super) fn erase(&mut self) {
        self.deleted = true;
        self.preview.clear();
    }
}

/// Why a message's references (§14) refuse it, or `None` when they do
/// not; after [`refusal`] (a send's membership comes first). `reply_to` and
/// `thread`: the states of the messages its `replyTo` and `threadId` name
/// (`None`: no stored entry has the id; not looked at when the send has no
/// such reference). `replyTo` is checked before `threadId`; each must name
/// a `message` entry, not deleted (`ReferenceNotFound`), of the send's
/// channel (`ReferenceInvalid`); a `threadId` must name a root, a message
/// that is itself in no thread (`ReferenceInvalid`).
pub(super) fn reference_refusal(
    send: &NewEntry,
    reply_to: Option<&TargetState>,
    thread: Option<&TargetState>,
) -> Option<EntryOutcome> {
    let refs = send.change.references();
    if refs.reply_to.is_some() {
        if let Some(refused) = reference_check(Reference::ReplyTo, &send.channel_id, reply_to, false) {
            return Some(refused);
        }
    }
    if refs.thread_id.is_some() {
        return reference_check(Reference::ThreadId, &send.channel_id, thread, false);
    }
    None
}

/// Why a thread of `channel_id` cannot be read from `root` (history and
/// SYNC with `threadId`), or `None`: as a send's `threadId`, except that a
/// deleted root's thread is still read (its replies stay).
pub(super) fn thread_root_refusal(channel_id: &ChannelId, root: Option<&TargetState>) -> Option<EntryOutcome> {
    reference_check(Reference::ThreadId, channel_id, root, true)
}

fn reference_check(
    reference: Reference,
    channel_id: &ChannelId,
    target: Option<&TargetState>,
    deleted_is_found: bool,
) -> Option<EntryOutcome> {
    let Some(target) = target.filter(|t| t.kind == EntryKind::Message && (deleted_is_found || !t.deleted)) else {
        return Some(EntryOutcome::ReferenceNotFound(reference));
    };
    if target.channel_id != *channel_id {
        return Some(EntryOutcome::ReferenceInvalid(
            reference,
            "names a message of another channel",
        ));
    }
    if reference == Reference::ThreadId && target.thread_id.is_some() {
        return Some(EntryOutcome::ReferenceInvalid(
            reference,
            "names a reply in a thread: a thread's root is a message in no thread",
        ));
    }
    None
}

/// Adds `sender` to a thread's `participants` when it is not there and
/// there is room ([`MAX_PARTICIPANTS`]); returns whether it was added.
pub(super) fn joins_thread(participants: &mut Vec<UserId>, sender: &UserId) -> bool {
    if participants.len() >= MAX_PARTICIPANTS || participants.contains(sender) {
        return false;
    }
    participants.push(sender.clone());
    true
}

/// A channel's settings the rules read under its lock (§17): who may store
/// `message` entries and the slow mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct ChannelRules {
    /// `member` (anyone) or `moderator` (an announcement channel: members'
    /// `message` and `edit` entries are refused with `read_only`).
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
/// (`Blocked`), for a `message` entry or an edit an announcement
/// channel's `postingRole` (`ReadOnly`), and for a `message` entry the slow
/// mode of a `member` (`SlowMode`).
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
    let may_send = send.origin.overrides_rules() || permissions::may(Actor::User(role), Action::Send).is_ok();
    if send.change.target().is_none() {
        if !may_send {
            return Some(EntryOutcome::Forbidden);
        }
        return sender
            .and_then(|s| moderation(send, s, rules, now))
            .or_else(|| mention_all_refusal(&send.mentions, role));
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
    let moderates =
        || send.origin.overrides_rules() || permissions::may(Actor::User(role), Action::DeleteAnyMessage).is_ok();
    match send.change {
        Change::Edit { .. } if !own => Some(EntryOutcome::NotTheSender),
        Change::Delete { .. } if !own && !moderates() => Some(EntryOutcome::NotTheSender),
        Change::Delete { .. } => None,
        // The admin token on its own authority (an erasure's reaction
        // removals, §19) is not held to a mute or a block.
        _ if send.origin.overrides_rules() => None,
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
    let kind = send.change.kind();
    // An announcement channel refuses a member's edits as it refuses its
    // messages: the text shown in the channel is still posted by a member.
    if matches!(kind, EntryKind::Message | EntryKind::Edit) && sender.role < rules.posting_role {
        return Some(EntryOutcome::ReadOnly);
    }
    if kind != EntryKind::Message {
        return None;
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

/// The target of `send` when it is an edit to an empty body, the one entry
/// [`empty_body_refusal`] judges (a path reads whether that target carries
/// attachments only then).
pub(super) fn empty_edit_target(send: &NewEntry) -> Option<uuid::Uuid> {
    match send.change {
        Change::Edit { target } if send.body.is_empty() => Some(target),
        _ => None,
    }
}

/// Why `send` may not be stored for its empty body, or `None`; judged
/// after [`refusal`] (an unknown or deleted target, a non-member, another's
/// message, a mute or an announcement channel are refused for that first).
/// An edit to an empty body of a message that carries no attachments
/// (`carries`: whether its target does): `EmptyBody`. A message with
/// attachments may be edited to `""`, as it may be sent with it (§15).
pub(super) fn empty_body_refusal(send: &NewEntry, carries: bool) -> Option<EntryOutcome> {
    (empty_edit_target(send).is_some() && !carries).then_some(EntryOutcome::EmptyBody)
}

/// `mentionAll` from a sender whose role is not moderator or owner (§16):
/// `MentionAllForbidden`; judged after membership and moderation.
fn mention_all_refusal(mentions: &Mentions, role: Option<Role>) -> Option<EntryOutcome> {
    let moderates = permissions::may(Actor::User(role), Action::MentionAll).is_ok();
    (mentions.all && !moderates).then_some(EntryOutcome::MentionAllForbidden)
}

/// The mentioned users a message keeps (§16): those `asked` that are
/// `members` (in byte order) when it is stored, in byte order, once each.
pub(super) fn kept_mentions(asked: &Mentions, members: &[UserId]) -> Vec<UserId> {
    let mut kept: Vec<UserId> = asked
        .users
        .iter()
        .filter(|u| members.binary_search(u).is_ok())
        .cloned()
        .collect();
    kept.sort_unstable();
    kept.dedup();
    kept
}

/// Why the uploads `found` (as read under the channel's lock) may not be
/// the attachments of `send` (§15): each id must name an upload into the
/// send's channel by its sender that no message carries yet; `None` when
/// they may. All refusals read alike to the sender (an unknown id and
/// someone else's upload are not told apart).
pub(super) fn attachments_refusal(send: &NewEntry, found: &[AttachmentRow]) -> Option<EntryOutcome> {
    let usable = |id: &uuid::Uuid| {
        found.iter().any(|row| {
            row.attachment_id == *id
                && row.channel_id == send.channel_id
                && row.uploader_id == send.sender_id
                && row.message_id.is_none()
        })
    };
    if send.attachments.iter().all(usable) {
        None
    } else {
        Some(EntryOutcome::InvalidAttachments(
            "each must be an upload of yours into this channel that no message carries yet",
        ))
    }
}

/// `rows` in the order of `send`'s `attachments` (each found by
/// [`attachments_refusal`] before).
pub(super) fn in_send_order(send: &NewEntry, rows: Vec<AttachmentRow>) -> Vec<AttachmentRow> {
    let mut rows: Vec<Option<AttachmentRow>> = rows.into_iter().map(Some).collect();
    send.attachments
        .iter()
        .filter_map(|id| {
            rows.iter_mut()
                .find(|r| r.as_ref().is_some_and(|r| r.attachment_id == *id))
                .and_then(Option::take)
        })
        .collect()
}

/// The users whose `mentions` rows a stored message adds (§16): those it
/// kept but its sender (a user's own messages never count in
/// `unreadMentions`); none when it mentions all (`unreadMentions` counts
/// those from their `mention_all` flag, each message once: `receipts.rs`).
pub(super) fn mention_rows<'a>(message: &'a Entry) -> impl Iterator<Item = &'a UserId> + 'a {
    message
        .mentions
        .iter()
        .filter(move |u| !message.mention_all && **u != message.sender_id)
}

/// Whether offline member `user` wants a webhook notification for
/// `message` (§16): only for a `message` entry; `notify` `all`, or
/// `mentions` when it mentions the user or all; not snoozed at the
/// message's commit (`snoozeUntil` after its `ts`); not blocking its sender.
pub(super) fn wants_notification(
    message: &Entry,
    user: &UserId,
    settings: ChannelSettings,
    blocks_sender: bool,
) -> bool {
    if message.kind != EntryKind::Message || blocks_sender {
        return false;
    }
    if settings.snooze_until.is_some_and(|until| until > message.ts) {
        return false;
    }
    match settings.notify {
        Notify::All => true,
        Notify::Mentions => message.mention_all || message.mentions.binary_search(user).is_ok(),
        Notify::None => false,
    }
}

/// A reaction count and the seq of its first use (`None`: no one holds it).
pub(super) type Count = Option<(i64, i64)>;

/// What the rules know of a reaction `add`'s target, as the batch's earlier
/// entries left it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ReactionsHeld {
    /// How many distinct emoji someone holds on the target. A path may read
    /// it only up to a cap of at least `max_reactions_per_message` (and add
    /// room for the batch's removes): past the bound the exact number does
    /// not matter.
    pub(super) distinct: i64,
    /// Whether someone holds the added emoji on the target.
    pub(super) emoji_held: bool,
}

/// Why a reaction `add` whose target is as `held` says may not be stored,
/// or `None` when it may; judged after [`refusal`] (a deleted target or a
/// non-member is refused for that first). An emoji no one holds on a target
/// that already holds `most` (`max_reactions_per_message`) distinct ones:
/// `TooManyReactions`. An emoji someone holds (another user's +1, or the
/// sender's own no-op add) still counts up at the bound, and a `remove` is
/// never asked about.
pub(super) fn reaction_refusal(held: ReactionsHeld, most: usize) -> Option<EntryOutcome> {
    let full = usize::try_from(held.distinct).is_ok_and(|distinct| distinct >= most);
    (full && !held.emoji_held).then_some(EntryOutcome::TooManyReactions { most })
}

/// Whether `send` is a reaction `add`, the one entry [`reaction_refusal`]
/// judges: its target and emoji.
pub(super) fn added_reaction(send: &NewEntry) -> Option<(uuid::Uuid, &str)> {
    match &send.change {
        Change::React {
            target,
            emoji,
            add: true,
        } => Some((*target, emoji.as_str())),
        _ => None,
    }
}

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
mod tests;
