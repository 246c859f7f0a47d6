//! Client frames as they appear on the wire ([`ClientFrame`]), the refusal
//! of a frame ([`FrameError`]) and the first decoding step
//! ([`decode_client_frame`]): JSON, the `type` tag, each field's JSON type.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::*;
use crate::ids::ClientMsgId;

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

/// Decodes one text frame into a [`ClientFrame`].
///
/// # Errors
/// [`FrameError::BadFrame`] when the text is not a JSON object with a string
/// `type`; [`FrameError::UnknownType`]; [`FrameError::InvalidField`] naming the
/// first required field that is missing or of the wrong JSON type.
pub fn decode_client_frame(text: &str) -> Result<ClientFrame, FrameError> {
    // Fast path: one pass straight into the typed frame. Only a refusal takes
    // the slower path below, which finds the spec's code and the field. serde
    // reads a tagged enum from a JSON array too (`["MSG_SEND","room","k","hi"]`
    // would be taken as a send), and a frame is an object (the spec), so the
    // fast path takes objects only.
    // serde's tagged enum takes the last of two `type` keys without a word,
    // so a text naming `"type"` more than once (rare: the name can also be
    // a key inside a field's value) takes the slow path, which checks.
    let typed = match is_json_object(text).then(|| serde_json::from_str::<ClientFrame>(text)) {
        Some(Ok(frame)) if text.matches("\"type\"").nth(1).is_none() => return Ok(frame),
        Some(Ok(_)) => None,
        Some(Err(e)) => Some(e),
        None => return Err(FrameError::BadFrame(not_an_object(text))),
    };
    let value: Value = serde_json::from_str(text)
        .map_err(|e| FrameError::BadFrame(format!("not valid JSON ({})", e.classify_name())))?;
    let Value::Object(map) = value else {
        return Err(FrameError::BadFrame("not a JSON object".into()));
    };
    // Which `type` counts must not depend on the parser either (`Map` keeps
    // the last value, a proxy may take the first).
    if type_given_twice(text) {
        return Err(FrameError::InvalidField {
            field: "type",
            reason: "appears more than once".into(),
            client_msg_id: valid_client_msg_id(&map),
        });
    }
    let Some(typed) = typed else {
        // Decoded, with one top-level `type`: the other `"type"`s are inside values.
        return serde_json::from_value(Value::Object(map))
            .map_err(|e| FrameError::BadFrame(format!("cannot decode frame ({})", e.classify_name())));
    };
    let Some(Value::String(ty)) = map.get("type") else {
        return Err(FrameError::BadFrame("no string field \"type\"".into()));
    };
    let Some((_, fields)) = CLIENT_TYPES.iter().find(|(name, _)| name == ty) else {
        return Err(FrameError::UnknownType);
    };
    if let Some(err) = check_field_kinds(&map, fields) {
        return Err(err);
    }
    // The typed decoder refuses a field given twice, where `Map` keeps the
    // last value: refuse it here too, so which value counts never depends on
    // the parser (RFC 8259 §4 leaves repeated names unspecified).
    if let Some(field) = repeated_field(&typed, fields) {
        return Err(FrameError::InvalidField {
            field,
            reason: "appears more than once".into(),
            client_msg_id: valid_client_msg_id(&map),
        });
    }
    serde_json::from_value(Value::Object(map))
        .map_err(|e| FrameError::BadFrame(format!("cannot decode frame ({})", e.classify_name())))
}

/// Whether the JSON object `text` has the top-level key `type` more than
/// once (read key by key, values skipped; `false` when it is not an object).
fn type_given_twice(text: &str) -> bool {
    struct TypeKeys(usize);
    impl<'de> Deserialize<'de> for TypeKeys {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Count;
            impl<'de> serde::de::Visitor<'de> for Count {
                type Value = TypeKeys;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("a JSON object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<TypeKeys, A::Error> {
                    let mut n = 0;
                    while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                        map.next_value::<serde::de::IgnoredAny>()?;
                        n += usize::from(key == "type");
                    }
                    Ok(TypeKeys(n))
                }
            }
            deserializer.deserialize_map(Count)
        }
    }
    serde_json::from_str::<TypeKeys>(text).is_ok_and(|keys| keys.0 > 1)
}

/// Whether `text` starts, after JSON whitespace (RFC 8259 §2), with `{`:
/// the only JSON value that can be a frame is an object.
pub(super) fn is_json_object(text: &str) -> bool {
    text.trim_start_matches([' ', '\t', '\n', '\r']).starts_with('{')
}

/// The refusal of a text that is not a JSON object: whether it is JSON at all.
fn not_an_object(text: &str) -> String {
    match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Ok(_) => "not a JSON object".into(),
        Err(e) => format!("not valid JSON ({})", e.classify_name()),
    }
}

/// The frame's `clientMsgId` when it is a valid id, to echo in a refusal.
fn valid_client_msg_id(map: &Map<String, Value>) -> Option<String> {
    map.get("clientMsgId")
        .and_then(Value::as_str)
        .filter(|s| ClientMsgId::parse(s).is_ok())
        .map(str::to_owned)
}

/// The field of `fields` (or `type`) that serde's "duplicate field" error
/// names, if that is what `error` is.
fn repeated_field(error: &serde_json::Error, fields: &[(&'static str, Kind, bool)]) -> Option<&'static str> {
    let message = error.to_string();
    let name = message.strip_prefix("duplicate field `")?.split('`').next()?;
    std::iter::once("type")
        .chain(fields.iter().map(|(field, _, _)| *field))
        .find(|field| *field == name)
}

fn check_field_kinds(map: &Map<String, Value>, fields: &[(&'static str, Kind, bool)]) -> Option<FrameError> {
    let client_msg_id = valid_client_msg_id(map);
    for (field, kind, required) in fields {
        let reason = match (map.get(*field), kind) {
            (None | Some(Value::Null), _) if !required => continue,
            (None, _) => "is required",
            (Some(Value::String(_)), Kind::Str) => continue,
            (Some(Value::Number(n)), Kind::Int) if n.is_i64() => continue,
            (Some(Value::Number(n)), Kind::Int) if n.is_u64() => "is out of range",
            (Some(Value::Bool(_)), Kind::Bool) => continue,
            (Some(Value::Array(_)), Kind::Array) => continue,
            (Some(_), Kind::Str) => "must be a string",
            (Some(_), Kind::Int) => "must be an integer",
            (Some(_), Kind::Bool) => "must be true or false",
            (Some(_), Kind::Array) => "must be an array",
        };
        return Some(FrameError::InvalidField {
            field,
            reason: reason.into(),
            client_msg_id,
        });
    }
    None
}

trait ClassifyName {
    fn classify_name(&self) -> &'static str;
}

impl ClassifyName for serde_json::Error {
    fn classify_name(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "io",
            serde_json::error::Category::Syntax => "syntax error",
            serde_json::error::Category::Data => "unexpected data",
            serde_json::error::Category::Eof => "unexpected end of input",
        }
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
