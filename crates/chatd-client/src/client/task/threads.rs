//! Threads (§14) as the task holds them: the SYNC of a page, a page's
//! replies folded in, a snapshot for [`Client::thread`](crate::Client::thread).

use chatd_proto::protocol::{ClientFrame, TaggedMessage};

use super::Task;
use crate::log::{ChannelMessages, MessageState};
use crate::thread::{PageRead, PendingReply, Thread};

impl Task {
    /// The SYNC of a thread's page.
    pub(super) fn thread_sync(&self, read: PageRead) -> ClientFrame {
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
    pub(super) fn take_thread_page(&mut self, channel_id: &str, messages: Vec<TaggedMessage>, last_seq: i64) {
        let Ok(mut states) = self.states.lock() else {
            return;
        };
        let limit = self.config.folded_messages_per_channel;
        let log = states
            .entry(channel_id.to_owned())
            .or_insert_with(|| ChannelMessages::bounded(limit));
        for TaggedMessage::MsgRecv(reply) in messages {
            log.insert_read(&reply, &self.user_id, last_seq);
        }
    }

    /// The thread of `root_id` as held: `None` when it was never read.
    pub(super) fn thread_snapshot(&self, channel_id: &str, root_id: uuid::Uuid) -> Option<Thread> {
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
        // ACKed above a gap: held by the channel's order, not yet folded
        // (so not in `replies`), in seq order.
        let acked = self
            .channels
            .get(channel_id)
            .into_iter()
            .flat_map(|order| order.held_messages())
            .filter_map(|m| Some((m, *self.acked_held.get(&m.message_id)?)))
            .filter(|(m, _)| m.thread_id == Some(root_id))
            .map(|(m, attempts)| PendingReply {
                client_msg_id: m.client_msg_id.clone().unwrap_or_default(),
                message_id: Some(m.message_id),
                seq: Some(m.seq),
                body: m.body.clone(),
                reply_to: m.reply_to,
                attempts,
            });
        let unacked = self
            .order
            .iter()
            .filter_map(|key| Some((key, self.pending.get(key)?)))
            .filter(|(_, p)| p.entry.is_none() && p.channel_id == channel_id && p.options.thread_id == Some(root_id))
            .map(|(key, p)| PendingReply {
                client_msg_id: key.clone(),
                message_id: None,
                seq: None,
                body: p.body.clone(),
                reply_to: p.options.reply_to,
                attempts: p.attempts,
            });
        let pending = acked.chain(unacked).collect();
        Some(Thread {
            channel_id: channel_id.to_owned(),
            root_id,
            replies,
            pending,
            has_older,
        })
    }
}

#[cfg(test)]
mod tests {
    use tokio::sync::oneshot;

    use super::super::testkit::task;
    use crate::client::types::SendOptions;

    fn id(n: u128) -> uuid::Uuid {
        uuid::Uuid::from_u128(n)
    }

    fn recv(seq: i64, sender: &str, thread: Option<uuid::Uuid>) -> String {
        let mut frame = serde_json::json!({
            "type": "MSG_RECV", "messageId": id(seq as u128), "channelId": "room", "senderId": sender,
            "seq": seq, "body": format!("m{seq}"), "ts": seq, "clientMsgId": format!("c{seq}"), "kind": "message"
        });
        if let Some(root) = thread {
            frame["threadId"] = serde_json::json!(root);
        }
        frame.to_string()
    }

    /// The client's own reply ACKed (seq 3) while bob's seq 2 is still
    /// missing: pending with its seq, not among the replies; once seq 2
    /// comes, a reply (once) and no longer pending, and the MSG_RECV copy
    /// of it that follows changes nothing.
    #[tokio::test]
    async fn an_own_reply_acked_above_a_gap_is_pending_until_delivered_in_order() {
        let (mut task, _commands, _events) = task();
        let mut out = Vec::new();
        task.on_frame(&recv(1, "bob", None), &mut out).await;
        let (tx, _rx) = oneshot::channel();
        task.threads.ask("room", id(1), false, tx);
        task.threads.page_taken("room", id(1), None, false);
        let (reply, _answer) = oneshot::channel();
        let options = SendOptions {
            thread_id: Some(id(1)),
            ..SendOptions::default()
        };
        task.add_pending("room".into(), "mine".into(), "my reply".into(), options, None, reply);
        task.send_now(&mut out);
        let thread = task.thread_snapshot("room", id(1)).expect("read");
        assert_eq!((thread.pending.len(), thread.pending[0].seq), (1, None), "not ACKed");

        let ack = serde_json::json!({
            "type": "MSG_ACK", "clientMsgId": "mine", "messageId": id(3), "channelId": "room",
            "seq": 3, "ts": 3, "duplicate": false
        });
        task.on_frame(&ack.to_string(), &mut out).await;
        let thread = task.thread_snapshot("room", id(1)).expect("read");
        assert_eq!(thread.replies, Vec::new(), "above the gap: not delivered");
        let pending: Vec<_> = thread
            .pending
            .iter()
            .map(|p| {
                (
                    p.client_msg_id.as_str(),
                    p.message_id,
                    p.seq,
                    p.body.as_str(),
                    p.attempts,
                )
            })
            .collect();
        assert_eq!(pending, vec![("mine", Some(id(3)), Some(3), "my reply", 1)]);

        task.on_frame(&recv(2, "bob", Some(id(1))), &mut out).await;
        let thread = task.thread_snapshot("room", id(1)).expect("read");
        let replies: Vec<_> = thread.replies.iter().map(|m| (m.seq, m.body.as_str())).collect();
        assert_eq!(replies, vec![(2, "m2"), (3, "my reply")]);
        assert_eq!(thread.pending, Vec::new(), "delivered: no longer pending");
        assert!(task.acked_held.is_empty());
        task.on_frame(&recv(3, "alice", Some(id(1))), &mut out).await;
        let again = task.thread_snapshot("room", id(1)).expect("read");
        assert_eq!(again, thread, "the MSG_RECV of it is a duplicate");
    }
}
