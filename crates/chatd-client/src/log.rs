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

use std::collections::HashMap;

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

/// The messages of one channel with their folded state, by message id.
#[derive(Debug, Clone, Default)]
pub struct ChannelMessages {
    messages: HashMap<uuid::Uuid, MessageState>,
    /// Per quoted message, the messages quoting it.
    quoted_by: HashMap<uuid::Uuid, Vec<uuid::Uuid>>,
}

impl ChannelMessages {
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
            self.messages.insert(entry.message_id, state);
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
mod tests {
    use super::*;

    fn entry(seq: i64, kind: EntryKind, sender: &str, target: Option<u128>) -> RecvMessage {
        RecvMessage {
            message_id: uuid::Uuid::from_u128(seq as u128),
            channel_id: "c".into(),
            sender_id: sender.into(),
            seq,
            ts: seq * 10,
            kind,
            target_id: target.map(uuid::Uuid::from_u128),
            ..Default::default()
        }
    }

    fn reaction(seq: i64, sender: &str, emoji: &str, op: ReactOp, noop: bool) -> RecvMessage {
        RecvMessage {
            emoji: Some(emoji.into()),
            op: Some(op),
            noop,
            ..entry(seq, EntryKind::Reaction, sender, Some(1))
        }
    }

    #[test]
    fn a_reply_read_in_a_thread_page_counts_once_on_its_root() {
        // The root is held (seen live); a thread's page reads a reply of
        // it as of seq 5, then the channel delivers that reply (seq 2).
        let mut log = ChannelMessages::default();
        log.fold(&entry(1, EntryKind::Message, "a", None), "me", None);
        let root = uuid::Uuid::from_u128(1);
        let reply = RecvMessage {
            body: "a reply".into(),
            thread_id: Some(root),
            reactions: Some(Vec::new()),
            ..entry(2, EntryKind::Message, "b", None)
        };
        log.insert_read(&reply, "me", 5);
        assert_eq!(
            log.get(&root).and_then(|r| r.thread.as_ref()),
            None,
            "a read moves no summary"
        );
        let changed = log.fold(
            &RecvMessage {
                reactions: None,
                ..reply.clone()
            },
            "me",
            None,
        );
        assert_eq!(changed, vec![reply.message_id, root]);
        let summary = log.get(&root).and_then(|r| r.thread.clone()).expect("a summary");
        assert_eq!((summary.reply_count, summary.last_reply_seq), (1, 2));
        assert_eq!(
            log.get(&reply.message_id).map(|r| r.as_of),
            Some(5),
            "the read's state kept"
        );
    }

    #[test]
    fn a_reply_read_already_deleted_moves_its_root_but_is_not_counted() {
        // The root is held (seen live). After a reconnect a SYNC read as of
        // seq 3 returns the reply (seq 2) already deleted, then the delete
        // itself (seq 3), which the reply's read state includes: the root
        // names the reply as its last one but counts no reply, as the
        // server's read does.
        let mut log = ChannelMessages::default();
        log.fold(&entry(1, EntryKind::Message, "a", None), "me", None);
        let root = uuid::Uuid::from_u128(1);
        let reply = RecvMessage {
            thread_id: Some(root),
            deleted: true,
            reactions: Some(Vec::new()),
            ..entry(2, EntryKind::Message, "b", None)
        };
        assert_eq!(log.fold(&reply, "me", Some(3)), vec![reply.message_id, root]);
        log.fold(&entry(3, EntryKind::Delete, "b", Some(2)), "me", None);
        let summary = log.get(&root).and_then(|r| r.thread.clone()).expect("a summary");
        assert_eq!(
            (summary.reply_count, summary.last_reply_seq, summary.last_reply_at),
            (0, 2, 20)
        );
        assert_eq!(summary.participants, ["b"]);
        // The same through a thread's page read as of 3 and the channel's
        // live delivery of the reply and its delete.
        let mut log = ChannelMessages::default();
        log.fold(&entry(1, EntryKind::Message, "a", None), "me", None);
        log.insert_read(&reply, "me", 3);
        log.fold(
            &RecvMessage {
                reactions: None,
                deleted: false,
                ..reply.clone()
            },
            "me",
            None,
        );
        log.fold(&entry(3, EntryKind::Delete, "b", Some(2)), "me", None);
        let summary = log.get(&root).and_then(|r| r.thread.clone()).expect("a summary");
        assert_eq!((summary.reply_count, summary.last_reply_seq), (0, 2));
    }

