//! The store's row types of the log: entries as stored and read, what a
//! write is asked and answers, and the webhook feed's view of entries.
//! Channels, members and positions are `channel_types.rs`.

use crate::ids::{ChannelId, ClientMsgId, UserId};

/// The kind of a log entry (`docs/protocol.md` §8), as the `kind` column holds it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A message (MSG_SEND).
    #[default]
    Message,
    /// A new text for a message (MSG_EDIT).
    Edit,
    /// A message deleted (MSG_DELETE).
    Delete,
    /// A reaction added or removed (MSG_REACT).
    Reaction,
}

impl EntryKind {
    /// The `kind` column's text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Message => "message",
            Self::Edit => "edit",
            Self::Delete => "delete",
            Self::Reaction => "reaction",
        }
    }

    pub(super) fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "message" => Self::Message,
            "edit" => Self::Edit,
            "delete" => Self::Delete,
            "reaction" => Self::Reaction,
            _ => return None,
        })
    }
}

/// One emoji's reactions on a message at the time of a read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReactionState {
    pub emoji: String,
    /// Users holding it (> 0).
    pub count: i64,
    /// Whether the reader holds it.
    pub me: bool,
}

/// A stored log entry (of any kind), read back or just written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// UUIDv7 assigned when the entry was stored.
    pub message_id: uuid::Uuid,
    pub channel_id: ChannelId,
    pub sender_id: UserId,
    /// The sender's idempotency key; kept for retries but not shown when
    /// the entry came through an HTTP route (`via_http`).
    pub client_msg_id: ClientMsgId,
    /// Made with the admin token (`"byAdmin": true` on the wire, §12's
    /// common rules of version 1.2).
    pub by_admin: bool,
    /// Made through an HTTP route: reads and frames carry no `clientMsgId`.
    pub via_http: bool,
    /// Position in the channel, 1-based, gapless.
    pub seq: i64,
    /// The text as sent (a message) or the new text (an edit); `""` for a
    /// delete or a reaction, and once the message (or the edit's target) is
    /// deleted.
    pub body: String,
    /// Stored time, ms since the Unix epoch.
    pub ts: i64,
    pub kind: EntryKind,
    /// Edit, delete, reaction: the target message.
    pub target_id: Option<uuid::Uuid>,
    /// Reaction: the emoji.
    pub emoji: Option<String>,
    /// Reaction: `Some(true)` add, `Some(false)` remove.
    pub add: Option<bool>,
    /// Message: the latest edit's text, when edited and not deleted.
    pub edited_body: Option<String>,
    /// Message: the latest edit's ts, when edited and not deleted.
    pub edited_at: Option<i64>,
    /// Message: deleted (its text is gone).
    pub deleted: bool,
    /// Message: erased by the retention sweep (§19; `deleted` too), with no
    /// delete entry.
    pub expired: bool,
    /// Reaction: it changed nothing (add of a held one, remove of one not held).
    pub noop: bool,
    /// Message, in reads for a reader only: its reactions by first use.
    pub reactions: Vec<ReactionState>,
    /// Message: the message it quotes (§14).
    pub reply_to: Option<uuid::Uuid>,
    /// Message: the root of the thread it is a reply in (§14).
    pub thread_id: Option<uuid::Uuid>,
    /// With `reply_to`, in reads and in a batch's stored entries: the quoted
    /// message as it is now (`None` when not read). Boxed, as `thread`:
    /// rare, and an entry is moved through every answer.
    pub reply_preview: Option<Box<ReplyPreview>>,
    /// Message, a thread root that has had replies: its summary (§14).
    pub thread: Option<Box<ThreadSummary>>,
    /// Message: the mentioned users that were members when it was stored
    /// (§16), in byte order; empty once deleted.
    pub mentions: Vec<UserId>,
    /// Message: it mentions all (§16); false once deleted.
    pub mention_all: bool,
    /// Message: the mentions asked for, as [`Mentions::key`] (the idempotency
    /// key covers them); `None` when none, and once deleted.
    pub mentions_asked: Option<String>,
    /// Message: the uploads it carries (§15), in the order sent; set by the
    /// write path and by reads (empty once deleted, and where not read).
    pub attachments: Vec<super::AttachmentRow>,
}

