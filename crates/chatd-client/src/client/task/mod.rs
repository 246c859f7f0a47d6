//! The task behind a [`Client`](super::Client): it owns the WebSocket,
//! runs one session after another (reconnecting with backoff), and takes
//! the handles' commands. Its parts, by concern: sends and their retries
//! under one idempotency key (`sending.rs`), the server's frames
//! (`incoming.rs`), ordered delivery and gap filling (`delivery.rs`),
//! typing and presence (`ephemeral.rs`), threads (`threads.rs`).

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use chatd_proto::protocol::{ClientFrame, RecvMessage};
use futures_util::StreamExt;
use tokio::sync::{mpsc, watch};
use tokio::time::{sleep_until, Instant};
use tokio_tungstenite::tungstenite::Message;

use super::command::{Command, SharedStates};
use super::connect::{open, write_all, Failure, Hello, Socket};
use super::types::{Event, SendError};
use crate::config::{Backoff, ClientConfig};
use crate::order::ChannelOrder;
use crate::thread::ThreadReads;
use delivery::receipt_frame;
use ephemeral::PresencePending;
use sending::Pending;

mod delivery;
mod ephemeral;
mod incoming;
mod sending;
#[cfg(test)]
mod testkit;
mod threads;

/// How a session ended.
enum SessionEnd {
    /// Reconnect.
    Lost { code: Option<u16>, reason: String },
    /// Stop for good.
    Stop(String),
}

pub(super) struct Task {
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
    pub(super) states: SharedStates,
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
    /// This user's thread replies ACKed above a gap and not yet delivered,
    /// by message id: the frames sent for each (shown as pending until
    /// delivered; `threads.rs`).
    acked_held: HashMap<uuid::Uuid, u32>,
    /// The buffer of the messages a frame made deliverable, kept empty
    /// between frames so that a frame does not allocate one.
    #[allow(
        clippy::vec_box,
        reason = "moved on as boxed to the application: a pointer, not 400 bytes"
    )]
    delivered_buf: Vec<Box<RecvMessage>>,
    /// The wait before a channel's SYNC refused for now is asked again
    /// (reset by any SYNC_BATCH).
    sync_backoff: Backoff,
}

impl Task {
    pub(super) fn new(
        config: ClientConfig,
        commands: mpsc::Receiver<Command>,
        events: mpsc::Sender<Event>,
        connected: watch::Sender<bool>,
        user_id: String,
    ) -> Self {
        let sync_backoff = Backoff::new(config.backoff_initial, config.backoff_max);
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
            acked_held: HashMap::new(),
            delivered_buf: Vec::new(),
            sync_backoff,
        }
    }

    pub(super) async fn run(&mut self, socket: Socket, hello: Hello) {
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

    /// Hands `event` to the application; the session ends (stop) when the
    /// application dropped its receiver.
    async fn emit(&self, event: Event) -> Option<SessionEnd> {
        match self.events.send(event).await {
            Ok(()) => None,
            Err(_) => Some(SessionEnd::Stop("the application dropped the event receiver".into())),
        }
    }
}
