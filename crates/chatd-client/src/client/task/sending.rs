//! Sends and entries in flight: each kept under its `clientMsgId` (the
//! server's idempotency key) until answered, put on the wire in submission
//! order, sent again with the same key after a reconnect or a retryable
//! ERROR, answered by its ACK, or failed at its deadline.

use chatd_proto::protocol::{AckFrame, ClientFrame, EntryKind, ReactOp, RecvMessage};
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::Task;
use crate::client::types::{Ack, EntryRequest, SendError, SendOptions};
use crate::config::Backoff;

/// A send not yet answered.
pub(super) struct Pending {
    /// The channel (a message), or `""` (an entry: the server finds the channel).
    pub(super) channel_id: String,
    pub(super) body: String,
    /// A message's references (§14).
    pub(super) options: SendOptions,
    /// `None` for a message.
    pub(super) entry: Option<EntryRequest>,
    pub(super) reply: Option<oneshot::Sender<Result<Ack, SendError>>>,
    /// Frames sent so far.
    pub(super) attempts: u32,
    /// When the last frame went out on the current connection (None: not
    /// sent on it yet).
    pub(super) sent_at: Option<Instant>,
    /// Hold until then before sending again (after a retryable ERROR).
    pub(super) retry_at: Option<Instant>,
    pub(super) backoff: Backoff,
    pub(super) deadline: Option<Instant>,
}

impl Task {
    pub(super) fn add_pending(
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

    pub(super) fn expire_deadlines(&mut self) {
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

    /// Puts the send just added (the last key in order) on the wire.
    pub(super) fn send_now(&mut self, out: &mut Vec<ClientFrame>) {
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
    pub(super) fn ack_overdue(&self, now: Instant) -> bool {
        self.order.iter().any(|key| {
            self.pending
                .get(key)
                .and_then(|p| p.sent_at)
                .is_some_and(|sent| now.duration_since(sent) > self.config.ack_timeout)
        })
    }

    /// Queues every send that is not on the wire of this connection and not
    /// waiting for a retry, in submission order.
    pub(super) fn sends_due(&mut self, out: &mut Vec<ClientFrame>) {
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

    /// Answers the send an ACK is for and offers its entry for delivery
    /// (built from the ACK and what was sent). Returns false, taking
    /// nothing, when no send with its key is pending.
    #[allow(
        clippy::vec_box,
        reason = "moved on as boxed to the application: a pointer, not 400 bytes"
    )]
    pub(super) fn on_ack(&mut self, ack: AckFrame, delivered: &mut Vec<Box<RecvMessage>>) -> bool {
        let AckFrame {
            client_msg_id,
            message_id,
            channel_id,
            seq,
            ts,
            duplicate,
        } = ack;
        let Some(mut pending) = self.pending.remove(&client_msg_id) else {
            return false;
        };
        let mut own = Box::new(RecvMessage {
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
        });
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
        // The server ended this user's typing there when it stored the
        // message, and its throttle with it: while the application still
        // says it types, the next tick sends `start` again at once (the
        // next message), not after the renewal period.
        if own.kind == EntryKind::Message {
            if let Some(last) = self.typing_out.get_mut(&channel_id) {
                *last = None;
            }
        }
        let thread_reply = own.kind == EntryKind::Message && own.thread_id.is_some();
        self.offer(own, delivered);
        if thread_reply && self.channels.get(&channel_id).is_some_and(|o| o.delivered() < seq) {
            // Held above a gap: its thread shows it as pending until then.
            self.acked_held.insert(message_id, pending.attempts);
        }
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
        true
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