/// The quoted message of a reply at the time of a read or a commit (§14).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyPreview {
    pub sender_id: UserId,
    /// Its current text cut to `PREVIEW_BYTES` at a character boundary;
    /// `""` once deleted.
    pub body: String,
    pub deleted: bool,
}

/// A thread root's summary (§14), kept on the root's row by the write path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadSummary {
    /// Replies not deleted.
    pub reply_count: i64,
    /// The latest reply's ts (ms) and seq, deleted or not.
    pub last_reply_at: i64,
    pub last_reply_seq: i64,
    /// The first (at most `MAX_PARTICIPANTS`) distinct senders of replies, in order.
    pub participants: Vec<UserId>,
}

impl Entry {
    /// Whether a MSG_SEND with this entry's key and `channel_id`, `body` and
    /// references (`replyTo`, `threadId`, §14) is a retry of it (guarantee
    /// 2: same key, channel, body and references); else the key was used for
    /// another entry (`idempotency_conflict`). Once the message is deleted
    /// its text is gone and cannot be compared: the same key, channel and
    /// references is then a retry.
    pub fn is_retried_by(&self, channel_id: &str, body: &str, refs: &References, mentions: &Mentions) -> bool {
        self.kind == EntryKind::Message
            && self.channel_id.as_str() == channel_id
            && (self.body == body || self.deleted)
            && self.reply_to == refs.reply_to
            && self.thread_id == refs.thread_id
            && self.is_mentioning_as(mentions)
    }

    /// Whether this message was stored with the mentions `asked` (§16: the
    /// idempotency key covers `mentions`, as a set, and `mentionAll`). A
    /// deleted message has lost them: not compared.
    pub fn is_mentioning_as(&self, asked: &Mentions) -> bool {
        self.deleted || (self.mention_all == asked.all && self.mentions_asked == asked.key())
    }

    /// The ids of the uploads this message carries, in order (§15).
    pub fn attachment_ids(&self) -> Vec<uuid::Uuid> {
        self.attachments.iter().map(|a| a.attachment_id).collect()
    }

    /// Whether this message carries the attachments whose idempotency key
    /// text is `key` ([`crate::protocol::attachments_key_of`]); a deleted
    /// message has lost them: not compared.
    pub fn is_attaching_as(&self, key: &str) -> bool {
        self.deleted || crate::protocol::attachment_ids_key(&self.attachment_ids()) == key
    }

    /// As [`Self::is_retried_by`] for references given as the request's
    /// text (a frame that failed its checks: `None` when absent; text that
    /// is no id equals no stored one) and mentions as their key
    /// ([`crate::protocol::mentions_key_of`]).
    pub fn is_retried_by_text(
        &self,
        channel_id: &str,
        body: &str,
        reply_to: Option<&str>,
        thread_id: Option<&str>,
        mentions: &crate::protocol::MentionsKey,
    ) -> bool {
        let same = |stored: Option<uuid::Uuid>, given: Option<&str>| match (stored, given) {
            (None, None) => true,
            (Some(id), Some(text)) => id.hyphenated().to_string() == text,
            _ => false,
        };
        self.kind == EntryKind::Message
            && self.channel_id.as_str() == channel_id
            && (self.body == body || self.deleted)
            && same(self.reply_to, reply_to)
            && same(self.thread_id, thread_id)
            && (self.deleted || (self.mention_all == mentions.all && self.mentions_asked == mentions.users))
    }

