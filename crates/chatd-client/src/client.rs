//! The client handle and the connection task behind it.
//!
//! One task per client owns the WebSocket. The [`Client`] handle talks to it
//! over a queue of commands; the application gets [`Event`]s from another
//! queue. The task connects, reads HELLO, fills gaps with SYNC, re-sends
//! every send not yet ACKed (same `clientMsgId`), and on any trouble
//! reconnects with backoff and does it all again.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chatd_proto::ids::{ChannelId, ClientMsgId};
use chatd_proto::protocol::{
    AckFrame, ChannelState, ClientFrame, EntryKind, ErrorCode, ErrorFrame, MemberFrame, Notify, PresenceStatus,
    ReactOp, ReceiptKind, RecvMessage, RemovedReason, ServerFrame, TaggedMessage, TypingState,
};
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::{sleep_until, Instant};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::config::{Backoff, ClientConfig};
use crate::log::{ChannelMessages, MessageState};
use crate::order::{ChannelOrder, StartFrom};
use crate::thread::{PageOutcome, PageRead, PendingReply, Thread, ThreadReads};

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

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
    /// [`ClientConfig::send_deadline`] passed. The message may or may not be
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
    Message(RecvMessage),
    /// A message's state changed (an edit, delete or reaction was folded
    /// onto it; or, §14, the message it quotes was edited or deleted, or a
    /// reply in its thread arrived or was deleted), right after that
    /// entry's [`Event::Message`]; one event per message changed.
    Changed {
        /// The channel.
        channel_id: String,
        /// The message's new state.
        state: MessageState,
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
    /// A subscribed user's presence ([`Client::subscribe_presence`]): once
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

enum Command {
    Send {
        channel_id: String,
        client_msg_id: String,
        body: String,
        options: SendOptions,
        entry: Option<EntryRequest>,
        reply: oneshot::Sender<Result<Ack, SendError>>,
    },
    Receipt {
        message_id: uuid::Uuid,
        read: bool,
    },
    Typing {
        channel_id: String,
        on: bool,
    },
    PresenceSub(Vec<String>),
    SetToken(String),
    Reconnect,
    Close,
    /// Read a thread's newest page (`older` false) or the page before the
    /// oldest read one.
    ReadThread {
        channel_id: String,
        root_id: uuid::Uuid,
        older: bool,
        reply: oneshot::Sender<Result<(), SendError>>,
    },
    /// A snapshot of a thread as the task holds it.
    Thread {
        channel_id: String,
        root_id: uuid::Uuid,
        reply: oneshot::Sender<Option<Thread>>,
    },
}

/// A send handed to the client, not yet answered. Resolves to its outcome.
#[derive(Debug)]
pub struct PendingAck {
    rx: oneshot::Receiver<Result<Ack, SendError>>,
}

impl std::future::Future for PendingAck {
    type Output = Result<Ack, SendError>;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.rx)
            .poll(cx)
            .map(|r| r.unwrap_or_else(|_| Err(SendError::Closed("the client task ended".into()))))
    }
}

/// A connected chatd client. Cheap to clone; every clone drives the same
/// connection. The connection closes when [`Client::close`] is called or
/// every clone is dropped.
#[derive(Debug, Clone)]
pub struct Client {
    commands: mpsc::Sender<Command>,
    user_id: String,
    connected: watch::Receiver<bool>,
    states: SharedStates,
}

/// Every channel's folded message state, shared by the task and the handles.
type SharedStates = Arc<Mutex<HashMap<String, ChannelMessages>>>;

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Command")
    }
}

impl Client {
    /// Connects and waits for the first HELLO. The connection task then runs
    /// in the background; events arrive on the returned receiver.
    ///
    /// # Errors
    /// [`ConnectError::Unauthorized`] when the token is refused,
    /// [`ConnectError::Unreachable`] when no session started within
    /// `connect_timeout` (attempts are retried with backoff until then).
    pub async fn connect(config: ClientConfig) -> Result<(Client, mpsc::Receiver<Event>), ConnectError> {
        config
            .url
            .as_str()
            .into_client_request()
            .map_err(|e| ConnectError::BadUrl(e.to_string()))?;
        let deadline = Instant::now() + config.connect_timeout;
        let mut backoff = Backoff::new(config.backoff_initial, config.backoff_max);
        let (socket, hello) = loop {
            match open(&config).await {
                Ok(opened) => break opened,
                Err(Failure::Fatal(e)) => return Err(e),
                Err(Failure::Transient(why)) => {
                    let wait = backoff.next_delay();
                    if Instant::now() + wait >= deadline {
                        return Err(ConnectError::Unreachable(why));
                    }
                    tokio::time::sleep(wait).await;
                }
            }
        };
        let (commands, command_rx) = mpsc::channel(1024);
        let (events, event_rx) = mpsc::channel(config.event_capacity.max(1));
        let (connected_tx, connected) = watch::channel(true);
        let user_id = hello.user_id.clone();
        let states = SharedStates::default();
        let mut task = Task::new(config, command_rx, events, connected_tx, user_id.clone());
        task.states = states.clone();
        tokio::spawn(async move { task.run(socket, hello).await });
        Ok((
            Client {
                commands,
                user_id,
                connected,
                states,
            },
            event_rx,
        ))
    }

    /// The user this client is signed in as (the token's `sub`).
    pub fn user_id(&self) -> &str {
        &self.user_id
    }

    /// Whether a session is up right now.
    pub fn is_connected(&self) -> bool {
        *self.connected.borrow()
    }

    /// Sends a message with a fresh `clientMsgId` (a UUIDv7) and waits for
    /// its ACK, retrying with the same id as long as needed.
    ///
    /// # Errors
    /// See [`SendError`].
    pub async fn send(&self, channel_id: &str, body: impl Into<String>) -> Result<Ack, SendError> {
        self.submit(channel_id, &uuid::Uuid::now_v7().to_string(), body)
            .await?
            .await
    }

    /// As [`Self::send`], quoting a message or answering in a thread
    /// (`options`, protocol.md §14).
    ///
    /// # Errors
    /// See [`SendError`]; `Refused` with `not_found` when a reference names
    /// an unknown or deleted message, `invalid_field` when it names another
    /// channel's message or (`threadId`) a reply in a thread.
    pub async fn send_with(
        &self,
        channel_id: &str,
        body: impl Into<String>,
        options: SendOptions,
    ) -> Result<Ack, SendError> {
        self.submit_with(channel_id, &uuid::Uuid::now_v7().to_string(), body, options)
            .await?
            .await
    }

    /// Hands a send with a given `clientMsgId` to the client and returns at
    /// once with a future of its outcome, so many sends can be in flight.
    /// Use the same `clientMsgId` again only to retry the same message.
    ///
    /// # Errors
    /// [`SendError::Invalid`] for a malformed channel or key,
    /// [`SendError::Closed`] when the client has stopped.
    pub async fn submit(
        &self,
        channel_id: &str,
        client_msg_id: &str,
        body: impl Into<String>,
    ) -> Result<PendingAck, SendError> {
        self.submit_with(channel_id, client_msg_id, body, SendOptions::default())
            .await
    }

    /// As [`Self::submit`], with `options` (§14). A retry with the same
    /// `clientMsgId` must carry the same options (else `idempotency_conflict`).
    ///
    /// # Errors
    /// As [`Self::submit`].
    pub async fn submit_with(
        &self,
        channel_id: &str,
        client_msg_id: &str,
        body: impl Into<String>,
        options: SendOptions,
    ) -> Result<PendingAck, SendError> {
        ChannelId::parse(channel_id).map_err(|e| SendError::Invalid {
            field: "channelId",
            message: e.to_string(),
        })?;
        ClientMsgId::parse(client_msg_id).map_err(|e| SendError::Invalid {
            field: "clientMsgId",
            message: e.to_string(),
        })?;
        let (reply, rx) = oneshot::channel();
        self.commands
            .send(Command::Send {
                channel_id: channel_id.to_owned(),
                client_msg_id: client_msg_id.to_owned(),
                body: body.into(),
                options,
                entry: None,
                reply,
            })
            .await
            .map_err(|_| SendError::Closed("the client task ended".into()))?;
        Ok(PendingAck { rx })
    }

