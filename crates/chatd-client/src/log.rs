//! The per-channel message state a client folds from the channel log
//! (`docs/protocol.md` §8): each `message` entry's current text, edit time,
//! deletion and reactions, kept up to date by the `edit`, `delete` and
//! `reaction` entries that follow it.
//!
//! A message read through SYNC (or the history route) comes with its state
//! at the time of the read, which already includes every entry up to the
//! read's `lastSeq`; the fold skips those entries when they arrive, so
//! nothing is applied twice. A message first seen live (MSG_RECV, or built
//! from the client's own ACK) starts from its text.
//!
//! Replies and threads (§14): a message quoting another keeps its
//! `replyPreview` current as edits and deletes of the quoted message
//! arrive (a deletion empties it), and a thread root's `thread` summary
//! moves as its replies arrive and are deleted, as the server's reads show
//! them.

use std::collections::{HashMap, VecDeque};

use chatd_proto::protocol::{
    preview_text, EntryKind, ReactOp, ReactionCount, RecvMessage, ReplyPreview, ThreadSummary,
};

/// The most senders a thread summary's `participants` holds (§14).
const MAX_PARTICIPANTS: usize = 10;

/// One message's current state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageState {
    pub message_id: uuid::Uuid,
    pub sender_id: String,
    pub seq: i64,
    /// Stored time of the message, ms since the Unix epoch.
    pub ts: i64,
    /// The current text (the latest edit's; `""` once deleted).
    pub body: String,
    /// The latest edit's ts, when edited (and not deleted).
    pub edited_at: Option<i64>,
    pub deleted: bool,
    /// By first use; `count` > 0; `me` when this client's user holds it.
    pub reactions: Vec<ReactionCount>,
    /// The message it quotes (§14).
    pub reply_to: Option<uuid::Uuid>,
    /// The quoted message as it is now, when known.
    pub reply_preview: Option<ReplyPreview>,
    /// The root of the thread it is a reply in (§14).
    pub thread_id: Option<uuid::Uuid>,
    /// A root's thread summary, once it has had replies.
    pub thread: Option<ThreadSummary>,
    /// Entries up to this seq are already in the state (a read's `lastSeq`).
    as_of: i64,
}

/// The messages of one channel with their folded state, by message id,
/// at most [`Self::bounded`]'s `limit` of them: past it, the message held
/// longest is forgotten (as if never seen: entries of it change nothing).
#[derive(Debug, Clone)]
pub struct ChannelMessages {
    messages: HashMap<uuid::Uuid, MessageState>,
    /// Per quoted message, the messages quoting it.
    quoted_by: HashMap<uuid::Uuid, Vec<uuid::Uuid>>,
    /// The ids of `messages`, first held first.
    held: VecDeque<uuid::Uuid>,
    /// The most messages kept (at least 1).
    limit: usize,
}

impl Default for ChannelMessages {
    /// Without a bound (see [`Self::bounded`]).
    fn default() -> Self {
        Self::bounded(usize::MAX)
    }
}

impl ChannelMessages {
    /// An empty state that keeps at most `limit` messages (at least 1): a
    /// message beyond it forgets the one held longest, so a long-lived
    /// client's memory stays bounded (`ClientConfig::folded_messages_per_channel`).
    pub fn bounded(limit: usize) -> Self {
        Self {
            messages: HashMap::new(),
            quoted_by: HashMap::new(),
            held: VecDeque::new(),
            limit: limit.max(1),
        }
    }

    /// How many messages are held.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether no message is held.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// Holds `state`, forgetting the messages held longest past the limit.
    fn hold(&mut self, state: MessageState) {
        let id = state.message_id;
        if self.messages.insert(id, state).is_some() {
            return;
        }
        self.held.push_back(id);
        while self.held.len() > self.limit {
            let Some(old) = self.held.pop_front() else { break };
            self.forget(old);
        }
    }

    /// Drops `id`'s state and its places in `quoted_by`.
    fn forget(&mut self, id: uuid::Uuid) {
        let Some(state) = self.messages.remove(&id) else { return };
        self.quoted_by.remove(&id);
        if let Some(quoted) = state.reply_to {
            if let Some(quoting) = self.quoted_by.get_mut(&quoted) {
                quoting.retain(|q| *q != id);
                if quoting.is_empty() {
                    self.quoted_by.remove(&quoted);
                }
            }
        }
    }