    /// Whether `new` (with this entry's key) is a retry of this entry: the
    /// same frame type, channel, target, body, emoji and op (§8). An edit
    /// whose target was deleted has lost its text (`""`, which no edit can
    /// send): its body is not compared.
    pub fn is_retried_as(&self, new: &NewEntry) -> bool {
        if self.kind == EntryKind::Message && !self.deleted && self.attachment_ids() != new.attachments {
            return false;
        }
        match &new.change {
            Change::Message => self.is_retried_by(
                new.channel_id.as_str(),
                &new.body,
                &References::default(),
                &new.mentions,
            ),
            Change::Reply(refs) => self.is_retried_by(new.channel_id.as_str(), &new.body, refs, &new.mentions),
            Change::Edit { target } => {
                self.kind == EntryKind::Edit
                    && self.target_id == Some(*target)
                    && (self.body == new.body || self.body.is_empty())
            }
            Change::Delete { target } => self.kind == EntryKind::Delete && self.target_id == Some(*target),
            Change::React { target, emoji, add } => {
                self.kind == EntryKind::Reaction
                    && self.target_id == Some(*target)
                    && self.emoji.as_deref() == Some(emoji.as_str())
                    && self.add == Some(*add)
            }
        }
    }

    /// The text a read shows: `""` when deleted, else the latest edit's, else as sent.
    pub fn current_body(&self) -> &str {
        if self.deleted {
            ""
        } else {
            self.edited_body.as_deref().unwrap_or(&self.body)
        }
    }
}

/// What a new entry does (the kind of entry, with its target).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Change {
    /// A message (MSG_SEND): `body` is its text.
    #[default]
    Message,
    /// A message that quotes one (`replyTo`) or answers in a thread
    /// (`threadId`), or both (§14): stored as a `message` entry.
    Reply(References),
    /// A new text (`body`) for the sender's own message `target`.
    Edit { target: uuid::Uuid },
    /// Deletes the sender's own message `target` and erases its text.
    Delete { target: uuid::Uuid },
    /// Adds (`add`) or removes the sender's reaction `emoji` on `target`.
    React {
        target: uuid::Uuid,
        emoji: String,
        add: bool,
    },
}

impl Change {
    /// The entry kind this change is stored as.
    pub fn kind(&self) -> EntryKind {
        match self {
            Change::Message | Change::Reply(_) => EntryKind::Message,
            Change::Edit { .. } => EntryKind::Edit,
            Change::Delete { .. } => EntryKind::Delete,
            Change::React { .. } => EntryKind::Reaction,
        }
    }

    /// The target message, for every kind but a message.
    pub fn target(&self) -> Option<uuid::Uuid> {
        match self {
            Change::Message | Change::Reply(_) => None,
            Change::Edit { target } | Change::Delete { target } | Change::React { target, .. } => Some(*target),
        }
    }
}

/// What a message refers to (§14): the message it quotes and the root of
/// its thread, each a stored `message` entry of the same channel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct References {
    pub reply_to: Option<uuid::Uuid>,
    pub thread_id: Option<uuid::Uuid>,
}

impl References {
    /// The change a MSG_SEND with these references stores: a plain
    /// [`Change::Message`] when it has none.
    pub fn change(self) -> Change {
        if self == Self::default() {
            Change::Message
        } else {
            Change::Reply(self)
        }
    }
}

impl Change {
    /// The message's references (none for a plain message or another kind).
    pub fn references(&self) -> References {
        match self {
            Change::Reply(refs) => *refs,
            _ => References::default(),
        }
    }
}

/// Which reference of a send a refusal is about (§14).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reference {
    /// `replyTo`.
    ReplyTo,
    /// `threadId`.
    ThreadId,
}

impl Reference {
    /// The field's wire name.
    pub fn field(self) -> &'static str {
        match self {
            Reference::ReplyTo => "replyTo",
            Reference::ThreadId => "threadId",
        }
    }
}

