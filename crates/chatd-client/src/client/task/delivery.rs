//! Delivery to the application: each entry once and in `seq` order per
//! channel (gaps filled with SYNC), folded onto the message state, with
//! MSG_DELIVERED sent by itself when asked.

use std::collections::HashMap;

use chatd_proto::protocol::{ClientFrame, RecvMessage};

use super::{SessionEnd, Task};
use crate::client::types::Event;
use crate::log::{ChannelMessages, MessageState};
use crate::order::{ChannelOrder, StartFrom};

impl Task {
    pub(super) fn syncs_due(&mut self, out: &mut Vec<ClientFrame>) {
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

    #[allow(
        clippy::vec_box,
        reason = "moved on as boxed to the application: a pointer, not 400 bytes"
    )]
    pub(super) fn offer(&mut self, message: Box<RecvMessage>, delivered: &mut Vec<Box<RecvMessage>>) {
        // By reference, one lookup (one hash of the id) for every message
        // of a known channel; the id is cloned, and hashed again, only for
        // a channel's first message (the receive path's cost is guarded by
        // .ci/recv-cost).
        if let Some(order) = self.channels.get_mut(&message.channel_id) {
            order.offer_into(message, delivered);
            return;
        }
        let mut order = match self.config.start_from {
            StartFrom::Beginning => ChannelOrder::after(0),
            StartFrom::Now => ChannelOrder::unknown(),
        };
        let channel_id = message.channel_id.clone();
        order.offer_into(message, delivered);
        self.channels.insert(channel_id, order);
    }

    /// Stops tracking (and syncing) a channel: its held messages, own
    /// replies ACKed above a gap among them, will not be delivered.
    pub(super) fn forget_channel(&mut self, channel_id: &str) {
        if let Some(order) = self.channels.remove(channel_id) {
            for message in order.held_messages() {
                self.acked_held.remove(&message.message_id);
            }
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
            states.insert(
                message.channel_id.clone(),
                ChannelMessages::bounded(self.config.folded_messages_per_channel),
            );
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

    #[allow(
        clippy::vec_box,
        reason = "moved on as boxed to the application: a pointer, not 400 bytes"
    )]
    pub(super) async fn deliver(
        &mut self,
        delivered: &mut Vec<Box<RecvMessage>>,
        out: &mut Vec<ClientFrame>,
    ) -> Option<SessionEnd> {
        let mut last_from_others: HashMap<String, uuid::Uuid> = HashMap::new();
        for mut message in delivered.drain(..) {
            if !self.acked_held.is_empty() {
                self.acked_held.remove(&message.message_id);
            }
            if self.config.auto_delivered && message.sender_id != self.user_id {
                last_from_others.insert(message.channel_id.clone(), message.message_id);
            }
            let changed = if self.config.fold_messages {
                self.fold(&mut message)
            } else {
                Vec::new()
            };
            // The id outlives the message only for its Changed events: no
            // clone (an allocation) for the message that changed nothing.
            let channel_id = if changed.is_empty() {
                String::new()
            } else {
                message.channel_id.clone()
            };
            if let Some(end) = self.emit(Event::Message(message)).await {
                return Some(end);
            }
            for state in changed {
                let channel_id = channel_id.clone();
                if let Some(end) = self
                    .emit(Event::Changed {
                        channel_id,
                        state: Box::new(state),
                    })
                    .await
                {
                    return Some(end);
                }
            }
        }
        for message_id in last_from_others.into_values() {
            out.push(receipt_frame(message_id, false));
        }
        None
    }
}

pub(super) fn receipt_frame(message_id: uuid::Uuid, read: bool) -> ClientFrame {
    let message_id = message_id.to_string();
    if read {
        ClientFrame::MsgRead { message_id }
    } else {
        ClientFrame::MsgDelivered { message_id }
    }
}

#[cfg(test)]
mod tests {
    use chatd_proto::protocol::ClientFrame;
    use tokio::sync::oneshot;

    use super::super::testkit::{task, task_with};
    use crate::client::types::{EntryRequest, Event, SendOptions};

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

    /// A gap's SYNC refused `unavailable` (the ERROR names the channel): the
    /// same read is asked again after a backoff. Before, the channel's SYNC
    /// stayed outstanding until the connection dropped, and the messages
    /// above the gap were held.
    #[tokio::test]
    async fn a_gap_sync_refused_for_now_is_asked_again() {
        let (mut task, _commands, _events) = task();
        let mut out = Vec::new();
        task.on_frame(&recv(1, "bob"), &mut out).await;
        task.on_frame(&recv(3, "bob"), &mut out).await;
        tokio::time::sleep(task.config.gap_sync_delay + std::time::Duration::from_millis(10)).await;
        out.clear();
        task.syncs_due(&mut out);
        let asked = |out: &[ClientFrame]| -> Vec<Option<i64>> {
            out.iter()
                .filter_map(|f| match f {
                    ClientFrame::Sync { after_seq, .. } => Some(*after_seq),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(asked(&out), vec![Some(1)]);
        out.clear();
        let refused = serde_json::json!({
            "type": "ERROR", "code": "unavailable", "message": "database unavailable; retry",
            "retryable": true, "channelId": "room"
        })
        .to_string();
        task.on_frame(&refused, &mut out).await;
        tokio::time::sleep(task.config.backoff_initial + std::time::Duration::from_millis(10)).await;
        out.clear();
        task.syncs_due(&mut out);
        assert_eq!(asked(&out), vec![Some(1)], "the refused read is asked again");
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
