//! The idempotency key of a keyed frame read without decoding the frame
//! ([`peek_send_key`], [`peek_client_msg_id`]): a refused frame is still
//! answered by its stored key (§5).

use serde::Deserialize;
use serde_json::Value;

use super::*;
use crate::ids::ClientMsgId;

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