    /// Edits one's own message (MSG_EDIT) with a fresh `clientMsgId` and
    /// waits for its ACK, retrying with the same id as a send does.
    ///
    /// # Errors
    /// See [`SendError`]; `Refused` with `forbidden` for another's message,
    /// `not_found` for an unknown or deleted one.
    pub async fn edit(&self, message_id: uuid::Uuid, body: impl Into<String>) -> Result<Ack, SendError> {
        let entry = EntryRequest::Edit {
            message_id,
            body: body.into(),
        };
        self.submit_entry(&uuid::Uuid::now_v7().to_string(), entry).await?.await
    }

    /// Deletes one's own message (MSG_DELETE); as [`Self::edit`].
    ///
    /// # Errors
    /// See [`Self::edit`].
    pub async fn delete(&self, message_id: uuid::Uuid) -> Result<Ack, SendError> {
        self.submit_entry(&uuid::Uuid::now_v7().to_string(), EntryRequest::Delete { message_id })
            .await?
            .await
    }

    /// Adds (`add`) or removes a reaction (MSG_REACT); as [`Self::edit`].
    ///
    /// # Errors
    /// See [`Self::edit`].
    pub async fn react(&self, message_id: uuid::Uuid, emoji: &str, add: bool) -> Result<Ack, SendError> {
        let entry = EntryRequest::React {
            message_id,
            emoji: emoji.to_owned(),
            add,
        };
        self.submit_entry(&uuid::Uuid::now_v7().to_string(), entry).await?.await
    }

    /// Hands an entry with a given `clientMsgId` to the client and returns
    /// at once with a future of its outcome (as [`Self::submit`]).
    ///
    /// # Errors
    /// [`SendError::Invalid`] for a malformed key or emoji,
    /// [`SendError::Closed`] when the client has stopped.
    pub async fn submit_entry(&self, client_msg_id: &str, entry: EntryRequest) -> Result<PendingAck, SendError> {
        ClientMsgId::parse(client_msg_id).map_err(|e| SendError::Invalid {
            field: "clientMsgId",
            message: e.to_string(),
        })?;
        if let EntryRequest::React { emoji, .. } = &entry {
            chatd_proto::protocol::check_emoji(emoji).map_err(|e| SendError::Invalid {
                field: "emoji",
                message: e.to_owned(),
            })?;
        }
        let body = match &entry {
            EntryRequest::Edit { body, .. } => body.clone(),
            _ => String::new(),
        };
        let (reply, rx) = oneshot::channel();
        self.commands
            .send(Command::Send {
                channel_id: String::new(),
                client_msg_id: client_msg_id.to_owned(),
                body,
                options: SendOptions::default(),
                entry: Some(entry),
                reply,
            })
            .await
            .map_err(|_| SendError::Closed("the client task ended".into()))?;
        Ok(PendingAck { rx })
    }

    /// The folded state of a message of `channel_id` this client has seen
    /// (delivered as [`Event::Message`]), or `None`.
    pub fn message(&self, channel_id: &str, message_id: uuid::Uuid) -> Option<MessageState> {
        let states = self.states.lock().ok()?;
        states.get(channel_id)?.get(&message_id).cloned()
    }

    /// Tells the server this user has received everything up to and
    /// including `message_id` in its channel (MSG_DELIVERED). Sent now, or
    /// after the next reconnect. A refusal arrives as [`Event::Error`].
    pub async fn mark_delivered(&self, message_id: uuid::Uuid) {
        let _ = self
            .commands
            .send(Command::Receipt {
                message_id,
                read: false,
            })
            .await;
    }

    /// As [`Self::mark_delivered`], for MSG_READ.
    pub async fn mark_read(&self, message_id: uuid::Uuid) {
        let _ = self.commands.send(Command::Receipt { message_id, read: true }).await;
    }

    /// Says whether this user is typing in `channel_id`. Call it as often as
    /// you like (on every keystroke): while on, a TYPING `start` goes out at
    /// most once per [`ClientConfig::typing_renew`], and is renewed at that
    /// pace, also after a reconnect; `false` sends one `stop` (only after a
    /// start). Sending a message stops it on the server by itself; call
    /// `typing(channel, false)` then too, so no renewal follows.
    pub async fn typing(&self, channel_id: &str, typing: bool) {
        let _ = self
            .commands
            .send(Command::Typing {
                channel_id: channel_id.to_owned(),
                on: typing,
            })
            .await;
    }

    /// Replaces this client's presence subscription with `user_ids` (an
    /// empty list ends it); kept, and sent again after every reconnect.
    /// [`Event::Presence`] follows, once per id, then per change. More ids
    /// than the server's `max_presence_subscriptions` get an
    /// [`Event::Error`] `invalid_field`.
    ///
    /// Until its snapshot is complete (an [`Event::Presence`] for every id
    /// since the PRESENCE_SUB went out), a retryable ERROR (`unavailable`,
    /// `internal`, `rate_limited`) naming no `clientMsgId`, `channelId` or
    /// `messageId` is taken as the server refusing it: the same PRESENCE_SUB
    /// goes out again after exponential backoff with jitter
    /// ([`ClientConfig::backoff_initial`] doubling to `backoff_max`;
    /// `retryAfterMs` a floor), until the snapshot completes, the
    /// subscription is replaced or the connection drops (a reconnect sends
    /// it anyway). The ERROR is still reported as [`Event::Error`].
    pub async fn subscribe_presence<I, S>(&self, user_ids: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let ids = user_ids.into_iter().map(Into::into).collect();
        let _ = self.commands.send(Command::PresenceSub(ids)).await;
    }

    /// Replaces the token used by later reconnects.
    pub async fn set_token(&self, token: impl Into<String>) {
        let _ = self.commands.send(Command::SetToken(token.into())).await;
    }

    /// Drops the current connection and reconnects (as after a network
    /// failure): sends in flight are re-sent, gaps synced. Does nothing while
    /// disconnected.
    pub async fn reconnect(&self) {
        let _ = self.commands.send(Command::Reconnect).await;
    }

    /// Closes the connection (1000). Sends not yet ACKed fail with
    /// [`SendError::Closed`].
    pub async fn close(&self) {
        let _ = self.commands.send(Command::Close).await;
    }

    /// Opens the thread of `root_id` in `channel_id` (§14; see
    /// [`crate::thread`]): reads its newest replies (one SYNC page of
    /// [`ClientConfig::sync_limit`], sent after the next HELLO when
    /// offline) and returns the thread as held from then on. Calling it
    /// again reads the newest page again.
    ///
    /// # Errors
    /// [`SendError::Refused`] with `not_found` (field `threadId`) for an
    /// unknown or deleted root, `invalid_field` for a reply given as root,
    /// `forbidden` for a channel the user is not in;
    /// [`SendError::Closed`] when the client stopped.
    pub async fn open_thread(&self, channel_id: &str, root_id: uuid::Uuid) -> Result<Thread, SendError> {
        self.read_thread(channel_id, root_id, false).await
    }

    /// Reads the page of replies before the oldest one [`Client::open_thread`]
    /// and earlier calls read (nothing when [`Thread::has_older`] is
    /// false) and returns the thread.
    ///
    /// # Errors
    /// As [`Client::open_thread`].
    pub async fn load_older_replies(&self, channel_id: &str, root_id: uuid::Uuid) -> Result<Thread, SendError> {
        self.read_thread(channel_id, root_id, true).await
    }

