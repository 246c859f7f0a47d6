//! Client frames as they appear on the wire ([`ClientFrame`]), the fields
//! each type has (`CLIENT_TYPES`) and the refusal of a frame
//! ([`FrameError`]); the first decoding step is `decode.rs`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::*;

/// A frame from client to server, as it appears on the wire (camelCase fields,
/// tagged on `type`). Unknown fields are ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ClientFrame {
    /// Store a message in a channel; answered by MSG_ACK or ERROR.
    #[serde(rename = "MSG_SEND", rename_all = "camelCase")]
    MsgSend {
        channel_id: String,
        client_msg_id: String,
        body: String,
        /// The `messageId` of the message this one quotes (§14).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reply_to: Option<String>,
        /// The `messageId` of the thread's root this message answers in (§14).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread_id: Option<String>,
        /// The users this message mentions (§16); elements are checked by
        /// [`ClientFrame::validate`], their number by the server
        /// (`max_mentions`, [`check_mentions_count`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mentions: Option<Vec<Value>>,
        /// `true`: the message mentions every member (moderators only, §16).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mention_all: Option<bool>,
        /// The `attachmentId`s of the sender's uploads this message carries
        /// (§15); elements are checked by [`ClientFrame::validate`], their
        /// number by the server (`max_attachments_per_message`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attachments: Option<Vec<Value>>,
    },
    /// "I have received everything up to and including this message."
    #[serde(rename = "MSG_DELIVERED", rename_all = "camelCase")]
    MsgDelivered { message_id: String },
    /// "I have read everything up to and including this message."
    #[serde(rename = "MSG_READ", rename_all = "camelCase")]
    MsgRead { message_id: String },
    /// Page through a channel's history after `afterSeq`, or back from
    /// `beforeSeq` (exclusive) or from the newest (`latest: true`); answered
    /// by SYNC_BATCH. `afterSeq` is required unless `beforeSeq` or `latest`
    /// is given, and ignored when `beforeSeq` is.
    #[serde(rename = "SYNC", rename_all = "camelCase")]
    Sync {
        channel_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after_seq: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before_seq: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        latest: Option<bool>,
        /// Only the replies of the thread of this root (§14).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread_id: Option<String>,
    },
    /// Replace the text of one's own message (`docs/protocol.md` §8); a log entry of kind `edit`.
    #[serde(rename = "MSG_EDIT", rename_all = "camelCase")]
    MsgEdit {
        client_msg_id: String,
        message_id: String,
        body: String,
    },
    /// Delete one's own message and erase its text; a log entry of kind `delete`.
    #[serde(rename = "MSG_DELETE", rename_all = "camelCase")]
    MsgDelete { client_msg_id: String, message_id: String },
    /// Add or remove a reaction; a log entry of kind `reaction`.
    #[serde(rename = "MSG_REACT", rename_all = "camelCase")]
    MsgReact {
        client_msg_id: String,
        message_id: String,
        emoji: String,
        /// `add` or `remove` (checked by [`ClientFrame::validate`]).
        op: String,
    },
    /// "I am typing in this channel" (`start`) or "I stopped" (`stop`). Never
    /// stored, never answered unless refused.
    #[serde(rename = "TYPING", rename_all = "camelCase")]
    Typing { channel_id: String, state: String },
    /// Replaces the session's presence subscription with these users (an
    /// empty list ends it). Elements are checked by [`ClientFrame::validate`].
    #[serde(rename = "PRESENCE_SUB", rename_all = "camelCase")]
    PresenceSub { user_ids: Vec<Value> },
}

/// The JSON kind a field must have, used to name the offending field.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Str,
    Int,
    Bool,
    Array,
}

