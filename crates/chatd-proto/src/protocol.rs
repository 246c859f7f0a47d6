//! The WebSocket frames of the wire contract (`docs/protocol.md` §5) and their codec.
//!
//! Client frames are decoded in two steps: [`decode_client_frame`] turns text
//! into the typed, tagged [`ClientFrame`] (refusing what is not JSON, not an
//! object, has no string `type`, an unknown `type` or a field of the wrong JSON
//! type), then [`ClientFrame::validate`] checks each field's grammar and range
//! and yields a [`Command`] whose ids are the validated newtypes of
//! [`crate::ids`]. Every refusal is a [`FrameError`] that maps onto one
//! [`ErrorCode`] of the spec. Nothing here touches a socket or the store.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::channel::{ChannelKind, Role, Visibility};
use crate::ids::{self, ChannelId, ClientMsgId, UserId, MAX_SEQ};

/// Default and maximum page size of SYNC and the history route.
pub const DEFAULT_PAGE: u32 = 100;
/// Largest `limit` accepted by SYNC and the history route.
pub const MAX_PAGE: u32 = 500;

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
enum Kind {
    Str,
    Int,
    Bool,
    Array,
}

/// A field's wire name, JSON kind, and whether it is required.
type FieldSpec = (&'static str, Kind, bool);

/// Each client frame type with its fields.
const CLIENT_TYPES: &[(&str, &[FieldSpec])] = &[
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
const KEYED_TYPES: &[&str] = &["MSG_SEND", "MSG_EDIT", "MSG_DELETE", "MSG_REACT"];

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
fn is_json_object(text: &str) -> bool {
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

/// The `clientMsgId` of a MSG_SEND (or MSG_EDIT, MSG_DELETE, MSG_REACT), read without decoding the rest of the
/// frame, when it is a valid id: for replies that echo it (`rate_limited`).
pub fn peek_client_msg_id(text: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Peek<'a> {
        #[serde(rename = "type", borrow)]
        ty: Option<std::borrow::Cow<'a, str>>,
        #[serde(rename = "clientMsgId", borrow)]
        client_msg_id: Option<std::borrow::Cow<'a, str>>,
    }
    let peek: Peek<'_> = serde_json::from_str(text).ok()?;
    if !peek.ty.as_deref().is_some_and(|ty| KEYED_TYPES.contains(&ty)) {
        return None;
    }
    let id = peek.client_msg_id?;
    ClientMsgId::parse(&id).ok().map(|_| id.into_owned())
}

/// What a MSG_SEND that failed its checks says about itself, read leniently:
/// enough to look its idempotency key up before answering (the wire
/// contract's guarantee 2: the key "is looked up before anything else about
/// the send").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendKey {
    /// The valid `clientMsgId`.
    pub client_msg_id: ClientMsgId,
    /// `channelId` when it is a JSON string (of any grammar).
    pub channel_id: Option<String>,
    /// `body` when it is a JSON string (of any length).
    pub body: Option<String>,
    /// `replyTo` as given: `None` when absent or `null`, its text when a
    /// string, the JSON text of any other value (which no stored id equals).
    pub reply_to: Option<String>,
    /// `threadId`, as `reply_to`.
    pub thread_id: Option<String>,
    /// `mentions` and `mentionAll` as the idempotency key compares them
    /// ([`mentions_key_of`]).
    pub mentions: MentionsKey,
    /// `attachments` as the idempotency key compares them
    /// ([`attachments_key_of`]).
    pub attachments: String,
}

/// The `attachments` of a send as its idempotency key covers them (§15):
/// the JSON array of the ids in the order given (`[]` when absent, `null`
/// or empty). A shape no valid send has gives a key no stored message has.
pub fn attachments_key_of(attachments: Option<&Value>) -> String {
    match attachments {
        None | Some(Value::Null) => "[]".to_owned(),
        Some(Value::Array(values)) if values.iter().all(Value::is_string) => {
            serde_json::to_string(values).unwrap_or_else(|_| " ".to_owned())
        }
        Some(other) => format!(" {other}"),
    }
}

/// The idempotency key text of stored attachment ids (as [`attachments_key_of`]).
pub fn attachment_ids_key(ids: &[uuid::Uuid]) -> String {
    let texts: Vec<String> = ids.iter().map(|id| id.hyphenated().to_string()).collect();
    serde_json::to_string(&texts).unwrap_or_default()
}

/// The mentions of a send as its idempotency key covers them (§16): `users`
/// the JSON array of the distinct ids, in byte order (`None`: none), and
/// `all`. A shape that no valid send has (not an array, an element that is
/// not a string, `mentionAll` not a boolean) gives a key no stored message
/// has, so it is never taken for a retry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MentionsKey {
    pub users: Option<String>,
    pub all: bool,
}

/// The [`MentionsKey`] of a send's raw `mentions` and `mentionAll` values
/// (absent or `null`: none, false).
pub fn mentions_key_of(mentions: Option<&Value>, mention_all: Option<&Value>) -> MentionsKey {
    // No stored key starts with a space: a bad shape never matches.
    let bad = |value: &Value| Some(format!(" {value}"));
    let users = match mentions {
        None | Some(Value::Null) => None,
        Some(Value::Array(values)) if values.is_empty() => None,
        Some(Value::Array(values)) => {
            let mut ids: Vec<&str> = Vec::with_capacity(values.len());
            let mut shape_ok = true;
            for value in values {
                match value {
                    Value::String(id) => ids.push(id),
                    _ => shape_ok = false,
                }
            }
            if shape_ok {
                ids.sort_unstable();
                ids.dedup();
                serde_json::to_string(&ids).ok()
            } else {
                bad(mentions.unwrap_or(&Value::Null))
            }
        }
        Some(other) => bad(other),
    };
    match mention_all {
        None | Some(Value::Null) => MentionsKey { users, all: false },
        Some(Value::Bool(all)) => MentionsKey { users, all: *all },
        Some(other) => MentionsKey {
            users: bad(other),
            all: false,
        },
    }
}

/// The [`SendKey`] of a MSG_SEND frame: `None` unless `text` is a JSON object
/// with `type` `MSG_SEND`, a valid `clientMsgId`, and no field given twice
/// (a repeated field leaves which value counts to the parser, so such a frame
/// is answered by its refusal alone). Unknown fields are ignored.
pub fn peek_send_key(text: &str) -> Option<SendKey> {
    #[derive(Deserialize)]
    struct Peek<'a> {
        #[serde(rename = "type", borrow)]
        ty: std::borrow::Cow<'a, str>,
        #[serde(rename = "clientMsgId", borrow)]
        client_msg_id: std::borrow::Cow<'a, str>,
        #[serde(rename = "channelId", default)]
        channel_id: Option<Value>,
        #[serde(default)]
        body: Option<Value>,
        #[serde(rename = "replyTo", default)]
        reply_to: Option<Value>,
        #[serde(rename = "threadId", default)]
        thread_id: Option<Value>,
        #[serde(default)]
        mentions: Option<Value>,
        #[serde(rename = "mentionAll", default)]
        mention_all: Option<Value>,
        #[serde(default)]
        attachments: Option<Value>,
    }
    // serde reads a struct from a JSON array too; a frame is an object.
    if !is_json_object(text) {
        return None;
    }
    let peek: Peek<'_> = serde_json::from_str(text).ok()?;
    if peek.ty != "MSG_SEND" {
        return None;
    }
    let text_of = |value: Option<Value>| match value {
        Some(Value::String(text)) => Some(text),
        _ => None,
    };
    let reference = |value: Option<Value>| match value {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text),
        Some(other) => Some(other.to_string()),
    };
    Some(SendKey {
        client_msg_id: ClientMsgId::parse(&peek.client_msg_id).ok()?,
        channel_id: text_of(peek.channel_id),
        body: text_of(peek.body),
        reply_to: reference(peek.reply_to),
        thread_id: reference(peek.thread_id),
        mentions: mentions_key_of(peek.mentions.as_ref(), peek.mention_all.as_ref()),
        attachments: attachments_key_of(peek.attachments.as_ref()),
    })
}

/// A validated client request, ready for the session to act on.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// MSG_SEND with every field in its grammar and the body within the limit.
    Send {
        channel_id: ChannelId,
        client_msg_id: ClientMsgId,
        body: String,
        /// The quoted message (`replyTo`, §14).
        reply_to: Option<uuid::Uuid>,
        /// The thread's root (`threadId`, §14).
        thread_id: Option<uuid::Uuid>,
        /// The mentioned users (§16), in the `userId` grammar, repeats
        /// removed (first kept); their number is the server's to check.
        mentions: Vec<UserId>,
        /// `mentionAll: true` (§16).
        mention_all: bool,
        /// The uploads it carries (§15), in order, each once; their number
        /// is the server's to check.
        attachments: Vec<uuid::Uuid>,
    },
    /// MSG_DELIVERED (`read == false`) or MSG_READ (`read == true`).
    Receipt { message_id: uuid::Uuid, read: bool },
    /// SYNC with its position checked ([`Page`]) and `limit` in 1..=500.
    Sync {
        channel_id: ChannelId,
        page: Page,
        limit: u32,
        /// Only this root's thread (`threadId`, §14).
        thread_id: Option<uuid::Uuid>,
    },
    /// MSG_EDIT, MSG_DELETE or MSG_REACT with every field in its grammar.
    Entry {
        client_msg_id: ClientMsgId,
        /// The target message (`messageId`).
        target: uuid::Uuid,
        /// What the entry does to its target.
        change: EntryChange,
    },
    /// TYPING: `start == true` for `"start"`, false for `"stop"`.
    Typing { channel_id: ChannelId, start: bool },
    /// PRESENCE_SUB with every id in the `userId` grammar, repeats removed
    /// (first occurrence kept). The count limit (`max_presence_subscriptions`)
    /// is the server's to check: [`check_presence_count`].
    PresenceSub { user_ids: Vec<UserId> },
}