    /// The thread of `root_id` as this client holds it now: its replies
    /// in `seq` order with their current state, and this user's replies not
    /// yet ACKed. `None` until [`Client::open_thread`] read it.
    pub async fn thread(&self, channel_id: &str, root_id: uuid::Uuid) -> Option<Thread> {
        let (reply, answer) = oneshot::channel();
        let command = Command::Thread {
            channel_id: channel_id.to_owned(),
            root_id,
            reply,
        };
        self.commands.send(command).await.ok()?;
        answer.await.ok().flatten()
    }

    async fn read_thread(&self, channel_id: &str, root_id: uuid::Uuid, older: bool) -> Result<Thread, SendError> {
        let closed = || SendError::Closed("the client task ended".into());
        let (reply, answer) = oneshot::channel();
        let command = Command::ReadThread {
            channel_id: channel_id.to_owned(),
            root_id,
            older,
            reply,
        };
        self.commands.send(command).await.map_err(|_| closed())?;
        answer.await.map_err(|_| closed())??;
        self.thread(channel_id, root_id).await.ok_or_else(closed)
    }
}

/// Why one connection attempt failed.
enum Failure {
    /// Give up (and tell the application).
    Fatal(ConnectError),
    /// Try again after a backoff.
    Transient(String),
}

/// HELLO's fields.
struct Hello {
    user_id: String,
    session_id: String,
    channels: Vec<ChannelState>,
}

async fn open(config: &ClientConfig) -> Result<(Socket, Hello), Failure> {
    let attempt = async {
        let mut request = config
            .url
            .as_str()
            .into_client_request()
            .map_err(|e| Failure::Fatal(ConnectError::BadUrl(e.to_string())))?;
        let bearer = HeaderValue::from_str(&format!("Bearer {}", config.token))
            .map_err(|_| Failure::Fatal(ConnectError::Unauthorized))?;
        request.headers_mut().insert("authorization", bearer);
        let ws_config = WebSocketConfig::default()
            .max_message_size(Some(config.max_message_bytes))
            .max_frame_size(Some(config.max_message_bytes))
            .read_buffer_size(config.read_buffer_bytes)
            .write_buffer_size(config.write_buffer_bytes);
        let (mut socket, _) = tokio_tungstenite::connect_async_with_config(request, Some(ws_config), true)
            .await
            .map_err(|e| match &e {
                tokio_tungstenite::tungstenite::Error::Http(response) if response.status().as_u16() == 401 => {
                    Failure::Fatal(ConnectError::Unauthorized)
                }
                _ => Failure::Transient(e.to_string()),
            })?;
        loop {
            match socket.next().await {
                Some(Ok(Message::Text(text))) => match ServerFrame::decode(&text) {
                    Ok(ServerFrame::Hello {
                        user_id,
                        session_id,
                        channels,
                        ..
                    }) => {
                        return Ok((
                            socket,
                            Hello {
                                user_id,
                                session_id,
                                channels,
                            },
                        ))
                    }
                    _ => return Err(Failure::Transient("the first frame was not HELLO".into())),
                },
                Some(Ok(Message::Close(frame))) => {
                    return Err(Failure::Transient(format!("closed before HELLO: {frame:?}")))
                }
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Err(Failure::Transient(e.to_string())),
                None => return Err(Failure::Transient("closed before HELLO".into())),
            }
        }
    };
    tokio::time::timeout(config.connect_timeout, attempt)
        .await
        .unwrap_or_else(|_| Err(Failure::Transient("connect timed out".into())))
}

/// A send not yet answered.
struct Pending {
    /// The channel (a message), or `""` (an entry: the server finds the channel).
    channel_id: String,
    body: String,
    /// A message's references (§14).
    options: SendOptions,
    /// `None` for a message.
    entry: Option<EntryRequest>,
    reply: Option<oneshot::Sender<Result<Ack, SendError>>>,
    /// Frames sent so far.
    attempts: u32,
    /// When the last frame went out on the current connection (None: not
    /// sent on it yet).
    sent_at: Option<Instant>,
    /// Hold until then before sending again (after a retryable ERROR).
    retry_at: Option<Instant>,
    backoff: Backoff,
    deadline: Option<Instant>,
}

/// The presence subscription sent on this connection whose snapshot is not
/// complete (no PRESENCE yet since it went out for some listed ids).
struct PresencePending {
    /// Listed ids no PRESENCE came for since the PRESENCE_SUB was sent.
    missing: HashSet<String>,
    /// Backoff of its retries.
    backoff: Backoff,
    /// When it goes out again (after a refusal, see [`Task::on_error`]).
    retry_at: Option<Instant>,
}

/// How a session ended.
enum SessionEnd {
    /// Reconnect.
    Lost { code: Option<u16>, reason: String },
    /// Stop for good.
    Stop(String),
}

struct Task {
    config: ClientConfig,
    commands: mpsc::Receiver<Command>,
    events: mpsc::Sender<Event>,
    connected: watch::Sender<bool>,
    user_id: String,
    /// Unanswered sends by key, and their keys in submission order.
    pending: HashMap<String, Pending>,
    order: VecDeque<String>,
    channels: HashMap<String, ChannelOrder>,
    /// Receipts asked for while disconnected, sent after the next HELLO.
    queued_receipts: Vec<(uuid::Uuid, bool)>,
    /// Every channel's folded message state.
    states: SharedStates,
    /// Messages read by SYNC not yet delivered, with the read's `lastSeq`.
    read_as_of: HashMap<uuid::Uuid, i64>,
    /// Channels this user types in, with when a start last went out on
    /// this connection (`None`: not yet).
    typing_out: HashMap<String, Option<Instant>>,
    /// The presence subscription, sent again after every HELLO.
    presence_sub: Option<Vec<String>>,
    /// The presence subscription while pending on this connection.
    presence_pending: Option<PresencePending>,
    /// Others' typing indicators that are on: (channel, user) → expiresAt.
    indicators: HashMap<(String, String), i64>,
    /// The threads opened with [`Client::open_thread`] and their reads.
    threads: ThreadReads<SendError>,
}

impl Task {
    fn new(
        config: ClientConfig,
        commands: mpsc::Receiver<Command>,
        events: mpsc::Sender<Event>,
        connected: watch::Sender<bool>,
        user_id: String,
    ) -> Self {
        let channels = config
            .resume
            .iter()
            .map(|(channel, seq)| (channel.clone(), ChannelOrder::after(*seq)))
            .collect();
        Self {
            config,
            commands,
            events,
            connected,
            user_id,
            pending: HashMap::new(),
            order: VecDeque::new(),
            channels,
            queued_receipts: Vec::new(),
            states: SharedStates::default(),
            read_as_of: HashMap::new(),
            typing_out: HashMap::new(),
            presence_sub: None,
            presence_pending: None,
            indicators: HashMap::new(),
            threads: ThreadReads::default(),
        }
    }

    async fn run(&mut self, socket: Socket, hello: Hello) {
        let mut backoff = Backoff::new(self.config.backoff_initial, self.config.backoff_max);
        let mut next = Some((socket, hello));
        let reason = loop {
            let (socket, hello) = match next.take() {
                Some(opened) => opened,
                None => {
                    let wait = backoff.next_delay();
                    if let Some(reason) = self.wait_offline(wait).await {
                        break reason;
                    }
                    match open(&self.config).await {
                        Ok(opened) => opened,
                        Err(Failure::Fatal(e)) => break e.to_string(),
                        Err(Failure::Transient(why)) => {
                            tracing::debug!(why, "reconnect failed");
                            continue;
                        }
                    }
                }
            };
            backoff.reset();
            let _ = self.connected.send(true);
            match self.session(socket, hello).await {
                SessionEnd::Stop(reason) => break reason,
                SessionEnd::Lost { code, reason } => {
                    let _ = self.connected.send(false);
                    // a reconnect sends the subscription anyway
                    self.presence_pending = None;
                    for channel in self.channels.values_mut() {
                        channel.connection_lost();
                    }
                    for pending in self.pending.values_mut() {
                        pending.sent_at = None;
                    }
                    if self.events.send(Event::Disconnected { code, reason }).await.is_err() {
                        break "the application dropped the event receiver".into();
                    }
                }
            }
        };
        let _ = self.connected.send(false);
        for (_, mut pending) in self.pending.drain() {
            if let Some(reply) = pending.reply.take() {
                let _ = reply.send(Err(SendError::Closed(reason.clone())));
            }
        }
        self.order.clear();
        let _ = self.events.send(Event::Stopped { reason }).await;
    }

