//! What a write of the log is asked and answers: an entry to persist
//! (what it does, its references, mentions and origin), what became of
//! each send of a batch, and the batch's result.

use super::entry_types::{Entry, EntryKind};
use crate::ids::{ChannelId, ClientMsgId, UserId};

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