/// What a MSG_EDIT, MSG_DELETE or MSG_REACT does to its target message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryChange {
    /// The new text (the grammar of a MSG_SEND body).
    Edit { body: String },
    /// Delete the message and erase its text.
    Delete,
    /// Add (`add == true`) or remove the user's reaction `emoji`.
    React { emoji: String, add: bool },
}

/// Checks an `emoji`: 1 to [`MAX_EMOJI_BYTES`] bytes, no control
/// characters, no whitespace.
///
/// # Errors
/// A reason safe to show to the client.
pub fn check_emoji(emoji: &str) -> Result<(), &'static str> {
    if emoji.is_empty() || emoji.len() > MAX_EMOJI_BYTES {
        return Err("must be 1 to 64 bytes of UTF-8");
    }
    if emoji.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err("must not contain control characters or whitespace");
    }
    Ok(())
}

/// Checks a body (MSG_SEND, MSG_EDIT): not empty, at most `max_body_bytes`
/// bytes, no U+0000. `echo` is the frame's valid `clientMsgId`.
fn check_body(body: &str, max_body_bytes: usize, echo: Option<String>) -> Result<(), FrameError> {
    if body.is_empty() {
        return Err(invalid("body", "must not be empty", echo));
    }
    if body.len() > max_body_bytes {
        return Err(FrameError::BodyTooLarge {
            len: body.len(),
            max: max_body_bytes,
            client_msg_id: echo,
        });
    }
    if body.contains('\0') {
        return Err(invalid("body", "must not contain U+0000", echo));
    }
    Ok(())
}

/// Which page of a channel's log a SYNC or a history request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    /// The first `limit` entries with `seq > n` (`afterSeq`, 0..=2^53−1).
    After(i64),
    /// The last `limit` entries with `seq < n` (`beforeSeq`, 1..=2^53−1;
    /// `latest` is `Before(i64::MAX)`), returned in increasing `seq`.
    Before(i64),
}

impl Page {
    /// The page that `afterSeq`, `beforeSeq` and `latest` ask for, checked:
    /// `beforeSeq` wins over `afterSeq`; `latest` may not be combined with
    /// `beforeSeq`; without either, `afterSeq` is required when
    /// `after_required` (SYNC), else it defaults to 0 (the history route).
    ///
    /// # Errors
    /// The offending field's wire name and a reason safe to show the client.
    pub fn from_fields(
        after_seq: Option<i64>,
        before_seq: Option<i64>,
        latest: Option<bool>,
        after_required: bool,
    ) -> Result<Self, (&'static str, &'static str)> {
        let latest = latest.unwrap_or(false);
        if let Some(before) = before_seq {
            if latest {
                return Err(("latest", "cannot be combined with beforeSeq"));
            }
            return check_before_seq(before).map(Page::Before).map_err(|r| ("beforeSeq", r));
        }
        if latest {
            return Ok(Page::Before(i64::MAX));
        }
        match after_seq {
            Some(after) => check_after_seq(after).map(Page::After).map_err(|r| ("afterSeq", r)),
            None if after_required => Err(("afterSeq", "is required (or beforeSeq, or latest: true)")),
            None => Ok(Page::After(0)),
        }
    }
}

/// Checks a `beforeSeq` value: 1 to 2^53 − 1.
///
/// # Errors
/// A reason safe to show to the client.
pub fn check_before_seq(before_seq: i64) -> Result<i64, &'static str> {
    if (1..=MAX_SEQ).contains(&before_seq) {
        Ok(before_seq)
    } else {
        Err("must be between 1 and 2^53-1")
    }
}

/// Checks the number of ids of a PRESENCE_SUB against `max`.
///
/// # Errors
/// [`FrameError::InvalidField`] naming `userIds`.
pub fn check_presence_count(count: usize, max: usize) -> Result<(), FrameError> {
    if count > max {
        return Err(invalid(
            "userIds",
            format!("holds {count} ids, the limit is {max}"),
            None,
        ));
    }
    Ok(())
}

impl ClientFrame {
    /// Checks every field's grammar and range (`docs/protocol.md` §1, §5).
    ///
    /// `max_body_bytes` is the configured body limit in bytes of UTF-8.
    ///
    /// # Errors
    /// [`FrameError::InvalidField`] naming the field, or
    /// [`FrameError::BodyTooLarge`]. Errors about a send carry its
    /// `clientMsgId` when that id was itself valid.
    pub fn validate(self, max_body_bytes: usize) -> Result<Command, FrameError> {
        match self {
            ClientFrame::MsgSend {
                channel_id,
                client_msg_id,
                body,
                reply_to,
                thread_id,
                mentions,
                mention_all,
                attachments,
            } => {
                let client_msg_id = ClientMsgId::parse(&client_msg_id).map_err(|e| invalid("clientMsgId", e, None))?;
                let echo = || Some(client_msg_id.as_str().to_owned());
                let channel_id = ChannelId::parse(&channel_id).map_err(|e| invalid("channelId", e, echo()))?;
                let attachments = attachment_list(attachments.as_deref().unwrap_or_default(), echo())?;
                // With attachments, the body may be empty (§15).
                if !body.is_empty() || attachments.is_empty() {
                    check_body(&body, max_body_bytes, echo())?;
                }
                let reply_to = reference("replyTo", reply_to.as_deref(), echo())?;
                let thread_id = reference("threadId", thread_id.as_deref(), echo())?;
                let mentions = user_list("mentions", mentions.as_deref().unwrap_or_default(), echo())?;
                Ok(Command::Send {
                    channel_id,
                    client_msg_id,
                    body,
                    reply_to,
                    thread_id,
                    mentions,
                    mention_all: mention_all.unwrap_or(false),
                    attachments,
                })
            }
            ClientFrame::MsgDelivered { message_id } => Ok(Command::Receipt {
                message_id: ids::parse_message_id(&message_id)
                    .map_err(|_| invalid("messageId", "must be a lower-case hyphenated UUID", None))?,
                read: false,
            }),
            ClientFrame::MsgRead { message_id } => Ok(Command::Receipt {
                message_id: ids::parse_message_id(&message_id)
                    .map_err(|_| invalid("messageId", "must be a lower-case hyphenated UUID", None))?,
                read: true,
            }),
            ClientFrame::Sync {
                channel_id,
                after_seq,
                limit,
                before_seq,
                latest,
                thread_id,
            } => {
                let channel_id = ChannelId::parse(&channel_id).map_err(|e| invalid("channelId", e, None))?;
                let page = Page::from_fields(after_seq, before_seq, latest, true)
                    .map_err(|(field, reason)| invalid(field, reason, None))?;
                let limit = check_limit(limit).map_err(|r| invalid("limit", r, None))?;
                let thread_id = reference("threadId", thread_id.as_deref(), None)?;
                Ok(Command::Sync {
                    channel_id,
                    page,
                    limit,
                    thread_id,
                })
            }
            ClientFrame::MsgEdit {
                client_msg_id,
                message_id,
                body,
            } => {
                let (client_msg_id, target) = entry_ids(&client_msg_id, &message_id)?;
                check_body(&body, max_body_bytes, Some(client_msg_id.as_str().to_owned()))?;
                Ok(Command::Entry {
                    client_msg_id,
                    target,
                    change: EntryChange::Edit { body },
                })
            }
            ClientFrame::MsgDelete {
                client_msg_id,
                message_id,
            } => {
                let (client_msg_id, target) = entry_ids(&client_msg_id, &message_id)?;
                Ok(Command::Entry {
                    client_msg_id,
                    target,
                    change: EntryChange::Delete,
                })
            }
            ClientFrame::MsgReact {
                client_msg_id,
                message_id,
                emoji,
                op,
            } => {
                let (client_msg_id, target) = entry_ids(&client_msg_id, &message_id)?;
                let echo = || Some(client_msg_id.as_str().to_owned());
                check_emoji(&emoji).map_err(|r| invalid("emoji", r, echo()))?;
                let add = match op.as_str() {
                    "add" => true,
                    "remove" => false,
                    _ => return Err(invalid("op", "must be \"add\" or \"remove\"", echo())),
                };
                Ok(Command::Entry {
                    client_msg_id,
                    target,
                    change: EntryChange::React { emoji, add },
                })
            }
            ClientFrame::Typing { channel_id, state } => {
                let channel_id = ChannelId::parse(&channel_id).map_err(|e| invalid("channelId", e, None))?;
                let start = match state.as_str() {
                    "start" => true,
                    "stop" => false,
                    _ => return Err(invalid("state", "must be \"start\" or \"stop\"", None)),
                };
                Ok(Command::Typing { channel_id, start })
            }
            ClientFrame::PresenceSub { user_ids } => Ok(Command::PresenceSub {
                user_ids: user_list("userIds", &user_ids, None)?,
            }),
        }
    }
}

/// A list of user ids (`userIds`, `mentions`) checked: every element a
/// string in the `userId` grammar; repeats removed, the first kept.
fn user_list(field: &'static str, values: &[Value], echo: Option<String>) -> Result<Vec<UserId>, FrameError> {
    let mut seen = std::collections::HashSet::with_capacity(values.len());
    let mut ids = Vec::with_capacity(values.len());
    for value in values {
        let Value::String(text) = value else {
            return Err(invalid(field, "every element must be a string", echo));
        };
        let id = UserId::parse(text).map_err(|e| invalid(field, format!("an element {e}"), echo.clone()))?;
        if seen.insert(text.as_str()) {
            ids.push(id);
        }
    }
    Ok(ids)
}

/// Checks the number of distinct users a MSG_SEND mentions against
/// `max_mentions` (§16). `echo`: the send's `clientMsgId`.
///
/// # Errors
/// [`FrameError::InvalidField`] naming `mentions`.
pub fn check_mentions_count(count: usize, max: usize, echo: Option<String>) -> Result<(), FrameError> {
    if count > max {
        return Err(invalid(
            "mentions",
            format!("holds {count} users, the limit is {max}"),
            echo,
        ));
    }
    Ok(())
}