    /// Waits `wait` while disconnected, still taking commands. Returns a
    /// reason to stop, if one came.
    async fn wait_offline(&mut self, wait: Duration) -> Option<String> {
        let until = Instant::now() + wait;
        loop {
            tokio::select! {
                () = sleep_until(until) => return None,
                command = self.commands.recv() => match command {
                    None | Some(Command::Close) => return Some("closed by the application".into()),
                    Some(command) => self.take_command_offline(command),
                },
            }
            self.expire_deadlines();
        }
    }

    fn take_command_offline(&mut self, command: Command) {
        match command {
            Command::Send {
                channel_id,
                client_msg_id,
                body,
                options,
                entry,
                reply,
            } => self.add_pending(channel_id, client_msg_id, body, options, entry, reply),
            Command::Receipt { message_id, read } => self.queued_receipts.push((message_id, read)),
            Command::Typing { channel_id, on } => {
                if on {
                    self.typing_out.insert(channel_id, None);
                } else {
                    self.typing_out.remove(&channel_id);
                }
            }
            Command::PresenceSub(ids) => self.presence_sub = Some(ids),
            Command::SetToken(token) => self.config.token = token,
            Command::Reconnect | Command::Close => {}
            // Sent with the other reads after the next HELLO.
            Command::ReadThread {
                channel_id,
                root_id,
                older,
                reply,
            } => {
                self.threads.ask(&channel_id, root_id, older, reply);
            }
            Command::Thread {
                channel_id,
                root_id,
                reply,
            } => {
                let _ = reply.send(self.thread_snapshot(&channel_id, root_id));
            }
        }
    }

    /// Queues a TYPING `start` for every channel typed in whose last one is
    /// [`ClientConfig::typing_renew`] old (or was not sent on this connection).
    fn typing_due(&mut self, out: &mut Vec<ClientFrame>) {
        let now = Instant::now();
        for (channel, last) in &mut self.typing_out {
            if last.is_none_or(|at| now.duration_since(at) >= self.config.typing_renew) {
                *last = Some(now);
                out.push(ClientFrame::Typing {
                    channel_id: channel.clone(),
                    state: "start".into(),
                });
            }
        }
    }

    /// Turns off (with an event each) the indicators whose `expiresAt` passed.
    async fn expire_indicators(&mut self) -> Option<SessionEnd> {
        let now = chatd_proto::ids::now_ms();
        let lapsed: Vec<(String, String)> = self
            .indicators
            .iter()
            .filter(|(_, expires)| **expires <= now)
            .map(|(key, _)| key.clone())
            .collect();
        for key in lapsed {
            self.indicators.remove(&key);
            let (channel_id, user_id) = key;
            let event = Event::Typing {
                channel_id,
                user_id,
                typing: false,
                expires_at: None,
            };
            if let Some(end) = self.emit(event).await {
                return Some(end);
            }
        }
        None
    }

    fn add_pending(
        &mut self,
        channel_id: String,
        client_msg_id: String,
        body: String,
        options: SendOptions,
        entry: Option<EntryRequest>,
        reply: oneshot::Sender<Result<Ack, SendError>>,
    ) {
        if let Some(existing) = self.pending.get_mut(&client_msg_id) {
            // The application retried a key still in flight: answer both
            // with the one outcome by keeping the newer waiter (the older
            // one is told to retry).
            if let Some(old) = existing.reply.replace(reply) {
                let _ = old.send(Err(SendError::Closed("superseded by a retry with the same key".into())));
            }
            return;
        }
        self.pending.insert(
            client_msg_id.clone(),
            Pending {
                channel_id,
                body,
                options,
                entry,
                reply: Some(reply),
                attempts: 0,
                sent_at: None,
                retry_at: None,
                backoff: Backoff::new(self.config.backoff_initial, self.config.backoff_max),
                deadline: self.config.send_deadline.map(|d| Instant::now() + d),
            },
        );
        self.order.push_back(client_msg_id);
    }

    fn expire_deadlines(&mut self) {
        let now = Instant::now();
        let expired: Vec<String> = self
            .pending
            .iter()
            .filter(|(_, p)| p.deadline.is_some_and(|d| d <= now))
            .map(|(k, _)| k.clone())
            .collect();
        for key in expired {
            if let Some(mut pending) = self.pending.remove(&key) {
                if let Some(reply) = pending.reply.take() {
                    let _ = reply.send(Err(SendError::DeadlineExceeded));
                }
            }
        }
    }

    /// Runs one session until it ends.
    async fn session(&mut self, mut socket: Socket, hello: Hello) -> SessionEnd {
        let Hello {
            user_id,
            session_id,
            channels,
        } = hello;
        self.user_id.clone_from(&user_id);
        for state in &channels {
            let order = self
                .channels
                .entry(state.channel_id.clone())
                .or_insert_with(ChannelOrder::unknown);
            order.observe_last_seq(state.last_seq, self.config.start_from);
        }
        if let Some(end) = self
            .emit(Event::Connected {
                user_id,
                session_id,
                channels,
            })
            .await
        {
            return end;
        }
        let mut out: Vec<ClientFrame> = Vec::new();
        self.syncs_due(&mut out);
        out.extend(self.threads.in_flight().into_iter().map(|read| self.thread_sync(read)));
        for (message_id, read) in std::mem::take(&mut self.queued_receipts) {
            out.push(receipt_frame(message_id, read));
        }
        self.presence_pending = None;
        if let Some(ids) = self.presence_sub.clone() {
            self.push_presence_sub(ids, &mut out);
        }
        for last in self.typing_out.values_mut() {
            *last = None;
        }
        self.typing_due(&mut out);
        self.sends_due(&mut out);
        if let Err(e) = write_all(&mut socket, &mut out).await {
            return SessionEnd::Lost { code: None, reason: e };
        }
        // Timers (retries, ACK and idle timeouts, send deadlines) are checked
        // on a tick rather than per frame, so the cost per frame stays flat
        // however many sends are in flight.
        let mut tick = tokio::time::interval(Duration::from_millis(20));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_heard = Instant::now();
        loop {
            tokio::select! {
                command = self.commands.recv() => {
                    let Some(command) = command else {
                        let _ = socket.close(None).await;
                        return SessionEnd::Stop("every client handle was dropped".into());
                    };
                    let mut next = Some(command);
                    // Take whatever else is queued, then write once.
                    let mut budget = 256;
                    while let Some(command) = next.take() {
                        match command {
                            Command::Close => {
                                let _ = socket.close(None).await;
                                return SessionEnd::Stop("closed by the application".into());
                            }
                            Command::Send { channel_id, client_msg_id, body, options, entry, reply } => {
                                self.add_pending(channel_id, client_msg_id, body, options, entry, reply);
                                self.send_now(&mut out);
                            }
                            Command::Receipt { message_id, read } => out.push(receipt_frame(message_id, read)),
                            Command::Typing { channel_id, on } => {
                                if on {
                                    self.typing_out.entry(channel_id).or_insert(None);
                                    self.typing_due(&mut out);
                                } else if self.typing_out.remove(&channel_id).is_some() {
                                    out.push(ClientFrame::Typing { channel_id, state: "stop".into() });
                                }
                            }
                            Command::PresenceSub(ids) => {
                                self.presence_pending = None;
                                self.push_presence_sub(ids.clone(), &mut out);
                                self.presence_sub = Some(ids);
                            }
                            Command::SetToken(token) => self.config.token = token,
                            Command::ReadThread { channel_id, root_id, older, reply } => {
                                if let Some(read) = self.threads.ask(&channel_id, root_id, older, reply) {
                                    out.push(self.thread_sync(read));
                                }
                            }
                            Command::Thread { channel_id, root_id, reply } => {
                                let _ = reply.send(self.thread_snapshot(&channel_id, root_id));
                            }
                            Command::Reconnect => {
                                let _ = socket.close(None).await;
                                return SessionEnd::Lost {
                                    code: None,
                                    reason: "reconnect asked by the application".into(),
                                };
                            }
                        }
                        budget -= 1;
                        if budget > 0 {
                            next = self.commands.try_recv().ok();
                        }
                    }
                }
                frame = socket.next() => {
                    last_heard = Instant::now();
                    match frame {
                        Some(Ok(Message::Text(text))) => {
                            if let Some(end) = self.on_frame(text.as_str(), &mut out).await {
                                return end;
                            }
                        }
                        Some(Ok(Message::Close(frame))) => {
                            let code = frame.as_ref().map(|f| u16::from(f.code));
                            let reason = frame.map(|f| f.reason.to_string()).unwrap_or_default();
                            return SessionEnd::Lost { code, reason };
                        }
                        Some(Ok(_)) => {}
                        Some(Err(e)) => return SessionEnd::Lost { code: None, reason: e.to_string() },
                        None => return SessionEnd::Lost { code: None, reason: "connection closed".into() },
                    }
                }
                _ = tick.tick() => {
                    let now = Instant::now();
                    if now.duration_since(last_heard) > self.config.idle_timeout {
                        return SessionEnd::Lost {
                            code: None,
                            reason: "nothing heard from the server within idle_timeout".into(),
                        };
                    }
                    if self.ack_overdue(now) {
                        return SessionEnd::Lost {
                            code: None,
                            reason: "no ACK within ack_timeout".into(),
                        };
                    }
                    self.expire_deadlines();
                    self.syncs_due(&mut out);
                    self.sends_due(&mut out);
                    self.typing_due(&mut out);
                    self.presence_retry_due(now, &mut out);
                    if let Some(end) = self.expire_indicators().await {
                        return end;
                    }
                }
            }
            if let Err(e) = write_all(&mut socket, &mut out).await {
                return SessionEnd::Lost { code: None, reason: e };
            }
        }
    }

