//! What the application sees of the client: a send's outcome ([`Ack`],
//! [`SendError`]), why a connect failed ([`ConnectError`]), the [`Event`]s,
//! and what a send or an entry carries ([`SendOptions`], [`EntryRequest`]).

use chatd_proto::protocol::{
    ChannelState, ErrorCode, ErrorFrame, MemberFrame, Notify, ReceiptKind, RecvMessage, RemovedReason,
};

use crate::log::MessageState;

/// A send the server stored (now or on an earlier attempt).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    /// The idempotency key the client used on every attempt.
    pub client_msg_id: String,
    /// The canonical id the server assigned.
    pub message_id: uuid::Uuid,
    /// The channel the message is in.
    pub channel_id: String,
    /// Its position in the channel.
    pub seq: i64,
    /// When it was stored, ms since the Unix epoch.
    pub ts: i64,
    /// True when this answer came from a retry of a message already stored.
    pub duplicate: bool,
    /// How many times the frame was sent (1 = no retry).
    pub attempts: u32,
}

/// Why a send did not end with an [`Ack`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The server refused it for good (`forbidden`, `invalid_field`,
    /// `body_too_large`, `idempotency_conflict`, …). Nothing was stored.
    #[error("refused: {code:?}: {message}")]
    Refused {
        /// The ERROR's code.
        code: ErrorCode,
        /// The ERROR's message.
        message: String,
        /// Version 1.2: what tells refusals of one code apart (`muted`,
        /// `blocked`, `read_only`, …); `None` from an older server.
        reason: Option<String>,
        /// For a refusal that ends by itself (`muted`): ms until it does.
        retry_after_ms: Option<u64>,
    },
    /// Refused locally before sending (a bad `channelId` or `clientMsgId`).
    #[error("invalid {field}: {message}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// [`ClientConfig::send_deadline`](crate::ClientConfig::send_deadline) passed. The message may or may not be
    /// stored: send it again with the same `clientMsgId` to find out.
    #[error("no ACK before the send deadline")]
    DeadlineExceeded,
    /// The client was closed or stopped (e.g. the token was refused) before
    /// an ACK came. As above, the message may be stored.
    #[error("the client stopped: {0}")]
    Closed(String),
}

/// Why the client could not connect.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    /// HTTP 401 at the handshake: the token is missing, expired or wrong.
    #[error("the server refused the token (401)")]
    Unauthorized,
    /// No session within `connect_timeout`: the last error is given.
    #[error("could not connect: {0}")]
    Unreachable(String),
    /// The URL could not be used.
    #[error("bad url: {0}")]
    BadUrl(String),
}

