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
}