impl Command {
    /// This command, unless it is a send that mentions more than `max`
    /// distinct users (`max_mentions`, §16).
    ///
    /// # Errors
    /// [`FrameError::InvalidField`] naming `mentions`, echoing the send's
    /// `clientMsgId`.
    pub fn with_mentions_within(self, max: usize) -> Result<Self, FrameError> {
        if let Command::Send {
            mentions,
            client_msg_id,
            ..
        } = &self
        {
            check_mentions_count(mentions.len(), max, Some(client_msg_id.as_str().to_owned()))?;
        }
        Ok(self)
    }

    /// This command, unless it is a send with more than `max` attachments
    /// (`max_attachments_per_message`, §15).
    ///
    /// # Errors
    /// [`FrameError::InvalidField`] naming `attachments`, echoing the
    /// send's `clientMsgId`.
    pub fn with_attachments_within(self, max: usize) -> Result<Self, FrameError> {
        if let Command::Send {
            attachments,
            client_msg_id,
            ..
        } = &self
        {
            check_attachments_count(attachments.len(), max, Some(client_msg_id.as_str().to_owned()))?;
        }
        Ok(self)
    }
}

/// The `clientMsgId` and target `messageId` of a log entry frame, checked.
fn entry_ids(client_msg_id: &str, message_id: &str) -> Result<(ClientMsgId, uuid::Uuid), FrameError> {
    let client_msg_id = ClientMsgId::parse(client_msg_id).map_err(|e| invalid("clientMsgId", e, None))?;
    let target = ids::parse_message_id(message_id).map_err(|_| {
        invalid(
            "messageId",
            "must be a lower-case hyphenated UUID",
            Some(client_msg_id.as_str().to_owned()),
        )
    })?;
    Ok((client_msg_id, target))
}

/// A `replyTo` or `threadId` (`field`), checked: absent, or a `messageId`.
///
/// # Errors
/// [`FrameError::InvalidField`] naming `field`, echoing `echo`.
fn reference(field: &'static str, id: Option<&str>, echo: Option<String>) -> Result<Option<uuid::Uuid>, FrameError> {
    id.map(|id| ids::parse_message_id(id).map_err(|_| invalid(field, "must be a lower-case hyphenated UUID", echo)))
        .transpose()
}

/// A send's `attachments` checked (§15): every element an attachment id (a
/// lower-case hyphenated UUID), none repeated.
fn attachment_list(values: &[Value], echo: Option<String>) -> Result<Vec<uuid::Uuid>, FrameError> {
    let mut ids: Vec<uuid::Uuid> = Vec::with_capacity(values.len());
    for value in values {
        let id = value
            .as_str()
            .and_then(|text| ids::parse_message_id(text).ok())
            .ok_or_else(|| invalid("attachments", "every element must be an attachmentId", echo.clone()))?;
        if ids.contains(&id) {
            return Err(invalid("attachments", "an attachmentId is repeated", echo));
        }
        ids.push(id);
    }
    Ok(ids)
}

/// Checks the number of attachments of a MSG_SEND against
/// `max_attachments_per_message` (§15). `echo`: the send's `clientMsgId`.
///
/// # Errors
/// [`FrameError::InvalidField`] naming `attachments`.
pub fn check_attachments_count(count: usize, max: usize, echo: Option<String>) -> Result<(), FrameError> {
    if count > max {
        return Err(invalid(
            "attachments",
            format!("holds {count} attachments, the limit is {max}"),
            echo,
        ));
    }
    Ok(())
}

fn invalid(field: &'static str, reason: impl ToString, client_msg_id: Option<String>) -> FrameError {
    FrameError::InvalidField {
        field,
        reason: reason.to_string(),
        client_msg_id,
    }
}

/// Checks an `afterSeq` value: 0 to 2^53 − 1.
///
/// # Errors
/// A reason safe to show to the client.
pub fn check_after_seq(after_seq: i64) -> Result<i64, &'static str> {
    if (0..=MAX_SEQ).contains(&after_seq) {
        Ok(after_seq)
    } else {
        Err("must be between 0 and 2^53-1")
    }
}

/// Checks a page `limit`: absent means [`DEFAULT_PAGE`], else 1 to [`MAX_PAGE`].
///
/// # Errors
/// A reason safe to show to the client.
pub fn check_limit(limit: Option<i64>) -> Result<u32, &'static str> {
    match limit {
        None => Ok(DEFAULT_PAGE),
        Some(n) if (1..=i64::from(MAX_PAGE)).contains(&n) => u32::try_from(n).map_err(|_| "out of range"),
        Some(_) => Err("must be between 1 and 500"),
    }
}

/// Error codes of the wire contract (`docs/protocol.md` §5), snake_case on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    BadFrame,
    UnknownType,
    InvalidField,
    BodyTooLarge,
    Forbidden,
    NotFound,
    IdempotencyConflict,
    RateLimited,
    Unavailable,
    Internal,
}

impl ErrorCode {
    /// Whether the client may retry the same request unchanged.
    pub fn retryable(self) -> bool {
        matches!(self, Self::RateLimited | Self::Unavailable | Self::Internal)
    }

    /// The code as it appears on the wire and in metrics labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BadFrame => "bad_frame",
            Self::UnknownType => "unknown_type",
            Self::InvalidField => "invalid_field",
            Self::BodyTooLarge => "body_too_large",
            Self::Forbidden => "forbidden",
            Self::NotFound => "not_found",
            Self::IdempotencyConflict => "idempotency_conflict",
            Self::RateLimited => "rate_limited",
            Self::Unavailable => "unavailable",
            Self::Internal => "internal",
        }
    }
}

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
    let mut end = text.len().min(PREVIEW_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
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

/// One channel's state in HELLO.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelState {
    pub channel_id: String,
    /// Highest stored `seq` (0 when empty).
    pub last_seq: i64,
    /// This user's delivered watermark.
    pub delivered_seq: i64,
    /// This user's read watermark (≤ `delivered_seq`).
    pub read_seq: i64,
    /// `message` entries after `read_seq` that are not deleted and not sent
    /// by this user (§8); 0 from a server before v1.1.
    #[serde(default)]
    pub unread: i64,
    /// The channel's display name (`PATCH /v1/channels/{channelId}`), `null` when unset.
    #[serde(default)]
    pub name: Option<String>,
    /// The channel's metadata, a JSON object, `null` when unset.
    #[serde(default)]
    pub metadata: Option<Value>,
    /// `group` or `direct` (version 1.2; `group` from an older server).
    #[serde(default)]
    pub kind: ChannelKind,
    /// `private` or `public` (version 1.2; `private` from an older server).
    #[serde(default)]
    pub visibility: Visibility,
    /// How many members the channel has (version 1.2; 0 from an older server).
    #[serde(default)]
    pub member_count: i64,
    /// This user's role in the channel (version 1.2; `member` from an older server).
    #[serde(default)]
    pub role: Role,
    /// Those of `unread` that mention this user or mention all (§16; 0
    /// from an older server).
    #[serde(default)]
    pub unread_mentions: i64,
    /// This user's notification setting in the channel (§16; `all` from an
    /// older server).
    #[serde(default)]
    pub notify: Notify,
    /// This user's snooze in the channel, ms since the epoch, as set
    /// (`null`: none; a time in the past has ended).
    #[serde(default)]
    pub snooze_until: Option<i64>,
    /// Who may post messages (§17): `member` (anyone; also from an older
    /// server) or `moderator` (an announcement channel).
    #[serde(default)]
    pub posting_role: Role,
    /// Slow mode (§17): ms a `member` waits between two messages; 0 when
    /// off (also from an older server).
    #[serde(default)]
    pub slow_mode_ms: i64,
    /// The channel's own retention (§19), seconds (0: forever); absent when
    /// unset (the server's `retention_secs` applies) and from an older server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention_secs: Option<i64>,
}

/// Whom a user wants notified of in a channel (§16): `all` messages (the
/// default), those that `mentions` them or all, or `none`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Notify {
    #[default]
    All,
    Mentions,
    None,
}

impl Notify {
    /// The wire text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::Mentions => "mentions",
            Self::None => "none",
        }
    }

    /// Parses the wire text; `None` for any other.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "all" => Self::All,
            "mentions" => Self::Mentions,
            "none" => Self::None,
            _ => return None,
        })
    }
}

/// Why a user is no longer in a channel (`CHANNEL_REMOVED`'s `reason`, §13.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RemovedReason {
    /// The user left (`DELETE /v1/me/channels/{channelId}`).
    Left,
    /// An owner, moderator or the admin removed it.
    Removed,
    /// It was banned (moderation).
    Banned,
    /// The channel was deleted.
    Deleted,
    /// A reason this version does not know (a newer server).
    #[serde(other)]
    Other,
}

/// What a `MEMBER` frame announces (§13.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemberOp {
    /// The user became a member (with `role`).
    Join,
    /// The user is no longer a member (left or removed).
    Leave,
    /// The member's role changed (to `role`).
    Role,
    /// The member was muted until `mutedUntil` (`null`: unmuted).
    Mute,
    /// The user was banned (and so is no longer a member).
    Ban,
    /// An op this version does not know (a newer server).
    #[serde(other)]
    Other,
}

/// The `MEMBER` frame's fields (§13.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberFrame {
    pub channel_id: String,
    /// Whose membership changed.
    pub user_id: String,
    pub op: MemberOp,
    /// The role after a `join` or `role`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    /// Until when (ms since the epoch) for a `mute`; `null` to unmute.
    /// Absent for other ops.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "muted_until")]
    pub muted_until: Option<Option<i64>>,
    /// The user who made the change; absent when the admin token made it
    /// (or for a user's own join or leave made with the admin token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_id: Option<String>,
    /// The channel's `lastSeq` when the change took effect: entries above it
    /// were judged with it, entries at or below it without.
    pub after_seq: i64,
    /// When the change was stored, ms since the epoch.
    pub ts: i64,
}