/// What the application receives, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A session started (first connect or reconnect); HELLO's content.
    Connected {
        /// The user of the token.
        user_id: String,
        /// The server's id of this session.
        session_id: String,
        /// The user's channels with their `lastSeq` and watermarks.
        channels: Vec<ChannelState>,
    },
    /// A log entry (a message, edit, delete or reaction: `kind`),
    /// delivered once and in `seq` order per channel. The client's own
    /// entries are included (built from their ACK).
    ///
    /// Boxed as it was decoded ([`chatd_proto::protocol::ServerFrame::MsgRecv`]):
    /// the message (about 400 bytes) travels to the application as a
    /// pointer, and every [`Event`] stays small.
    Message(Box<RecvMessage>),
    /// A message's state changed (an edit, delete or reaction was folded
    /// onto it; or, §14, the message it quotes was edited or deleted, or a
    /// reply in its thread arrived or was deleted), right after that
    /// entry's [`Event::Message`]; one event per message changed.
    Changed {
        /// The channel.
        channel_id: String,
        /// The message's new state (boxed: unboxed, this variant would
        /// make every [`Event`] about 300 bytes, and each event is moved
        /// several times on its way to the application).
        state: Box<MessageState>,
    },
    /// A watermark moved (someone read or received up to a message).
    Receipt {
        /// The channel.
        channel_id: String,
        /// Whose watermark.
        user_id: String,
        /// Delivered or read.
        kind: ReceiptKind,
        /// The message at the watermark.
        message_id: uuid::Uuid,
        /// The watermark's `seq`.
        seq: i64,
        /// When it moved, ms since the Unix epoch.
        ts: i64,
    },
    /// An ERROR not tied to a send (a receipt, SYNC, TYPING or PRESENCE_SUB
    /// refused).
    Error(ErrorFrame),
    /// Another member's typing indicator in a channel: on (`typing`, until
    /// `expires_at`, ms since the epoch) or off. The client turns an
    /// indicator off by itself at `expires_at` when no stop came (a stop may
    /// be lost), and reports each change once.
    Typing {
        /// The channel.
        channel_id: String,
        /// Who types.
        user_id: String,
        /// On or off.
        typing: bool,
        /// When an indicator that is on lapses, ms since the epoch.
        expires_at: Option<i64>,
    },
    /// A subscribed user's presence ([`Client::subscribe_presence`](crate::Client::subscribe_presence)): once
    /// per user right after subscribing, then on every change.
    Presence {
        /// The user.
        user_id: String,
        /// At least one session open on any node.
        online: bool,
        /// When the user's last session closed, ms since the epoch (offline
        /// users the server knows, and who share a channel with this user).
        last_seen_at: Option<i64>,
    },
    /// The user was added to a channel (`CHANNEL_ADDED`, version 1.2): its
    /// HELLO entry. Comes before any message or [`Event::Member`] of it;
    /// the client tracks it from now on as it does HELLO's channels.
    ChannelAdded {
        /// The channel's entry, with the user's role.
        channel: ChannelState,
    },
    /// The user's notification settings in a channel changed
    /// (`CHANNEL_SETTINGS`, §16), on this session or another: update the
    /// channel list's `notify` and `snoozeUntil`.
    Settings {
        /// The channel.
        channel_id: String,
        /// `all`, `mentions` or `none`.
        notify: Notify,
        /// Snoozed until then (ms since the epoch); `None`: no snooze.
        snooze_until: Option<i64>,
    },
    /// A channel's shared settings changed (`CHANNEL_UPDATED`, this
    /// server's frame): its name, metadata, visibility, who may post and
    /// slow mode as they are now; update the channel list (HELLO's entry
    /// carries the same fields).
    ChannelUpdated {
        /// The channel.
        channel_id: String,
        /// Its display name, `None` when unset.
        name: Option<String>,
        /// Its metadata (a JSON object), `None` when unset.
        metadata: Option<serde_json::Value>,
        /// `private` or `public`.
        visibility: chatd_proto::protocol::Visibility,
        /// `member` (anyone posts) or `moderator` (announcements).
        posting_role: chatd_proto::protocol::Role,
        /// Ms a member waits between two messages; 0: off.
        slow_mode_ms: i64,
        /// The channel's own retention in seconds (§19); `None` when unset.
        retention_secs: Option<i64>,
    },
    /// The user is no longer in a channel (`CHANNEL_REMOVED`): it left, was
    /// removed or banned, or the channel was deleted. Nothing more comes
    /// for it; the client stops tracking it.
    ChannelRemoved {
        /// The channel.
        channel_id: String,
        /// Why (`None` from a server before version 1.2: a deletion).
        reason: Option<RemovedReason>,
    },
    /// A membership change in one of the user's channels (`MEMBER`,
    /// version 1.2): a join, leave, role change, mute or ban, taking effect
    /// after the entry `after_seq`. May be missed while disconnected: read
    /// the members route again after [`Event::Connected`].
    Member(MemberFrame),
    /// The session ended; the client reconnects by itself unless stopped.
    Disconnected {
        /// The server's close code, when it sent one.
        code: Option<u16>,
        /// What happened.
        reason: String,
    },
    /// The client stopped for good (closed, or the token was refused).
    Stopped {
        /// Why.
        reason: String,
    },
}

// Every event is moved about ten times between the session task and the
// application (the event channel's send, push, pop and receive); glibc's
// memcpy takes a loop twice as dear above 256 bytes (`.ci/recv-cost`,
// docs/known-issues.md). Large payloads are boxed to stay under it.
const _: () = assert!(
    std::mem::size_of::<Event>() <= 256,
    "Event grew past 256 bytes: box the large variant"
);

/// A log entry about a message (`docs/protocol.md` §8), sent with the same
/// safe retries as a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryRequest {
    /// MSG_EDIT: a new text for one's own message.
    Edit { message_id: uuid::Uuid, body: String },
    /// MSG_DELETE: delete one's own message.
    Delete { message_id: uuid::Uuid },
    /// MSG_REACT: add (`add`) or remove a reaction.
    React {
        message_id: uuid::Uuid,
        emoji: String,
        add: bool,
    },
}

/// What a message refers to (protocol.md §14): the message it quotes
/// (`replyTo`) and the root of the thread it answers in (`threadId`), each
/// a message of the same channel; and whom it mentions (§16). The default
/// is none of these.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SendOptions {
    /// Quote this message (`replyTo`).
    pub reply_to: Option<uuid::Uuid>,
    /// Answer in this root's thread (`threadId`); a reply in a thread cannot
    /// be a root.
    pub thread_id: Option<uuid::Uuid>,
    /// Mention these users (`mentions`, at most the server's
    /// `max_mentions`); the server keeps those that are members.
    pub mentions: Vec<String>,
    /// Mention every member (`mentionAll`; moderators only, else the send
    /// is refused `forbidden`).
    pub mention_all: bool,
    /// Carry these uploads (`attachments`, §15: the ids of this user's
    /// uploads into the channel, not yet sent, as `AdminClient::upload`
    /// returns them; at most the server's `max_attachments_per_message`).
    /// With attachments the body may be `""`.
    pub attachments: Vec<uuid::Uuid>,
}