/// A field's wire name, JSON kind, and whether it is required.
pub(super) type FieldSpec = (&'static str, Kind, bool);

/// Each client frame type with its fields.
pub(super) const CLIENT_TYPES: &[(&str, &[FieldSpec])] = &[
    (
        "MSG_SEND",
        &[
            ("clientMsgId", Kind::Str, true),
            ("channelId", Kind::Str, true),
            ("body", Kind::Str, true),
            ("replyTo", Kind::Str, false),
            ("threadId", Kind::Str, false),
            ("mentions", Kind::Array, false),
            ("mentionAll", Kind::Bool, false),
            ("attachments", Kind::Array, false),
        ],
    ),
    ("MSG_DELIVERED", &[("messageId", Kind::Str, true)]),
    ("MSG_READ", &[("messageId", Kind::Str, true)]),
    (
        "SYNC",
        &[
            ("channelId", Kind::Str, true),
            // Required unless `beforeSeq` or `latest` is given: checked by
            // `ClientFrame::validate`.
            ("afterSeq", Kind::Int, false),
            ("limit", Kind::Int, false),
            ("beforeSeq", Kind::Int, false),
            ("latest", Kind::Bool, false),
            ("threadId", Kind::Str, false),
        ],
    ),
    (
        "MSG_EDIT",
        &[
            ("clientMsgId", Kind::Str, true),
            ("messageId", Kind::Str, true),
            ("body", Kind::Str, true),
        ],
    ),
    (
        "MSG_DELETE",
        &[("clientMsgId", Kind::Str, true), ("messageId", Kind::Str, true)],
    ),
    (
        "MSG_REACT",
        &[
            ("clientMsgId", Kind::Str, true),
            ("messageId", Kind::Str, true),
            ("emoji", Kind::Str, true),
            ("op", Kind::Str, true),
        ],
    ),
    ("TYPING", &[("channelId", Kind::Str, true), ("state", Kind::Str, true)]),
    ("PRESENCE_SUB", &[("userIds", Kind::Array, true)]),
];

/// Longest `emoji` of MSG_REACT, bytes of UTF-8.
pub const MAX_EMOJI_BYTES: usize = 64;

/// The frame types whose `clientMsgId` is an idempotency key (echoed in
/// refusals): MSG_SEND and the log entries of §8.
pub(super) const KEYED_TYPES: &[&str] = &["MSG_SEND", "MSG_EDIT", "MSG_DELETE", "MSG_REACT"];

/// Why a client frame was refused, before or after decoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// Not JSON, not an object, no string `type`, or a binary frame.
    #[error("bad frame: {0}")]
    BadFrame(String),
    /// A `type` this server does not know.
    #[error("unknown frame type")]
    UnknownType,
    /// A field missing, of the wrong type, or outside its grammar or range.
    #[error("invalid field {field}: {reason}")]
    InvalidField {
        /// The wire name of the field (camelCase).
        field: &'static str,
        /// Safe to show to the client.
        reason: String,
        /// The send's `clientMsgId`, echoed when it was itself valid.
        client_msg_id: Option<String>,
    },
    /// A MSG_SEND body longer than `max_body_bytes`.
    #[error("body is {len} bytes, the limit is {max}")]
    BodyTooLarge {
        len: usize,
        max: usize,
        client_msg_id: Option<String>,
    },
}

impl FrameError {
    /// The spec's error code for this refusal.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::BadFrame(_) => ErrorCode::BadFrame,
            Self::UnknownType => ErrorCode::UnknownType,
            Self::InvalidField { .. } => ErrorCode::InvalidField,
            Self::BodyTooLarge { .. } => ErrorCode::BodyTooLarge,
        }
    }

    /// The ERROR frame that answers this refusal.
    pub fn to_error_frame(&self) -> ErrorFrame {
        let mut frame = ErrorFrame::new(self.code(), self.to_string());
        match self {
            Self::InvalidField {
                field, client_msg_id, ..
            } => {
                frame.field = Some((*field).to_owned());
                frame.client_msg_id = client_msg_id.clone();
            }
            Self::BodyTooLarge { client_msg_id, .. } => {
                frame.field = Some("body".to_owned());
                frame.client_msg_id = client_msg_id.clone();
            }
            _ => {}
        }
        frame
    }
}

/// Writes [`ClientFrame::type_name`] and [`ClientFrame::TYPE_NAMES`] from one
/// table, as `server_frame_names!` does for [`ServerFrame`]: the `match` is
/// exhaustive, so a new client frame cannot go without its name (and the
/// AsyncAPI document's test, which reads `TYPE_NAMES`, without its message).
macro_rules! client_frame_names {
    ($($variant:pat => $name:literal,)*) => {
        impl ClientFrame {
            /// Every `type` tag a client frame can have, in declaration order.
            pub const TYPE_NAMES: &'static [&'static str] = &[$($name),*];

            /// The `type` tag of this frame.
            pub fn type_name(&self) -> &'static str {
                match self {
                    $($variant => $name,)*
                }
            }
        }
    };
}

client_frame_names! {
    Self::MsgSend { .. } => "MSG_SEND",
    Self::MsgDelivered { .. } => "MSG_DELIVERED",
    Self::MsgRead { .. } => "MSG_READ",
    Self::Sync { .. } => "SYNC",
    Self::MsgEdit { .. } => "MSG_EDIT",
    Self::MsgDelete { .. } => "MSG_DELETE",
    Self::MsgReact { .. } => "MSG_REACT",
    Self::Typing { .. } => "TYPING",
    Self::PresenceSub { .. } => "PRESENCE_SUB",
}