    /// The state of `message_id`, if this client has seen it.
    pub fn get(&self, message_id: &uuid::Uuid) -> Option<&MessageState> {
        self.messages.get(message_id)
    }

    /// Every known message, in no order.
    pub fn iter(&self) -> impl Iterator<Item = &MessageState> {
        self.messages.values()
    }

    /// Sets `noop` of a reaction entry sent by `me` from what `me` holds in
    /// the state just before it: the client's own entries are built from
    /// their ACK, which does not say whether they changed anything, and
    /// whether they did depends on the entries folded before them. Call it
    /// right before [`Self::fold`], in `seq` order. Entries the state already
    /// includes (a read's) and entries of others are left as they are.
    pub fn resolve_own_reaction(&self, entry: &mut RecvMessage, me: &str) {
        if entry.kind != EntryKind::Reaction || entry.sender_id != me {
            return;
        }
        let (Some(target), Some(emoji), Some(op)) = (entry.target_id, entry.emoji.as_deref(), entry.op) else {
            return;
        };
        let Some(state) = self.messages.get(&target) else {
            return;
        };
        if entry.seq <= state.as_of {
            return;
        }
        let held = state.reactions.iter().any(|r| r.emoji == emoji && r.me);
        entry.noop = held == (op == ReactOp::Add);
    }

    /// Folds one entry, delivered in `seq` order, for the user `me`.
    /// `read_as_of` is the `lastSeq` of the read that returned it (SYNC),
    /// `None` for an entry seen live. Returns the messages whose state
    /// changed: a `message` entry's own id first (then its thread's root,
    /// when the summary moved); an edit's, delete's or reaction's target
    /// (then the messages quoting it, and a deleted reply's root).
    pub fn fold(&mut self, entry: &RecvMessage, me: &str, read_as_of: Option<i64>) -> Vec<uuid::Uuid> {
        let mut changed = Vec::new();
        let Some(target) = self.fold_one(entry, me, read_as_of) else {
            return changed;
        };
        changed.push(target);
        match entry.kind {
            EntryKind::Message => {
                if let Some(root) = entry.thread_id.filter(|_| self.joins_thread(entry)) {
                    changed.push(root);
                }
            }
            EntryKind::Edit | EntryKind::Delete => {
                changed.extend(self.quote_changed(target, entry.seq));
                if entry.kind == EntryKind::Delete {
                    changed.extend(self.reply_deleted(target, entry.seq));
                }
            }
            EntryKind::Reaction => {}
        }
        changed
    }

    /// Adds a message read as of `last_seq` (a thread's page, §14) that
    /// this state does not hold, without touching anything else: its root's
    /// summary moves when the channel delivers it ([`Self::fold`]).
    pub fn insert_read(&mut self, message: &RecvMessage, me: &str, last_seq: i64) {
        if message.kind == EntryKind::Message && !self.messages.contains_key(&message.message_id) {
            self.fold_one(message, me, Some(last_seq));
        }
    }

    /// A live reply moves its root's summary (when the root is known and
    /// its state does not already include it); whether it did. A reply held
    /// as deleted (read after its deletion: the delete entry is in its state
    /// and will not be folded again) names the last reply and its sender,
    /// as the server's summary does, but is not counted.
    fn joins_thread(&mut self, reply: &RecvMessage) -> bool {
        let deleted = self.messages.get(&reply.message_id).is_some_and(|m| m.deleted);
        let Some(root) = reply.thread_id.and_then(|r| self.messages.get_mut(&r)) else {
            return false;
        };
        if reply.seq <= root.as_of {
            return false;
        }
        let thread = root.thread.get_or_insert_with(ThreadSummary::default);
        if !deleted {
            thread.reply_count += 1;
        }
        thread.last_reply_at = reply.ts;
        thread.last_reply_seq = reply.seq;
        if thread.participants.len() < MAX_PARTICIPANTS && !thread.participants.contains(&reply.sender_id) {
            thread.participants.push(reply.sender_id.clone());
        }
        true
    }