    /// Queues a PRESENCE_SUB of `ids`; it is pending until its snapshot is
    /// complete (none for an empty list). A retry keeps the backoff.
    fn push_presence_sub(&mut self, ids: Vec<String>, out: &mut Vec<ClientFrame>) {
        let backoff = self.presence_pending.take().map_or_else(
            || Backoff::new(self.config.backoff_initial, self.config.backoff_max),
            |p| p.backoff,
        );
        if !ids.is_empty() {
            self.presence_pending = Some(PresencePending {
                missing: ids.iter().cloned().collect(),
                backoff,
                retry_at: None,
            });
        }
        out.push(ClientFrame::PresenceSub {
            user_ids: ids.into_iter().map(serde_json::Value::String).collect(),
        });
    }

    /// Sends the pending presence subscription again when its retry is due.
    fn presence_retry_due(&mut self, now: Instant, out: &mut Vec<ClientFrame>) {
        let due = self
            .presence_pending
            .as_ref()
            .and_then(|p| p.retry_at)
            .is_some_and(|at| at <= now);
        if due {
            if let Some(ids) = self.presence_sub.clone() {
                self.push_presence_sub(ids, out);
            }
        }
    }

    /// Puts the send just added (the last key in order) on the wire.
    fn send_now(&mut self, out: &mut Vec<ClientFrame>) {
        let Some(key) = self.order.back() else {
            return;
        };
        let Some(pending) = self.pending.get_mut(key) else {
            return;
        };
        if pending.sent_at.is_some() {
            return;
        }
        pending.sent_at = Some(Instant::now());
        pending.attempts += 1;
        out.push(wire_frame(key, pending));
    }

    /// Whether a send went out on this connection longer than `ack_timeout` ago.
    fn ack_overdue(&self, now: Instant) -> bool {
        self.order.iter().any(|key| {
            self.pending
                .get(key)
                .and_then(|p| p.sent_at)
                .is_some_and(|sent| now.duration_since(sent) > self.config.ack_timeout)
        })
    }

    /// Queues every send that is not on the wire of this connection and not
    /// waiting for a retry, in submission order.
    fn sends_due(&mut self, out: &mut Vec<ClientFrame>) {
        let now = Instant::now();
        self.order.retain(|key| self.pending.contains_key(key));
        for key in &self.order {
            let Some(pending) = self.pending.get_mut(key) else {
                continue;
            };
            if pending.sent_at.is_some() || pending.retry_at.is_some_and(|at| at > now) {
                continue;
            }
            pending.retry_at = None;
            pending.sent_at = Some(now);
            pending.attempts += 1;
            out.push(wire_frame(key, pending));
        }
    }

    fn syncs_due(&mut self, out: &mut Vec<ClientFrame>) {
        let limit = i64::from(self.config.sync_limit.clamp(1, 500));
        for (channel_id, order) in &mut self.channels {
            if let Some(after_seq) = order.sync_needed_after(self.config.gap_sync_delay) {
                out.push(ClientFrame::Sync {
                    channel_id: channel_id.clone(),
                    after_seq: Some(after_seq),
                    limit: Some(limit),
                    before_seq: None,
                    latest: None,
                    thread_id: None,
                });
            }
        }
    }