/// A page of entries read in their current state ([`Store::entries_after`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntriesPage {
    /// In `seq` order, `message` entries with their state and reactions.
    pub entries: Vec<Entry>,
    /// Whether more entries were stored after the last one returned.
    pub has_more: bool,
    /// The channel's last seq in the read's snapshot: the states include
    /// every entry up to it.
    pub last_seq: i64,
}

/// An entry to persist (a send, edit, delete or reaction), already validated.
#[derive(Debug, Clone)]
pub struct NewEntry {
    pub sender_id: UserId,
    /// The channel; for an entry about a message, the target's channel.
    pub channel_id: ChannelId,
    pub client_msg_id: ClientMsgId,
    /// A message's or an edit's text; `""` for the other kinds.
    pub body: String,
    /// What the entry is.
    pub change: Change,
    /// A message's mentions as asked (§16); none for the other kinds.
    pub mentions: Mentions,
    /// How it was made: a user's frame or an HTTP route, with which token.
    pub origin: Origin,
    /// A message's uploads (§15), in order, each once; none for the other
    /// kinds. The idempotency key covers the list.
    pub attachments: Vec<uuid::Uuid>,
}

/// How an entry came to be (protocol.md §12, common rules of version 1.2):
/// entries made through an HTTP route carry no `clientMsgId` on the wire
/// (the key is still stored, so that a retry stays idempotent), and those
/// made with the admin token carry `"byAdmin": true`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Origin {
    /// A user's frame (`MSG_SEND`, `MSG_EDIT`, `MSG_DELETE`, `MSG_REACT`).
    #[default]
    Frame,
    /// An HTTP route with a user's token (a moderator's delete, §17).
    UserRoute,
    /// An HTTP route with the admin token acting as `sender_id`, who must be
    /// a member and is held to the channel's rules (the backend post, §11).
    AdminAsSender,
    /// An HTTP route with the admin token on its own authority (the delete
    /// route, §17): `sender_id` need not be a member any more, and the
    /// moderation rules do not apply to it.
    Admin,
}

impl Origin {
    /// Made with the admin token: stored and shown as `byAdmin`.
    pub fn by_admin(self) -> bool {
        matches!(self, Self::AdminAsSender | Self::Admin)
    }

    /// Made through an HTTP route: its `clientMsgId` is not shown.
    pub fn via_http(self) -> bool {
        self != Self::Frame
    }

    /// The sender's membership and the moderation rules do not apply.
    pub fn overrides_rules(self) -> bool {
        self == Self::Admin
    }
}

/// The mentions a send asks for (§16): users (at most `max_mentions`, in
/// the `userId` grammar; the batch keeps those that are members) and
/// whether it mentions all (moderators only).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mentions {
    /// As given, repeats removed (first kept).
    pub users: Vec<UserId>,
    /// `mentionAll: true`.
    pub all: bool,
}

impl Mentions {
    /// The users as the `mentions_asked` column keeps them: a JSON array in
    /// byte order without repeats; `None` when there are none.
    pub fn key(&self) -> Option<String> {
        if self.users.is_empty() {
            return None;
        }
        let mut ids: Vec<&str> = self.users.iter().map(UserId::as_str).collect();
        ids.sort_unstable();
        ids.dedup();
        serde_json::to_string(&ids).ok()
    }

    /// Whether nothing is asked.
    pub fn is_empty(&self) -> bool {
        self.users.is_empty() && !self.all
    }
}