    /// The messages quoting `quoted`, whose preview now shows its current
    /// text (or its deletion), for an entry at `seq`.
    fn quote_changed(&mut self, quoted: uuid::Uuid, seq: i64) -> Vec<uuid::Uuid> {
        let Some(source) = self.messages.get(&quoted) else {
            return Vec::new();
        };
        let preview = ReplyPreview {
            sender_id: source.sender_id.clone(),
            body: preview_text(&source.body).to_owned(),
            deleted: source.deleted,
        };
        let mut changed = Vec::new();
        for id in self.quoted_by.get(&quoted).into_iter().flatten() {
            if let Some(quoting) = self.messages.get_mut(id).filter(|m| seq > m.as_of) {
                quoting.reply_preview = Some(preview.clone());
                changed.push(*id);
            }
        }
        changed
    }

    /// A deleted thread reply (at `seq`) takes one off its root's count.
    fn reply_deleted(&mut self, reply: uuid::Uuid, seq: i64) -> Option<uuid::Uuid> {
        let root_id = self.messages.get(&reply)?.thread_id?;
        let root = self.messages.get_mut(&root_id).filter(|r| seq > r.as_of)?;
        let thread = root.thread.as_mut()?;
        thread.reply_count = (thread.reply_count - 1).max(0);
        Some(root_id)
    }

    /// [`Self::fold`] of the entry itself: the message stored, or its
    /// target changed.
    fn fold_one(&mut self, entry: &RecvMessage, me: &str, read_as_of: Option<i64>) -> Option<uuid::Uuid> {
        if entry.kind == EntryKind::Message {
            // Held already with a state at least as recent (a thread's page
            // read it before the channel delivered it): kept.
            if self
                .messages
                .get(&entry.message_id)
                .is_some_and(|m| m.as_of >= entry.seq)
            {
                return Some(entry.message_id);
            }
            // A preview the entry lacks (the client's own message, built
            // from its ACK) is taken from the quoted message when known.
            let reply_preview = entry.reply_preview.clone().or_else(|| {
                let quoted = self.messages.get(&entry.reply_to?)?;
                Some(ReplyPreview {
                    sender_id: quoted.sender_id.clone(),
                    body: preview_text(&quoted.body).to_owned(),
                    deleted: quoted.deleted,
                })
            });
            if let Some(quoted) = entry.reply_to {
                let quoting = self.quoted_by.entry(quoted).or_default();
                if !quoting.contains(&entry.message_id) {
                    quoting.push(entry.message_id);
                }
            }
            let state = MessageState {
                message_id: entry.message_id,
                sender_id: entry.sender_id.clone(),
                seq: entry.seq,
                ts: entry.ts,
                body: entry.body.clone(),
                edited_at: entry.edited_at,
                deleted: entry.deleted,
                reactions: entry.reactions.clone().unwrap_or_default(),
                reply_to: entry.reply_to,
                reply_preview,
                thread_id: entry.thread_id,
                thread: entry.thread.clone(),
                // Read state includes the entries up to the read; a live
                // message has none after it yet.
                as_of: match (&entry.reactions, read_as_of) {
                    (Some(_), Some(last)) => last.max(entry.seq),
                    _ => entry.seq,
                },
            };
            self.hold(state);
            return Some(entry.message_id);
        }
        let target = entry.target_id?;
        let state = self.messages.get_mut(&target)?;
        if entry.seq <= state.as_of {
            return None;
        }
        state.as_of = entry.seq;
        match entry.kind {
            EntryKind::Message => return None,
            EntryKind::Edit => {
                state.body = entry.body.clone();
                state.edited_at = Some(entry.ts);
            }
            EntryKind::Delete => {
                state.body.clear();
                state.edited_at = None;
                state.deleted = true;
                state.reactions.clear();
            }
            EntryKind::Reaction => {
                if entry.noop {
                    return None;
                }
                let emoji = entry.emoji.as_deref()?;
                let mine = entry.sender_id == me;
                let at = state.reactions.iter().position(|r| r.emoji == emoji);
                match (entry.op?, at) {
                    (ReactOp::Add, Some(i)) => {
                        state.reactions[i].count += 1;
                        state.reactions[i].me |= mine;
                    }
                    (ReactOp::Add, None) => state.reactions.push(ReactionCount {
                        emoji: emoji.to_owned(),
                        count: 1,
                        me: mine,
                    }),
                    (ReactOp::Remove, Some(i)) => {
                        state.reactions[i].count -= 1;
                        if mine {
                            state.reactions[i].me = false;
                        }
                        if state.reactions[i].count <= 0 {
                            state.reactions.remove(i);
                        }
                    }
                    (ReactOp::Remove, None) => return None,
                }
            }
        }
        Some(target)
    }
}

#[cfg(test)]
mod tests;
