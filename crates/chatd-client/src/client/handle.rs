//! The [`Client`] handle: the application's side, which checks what it can
//! locally and hands the rest to the task as [`Command`]s.

use chatd_proto::ids::{ChannelId, ClientMsgId};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use super::command::{Command, SharedStates};
use super::connect::{open, Failure};
use super::task::Task;
use super::types::{Ack, ConnectError, EntryRequest, Event, SendError, SendOptions};
use crate::config::{Backoff, ClientConfig};
use crate::log::MessageState;
use crate::thread::Thread;

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
    /// yet delivered (not yet ACKed, or ACKed above a gap the client is
    /// still filling; [`Thread::pending`]). `None` until
    /// [`Client::open_thread`] read it.
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