    #[test]
    fn live_entries_fold_into_the_message_state() {
        let mut log = ChannelMessages::default();
        let id = uuid::Uuid::from_u128(1);
        log.fold(
            &RecvMessage {
                body: "helo".into(),
                ..entry(1, EntryKind::Message, "a", None)
            },
            "me",
            None,
        );
        log.fold(
            &RecvMessage {
                body: "hello".into(),
                ..entry(2, EntryKind::Edit, "a", Some(1))
            },
            "me",
            None,
        );
        log.fold(&reaction(3, "b", "👍", ReactOp::Add, false), "me", None);
        log.fold(&reaction(4, "me", "🎉", ReactOp::Add, false), "me", None);
        log.fold(&reaction(5, "me", "👍", ReactOp::Add, false), "me", None);
        assert_eq!(
            log.fold(&reaction(6, "me", "👍", ReactOp::Add, true), "me", None),
            Vec::<uuid::Uuid>::new(),
            "a no-op"
        );
        log.fold(&reaction(7, "b", "👍", ReactOp::Remove, false), "me", None);
        let state = log.get(&id).expect("known");
        assert_eq!(state.body, "hello");
        assert_eq!(state.edited_at, Some(20));
        let reactions: Vec<(&str, i64, bool)> = state
            .reactions
            .iter()
            .map(|r| (r.emoji.as_str(), r.count, r.me))
            .collect();
        assert_eq!(reactions, [("👍", 1, true), ("🎉", 1, true)]);
        log.fold(&entry(8, EntryKind::Delete, "a", Some(1)), "me", None);
        let state = log.get(&id).expect("known");
        assert!(state.deleted && state.body.is_empty() && state.reactions.is_empty() && state.edited_at.is_none());
    }

    #[test]
    fn previews_and_thread_summaries_follow_edits_and_deletes() {
        let mut log = ChannelMessages::default();
        let id = uuid::Uuid::from_u128;
        log.fold(
            &RecvMessage {
                body: "é".repeat(150),
                ..entry(1, EntryKind::Message, "a", None)
            },
            "me",
            None,
        );
        // The client's own quote, built from its ACK: no preview on the wire.
        let quote = RecvMessage {
            reply_to: Some(id(1)),
            ..entry(2, EntryKind::Message, "me", None)
        };
        assert_eq!(log.fold(&quote, "me", None), [id(2)]);
        let preview = log.get(&id(2)).and_then(|m| m.reply_preview.clone()).expect("preview");
        assert_eq!((preview.sender_id.as_str(), preview.body.len()), ("a", 200));
        let reply = |seq: i64, sender: &str| RecvMessage {
            thread_id: Some(id(1)),
            ..entry(seq, EntryKind::Message, sender, None)
        };
        assert_eq!(log.fold(&reply(3, "b"), "me", None), [id(3), id(1)], "the root moved");
        log.fold(&reply(4, "c"), "me", None);
        log.fold(&reply(5, "b"), "me", None);
        let thread = log.get(&id(1)).and_then(|m| m.thread.clone()).expect("summary");
        assert_eq!(
            (thread.reply_count, thread.last_reply_seq, thread.last_reply_at),
            (3, 5, 50)
        );
        assert_eq!(thread.participants, ["b", "c"]);
        // An edit of the root changes its quote; a deleted reply its count.
        let edited = RecvMessage {
            body: "new".into(),
            ..entry(6, EntryKind::Edit, "a", Some(1))
        };
        assert_eq!(log.fold(&edited, "me", None), [id(1), id(2)]);
        assert_eq!(
            log.get(&id(2))
                .and_then(|m| m.reply_preview.clone())
                .expect("preview")
                .body,
            "new"
        );
        assert_eq!(
            log.fold(&entry(7, EntryKind::Delete, "b", Some(3)), "me", None),
            [id(3), id(1)]
        );
        assert_eq!(
            log.get(&id(1))
                .and_then(|m| m.thread.clone())
                .expect("summary")
                .reply_count,
            2
        );
        log.fold(&entry(8, EntryKind::Delete, "a", Some(1)), "me", None);
        let preview = log.get(&id(2)).and_then(|m| m.reply_preview.clone()).expect("preview");
        assert_eq!((preview.body.as_str(), preview.deleted), ("", true));
    }

    #[test]
    fn entries_a_read_already_includes_are_not_applied_twice() {
        let mut log = ChannelMessages::default();
        let read = RecvMessage {
            body: "x".into(),
            reactions: Some(vec![ReactionCount {
                emoji: "👍".into(),
                count: 1,
                me: false,
            }]),
            ..entry(1, EntryKind::Message, "a", None)
        };
        // Read when the channel's last seq was 3: the reaction at 2 is in it.
        log.fold(&read, "me", Some(3));
        assert_eq!(
            log.fold(&reaction(2, "b", "👍", ReactOp::Add, false), "me", Some(3)),
            Vec::<uuid::Uuid>::new()
        );
        log.fold(&reaction(4, "c", "👍", ReactOp::Add, false), "me", None);
        assert_eq!(log.get(&uuid::Uuid::from_u128(1)).expect("known").reactions[0].count, 2);
    }
}
