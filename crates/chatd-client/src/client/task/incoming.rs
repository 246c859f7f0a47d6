//! The server's frames: each decoded and turned into state, events and
//! frames to send; a refusal matched to what it refuses.

use std::time::Duration;

use chatd_proto::protocol::{
    ClientFrame, ErrorCode, ErrorFrame, PresenceStatus, ServerFrame, TaggedMessage, TypingState,
};
use tokio::time::Instant;

use super::{SessionEnd, Task};
use crate::client::types::{Event, SendError};
use crate::order::ChannelOrder;
use crate::thread::PageOutcome;

impl Task {
    /// Handles one server frame. Returns how the session ends, if it does.
    pub(super) async fn on_frame(&mut self, text: &str, out: &mut Vec<ClientFrame>) -> Option<SessionEnd> {
        let frame = match ServerFrame::decode(text) {
            Ok(frame) => frame,
            Err(e) => {
                // Additive protocol changes (a new frame type) must not break
                // old clients: skip what is not understood.
                tracing::debug!(error = %e, "ignoring a frame this client does not understand");
                return None;
            }
        };
        let mut delivered = std::mem::take(&mut self.delivered_buf);
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
            ServerFrame::MsgAck(ack) => {
                // An ACK for a key no longer pending (answered already) is dropped.
                if !self.on_ack(ack, &mut delivered) {
                    return None;
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
                    self.offer(Box::new(message), &mut delivered);
                }
                let limit = i64::from(self.config.sync_limit.clamp(1, 500));
                self.sync_backoff.reset();
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
                self.forget_channel(&channel_id);
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
        let end = self.deliver(&mut delivered, out).await;
        // Empty again (drained): its allocation serves the next frame, kept
        // small after a SYNC_BATCH's burst (500 messages of ~400 bytes).
        if delivered.capacity() > 64 {
            delivered.shrink_to(16);
        }
        self.delivered_buf = delivered;
        end
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
        if let (true, None, None, None, Some(channel)) = (
            error.retryable,
            &error.client_msg_id,
            &error.message_id,
            &error.field,
            error.channel_id.as_deref(),
        ) {
            // A channel's SYNC refused for now (the database did not answer
            // in time): asked again after a backoff, `retryAfterMs` a floor.
            if let Some(order) = self.channels.get_mut(channel) {
                let mut wait = self.sync_backoff.next_delay().max(Duration::from_millis(1));
                if let Some(ms) = error.retry_after_ms {
                    wait = wait.max(Duration::from_millis(ms));
                }
                order.sync_refused(std::time::Instant::now() + wait);
            }
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
                self.forget_channel(channel);
            }
        }
        self.emit(Event::Error(error)).await
    }
}