    /// Handles one server frame. Returns how the session ends, if it does.
    async fn on_frame(&mut self, text: &str, out: &mut Vec<ClientFrame>) -> Option<SessionEnd> {
        let frame = match ServerFrame::decode(text) {
            Ok(frame) => frame,
            Err(e) => {
                // Additive protocol changes (a new frame type) must not break
                // old clients: skip what is not understood.
                tracing::debug!(error = %e, "ignoring a frame this client does not understand");
                return None;
            }
        };
        let mut delivered: Vec<RecvMessage> = Vec::new();
        match frame {
            ServerFrame::Typing {
                channel_id,
                user_id,
                state,
                expires_at,
            } => {
                let key = (channel_id, user_id);
                let event = match state {
                    TypingState::Start => {
                        // Without expiresAt (a server that sends none): the
                        // contract's default lifetime.
                        let expires = expires_at.unwrap_or_else(|| chatd_proto::ids::now_ms() + 6000);
                        self.indicators.insert(key.clone(), expires);
                        Some((true, Some(expires)))
                    }
                    TypingState::Stop => self.indicators.remove(&key).map(|_| (false, None)),
                };
                if let Some((typing, expires_at)) = event {
                    let (channel_id, user_id) = key;
                    let event = Event::Typing {
                        channel_id,
                        user_id,
                        typing,
                        expires_at,
                    };
                    if let Some(end) = self.emit(event).await {
                        return Some(end);
                    }
                }
            }
            ServerFrame::Presence {
                user_id,
                status,
                last_seen_at,
            } => {
                if let Some(pending) = &mut self.presence_pending {
                    pending.missing.remove(&user_id);
                    if pending.missing.is_empty() {
                        self.presence_pending = None;
                    }
                }
                let event = Event::Presence {
                    user_id,
                    online: status == PresenceStatus::Online,
                    last_seen_at,
                };
                if let Some(end) = self.emit(event).await {
                    return Some(end);
                }
            }
            ServerFrame::MsgAck(AckFrame {
                client_msg_id,
                message_id,
                channel_id,
                seq,
                ts,
                duplicate,
            }) => {
                // An ACK for a key no longer pending (answered already) is dropped.
                let mut pending = self.pending.remove(&client_msg_id)?;
                let mut own = RecvMessage {
                    message_id,
                    channel_id: channel_id.clone(),
                    sender_id: self.user_id.clone(),
                    seq,
                    body: std::mem::take(&mut pending.body),
                    ts,
                    client_msg_id: Some(client_msg_id.clone()),
                    reply_to: pending.options.reply_to,
                    thread_id: pending.options.thread_id,
                    ..Default::default()
                };
                match pending.entry.take() {
                    None => {}
                    Some(EntryRequest::Edit { message_id, .. }) => {
                        own.kind = EntryKind::Edit;
                        own.target_id = Some(message_id);
                    }
                    Some(EntryRequest::Delete { message_id }) => {
                        own.kind = EntryKind::Delete;
                        own.target_id = Some(message_id);
                    }
                    Some(EntryRequest::React { message_id, emoji, add }) => {
                        // The ACK does not say whether it changed anything:
                        // that is decided when it is folded, in seq order
                        // (`deliver`), from what this user holds then; an
                        // entry before it may still be missing now.
                        own.kind = EntryKind::Reaction;
                        own.target_id = Some(message_id);
                        own.emoji = Some(emoji);
                        own.op = Some(if add { ReactOp::Add } else { ReactOp::Remove });
                    }
                }
                self.offer(own, &mut delivered);
                if let Some(reply) = pending.reply.take() {
                    let _ = reply.send(Ok(Ack {
                        client_msg_id,
                        message_id,
                        channel_id,
                        seq,
                        ts,
                        duplicate,
                        attempts: pending.attempts,
                    }));
                }
            }
            ServerFrame::MsgRecv(message) => self.offer(message, &mut delivered),
            // A thread's page (§14), asked for by `open_thread` or
            // `load_older_replies`.
            ServerFrame::SyncBatch {
                channel_id,
                messages,
                has_more,
                last_seq,
                thread_id: Some(root_id),
            } => {
                let delivered = self.channels.get(&channel_id).map_or(0, ChannelOrder::delivered);
                let last_seq = last_seq.unwrap_or(i64::MAX);
                match self.threads.page_came(&channel_id, root_id, last_seq, delivered) {
                    PageOutcome::Unasked => {}
                    PageOutcome::ReadAgain(read) => out.push(self.thread_sync(read)),
                    PageOutcome::Take => {
                        let oldest = messages.iter().map(|TaggedMessage::MsgRecv(m)| m.seq).min();
                        self.take_thread_page(&channel_id, messages, last_seq);
                        self.threads.page_taken(&channel_id, root_id, oldest, has_more);
                    }
                }
            }
            ServerFrame::SyncBatch {
                channel_id,
                messages,
                has_more,
                last_seq,
                thread_id: None,
            } => {
                for TaggedMessage::MsgRecv(message) in messages {
                    if let (true, Some(last), Some(_)) = (self.config.fold_messages, last_seq, &message.reactions) {
                        self.read_as_of.insert(message.message_id, last);
                    }
                    self.offer(message, &mut delivered);
                }
                let limit = i64::from(self.config.sync_limit.clamp(1, 500));
                if let Some(order) = self.channels.get_mut(&channel_id) {
                    if let Some(after_seq) = order.sync_done(has_more) {
                        out.push(ClientFrame::Sync {
                            channel_id,
                            after_seq: Some(after_seq),
                            limit: Some(limit),
                            before_seq: None,
                            latest: None,
                            thread_id: None,
                        });
                    }
                }
            }
            ServerFrame::Receipt {
                channel_id,
                user_id,
                kind,
                message_id,
                seq,
                ts,
            } => {
                let receipt = Event::Receipt {
                    channel_id,
                    user_id,
                    kind,
                    message_id,
                    seq,
                    ts,
                };
                if let Some(end) = self.emit(receipt).await {
                    return Some(end);
                }
            }
            ServerFrame::Error(error) => {
                if let Some(end) = self.on_error(error).await {
                    return Some(end);
                }
            }
            ServerFrame::Hello { .. } => {}
            // No longer a member (or the channel was deleted): stop
            // tracking (and syncing) it.
            ServerFrame::ChannelRemoved { channel_id, reason } => {
                self.channels.remove(&channel_id);
                if let Some(end) = self.emit(Event::ChannelRemoved { channel_id, reason }).await {
                    return Some(end);
                }
            }
            // A new channel: tracked from its lastSeq as HELLO's are.
            ServerFrame::ChannelAdded { channel } => {
                self.channels
                    .entry(channel.channel_id.clone())
                    .or_insert_with(ChannelOrder::unknown)
                    .observe_last_seq(channel.last_seq, self.config.start_from);
                if let Some(end) = self.emit(Event::ChannelAdded { channel }).await {
                    return Some(end);
                }
            }
            ServerFrame::Member(member) => {
                if let Some(end) = self.emit(Event::Member(member)).await {
                    return Some(end);
                }
            }
            ServerFrame::ChannelUpdated {
                channel_id,
                name,
                metadata,
                visibility,
                posting_role,
                slow_mode_ms,
                retention_secs,
            } => {
                let event = Event::ChannelUpdated {
                    channel_id,
                    name,
                    metadata,
                    visibility,
                    posting_role,
                    slow_mode_ms,
                    retention_secs,
                };
                if let Some(end) = self.emit(event).await {
                    return Some(end);
                }
            }
            ServerFrame::ChannelSettings {
                channel_id,
                notify,
                snooze_until,
            } => {
                let event = Event::Settings {
                    channel_id,
                    notify,
                    snooze_until,
                };
                if let Some(end) = self.emit(event).await {
                    return Some(end);
                }
            }
        }
        self.syncs_due(out);
        self.deliver(delivered, out).await
    }

    fn offer(&mut self, message: RecvMessage, delivered: &mut Vec<RecvMessage>) {
        // By reference first: the channel's id is cloned only for its first
        // message, not for every one.
        if !self.channels.contains_key(&message.channel_id) {
            let order = match self.config.start_from {
                StartFrom::Beginning => ChannelOrder::after(0),
                StartFrom::Now => ChannelOrder::unknown(),
            };
            self.channels.insert(message.channel_id.clone(), order);
        }
        if let Some(order) = self.channels.get_mut(&message.channel_id) {
            order.offer_into(message, delivered);
        }
    }

    /// Folds `message` onto its channel's message state (resolving `noop`
    /// of the client's own reaction first); the new states of the messages
    /// it changed: an edit's, delete's or reaction's target, the messages
    /// quoting it, a thread's root (§14); never the new message itself.
    fn fold(&mut self, message: &mut RecvMessage) -> Vec<MessageState> {
        let as_of = self.read_as_of.remove(&message.message_id);
        let Ok(mut states) = self.states.lock() else {
            return Vec::new();
        };
        // Look the channel up by reference first: a clone of its id per
        // message only for a channel's first one.
        if !states.contains_key(&message.channel_id) {
            states.insert(message.channel_id.clone(), ChannelMessages::default());
        }
        let Some(log) = states.get_mut(&message.channel_id) else {
            return Vec::new();
        };
        log.resolve_own_reaction(message, &self.user_id);
        log.fold(message, &self.user_id, as_of)
            .into_iter()
            .filter(|id| *id != message.message_id)
            .filter_map(|id| log.get(&id).cloned())
            .collect()
    }

    /// The SYNC of a thread's page.
    fn thread_sync(&self, read: PageRead) -> ClientFrame {
        ClientFrame::Sync {
            channel_id: read.channel_id,
            after_seq: None,
            limit: Some(i64::from(self.config.sync_limit.clamp(1, 500))),
            before_seq: read.before_seq,
            latest: read.before_seq.is_none().then_some(true),
            thread_id: Some(read.root_id.to_string()),
        }
    }