/// What became of one send in a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryOutcome {
    /// Newly stored by this batch.
    Stored(Entry),
    /// The key was already stored with the same channel and body: the original.
    Duplicate(Entry),
    /// The key was already stored with another channel or body; nothing stored.
    Conflict,
    /// Unknown channel or the sender is not a member; nothing stored.
    Forbidden,
    /// Edit, delete, reaction: the target is unknown or deleted.
    TargetNotFound,
    /// Edit, delete, reaction: the target is not a `message` entry.
    TargetNotAMessage,
    /// Edit, delete: the sender did not send the target.
    NotTheSender,
    /// A reply (§14): the message a reference names is unknown, deleted or
    /// not a `message` entry (`not_found`).
    ReferenceNotFound(Reference),
    /// A reply (§14): the message a reference names is in another channel,
    /// or (`threadId`) is itself a thread reply (`invalid_field`, with why).
    ReferenceInvalid(Reference, &'static str),
    /// The sender is muted in the channel (§17) for this many more ms;
    /// nothing stored.
    Muted {
        /// Until the mute ends (`retryAfterMs`), > 0.
        retry_after_ms: i64,
    },
    /// A direct channel's other member blocks the sender (§17); nothing stored.
    Blocked,
    /// A `member`'s message in an announcement channel (`postingRole`
    /// `moderator`, §17); nothing stored.
    ReadOnly,
    /// `mentionAll` from a sender who is not a moderator (§16); nothing
    /// stored.
    MentionAllForbidden,
    /// A message's `attachments` (§15) name an upload that is unknown, in
    /// another channel, someone else's or part of a message already
    /// (`invalid_field`, `field: "attachments"`, with why); nothing stored.
    InvalidAttachments(&'static str),
    /// Slow mode (§17): the sender's last message is too recent; nothing
    /// stored.
    SlowMode {
        /// Until the sender may store its next message (`retryAfterMs`), > 0.
        retry_after_ms: i64,
    },
    /// An edit to an empty body of a message that carries no attachments
    /// (§15: only a message with attachments may have an empty body):
    /// `invalid_field`, `field: "body"`; nothing stored.
    EmptyBody,
    /// A reaction `add` of an emoji no one holds on a target that already
    /// holds `most` distinct emoji (`max_reactions_per_message`):
    /// `invalid_field`, `field: "emoji"`, `reason: "too_many_reactions"`;
    /// nothing stored.
    TooManyReactions {
        /// `max_reactions_per_message` when it was decided.
        most: usize,
    },
}

/// The default of `max_reactions_per_message`: the most distinct emoji one
/// message may hold (§8), and the longest reaction list a read returns.
pub const DEFAULT_MAX_REACTIONS_PER_MESSAGE: usize = 50;

/// The result of one committed batch of sends.
#[derive(Debug, Default)]
pub struct BatchOutcome {
    /// One outcome per send, in the order given.
    pub outcomes: Vec<EntryOutcome>,
    /// The members, read under the channel lock, of every channel that got a
    /// new message: the fan-out's recipients.
    pub members: Vec<(ChannelId, Vec<UserId>)>,
}

/// Who of a channel's members has no open session on any node, asked by a
/// batch that stores entries while webhooks are on (protocol §12,
/// `offlineMembers`), once per channel, with the channel locked, so the
/// answer is the one at the entry's commit. The store knows no sessions: the
/// delivery side implements it.
pub trait OfflineMembers: Sync {
    /// Those of `members` (in byte order) with no open session on any node,
    /// in the same order.
    fn offline(&self, members: &[UserId]) -> Vec<UserId>;
}

/// A channel whose log goes past its webhook cursor ([`Store::webhook_backlog`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookBacklog {
    pub channel_id: ChannelId,
    /// The channel's last seq.
    pub last_seq: i64,
    /// The cursor: the last seq delivered (0: none).
    pub delivered_seq: i64,
    /// The `ts` of the first entry after the cursor (ms), when it exists.
    pub first_ts: Option<i64>,
}

/// A log entry as the webhook feed reads it ([`Store::webhook_entries_after`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookEntry {
    /// The entry as stored (its MSG_RECV is [`crate::view::recv`]'s).
    pub entry: Entry,
    /// The members other than the sender with no open session on any node
    /// when it was committed; empty for an entry stored while webhooks were off.
    pub offline_members: Vec<UserId>,
    /// Those of `offline_members` who want a notification of it (§16),
    /// computed at its commit from their settings, its mentions and their
    /// blocks; empty for any entry but a `message`.
    pub notify: Vec<UserId>,
}