/// `mutedUntil`: absent (`None`), `null` (`Some(None)`) or a time.
mod muted_until {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Option<Option<i64>>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(Some(ts)) => s.serialize_i64(*ts),
            _ => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<i64>>, D::Error> {
        Option::<i64>::deserialize(d).map(Some)
    }
}

/// The MSG_ACK frame's fields: the send is stored and committed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AckFrame {
    /// The sender's idempotency key, as sent.
    pub client_msg_id: String,
    /// Server-assigned UUIDv7 of the stored message.
    pub message_id: uuid::Uuid,
    pub channel_id: String,
    /// Position in the channel, 1-based and gapless.
    pub seq: i64,
    /// Stored time, ms since the Unix epoch.
    pub ts: i64,
    /// `true` when the key was already stored: this is the original message.
    pub duplicate: bool,
}

/// The ERROR frame's fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorFrame {
    pub code: ErrorCode,
    pub message: String,
    pub retryable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_msg_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_id: Option<String>,
    /// With `rate_limited`, or a refusal that ends by itself (`muted`,
    /// `slow_mode`): milliseconds to wait before sending again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// Version 1.2: a lower-case word telling refusals of one code apart
    /// (`muted`, `banned`, `blocked`, `slow_mode`, `read_only`, `dm_policy`,
    /// `too_many_reactions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl ErrorFrame {
    /// An ERROR with `retryable` taken from the code.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retryable: code.retryable(),
            field: None,
            client_msg_id: None,
            message_id: None,
            channel_id: None,
            retry_after_ms: None,
            reason: None,
        }
    }
}

/// Watermark kinds carried by RECEIPT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReceiptKind {
    Delivered,
    Read,
}

/// The `state` of a TYPING frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TypingState {
    Start,
    Stop,
}

/// The `status` of a PRESENCE frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PresenceStatus {
    Online,
    Offline,
}

/// A frame from server to client.
// MSG_RECV, the most frequent frame, is also the largest (§14's fields made
// it pass clippy's bound): kept inline, since boxing it would cost one more
// allocation for every MSG_RECV decoded or built, to save stack space of
// the rare small frames.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ServerFrame {
    /// First frame of every session.
    #[serde(rename = "HELLO", rename_all = "camelCase")]
    Hello {
        user_id: String,
        session_id: String,
        server_ts: i64,
        channels: Vec<ChannelState>,
    },
    /// The send is stored and committed (or was already: `duplicate`).
    #[serde(rename = "MSG_ACK")]
    MsgAck(AckFrame),
    /// A message stored in one of the user's channels.
    #[serde(rename = "MSG_RECV")]
    MsgRecv(RecvMessage),
    /// A watermark moved.
    #[serde(rename = "RECEIPT", rename_all = "camelCase")]
    Receipt {
        channel_id: String,
        user_id: String,
        kind: ReceiptKind,
        message_id: uuid::Uuid,
        seq: i64,
        ts: i64,
    },
    /// One page of history, the answer to SYNC.
    #[serde(rename = "SYNC_BATCH", rename_all = "camelCase")]
    SyncBatch {
        channel_id: String,
        messages: Vec<TaggedMessage>,
        has_more: bool,
        /// The channel's last seq at the read (§8): the state of each
        /// `message` entry includes every entry up to it, so a client folds
        /// only later entries onto it. Absent from a server before v1.1.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        last_seq: Option<i64>,
        /// The thread's root when the SYNC asked for one thread (§14).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread_id: Option<uuid::Uuid>,
    },
    /// A refusal; the connection stays open.
    #[serde(rename = "ERROR")]
    Error(ErrorFrame),
    /// The user is no longer in the channel (§13.3): it left, was removed or
    /// banned (after its `MEMBER` `leave` or `ban`), or the channel was
    /// deleted. Nothing more comes for it.
    #[serde(rename = "CHANNEL_REMOVED", rename_all = "camelCase")]
    ChannelRemoved {
        channel_id: String,
        /// Why; absent from a server before version 1.2 (a deletion).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<RemovedReason>,
    },
    /// The user was added to a channel (version 1.2, §13.3), on every live
    /// session, before any `MSG_RECV` or `MEMBER` of it: its HELLO entry.
    #[serde(rename = "CHANNEL_ADDED")]
    ChannelAdded { channel: ChannelState },
    /// The user's notification settings in a channel changed (§16, this
    /// server's frame: the contract names none), on every live session of
    /// the user, on every node, so its other sessions update at once.
    #[serde(rename = "CHANNEL_SETTINGS", rename_all = "camelCase")]
    ChannelSettings {
        channel_id: String,
        notify: Notify,
        /// Snoozed until then (ms since the epoch); `null`: no snooze.
        snooze_until: Option<i64>,
    },
    /// A channel's shared settings changed (`PATCH /v1/channels/{id}`; this
    /// server's frame, the contract names none): its name, metadata,
    /// visibility, `postingRole`, `slowModeMs` and `retentionSecs` as they are now, to every
    /// live session of its members, on every node, after the change is
    /// stored.
    #[serde(rename = "CHANNEL_UPDATED", rename_all = "camelCase")]
    ChannelUpdated {
        channel_id: String,
        name: Option<String>,
        metadata: Option<Value>,
        visibility: Visibility,
        posting_role: Role,
        slow_mode_ms: i64,
        /// The channel's own retention in seconds (§19); absent when unset.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retention_secs: Option<i64>,
    },
    /// A membership change in one of the user's channels (version 1.2,
    /// §13.3), taking effect between the entries `afterSeq` and
    /// `afterSeq + 1`.
    #[serde(rename = "MEMBER")]
    Member(MemberFrame),
    /// Another member started or stopped typing in a channel. A `start`
    /// carries `expiresAt` (ms since the epoch): past it, show nothing, even
    /// if no `stop` came (a stop may be lost).
    #[serde(rename = "TYPING", rename_all = "camelCase")]
    Typing {
        channel_id: String,
        user_id: String,
        state: TypingState,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expires_at: Option<i64>,
    },
    /// A subscribed user's presence: once per id right after PRESENCE_SUB,
    /// then once per change. `lastSeenAt` (ms since the epoch) only when
    /// `offline` and known.
    #[serde(rename = "PRESENCE", rename_all = "camelCase")]
    Presence {
        user_id: String,
        status: PresenceStatus,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        last_seen_at: Option<i64>,
    },
}

impl ServerFrame {
    /// The JSON text of the frame.
    pub fn encode(&self) -> String {
        // Serializing these types cannot fail: every map key is a string and
        // no field has a fallible Serialize impl.
        serde_json::to_string(self).unwrap_or_else(|_| {
            String::from("{\"type\":\"ERROR\",\"code\":\"internal\",\"message\":\"encode\",\"retryable\":true}")
        })
    }

    /// Decodes one text frame from the server.
    ///
    /// Equivalent to `serde_json::from_str::<ServerFrame>`, but the frequent
    /// frames (`MSG_RECV`, `MSG_ACK`, `ERROR`) skip serde's internally tagged
    /// enum path, which buffers every field into an intermediate `Content`
    /// tree before decoding it (serde's documented cost of `#[serde(tag)]`):
    /// the `type` is read first, then the frame's own struct straight from
    /// the text. The other frames take the generic path.
    ///
    /// # Errors
    /// The JSON error when the text is not a frame of a known type.
    pub fn decode(text: &str) -> Result<Self, serde_json::Error> {
        #[derive(Deserialize)]
        struct Tag<'a> {
            #[serde(rename = "type", borrow)]
            ty: std::borrow::Cow<'a, str>,
        }
        // chatd writes `type` first (the enum's tag), so the prefix usually
        // names the frame without a pass over the text; any other layout is
        // read with a pass that skips every other field.
        let tag = match ["MSG_RECV", "MSG_ACK", "ERROR"].into_iter().find(|ty| {
            text.strip_prefix("{\"type\":\"")
                .and_then(|t| t.strip_prefix(ty))
                .is_some_and(|t| t.starts_with('"'))
        }) {
            Some(ty) => Some(std::borrow::Cow::Borrowed(ty)),
            None => serde_json::from_str::<Tag<'_>>(text).ok().map(|t| t.ty),
        };
        match tag.as_deref() {
            Some("MSG_RECV") => serde_json::from_str(text).map(Self::MsgRecv),
            Some("MSG_ACK") => serde_json::from_str(text).map(Self::MsgAck),
            Some("ERROR") => serde_json::from_str(text).map(Self::Error),
            _ => serde_json::from_str(text),
        }
    }
}

/// Writes [`ServerFrame::type_name`] and [`ServerFrame::TYPE_NAMES`] from one
/// table, so that a new frame kind cannot be named by one and missing from the
/// other.
macro_rules! server_frame_names {
    ($($variant:pat => $name:literal,)*) => {
        impl ServerFrame {
            /// Every `type` tag a server frame can have, in declaration order.
            pub const TYPE_NAMES: &'static [&'static str] = &[$($name),*];

            /// The `type` tag, for metrics labels.
            pub fn type_name(&self) -> &'static str {
                match self {
                    $($variant => $name,)*
                }
            }

            /// The static `type` tag equal to `name`, if a server frame has it
            /// (a frame type read off the wire or from NATS, as a metrics label).
            pub fn known_type_name(name: &str) -> Option<&'static str> {
                Self::TYPE_NAMES.iter().copied().find(|known| *known == name)
            }
        }
    };
}