    /// Folds a thread page's replies read as of `last_seq` into the
    /// channel's state, those the client does not hold (a held one is
    /// current through what the channel delivered, which the page's read
    /// was checked to cover).
    fn take_thread_page(&mut self, channel_id: &str, messages: Vec<TaggedMessage>, last_seq: i64) {
        let Ok(mut states) = self.states.lock() else {
            return;
        };
        let log = states.entry(channel_id.to_owned()).or_default();
        for TaggedMessage::MsgRecv(reply) in messages {
            log.insert_read(&reply, &self.user_id, last_seq);
        }
    }

    /// The thread of `root_id` as held: `None` when it was never read.
    fn thread_snapshot(&self, channel_id: &str, root_id: uuid::Uuid) -> Option<Thread> {
        let (from, has_older) = self.threads.shown_from(channel_id, root_id)?;
        let mut replies: Vec<MessageState> = self
            .states
            .lock()
            .ok()?
            .get(channel_id)
            .map(|log| {
                log.iter()
                    .filter(|m| m.thread_id == Some(root_id) && m.seq >= from)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        replies.sort_by_key(|m| m.seq);
        let pending = self
            .order
            .iter()
            .filter_map(|key| Some((key, self.pending.get(key)?)))
            .filter(|(_, p)| p.entry.is_none() && p.channel_id == channel_id && p.options.thread_id == Some(root_id))
            .map(|(key, p)| PendingReply {
                client_msg_id: key.clone(),
                body: p.body.clone(),
                reply_to: p.options.reply_to,
                attempts: p.attempts,
            })
            .collect();
        Some(Thread {
            channel_id: channel_id.to_owned(),
            root_id,
            replies,
            pending,
            has_older,
        })
    }

    async fn deliver(&mut self, delivered: Vec<RecvMessage>, out: &mut Vec<ClientFrame>) -> Option<SessionEnd> {
        let mut last_from_others: HashMap<String, uuid::Uuid> = HashMap::new();
        for mut message in delivered {
            if self.config.auto_delivered && message.sender_id != self.user_id {
                last_from_others.insert(message.channel_id.clone(), message.message_id);
            }
            let changed = if self.config.fold_messages {
                self.fold(&mut message)
            } else {
                Vec::new()
            };
            let channel_id = message.channel_id.clone();
            if let Some(end) = self.emit(Event::Message(message)).await {
                return Some(end);
            }
            for state in changed {
                let channel_id = channel_id.clone();
                if let Some(end) = self.emit(Event::Changed { channel_id, state }).await {
                    return Some(end);
                }
            }
        }
        for message_id in last_from_others.into_values() {
            out.push(receipt_frame(message_id, false));
        }
        None
    }

    async fn on_error(&mut self, error: ErrorFrame) -> Option<SessionEnd> {
        let key = error.client_msg_id.clone();
        if let Some(pending) = key.as_deref().and_then(|k| self.pending.get_mut(k)) {
            if error.retryable {
                let wait = match error.retry_after_ms {
                    Some(ms) => Duration::from_millis(ms).max(pending.backoff.next_delay()),
                    None => pending.backoff.next_delay(),
                };
                pending.sent_at = None;
                pending.retry_at = Some(Instant::now() + wait);
                return None;
            }
            if let Some(mut pending) = key.as_deref().and_then(|k| self.pending.remove(k)) {
                if let Some(reply) = pending.reply.take() {
                    let _ = reply.send(Err(SendError::Refused {
                        code: error.code,
                        message: error.message,
                        reason: error.reason,
                        retry_after_ms: error.retry_after_ms,
                    }));
                }
            }
            return None;
        }
        if matches!(
            error.code,
            ErrorCode::Unavailable | ErrorCode::Internal | ErrorCode::RateLimited
        ) && error.client_msg_id.is_none()
            && error.channel_id.is_none()
            && error.message_id.is_none()
        {
            // Names nothing (spec §4, §9): under a herd or over the rate the
            // server refuses a PRESENCE_SUB so. Taken for the pending
            // subscription's; if it was another frame's, that costs one
            // redundant PRESENCE_SUB (it replaces the subscription and sends
            // the snapshot again). One retry at a time, never at once: equal
            // jitter over the backoff, `retryAfterMs` a floor.
            if let Some(pending) = &mut self.presence_pending {
                if pending.retry_at.is_none() {
                    let ceiling = pending.backoff.ceiling();
                    let jitter = pending.backoff.next_delay();
                    let mut wait = (ceiling / 2 + jitter / 2).max(Duration::from_millis(1));
                    if let Some(ms) = error.retry_after_ms {
                        wait = wait.max(Duration::from_millis(ms));
                    }
                    pending.retry_at = Some(Instant::now() + wait);
                }
            }
        }
        if let (None, Some(channel)) = (&error.client_msg_id, error.channel_id.as_deref()) {
            // A thread read refused (an unknown root: `threadId`; a channel
            // the user is not in): its callers are told.
            if error.code == ErrorCode::Forbidden || error.field.as_deref() == Some("threadId") {
                let refused = SendError::Refused {
                    code: error.code,
                    message: error.message.clone(),
                    reason: error.reason.clone(),
                    retry_after_ms: error.retry_after_ms,
                };
                self.threads.page_refused(channel, None, &refused);
            }
        }
        if error.code == ErrorCode::Forbidden {
            // A SYNC for a channel this user left: stop asking.
            if let Some(channel) = error.channel_id.as_deref() {
                self.channels.remove(channel);
            }
        }
        self.emit(Event::Error(error)).await
    }

    /// Hands `event` to the application; the session ends (stop) when the
    /// application dropped its receiver.
    async fn emit(&self, event: Event) -> Option<SessionEnd> {
        match self.events.send(event).await {
            Ok(()) => None,
            Err(_) => Some(SessionEnd::Stop("the application dropped the event receiver".into())),
        }
    }
}

/// The frame that (re)sends a pending message or entry.
fn wire_frame(key: &str, pending: &Pending) -> ClientFrame {
    let client_msg_id = key.to_owned();
    match &pending.entry {
        None => ClientFrame::MsgSend {
            channel_id: pending.channel_id.clone(),
            client_msg_id,
            body: pending.body.clone(),
            reply_to: pending.options.reply_to.map(|id| id.to_string()),
            thread_id: pending.options.thread_id.map(|id| id.to_string()),
            mentions: (!pending.options.mentions.is_empty()).then(|| {
                pending
                    .options
                    .mentions
                    .iter()
                    .map(|u| serde_json::Value::String(u.clone()))
                    .collect()
            }),
            mention_all: pending.options.mention_all.then_some(true),
            attachments: (!pending.options.attachments.is_empty()).then(|| {
                pending
                    .options
                    .attachments
                    .iter()
                    .map(|id| serde_json::Value::String(id.hyphenated().to_string()))
                    .collect()
            }),
        },
        Some(EntryRequest::Edit { message_id, body }) => ClientFrame::MsgEdit {
            client_msg_id,
            message_id: message_id.to_string(),
            body: body.clone(),
        },
        Some(EntryRequest::Delete { message_id }) => ClientFrame::MsgDelete {
            client_msg_id,
            message_id: message_id.to_string(),
        },
        Some(EntryRequest::React { message_id, emoji, add }) => ClientFrame::MsgReact {
            client_msg_id,
            message_id: message_id.to_string(),
            emoji: emoji.clone(),
            op: if *add { "add" } else { "remove" }.to_owned(),
        },
    }
}

fn receipt_frame(message_id: uuid::Uuid, read: bool) -> ClientFrame {
    let message_id = message_id.to_string();
    if read {
        ClientFrame::MsgRead { message_id }
    } else {
        ClientFrame::MsgDelivered { message_id }
    }
}

/// Writes queued frames with one flush.
async fn write_all(socket: &mut Socket, out: &mut Vec<ClientFrame>) -> Result<(), String> {
    if out.is_empty() {
        return Ok(());
    }
    for frame in out.drain(..) {
        let text = serde_json::to_string(&frame).map_err(|e| e.to_string())?;
        socket.feed(Message::text(text)).await.map_err(|e| e.to_string())?;
    }
    socket.flush().await.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task() -> (Task, mpsc::Sender<Command>, mpsc::Receiver<Event>) {
        task_with(true)
    }

    fn task_with(fold_messages: bool) -> (Task, mpsc::Sender<Command>, mpsc::Receiver<Event>) {
        let (commands_tx, commands) = mpsc::channel(8);
        let (events, event_rx) = mpsc::channel(256);
        let (connected, _) = watch::channel(true);
        let mut config = ClientConfig::new("ws://127.0.0.1:9/v1/ws", "token");
        config.start_from = StartFrom::Beginning;
        config.fold_messages = fold_messages;
        (
            Task::new(config, commands, events, connected, "alice".into()),
            commands_tx,
            event_rx,
        )
    }

    fn id(n: u128) -> uuid::Uuid {
        uuid::Uuid::from_u128(n)
    }

    fn recv(seq: i64, sender: &str) -> String {
        serde_json::json!({
            "type": "MSG_RECV", "messageId": id(seq as u128), "channelId": "room", "senderId": sender,
            "seq": seq, "body": "hi", "ts": seq, "clientMsgId": format!("c{seq}"), "kind": "message"
        })
        .to_string()
    }

    fn ack(key: &str, seq: i64) -> String {
        serde_json::json!({
            "type": "MSG_ACK", "clientMsgId": key, "messageId": id(seq as u128), "channelId": "room",
            "seq": seq, "ts": seq, "duplicate": false
        })
        .to_string()
    }

    /// A task whose subscription to `ids` was just sent (pending until every
    /// id's PRESENCE came), as after `subscribe_presence` on an open session.
    fn subscribed(ids: &[&str]) -> (Task, mpsc::Receiver<Event>) {
        let (mut task, _commands, events) = task();
        let ids: Vec<String> = ids.iter().map(|id| (*id).to_owned()).collect();
        task.presence_sub = Some(ids.clone());
        task.push_presence_sub(ids, &mut Vec::new());
        (task, events)
    }

    fn error(extra: serde_json::Value) -> String {
        let mut frame = serde_json::json!({
            "type": "ERROR", "code": "unavailable", "message": "busy", "retryable": true
        });
        if let (Some(frame), Some(extra)) = (frame.as_object_mut(), extra.as_object()) {
            frame.extend(extra.clone());
        }
        frame.to_string()
    }

    fn presence(user: &str) -> String {
        serde_json::json!({"type": "PRESENCE", "userId": user, "status": "offline"}).to_string()
    }

    /// The PRESENCE_SUB frames a retry check long after now puts on the wire.
    fn retries_due(task: &mut Task) -> usize {
        let mut out = Vec::new();
        task.presence_retry_due(Instant::now() + Duration::from_secs(3600), &mut out);
        out.iter()
            .filter(|f| matches!(f, ClientFrame::PresenceSub { .. }))
            .count()
    }

    /// The control for the two tests below: a retryable ERROR naming nothing
    /// is taken for the pending subscription's, which goes out again.
    #[tokio::test]
    async fn an_error_naming_nothing_resends_a_pending_presence_sub() {
        let (mut task, _events) = subscribed(&["bob", "carol"]);
        task.on_frame(&error(serde_json::json!({})), &mut Vec::new()).await;
        assert_eq!(retries_due(&mut task), 1);
    }

    /// An ERROR that names a channel answers another frame (a SYNC, a
    /// TYPING): the pending subscription is not sent again for it.
    #[tokio::test]
    async fn an_error_naming_a_channel_does_not_resend_a_pending_presence_sub() {
        let (mut task, _events) = subscribed(&["bob", "carol"]);
        let refused = error(serde_json::json!({"channelId": "room"}));
        task.on_frame(&refused, &mut Vec::new()).await;
        assert!(task.presence_pending.is_some(), "still waiting for its snapshot");
        assert_eq!(retries_due(&mut task), 0);
    }

    /// Once every listed id's PRESENCE came, the subscription is complete:
    /// a later retryable ERROR naming nothing does not send it again.
    #[tokio::test]
    async fn a_completed_presence_snapshot_stops_the_retries() {
        let (mut task, _events) = subscribed(&["bob", "carol"]);
        task.on_frame(&presence("bob"), &mut Vec::new()).await;
        assert!(task.presence_pending.is_some(), "carol's PRESENCE is missing");
        task.on_frame(&presence("carol"), &mut Vec::new()).await;
        assert!(task.presence_pending.is_none());
        task.on_frame(&error(serde_json::json!({})), &mut Vec::new()).await;
        assert_eq!(retries_due(&mut task), 0);
    }

    /// The chatd-faults case: two reactions of this client in flight, ACKed
    /// while an earlier entry is still missing (held above a gap). Whether
    /// each changed anything depends on what is folded before it, so it is
    /// decided when it is folded, in seq order, not when its ACK comes.
    #[tokio::test]
    async fn own_reactions_acked_above_a_gap_fold_as_the_server_applied_them() {
        let (mut task, _commands, _events) = task();
        let mut out = Vec::new();
        task.on_frame(&recv(1, "bob"), &mut out).await;
        for (key, add) in [("k-add", true), ("k-remove", false)] {
            let (reply, _rx) = oneshot::channel();
            let entry = EntryRequest::React {
                message_id: id(1),
                emoji: "👍".into(),
                add,
            };
            task.add_pending(
                String::new(),
                key.into(),
                String::new(),
                SendOptions::default(),
                Some(entry),
                reply,
            );
        }
        // Stored as seq 3 (add: changed) and 4 (remove: changed); seq 2 (bob's)
        // arrives after both ACKs.
        task.on_frame(&ack("k-add", 3), &mut out).await;
        task.on_frame(&ack("k-remove", 4), &mut out).await;
        task.on_frame(&recv(2, "bob"), &mut out).await;
        let states = task.states.lock().expect("states");
        let state = states.get("room").and_then(|s| s.get(&id(1))).expect("folded");
        assert_eq!(state.reactions, Vec::new(), "added, then removed");
    }

    /// With `fold_messages` off the client keeps no state per message (its
    /// memory does not grow with the messages it receives), sends no
    /// `Changed`, and still delivers every entry in order.
    #[tokio::test]
    async fn without_folding_no_message_state_is_kept() {
        for fold in [true, false] {
            let (mut task, _commands, mut events) = task_with(fold);
            let mut out = Vec::new();
            task.on_frame(&recv(1, "bob"), &mut out).await;
            let edit = serde_json::json!({
                "type": "MSG_RECV", "messageId": id(2), "channelId": "room", "senderId": "bob",
                "seq": 2, "body": "edited", "ts": 2, "clientMsgId": "c2", "kind": "edit", "targetId": id(1)
            });
            task.on_frame(&edit.to_string(), &mut out).await;
            let kept = task
                .states
                .lock()
                .expect("states")
                .get("room")
                .map_or(0, |s| s.iter().count());
            assert_eq!(kept, usize::from(fold), "fold_messages {fold}");
            let mut seqs = Vec::new();
            let mut changed = 0;
            while let Ok(event) = events.try_recv() {
                match event {
                    Event::Message(m) => seqs.push(m.seq),
                    Event::Changed { .. } => changed += 1,
                    _ => {}
                }
            }
            assert_eq!(seqs, vec![1, 2], "fold_messages {fold}");
            assert_eq!(changed, usize::from(fold), "fold_messages {fold}");
        }
    }
}
