//! Whether a send is a retry of a stored entry (guarantee 2: the same
//! idempotency key with the same channel, body, references, mentions and
//! attachments), or its key was used for another entry
//! (`idempotency_conflict`).

use super::batch_types::{Change, Mentions, NewEntry, References};
use super::entry_types::{Entry, EntryKind};

impl Entry {
    /// Whether a MSG_SEND with this entry's key and `channel_id`, `body` and
    /// references (`replyTo`, `threadId`, §14) is a retry of it (guarantee
    /// 2: same key, channel, body and references); else the key was used for
    /// another entry (`idempotency_conflict`). Once the message is deleted
    /// its text is gone and cannot be compared: the same key, channel and
    /// references is then a retry.
    pub fn is_retried_by(&self, channel_id: &str, body: &str, refs: &References, mentions: &Mentions) -> bool {
        self.kind == EntryKind::Message
            && self.channel_id.as_str() == channel_id
            && (self.body == body || self.deleted)
            && self.reply_to == refs.reply_to
            && self.thread_id == refs.thread_id
            && self.is_mentioning_as(mentions)
    }

    /// Whether this message was stored with the mentions `asked` (§16: the
    /// idempotency key covers `mentions`, as a set, and `mentionAll`). A
    /// deleted message has lost them: not compared.
    pub fn is_mentioning_as(&self, asked: &Mentions) -> bool {
        self.deleted || (self.mention_all == asked.all && self.mentions_asked == asked.key())
    }

    /// Whether this message carries the attachments whose idempotency key
    /// text is `key` ([`crate::protocol::attachments_key_of`]); a deleted
    /// message has lost them: not compared.
    pub fn is_attaching_as(&self, key: &str) -> bool {
        self.deleted || crate::protocol::attachment_ids_key(&self.attachment_ids()) == key
    }

    /// As [`Self::is_retried_by`] for references given as the request's
    /// text (a frame that failed its checks: `None` when absent; text that
    /// is no id equals no stored one) and mentions as their key
    /// ([`crate::protocol::mentions_key_of`]).
    pub fn is_retried_by_text(
        &self,
        channel_id: &str,
        body: &str,
        reply_to: Option<&str>,
        thread_id: Option<&str>,
        mentions: &crate::protocol::MentionsKey,
    ) -> bool {
        let same = |stored: Option<uuid::Uuid>, given: Option<&str>| match (stored, given) {
            (None, None) => true,
            (Some(id), Some(text)) => id.hyphenated().to_string() == text,
            _ => false,
        };
        self.kind == EntryKind::Message
            && self.channel_id.as_str() == channel_id
            && (self.body == body || self.deleted)
            && same(self.reply_to, reply_to)
            && same(self.thread_id, thread_id)
            && (self.deleted || (self.mention_all == mentions.all && self.mentions_asked == mentions.users))
    }

    /// Whether `new` (with this entry's key) is a retry of this entry: the
    /// same frame type, channel, target, body, emoji and op (§8). An edit
    /// whose target was deleted has lost its text (`""`, which no edit can
    /// send): its body is not compared.
    pub fn is_retried_as(&self, new: &NewEntry) -> bool {
        if self.kind == EntryKind::Message && !self.deleted && self.attachment_ids() != new.attachments {
            return false;
        }
        match &new.change {
            Change::Message => self.is_retried_by(
                new.channel_id.as_str(),
                &new.body,
                &References::default(),
                &new.mentions,
            ),
            Change::Reply(refs) => self.is_retried_by(new.channel_id.as_str(), &new.body, refs, &new.mentions),
            Change::Edit { target } => {
                self.kind == EntryKind::Edit
                    && self.target_id == Some(*target)
                    && (self.body == new.body || self.body.is_empty())
            }
            Change::Delete { target } => self.kind == EntryKind::Delete && self.target_id == Some(*target),
            Change::React { target, emoji, add } => {
                self.kind == EntryKind::Reaction
                    && self.target_id == Some(*target)
                    && self.emoji.as_deref() == Some(emoji.as_str())
                    && self.add == Some(*add)
            }
        }
    }
}