server_frame_names! {
    Self::Hello { .. } => "HELLO",
    Self::MsgAck(_) => "MSG_ACK",
    Self::MsgRecv(_) => "MSG_RECV",
    Self::Receipt { .. } => "RECEIPT",
    Self::SyncBatch { .. } => "SYNC_BATCH",
    Self::Error(_) => "ERROR",
    Self::ChannelRemoved { .. } => "CHANNEL_REMOVED",
    Self::ChannelAdded { .. } => "CHANNEL_ADDED",
    Self::ChannelSettings { .. } => "CHANNEL_SETTINGS",
    Self::ChannelUpdated { .. } => "CHANNEL_UPDATED",
    Self::Member(_) => "MEMBER",
    Self::Typing { .. } => "TYPING",
    Self::Presence { .. } => "PRESENCE",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_frame_type_name_is_listed_once() {
        let mut names = ServerFrame::TYPE_NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ServerFrame::TYPE_NAMES.len(), "a name listed twice");
        let frame = ServerFrame::decode(r#"{"type":"ERROR","code":"bad_frame","message":"m","retryable":false}"#)
            .expect("an ERROR frame");
        assert_eq!(ServerFrame::known_type_name(frame.type_name()), Some("ERROR"));
        assert_eq!(ServerFrame::known_type_name("MSG_SEND"), None, "a client frame");
    }

    /// `ClientFrame::TYPE_NAMES` is the decoder's table of types (`CLIENT_TYPES`),
    /// in the same order, and each name is what the frame serializes as.
    #[test]
    fn every_client_frame_type_name_is_the_decoders() {
        let table: Vec<&str> = CLIENT_TYPES.iter().map(|(name, _)| *name).collect();
        assert_eq!(ClientFrame::TYPE_NAMES, table.as_slice());
        let frame = ClientFrame::Typing {
            channel_id: "room".into(),
            state: "start".into(),
        };
        let json = serde_json::to_value(&frame).expect("json");
        assert_eq!(json["type"], frame.type_name());
        let frame = ClientFrame::PresenceSub { user_ids: Vec::new() };
        assert_eq!(serde_json::to_value(&frame).expect("json")["type"], frame.type_name());
    }

    #[test]
    fn frames_are_objects_never_arrays() {
        for text in [
            r#"["MSG_SEND","room","k","hi"]"#,
            "\n\t [\"SYNC\",\"room\",0]",
            r#"["MSG_READ","01938f5e-6c2a-7b3e-9d41-2f0c8a1b7e55"]"#,
        ] {
            match decode_client_frame(text) {
                Err(FrameError::BadFrame(reason)) => assert_eq!(reason, "not a JSON object", "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        assert!(matches!(decode_client_frame("[1,"), Err(FrameError::BadFrame(r)) if r.starts_with("not valid JSON")));
        assert!(decode_client_frame(" \r\n{\"type\":\"SYNC\",\"channelId\":\"room\",\"afterSeq\":0}").is_ok());
    }

    #[test]
    fn a_send_key_is_peeked_only_from_an_unambiguous_send() {
        let key = peek_send_key(r#"{"type":"MSG_SEND","clientMsgId":"k","channelId":"no room","body":7,"x":[1]}"#)
            .expect("a send");
        assert_eq!(key.client_msg_id.as_str(), "k");
        assert_eq!(key.channel_id.as_deref(), Some("no room"));
        assert_eq!(key.body, None, "a body that is not a string");
        for text in [
            r#"{"type":"MSG_READ","clientMsgId":"k"}"#,
            r#"{"type":"MSG_SEND","clientMsgId":"has space"}"#,
            r#"{"type":"MSG_SEND","body":"b"}"#,
            r#"{"type":"MSG_SEND","clientMsgId":"k","body":"a","body":"b"}"#,
            r#"{"type":"MSG_SEND","clientMsgId":"k","body":"\ud800"}"#,
            r#"["MSG_SEND","k"]"#,
            r#" ["MSG_SEND","k",null,"b"]"#,
            "not json",
        ] {
            assert_eq!(peek_send_key(text), None, "{text}");
        }
    }

    fn field_of(err: FrameError) -> &'static str {
        match err {
            FrameError::InvalidField { field, .. } => field,
            other => panic!("expected invalid_field, got {other:?}"),
        }
    }

    #[test]
    fn sync_pages_back_from_before_seq_or_the_newest() {
        let page = |text: &str| match decode_client_frame(text).and_then(|f| f.validate(16)) {
            Ok(Command::Sync { page, .. }) => Ok(page),
            Ok(other) => panic!("{other:?}"),
            Err(FrameError::InvalidField { field, .. }) => Err(field),
            Err(other) => panic!("{other:?}"),
        };
        assert_eq!(
            page(r#"{"type":"SYNC","channelId":"c","latest":true}"#),
            Ok(Page::Before(i64::MAX))
        );
        assert_eq!(
            page(r#"{"type":"SYNC","channelId":"c","beforeSeq":7,"afterSeq":3}"#),
            Ok(Page::Before(7))
        );
        assert_eq!(
            page(r#"{"type":"SYNC","channelId":"c","afterSeq":3,"latest":false}"#),
            Ok(Page::After(3))
        );
        assert_eq!(page(r#"{"type":"SYNC","channelId":"c"}"#), Err("afterSeq"));
        assert_eq!(
            page(r#"{"type":"SYNC","channelId":"c","beforeSeq":0}"#),
            Err("beforeSeq")
        );
        assert_eq!(
            page(r#"{"type":"SYNC","channelId":"c","beforeSeq":-1}"#),
            Err("beforeSeq")
        );
        assert_eq!(
            page(r#"{"type":"SYNC","channelId":"c","beforeSeq":"x"}"#),
            Err("beforeSeq")
        );
        assert_eq!(page(r#"{"type":"SYNC","channelId":"c","latest":1}"#), Err("latest"));
        assert_eq!(
            page(r#"{"type":"SYNC","channelId":"c","latest":true,"beforeSeq":5}"#),
            Err("latest")
        );
    }

    #[test]
    fn bad_frames_are_classified() {
        assert_eq!(decode_client_frame("nope").unwrap_err().code(), ErrorCode::BadFrame);
        assert_eq!(decode_client_frame("[1]").unwrap_err().code(), ErrorCode::BadFrame);
        assert_eq!(decode_client_frame("{}").unwrap_err().code(), ErrorCode::BadFrame);
        assert_eq!(
            decode_client_frame(r#"{"type":1}"#).unwrap_err().code(),
            ErrorCode::BadFrame
        );
        assert_eq!(
            decode_client_frame(r#"{"type":"msg_send"}"#).unwrap_err(),
            FrameError::UnknownType
        );
        let deep = "[".repeat(10_000);
        assert_eq!(decode_client_frame(&deep).unwrap_err().code(), ErrorCode::BadFrame);
    }

    #[test]
    fn missing_and_mistyped_fields_are_named() {
        let e = decode_client_frame(r#"{"type":"MSG_SEND","clientMsgId":"c1","channelId":"x"}"#).unwrap_err();
        assert_eq!(field_of(e), "body");
        let e = decode_client_frame(r#"{"type":"MSG_SEND","clientMsgId":"c1","channelId":7,"body":"b"}"#).unwrap_err();
        match e {
            FrameError::InvalidField {
                field, client_msg_id, ..
            } => {
                assert_eq!(field, "channelId");
                assert_eq!(client_msg_id.as_deref(), Some("c1"));
            }
            other => panic!("{other:?}"),
        }
        let e = decode_client_frame(r#"{"type":"SYNC","channelId":"c","afterSeq":1.5}"#).unwrap_err();
        assert_eq!(field_of(e), "afterSeq");
        let e = decode_client_frame(r#"{"type":"SYNC","channelId":"c","afterSeq":1,"limit":"x"}"#).unwrap_err();
        assert_eq!(field_of(e), "limit");
    }

    #[test]
    fn a_field_given_twice_is_refused_and_named() {
        let e =
            decode_client_frame(r#"{"type":"MSG_SEND","clientMsgId":"c1","channelId":"a","channelId":"b","body":"x"}"#)
                .unwrap_err();
        match e {
            FrameError::InvalidField {
                field,
                reason,
                client_msg_id,
            } => {
                assert_eq!(field, "channelId");
                assert_eq!(reason, "appears more than once");
                assert_eq!(client_msg_id.as_deref(), Some("c1"));
            }
            other => panic!("{other:?}"),
        }
        let e = decode_client_frame(r#"{"type":"SYNC","channelId":"c","afterSeq":1,"afterSeq":2}"#).unwrap_err();
        assert_eq!(field_of(e), "afterSeq");
        // two different types: refused in either order, never taken as the last one
        for text in [
            r#"{"type":"FOO","type":"MSG_SEND","channelId":"a","clientMsgId":"c1","body":"x"}"#,
            r#"{"type":"MSG_SEND","type":"FOO","channelId":"a","clientMsgId":"c1","body":"x"}"#,
            r#"{"type":"MSG_READ","channelId":"a","type":"MSG_SEND","clientMsgId":"c1","body":"x"}"#,
        ] {
            let e = decode_client_frame(text).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidField, "{text}");
            assert_eq!(field_of(e), "type", "{text}");
        }
        // `"type"` inside a value is not a second type
        let f = decode_client_frame(r#"{"type":"MSG_SEND","channelId":"a","clientMsgId":"c1","body":"\"type\""}"#);
        assert!(f.is_ok(), "{f:?}");
        let e = decode_client_frame(r#"{"type":"MSG_READ","type":"MSG_READ","messageId":"m"}"#).unwrap_err();
        assert_eq!(field_of(e), "type");
        // An unknown field may repeat: unknown fields are ignored.
        assert!(decode_client_frame(r#"{"type":"MSG_READ","messageId":"m","x":1,"x":2}"#).is_ok());
    }

    #[test]
    fn client_msg_id_can_be_peeked() {
        let send = r#"{"type":"MSG_SEND","channelId":"r","clientMsgId":"c-1","body":"b","x":[1,{"y":2}]}"#;
        assert_eq!(peek_client_msg_id(send).as_deref(), Some("c-1"));
        assert_eq!(
            peek_client_msg_id(r#"{"type":"MSG_SEND","clientMsgId":"bad id"}"#),
            None
        );
        assert_eq!(peek_client_msg_id(r#"{"type":"SYNC","clientMsgId":"c-1"}"#), None);
        assert_eq!(peek_client_msg_id("nope"), None);
    }

    #[test]
    fn fast_and_slow_paths_agree() {
        // Duplicate keys: the typed decoder refuses them, and so does the
        // slow path (it used to take the last one), naming the field.
        let dup = r#"{"type":"MSG_READ","messageId":"a","messageId":"b"}"#;
        assert_eq!(field_of(decode_client_frame(dup).unwrap_err()), "messageId");
        let ok = r#"{"type":"SYNC","channelId":"c","afterSeq":3}"#;
        assert_eq!(
            decode_client_frame(ok).unwrap(),
            ClientFrame::Sync {
                channel_id: "c".into(),
                after_seq: Some(3),
                limit: None,
                before_seq: None,
                latest: None,
                thread_id: None,
            }
        );
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let f = decode_client_frame(r#"{"type":"MSG_READ","messageId":"m","ts":5,"x":{"y":[]}}"#).unwrap();
        assert_eq!(f, ClientFrame::MsgRead { message_id: "m".into() });
    }

    #[test]
    fn reply_to_and_thread_id_are_message_ids_named_when_wrong() {
        let id = "0190a6e2-7b1c-7f00-8000-000000000001";
        let text = format!(
            r#"{{"type":"MSG_SEND","channelId":"c","clientMsgId":"k","body":"b","replyTo":"{id}","threadId":null}}"#
        );
        match decode_client_frame(&text).and_then(|f| f.validate(16)) {
            Ok(Command::Send {
                reply_to, thread_id, ..
            }) => {
                assert_eq!(reply_to.map(|u| u.to_string()).as_deref(), Some(id));
                assert_eq!(thread_id, None, "null is absent");
            }
            other => panic!("refused: {other:?}"),
        }
        for (field, value) in [
            ("replyTo", "\"x\""),
            ("threadId", "7"),
            ("threadId", "\"0190A6E2-7B1C-7F00-8000-000000000001\""),
        ] {
            let text =
                format!(r#"{{"type":"MSG_SEND","channelId":"c","clientMsgId":"k","body":"b","{field}":{value}}}"#);
            let error = decode_client_frame(&text).and_then(|f| f.validate(16)).unwrap_err();
            assert_eq!(error.code(), ErrorCode::InvalidField, "{text}");
            let frame = error.to_error_frame();
            assert_eq!(frame.field.as_deref(), Some(field), "{text}");
            assert_eq!(frame.client_msg_id.as_deref(), Some("k"), "{text}");
        }
        let sync = format!(r#"{{"type":"SYNC","channelId":"c","latest":true,"threadId":"{id}"}}"#);
        assert!(matches!(
            decode_client_frame(&sync).and_then(|f| f.validate(16)),
            Ok(Command::Sync { thread_id: Some(_), .. })
        ));
        let bad = r#"{"type":"SYNC","channelId":"c","latest":true,"threadId":"nope"}"#;
        assert_eq!(
            field_of(decode_client_frame(bad).and_then(|f| f.validate(16)).unwrap_err()),
            "threadId"
        );
        let key = peek_send_key(&format!(
            r#"{{"type":"MSG_SEND","clientMsgId":"k","replyTo":5,"threadId":"{id}"}}"#
        ))
        .unwrap();
        assert_eq!(key.reply_to.as_deref(), Some("5"));
        assert_eq!(key.thread_id.as_deref(), Some(id));
    }

    #[test]
    fn previews_are_cut_at_a_character_boundary() {
        assert_eq!(preview_text("short"), "short");
        assert_eq!(preview_text(&"x".repeat(300)).len(), PREVIEW_BYTES);
        // 'é' is two bytes: 199 bytes of 'x' then 'é' would end at 201.
        let text = format!("{}é", "x".repeat(199));
        assert_eq!(preview_text(&text), "x".repeat(199));
        let emoji = "🙂".repeat(60);
        assert_eq!(preview_text(&emoji).len(), 200, "50 four-byte characters");
    }

    #[test]
    fn attachments_are_checked_and_let_the_body_be_empty() {
        let id = "01a24a0f-85e2-7144-875a-7b61f7db7d78";
        let check = |fields: &str| {
            decode_client_frame(&format!(
                r#"{{"type":"MSG_SEND","channelId":"c","clientMsgId":"k",{fields}}}"#
            ))
            .and_then(|f| f.validate(16))
        };
        let ok = check(&format!(r#""body":"","attachments":["{id}"]"#)).expect("an empty body with attachments");
        assert!(matches!(&ok, Command::Send { attachments, .. } if attachments.len() == 1));
        assert_eq!(field_of(ok.with_attachments_within(0).unwrap_err()), "attachments");
        for bad in [
            format!(r#""body":"hi","attachments":["{id}","{id}"]"#),
            r#""body":"hi","attachments":["x"]"#.to_owned(),
            r#""body":"hi","attachments":[1]"#.to_owned(),
        ] {
            assert_eq!(field_of(check(&bad).unwrap_err()), "attachments", "{bad}");
        }
        assert_eq!(field_of(check(r#""body":"","attachments":[]"#).unwrap_err()), "body");
        assert_eq!(attachments_key_of(None), "[]");
        let listed = serde_json::json!([id]);
        assert_eq!(attachments_key_of(Some(&listed)), format!(r#"["{id}"]"#));
        assert_eq!(
            attachment_ids_key(&[uuid::Uuid::parse_str(id).expect("uuid")]),
            attachments_key_of(Some(&listed))
        );
    }

    #[test]
    fn mentions_are_checked_deduplicated_and_counted() {
        let decode = |text: &str| decode_client_frame(text).and_then(|f| f.validate(100));
        let ok = decode(
            r#"{"type":"MSG_SEND","channelId":"c","clientMsgId":"k","body":"hi","mentions":["bob","amy","bob"],"mentionAll":true}"#,
        );
        match ok {
            Ok(Command::Send {
                mentions, mention_all, ..
            }) => {
                assert_eq!(
                    mentions,
                    vec![UserId::parse("bob").unwrap(), UserId::parse("amy").unwrap()]
                );
                assert!(mention_all);
            }
            other => panic!("{other:?}"),
        }
        for bad in [
            r#""mentions":"bob""#,
            r#""mentions":[1]"#,
            r#""mentions":["b o b"]"#,
            r#""mentions":[".."]"#,
        ] {
            let text = format!(r#"{{"type":"MSG_SEND","channelId":"c","clientMsgId":"k","body":"hi",{bad}}}"#);
            let e = decode(&text).unwrap_err();
            assert_eq!(field_of(e.clone()), "mentions", "{bad}");
            assert_eq!(e.to_error_frame().client_msg_id.as_deref(), Some("k"), "{bad}");
        }
        let e = decode(r#"{"type":"MSG_SEND","channelId":"c","clientMsgId":"k","body":"hi","mentionAll":"yes"}"#);
        assert_eq!(field_of(e.unwrap_err()), "mentionAll");
        let three =
            decode(r#"{"type":"MSG_SEND","channelId":"c","clientMsgId":"k","body":"hi","mentions":["a","b","c","a"]}"#)
                .unwrap();
        assert!(three.clone().with_mentions_within(3).is_ok());
        assert_eq!(field_of(three.with_mentions_within(2).unwrap_err()), "mentions");
    }

    #[test]
    fn validation_checks_grammar_and_limits() {
        let send = |body: &str, cid: &str| ClientFrame::MsgSend {
            channel_id: "room".into(),
            client_msg_id: cid.into(),
            body: body.into(),
            reply_to: None,
            thread_id: None,
            mentions: None,
            mention_all: None,
            attachments: None,
        };
        assert!(matches!(send("hi", "c1").validate(16), Ok(Command::Send { .. })));
        assert_eq!(field_of(send("", "c1").validate(16).unwrap_err()), "body");
        assert_eq!(field_of(send("a\0b", "c1").validate(16).unwrap_err()), "body");
        assert_eq!(field_of(send("hi", "c 1").validate(16).unwrap_err()), "clientMsgId");
        let e = send(&"x".repeat(17), "c1").validate(16).unwrap_err();
        assert_eq!(e.code(), ErrorCode::BodyTooLarge);
        assert_eq!(e.to_error_frame().client_msg_id.as_deref(), Some("c1"));
        assert!(send(&"é".repeat(8), "c1").validate(16).is_ok());
        assert_eq!(
            send(&"é".repeat(9), "c1").validate(16).unwrap_err().code(),
            ErrorCode::BodyTooLarge
        );

        let sync = |after: i64, limit: Option<i64>| ClientFrame::Sync {
            channel_id: "room".into(),
            after_seq: Some(after),
            limit,
            before_seq: None,
            latest: None,
            thread_id: None,
        };
        assert!(matches!(
            sync(0, None).validate(16),
            Ok(Command::Sync { limit: 100, .. })
        ));
        assert_eq!(field_of(sync(-1, None).validate(16).unwrap_err()), "afterSeq");
        assert_eq!(field_of(sync(MAX_SEQ + 1, None).validate(16).unwrap_err()), "afterSeq");
        assert_eq!(field_of(sync(0, Some(0)).validate(16).unwrap_err()), "limit");
        assert_eq!(field_of(sync(0, Some(501)).validate(16).unwrap_err()), "limit");
        assert!(sync(MAX_SEQ, Some(500)).validate(16).is_ok());
    }

    #[test]
    fn entry_frames_decode_and_validate() {
        let id = "01938f5e-6c2a-7b3e-9d41-2f0c8a1b7e55";
        let target = uuid::Uuid::try_parse(id).unwrap();
        let edit = format!(r#"{{"type":"MSG_EDIT","clientMsgId":"k1","messageId":"{id}","body":"fixed"}}"#);
        assert_eq!(
            decode_client_frame(&edit).unwrap().validate(16).unwrap(),
            Command::Entry {
                client_msg_id: ClientMsgId::parse("k1").unwrap(),
                target,
                change: EntryChange::Edit { body: "fixed".into() },
            }
        );
        let delete = format!(r#"{{"type":"MSG_DELETE","clientMsgId":"k2","messageId":"{id}"}}"#);
        assert!(matches!(
            decode_client_frame(&delete).unwrap().validate(16),
            Ok(Command::Entry {
                change: EntryChange::Delete,
                ..
            })
        ));
        let react = |emoji: &str, op: &str| {
            let text = serde_json::json!({"type":"MSG_REACT","clientMsgId":"k3","messageId":id,"emoji":emoji,"op":op})
                .to_string();
            decode_client_frame(&text).and_then(|f| f.validate(16))
        };
        assert_eq!(
            react("👍", "remove").unwrap(),
            Command::Entry {
                client_msg_id: ClientMsgId::parse("k3").unwrap(),
                target,
                change: EntryChange::React {
                    emoji: "👍".into(),
                    add: false
                },
            }
        );
        assert!(react(&"a".repeat(64), "add").is_ok());
        for (emoji, op, field) in [
            ("", "add", "emoji"),
            (&*"a".repeat(65), "add", "emoji"),
            ("a b", "add", "emoji"),
            ("a\u{7}", "add", "emoji"),
            ("a\u{3000}", "add", "emoji"),
            ("👍", "toggle", "op"),
            ("👍", "ADD", "op"),
        ] {
            let e = react(emoji, op).unwrap_err();
            assert_eq!(e.to_error_frame().client_msg_id.as_deref(), Some("k3"));
            assert_eq!(field_of(e), field, "{emoji:?} {op:?}");
        }
        // Grammar errors of the body and the target, echoing the key.
        let e = decode_client_frame(&format!(
            r#"{{"type":"MSG_EDIT","clientMsgId":"k1","messageId":"{id}","body":""}}"#
        ))
        .unwrap()
        .validate(16)
        .unwrap_err();
        assert_eq!(field_of(e), "body");
        let e = decode_client_frame(&format!(
            r#"{{"type":"MSG_EDIT","clientMsgId":"k1","messageId":"{id}","body":"{}"}}"#,
            "x".repeat(17)
        ))
        .unwrap()
        .validate(16)
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::BodyTooLarge);
        assert_eq!(e.to_error_frame().client_msg_id.as_deref(), Some("k1"));
        let e = decode_client_frame(r#"{"type":"MSG_DELETE","clientMsgId":"k1","messageId":"NOPE"}"#)
            .unwrap()
            .validate(16)
            .unwrap_err();
        assert_eq!(e.to_error_frame().client_msg_id.as_deref(), Some("k1"));
        assert_eq!(field_of(e), "messageId");
        // Missing and mistyped fields are named by the decoder.
        let e =
            decode_client_frame(r#"{"type":"MSG_REACT","clientMsgId":"k1","messageId":"m","emoji":"x"}"#).unwrap_err();
        assert_eq!(field_of(e), "op");
        let e = decode_client_frame(r#"{"type":"MSG_EDIT","clientMsgId":"k1","messageId":5,"body":"x"}"#).unwrap_err();
        assert_eq!(field_of(e), "messageId");
        assert_eq!(
            peek_client_msg_id(r#"{"type":"MSG_REACT","clientMsgId":"k9"}"#).as_deref(),
            Some("k9")
        );
    }

    #[test]
    fn recv_carries_kind_and_read_state() {
        let target = uuid::Uuid::now_v7();
        let reaction = RecvMessage {
            kind: EntryKind::Reaction,
            target_id: Some(target),
            emoji: Some("🎉".into()),
            op: Some(ReactOp::Add),
            ..Default::default()
        };
        let v: Value = serde_json::to_value(&reaction).unwrap();
        assert_eq!(v["kind"], "reaction");
        assert_eq!(v["targetId"], target.to_string());
        assert_eq!(v["op"], "add");
        assert!(v.get("deleted").is_none() && v.get("editedAt").is_none() && v.get("reactions").is_none());
        let read = RecvMessage {
            deleted: true,
            edited_at: Some(7),
            reactions: Some(vec![ReactionCount {
                emoji: "👍".into(),
                count: 2,
                me: true,
            }]),
            ..Default::default()
        };
        let v: Value = serde_json::to_value(&read).unwrap();
        assert_eq!(v["kind"], "message");
        assert_eq!(v["deleted"], true);
        assert_eq!(v["editedAt"], 7);
        assert_eq!(v["reactions"][0]["me"], true);
        // A v1 MSG_RECV (no kind) decodes as a message.
        let old = r#"{"type":"MSG_RECV","messageId":"01938f5e-6c2a-7b3e-9d41-2f0c8a1b7e55","channelId":"c","senderId":"u","seq":1,"body":"b","ts":1,"clientMsgId":"k"}"#;
        match ServerFrame::decode(old).unwrap() {
            ServerFrame::MsgRecv(m) => assert_eq!(m.kind, EntryKind::Message),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn typing_frames_are_validated() {
        let typing = |text: &str| decode_client_frame(text).and_then(|f| f.validate(16));
        assert_eq!(
            typing(r#"{"type":"TYPING","channelId":"room","state":"start"}"#).unwrap(),
            Command::Typing {
                channel_id: ChannelId::parse("room").unwrap(),
                start: true
            }
        );
        assert!(matches!(
            typing(r#"{"type":"TYPING","channelId":"room","state":"stop","x":1}"#),
            Ok(Command::Typing { start: false, .. })
        ));
        for (text, field) in [
            (r#"{"type":"TYPING","channelId":"room","state":"START"}"#, "state"),
            (r#"{"type":"TYPING","channelId":"room","state":"typing"}"#, "state"),
            (r#"{"type":"TYPING","channelId":"room","state":true}"#, "state"),
            (r#"{"type":"TYPING","channelId":"room"}"#, "state"),
            (
                r#"{"type":"TYPING","channelId":"no room","state":"start"}"#,
                "channelId",
            ),
            (r#"{"type":"TYPING","channelId":7,"state":"start"}"#, "channelId"),
            (r#"{"type":"TYPING","state":"start"}"#, "channelId"),
        ] {
            let e = typing(text).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidField, "{text}");
            assert_eq!(field_of(e), field, "{text}");
        }
    }

    #[test]
    fn presence_subscriptions_are_validated() {
        let sub = |text: &str| decode_client_frame(text).and_then(|f| f.validate(16));
        match sub(r#"{"type":"PRESENCE_SUB","userIds":["bob","carol","bob"]}"#).unwrap() {
            Command::PresenceSub { user_ids } => {
                let ids: Vec<&str> = user_ids.iter().map(UserId::as_str).collect();
                assert_eq!(ids, ["bob", "carol"], "repeats removed, order kept");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            sub(r#"{"type":"PRESENCE_SUB","userIds":[]}"#).unwrap(),
            Command::PresenceSub { user_ids: Vec::new() }
        );
        for text in [
            r#"{"type":"PRESENCE_SUB","userIds":["ok","not ok"]}"#,
            r#"{"type":"PRESENCE_SUB","userIds":[".."]}"#,
            r#"{"type":"PRESENCE_SUB","userIds":[""]}"#,
            r#"{"type":"PRESENCE_SUB","userIds":[7]}"#,
            r#"{"type":"PRESENCE_SUB","userIds":[["bob"]]}"#,
            r#"{"type":"PRESENCE_SUB","userIds":"bob"}"#,
            r#"{"type":"PRESENCE_SUB","userIds":null}"#,
            r#"{"type":"PRESENCE_SUB"}"#,
        ] {
            let e = sub(text).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidField, "{text}");
            assert_eq!(field_of(e), "userIds", "{text}");
        }
        let long = format!(r#"{{"type":"PRESENCE_SUB","userIds":["{}"]}}"#, "a".repeat(129));
        assert_eq!(field_of(sub(&long).unwrap_err()), "userIds");
        assert!(check_presence_count(500, 500).is_ok());
        let e = check_presence_count(501, 500).unwrap_err();
        assert_eq!(e.to_error_frame().field.as_deref(), Some("userIds"));
        assert_eq!(e.code(), ErrorCode::InvalidField);
    }

    #[test]
    fn typing_and_presence_frames_have_the_wire_shape() {
        let start = ServerFrame::Typing {
            channel_id: "room".into(),
            user_id: "alice".into(),
            state: TypingState::Start,
            expires_at: Some(42),
        };
        assert_eq!(
            start.encode(),
            r#"{"type":"TYPING","channelId":"room","userId":"alice","state":"start","expiresAt":42}"#
        );
        let stop = ServerFrame::Typing {
            channel_id: "room".into(),
            user_id: "alice".into(),
            state: TypingState::Stop,
            expires_at: None,
        };
        assert_eq!(
            stop.encode(),
            r#"{"type":"TYPING","channelId":"room","userId":"alice","state":"stop"}"#
        );
        let online = ServerFrame::Presence {
            user_id: "bob".into(),
            status: PresenceStatus::Online,
            last_seen_at: None,
        };
        assert_eq!(
            online.encode(),
            r#"{"type":"PRESENCE","userId":"bob","status":"online"}"#
        );
        let offline = ServerFrame::Presence {
            user_id: "bob".into(),
            status: PresenceStatus::Offline,
            last_seen_at: Some(7),
        };
        assert_eq!(
            offline.encode(),
            r#"{"type":"PRESENCE","userId":"bob","status":"offline","lastSeenAt":7}"#
        );
        for frame in [start, stop, online, offline] {
            assert_eq!(ServerFrame::decode(&frame.encode()).unwrap(), frame);
        }
    }

    #[test]
    fn lone_surrogates_are_refused() {
        let e = decode_client_frame(r#"{"type":"MSG_SEND","clientMsgId":"c","channelId":"r","body":"\ud800"}"#)
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::BadFrame);
    }

    #[test]
    fn server_frames_have_the_wire_shape() {
        let id = uuid::Uuid::now_v7();
        let ack = ServerFrame::MsgAck(AckFrame {
            client_msg_id: "c1".into(),
            message_id: id,
            channel_id: "room".into(),
            seq: 3,
            ts: 10,
            duplicate: false,
        });
        let v: Value = serde_json::from_str(&ack.encode()).unwrap();
        assert_eq!(v["type"], "MSG_ACK");
        assert_eq!(v["clientMsgId"], "c1");
        assert_eq!(v["messageId"], id.to_string());
        assert_eq!(v["duplicate"], false);
        let msg = RecvMessage {
            message_id: id,
            channel_id: "room".into(),
            sender_id: "alice".into(),
            seq: 1,
            body: "hi".into(),
            ts: 5,
            client_msg_id: Some("c1".into()),
            ..Default::default()
        };
        // A frame's entry: its key, no `byAdmin`; one made through an HTTP
        // route with the admin token: `byAdmin`, no key (§12).
        let v: Value = serde_json::from_str(&ServerFrame::MsgRecv(msg.clone()).encode()).unwrap();
        assert_eq!((&v["clientMsgId"], v.get("byAdmin")), (&Value::from("c1"), None));
        let by_admin = RecvMessage {
            client_msg_id: None,
            by_admin: true,
            ..msg.clone()
        };
        let v: Value = serde_json::from_str(&ServerFrame::MsgRecv(by_admin.clone()).encode()).unwrap();
        assert_eq!((v.get("clientMsgId"), &v["byAdmin"]), (None, &Value::Bool(true)));
        match serde_json::from_value::<ServerFrame>(v).unwrap() {
            ServerFrame::MsgRecv(back) => assert_eq!(back, by_admin),
            other => panic!("{other:?}"),
        }
        let batch = ServerFrame::SyncBatch {
            channel_id: "room".into(),
            messages: vec![TaggedMessage::MsgRecv(msg.clone())],
            has_more: false,
            last_seq: Some(1),
            thread_id: None,
        };
        let v: Value = serde_json::from_str(&batch.encode()).unwrap();
        assert_eq!(v["messages"][0]["type"], "MSG_RECV");
        assert_eq!(v["messages"][0]["senderId"], "alice");
        assert_eq!(v["hasMore"], false);
        let e = ServerFrame::Error(ErrorFrame::new(ErrorCode::RateLimited, "slow down"));
        let v: Value = serde_json::from_str(&e.encode()).unwrap();
        assert_eq!(v["code"], "rate_limited");
        assert_eq!(v["retryable"], true);
        assert!(v.get("field").is_none());
        let back: ServerFrame = serde_json::from_str(&ServerFrame::MsgRecv(msg).encode()).unwrap();
        assert!(matches!(back, ServerFrame::MsgRecv(_)));
    }
}

#[cfg(test)]
mod properties {
    //! Property tests: the decoder and validator never panic, refuse with a
    //! spec code, and accept every well-formed frame unchanged.
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn name_id() -> impl Strategy<Value = String> {
        "[A-Za-z0-9._:@-]{1,128}".prop_filter("not . or ..", |s| s != "." && s != "..")
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| json!(f)),
            ".{0,40}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map(".{0,12}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn frame_like() -> impl Strategy<Value = Value> {
        let ty = prop_oneof![
            Just("MSG_SEND".to_owned()),
            Just("MSG_DELIVERED".to_owned()),
            Just("MSG_READ".to_owned()),
            Just("SYNC".to_owned()),
            ".{0,12}",
        ];
        let field = prop_oneof![
            Just("channelId".to_owned()),
            Just("clientMsgId".to_owned()),
            Just("body".to_owned()),
            Just("messageId".to_owned()),
            Just("afterSeq".to_owned()),
            Just("limit".to_owned()),
            ".{0,10}",
        ];
        (ty, prop::collection::vec((field, json_value()), 0..6)).prop_map(|(ty, fields)| {
            let mut map: Map<String, Value> = fields.into_iter().collect();
            map.insert("type".into(), Value::String(ty));
            Value::Object(map)
        })
    }

    fn check(text: &str) -> Result<(), TestCaseError> {
        match decode_client_frame(text).and_then(|f| f.validate(16_384)) {
            Ok(_) => Ok(()),
            Err(e) => {
                let frame = e.to_error_frame();
                prop_assert!(!frame.retryable, "refusals of bad input are not retryable");
                if frame.code == ErrorCode::InvalidField {
                    prop_assert!(frame.field.is_some(), "invalid_field names its field");
                }
                Ok(())
            }
        }
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in ".{0,300}") {
            check(&text)?;
        }

        #[test]
        fn arbitrary_frame_shaped_json_never_panics(value in frame_like()) {
            check(&value.to_string())?;
        }

        #[test]
        fn well_formed_sends_are_accepted_unchanged(
            channel in name_id(),
            key in "[!-~]{1,128}",
            body in any::<String>().prop_filter("1..=16384 bytes without NUL", |b| !b.is_empty() && b.len() <= 16_384 && !b.contains('\0')),
        ) {
            let text = json!({"type": "MSG_SEND", "channelId": channel, "clientMsgId": key, "body": body}).to_string();
            let command = decode_client_frame(&text).and_then(|f| f.validate(16_384));
            match command {
                Ok(Command::Send { channel_id, client_msg_id, body: got, .. }) => {
                    prop_assert_eq!(channel_id.as_str(), channel.as_str());
                    prop_assert_eq!(client_msg_id.as_str(), key.as_str());
                    prop_assert_eq!(got.as_bytes(), body.as_bytes());
                }
                other => prop_assert!(false, "refused a well-formed send: {:?}", other),
            }
        }

        #[test]
        fn sync_bounds_are_exact(after in any::<i64>(), limit in proptest::option::of(any::<i64>())) {
            let mut frame = json!({"type": "SYNC", "channelId": "room", "afterSeq": after});
            if let Some(limit) = limit {
                frame["limit"] = json!(limit);
            }
            let result = decode_client_frame(&frame.to_string()).and_then(|f| f.validate(16));
            let after_ok = (0..=MAX_SEQ).contains(&after);
            let limit_ok = limit.is_none_or(|l| (1..=500).contains(&l));
            prop_assert_eq!(result.is_ok(), after_ok && limit_ok);
        }
    }
}

#[cfg(test)]
mod server_frame_decode {
    //! `ServerFrame::decode` must agree with the generic serde decode on
    //! every frame the server encodes and on malformed text.
    use proptest::prelude::*;

    use super::*;

    fn recv(text: String, n: i64) -> RecvMessage {
        RecvMessage {
            message_id: uuid::Uuid::from_u128(n as u128),
            channel_id: format!("c{n}"),
            sender_id: "u\"1".into(),
            seq: n,
            body: text,
            ts: n.wrapping_mul(7),
            client_msg_id: Some("k\\1".into()),
            ..Default::default()
        }
    }

    fn frames(text: String, n: i64, flag: bool) -> Vec<ServerFrame> {
        let mut error = ErrorFrame::new(ErrorCode::RateLimited, text.clone());
        error.retry_after_ms = Some(n.unsigned_abs());
        error.client_msg_id = flag.then(|| text.clone());
        vec![
            ServerFrame::MsgRecv(recv(text.clone(), n)),
            ServerFrame::MsgAck(AckFrame {
                client_msg_id: text.clone(),
                message_id: uuid::Uuid::from_u128(n as u128),
                channel_id: "room".into(),
                seq: n,
                ts: -n,
                duplicate: flag,
            }),
            ServerFrame::Error(error),
            ServerFrame::Error(ErrorFrame::new(ErrorCode::BadFrame, "x")),
            ServerFrame::Receipt {
                channel_id: text.clone(),
                user_id: "u".into(),
                kind: ReceiptKind::Read,
                message_id: uuid::Uuid::nil(),
                seq: n,
                ts: n,
            },
            ServerFrame::SyncBatch {
                channel_id: "room".into(),
                messages: vec![TaggedMessage::MsgRecv(recv(text.clone(), n))],
                has_more: flag,
                last_seq: flag.then_some(n),
                thread_id: None,
            },
            ServerFrame::Hello {
                user_id: text,
                session_id: "s".into(),
                server_ts: n,
                channels: Vec::new(),
            },
        ]
    }

    proptest! {
        #[test]
        fn decode_round_trips_every_frame(text in any::<String>(), n in any::<i64>(), flag in any::<bool>()) {
            for frame in frames(text.clone(), n, flag) {
                let encoded = frame.encode();
                prop_assert_eq!(ServerFrame::decode(&encoded).ok(), Some(frame));
            }
        }

        #[test]
        fn decode_agrees_with_serde_on_field_order_and_extra_fields(n in any::<i64>(), text in ".{0,20}") {
            for frame in frames(text.clone(), n, true) {
                let mut value = serde_json::to_value(&frame).expect("value");
                let map = value.as_object_mut().expect("object");
                // Reversed field order ("type" last) and an unknown field.
                let mut fields: Vec<_> = std::mem::take(map).into_iter().collect();
                fields.reverse();
                fields.push(("futureField".into(), serde_json::json!([1, {"a": text.clone()}])));
                let text = Value::Object(fields.into_iter().collect()).to_string();
                prop_assert_eq!(
                    ServerFrame::decode(&text).ok(),
                    serde_json::from_str::<ServerFrame>(&text).ok()
                );
                prop_assert_eq!(ServerFrame::decode(&text).ok(), Some(frame));
            }
        }
    }

    #[test]
    fn malformed_frames_are_errors_as_with_serde() {
        let cases = [
            "",
            "null",
            "[]",
            "{}",
            r#"{"type":"MSG_RECV"}"#,
            r#"{"type":"MSG_RECV","messageId":"nope","channelId":"c","senderId":"u","seq":1,"body":"b","ts":1,"clientMsgId":"k"}"#,
            r#"{"type":"MSG_ACK","clientMsgId":"k","messageId":"00000000-0000-0000-0000-000000000000","channelId":"c","seq":"1","ts":1,"duplicate":false}"#,
            r#"{"type":"ERROR","code":"no_such_code","message":"m","retryable":false}"#,
            r#"{"type":"NEW_FRAME_TYPE","x":1}"#,
            r#"{"type":7}"#,
            r#"{"type":"MSG_ACK""#,
        ];
        for text in cases {
            assert!(ServerFrame::decode(text).is_err(), "{text}");
            assert!(serde_json::from_str::<ServerFrame>(text).is_err(), "{text}");
        }
    }
}
