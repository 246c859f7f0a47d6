//! The log's rows as stored and read: an entry of any kind, its reactions,
//! the message it quotes and its thread's summary, a page of them, and the
//! webhook feed's view of entries.
//! What a write is asked and answers is `batch_types.rs`; whether a send
//! is a retry of a stored entry, `idempotency.rs`.

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
    pub attachments: Vec<AttachmentRow>,
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
    /// The ids of the uploads this message carries, in order (§15).
    pub fn attachment_ids(&self) -> Vec<uuid::Uuid> {
        self.attachments.iter().map(|a| a.attachment_id).collect()
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

/// One upload as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachmentRow {
    /// A UUIDv7, lower-case hyphenated.
    pub attachment_id: uuid::Uuid,
    pub channel_id: ChannelId,
    pub uploader_id: UserId,
    /// The media type given at upload (lower case, no parameters).
    pub content_type: String,
    /// Bytes.
    pub size: i64,
    /// Hex SHA-256 of the bytes.
    pub sha256: String,
    pub filename: Option<String>,
    /// Images: pixels.
    pub width: Option<i64>,
    pub height: Option<i64>,
    /// ms since the epoch.
    pub created_at: i64,
    /// The message that carries it, once sent.
    pub message_id: Option<uuid::Uuid>,
    /// Where its bytes are in the attachment storage.
    pub storage_key: String,
    /// Where its thumbnail is, once made (images only).
    pub thumbnail_key: Option<String>,
    /// The key of its signed URLs (hex, 32 random bytes): never rendered.
    pub url_key: String,
    /// How long its signed URLs last from when they are made, seconds
    /// (`attachment_url_ttl_secs` at upload).
    pub url_ttl_secs: i64,
}
