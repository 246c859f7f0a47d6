//! Server frames ([`ServerFrame`]): MSG_ACK, receipts, typing, presence
//! and the rest, their encoding and a fast decoding for clients.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::*;

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
    ///
    /// Boxed: a [`RecvMessage`] is about 400 bytes, and a decoded frame
    /// moves a dozen times between the socket and the application (the
    /// client's session task, its ordering, the event channel); one
    /// allocation when decoded makes each of those moves a pointer's
    /// instead of a 400-byte copy (`.ci/recv-cost`, docs/known-issues.md).
    /// The wire text is the same as unboxed. A server encodes it with
    /// [`ServerFrame::encode_msg_recv`], from a reference, without the box.
    #[serde(rename = "MSG_RECV")]
    MsgRecv(Box<RecvMessage>),
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

// A decoded frame is moved several times on a client's receive path:
// MSG_RECV's message is boxed so that a frame stays under the 256 bytes
// above which glibc's memcpy takes its dearer loop (`.ci/recv-cost`).
const _: () = assert!(
    std::mem::size_of::<ServerFrame>() <= 256,
    "ServerFrame grew past 256 bytes"
);

impl ServerFrame {
    /// The JSON text of the frame.
    pub fn encode(&self) -> String {
        // Serializing these types cannot fail: every map key is a string and
        // no field has a fallible Serialize impl.
        serde_json::to_string(self).unwrap_or_else(|_| {
            String::from("{\"type\":\"ERROR\",\"code\":\"internal\",\"message\":\"encode\",\"retryable\":true}")
        })
    }

    /// The JSON text of `ServerFrame::MsgRecv(message)`, byte for byte,
    /// written from a reference: no frame built (no box, no copy of the
    /// message), for a server that fans out an entry it holds.
    pub fn encode_msg_recv(message: &RecvMessage) -> String {
        /// The borrowed twin of [`ServerFrame::MsgRecv`]: the same tag
        /// written first, then the message's fields.
        #[derive(Serialize)]
        #[serde(tag = "type")]
        enum Borrowed<'a> {
            #[serde(rename = "MSG_RECV")]
            MsgRecv(&'a RecvMessage),
        }
        serde_json::to_string(&Borrowed::MsgRecv(message)).unwrap_or_else(|_| {
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
            Some("MSG_RECV") => serde_json::from_str::<RecvMessage>(text).map(|m| Self::MsgRecv(Box::new(m))),
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
