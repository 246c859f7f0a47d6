//! A stored entry as clients see it ([`RecvMessage`]: MSG_RECV, the
//! elements of SYNC_BATCH and of the history route) and its parts: reply
//! previews, thread summaries, reactions, attachments.

use serde::{Deserialize, Serialize};

/// One stored message as clients see it: the MSG_RECV frame's fields, also the
/// element of SYNC_BATCH and of the history route.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecvMessage {
    /// Server-assigned UUIDv7, lower-case hyphenated.
    pub message_id: uuid::Uuid,
    pub channel_id: ChannelIdWire,
    pub sender_id: UserIdWire,
    /// Position in the channel, 1-based and gapless.
    pub seq: i64,
    pub body: String,
    /// Stored time, ms since the Unix epoch; never decreases as `seq` grows.
    pub ts: i64,
    /// The sender's idempotency key; absent on an entry made through an
    /// HTTP route (the backend post, the delete route: §12's common rules
    /// of version 1.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_msg_id: Option<String>,
    /// Made with the admin token through an HTTP route; absent when false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub by_admin: bool,
    /// The entry's kind (§8); `message` when absent (a server before v1.1).
    #[serde(default)]
    pub kind: EntryKind,
    /// `edit`, `delete`, `reaction`: the target message's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_id: Option<uuid::Uuid>,
    /// `reaction`: the emoji.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emoji: Option<String>,
    /// `reaction`: `add` or `remove`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<ReactOp>,
    /// `reaction`: `true` when the entry changed nothing (an `add` of a
    /// reaction the sender held, a `remove` of one not held), so a client
    /// folding it onto a read state (counts only) knows; absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub noop: bool,
    /// Reads only, `message` entries that were edited: ts of the latest edit
    /// (ms since the Unix epoch); `body` is then the latest edit's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_at: Option<i64>,
    /// Reads only: `true` when the message is deleted (`body` is then `""`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
    /// Reads only, with `deleted`: `true` when the retention sweep erased the
    /// message (§19: no delete entry names it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expired: bool,
    /// Reads only, always on `message` entries: the reactions it holds now,
    /// by first use (the seq at which the emoji's count last rose from 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reactions: Option<Vec<ReactionCount>>,
    /// `message`: the id of the message it quotes (§14).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<uuid::Uuid>,
    /// With `replyTo`: the quoted message as it is at the time of the read
    /// (or, in MSG_RECV, of the commit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_preview: Option<ReplyPreview>,
    /// `message`: the root of the thread it is a reply in (§14).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<uuid::Uuid>,
    /// Reads only, a root that has had replies: its thread's summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread: Option<ThreadSummary>,
    /// `message`: the mentioned users that were members when it was stored
    /// (§16), in byte order; absent when none (and once deleted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mentions: Vec<String>,
    /// `message`: it mentions every member (§16); absent when false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mention_all: bool,
    /// `message`: the files it carries (§15), in the order sent, each with
    /// signed URLs; absent when none (and once deleted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<AttachmentObject>,
}

/// An attachment as a message carries it (§15).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentObject {
    /// UUIDv7, lower-case hyphenated.
    pub attachment_id: uuid::Uuid,
    /// The media type it was uploaded with.
    pub content_type: String,
    /// Bytes.
    pub size: i64,
    /// The filename given at upload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// Images: pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<i64>,
    /// A path on the server (`/v1/attachments/{id}?exp=…&sig=…`) that
    /// serves the bytes without a token until `exp` (unix seconds).
    pub url: String,
    /// Images: the signed path of the thumbnail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thumbnail_url: Option<String>,
}

impl RecvMessage {
    /// Whether this entry mentions `user_id` (§16): by name in `mentions`,
    /// or `mentionAll`. The "mentioned me" flag of a client, given its
    /// own user id.
    pub fn mentions_user(&self, user_id: &str) -> bool {
        self.mention_all || self.mentions.iter().any(|u| u == user_id)
    }
}

/// Whether `b` is false (serde: a flag left out when false).
fn is_false(b: &bool) -> bool {
    !*b
}

/// Longest `replyPreview.body`, bytes of UTF-8 (cut at a character boundary).
pub const PREVIEW_BYTES: usize = 200;

/// `text` cut to at most [`PREVIEW_BYTES`] bytes, at a character boundary.
pub fn preview_text(text: &str) -> &str {
    crate::text::cut_to_bytes(text, PREVIEW_BYTES)
}

/// The quoted message of a reply, as reads and MSG_RECV show it (§14).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplyPreview {
    /// Who sent the quoted message.
    pub sender_id: UserIdWire,
    /// Its current text cut to [`PREVIEW_BYTES`] bytes; `""` once deleted.
    pub body: String,
    /// `true` once the quoted message is deleted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
}

/// A thread root's summary, as reads show it (§14).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSummary {
    /// Replies in the thread that are not deleted.
    pub reply_count: i64,
    /// `ts` of the thread's latest reply, ms since the Unix epoch.
    pub last_reply_at: i64,
    /// `seq` of the thread's latest reply.
    pub last_reply_seq: i64,
    /// The first (at most 10) distinct senders of replies, in order.
    pub participants: Vec<UserIdWire>,
}

/// The kind of a log entry (`docs/protocol.md` §8).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A MSG_SEND.
    #[default]
    Message,
    /// A MSG_EDIT.
    Edit,
    /// A MSG_DELETE.
    Delete,
    /// A MSG_REACT.
    Reaction,
}

/// A reaction entry's operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReactOp {
    Add,
    Remove,
}

/// One emoji's reactions on a message, as reads return them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReactionCount {
    pub emoji: String,
    /// How many users hold it (> 0).
    pub count: i64,
    /// Whether the reader holds it.
    pub me: bool,
}

/// Plain strings on the decode side, so client code can read frames without
/// re-validating ids the server already checked.
pub type ChannelIdWire = String;
/// See [`ChannelIdWire`].
pub type UserIdWire = String;

/// A MSG_RECV object with its `type` tag, as it appears inside SYNC_BATCH and history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum TaggedMessage {
    #[serde(rename = "MSG_RECV")]
    MsgRecv(RecvMessage),
}
