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

use std::collections::HashMap;

use chatd_proto::protocol::{EntryKind, ReactOp, ReactionCount, RecvMessage};

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
    /// Entries up to this seq are already in the state (a read's `lastSeq`).
    as_of: i64,
}

/// The messages of one channel with their folded state, by message id.
#[derive(Debug, Clone, Default)]
pub struct ChannelMessages {
    messages: HashMap<uuid::Uuid, MessageState>,
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
    /// `None` for an entry seen live. Returns the message whose state
    /// changed, if any.
    pub fn fold(&mut self, entry: &RecvMessage, me: &str, read_as_of: Option<i64>) -> Option<uuid::Uuid> {
        if entry.kind == EntryKind::Message {
            let state = MessageState {
                message_id: entry.message_id,
                sender_id: entry.sender_id.clone(),
                seq: entry.seq,
                ts: entry.ts,
                body: entry.body.clone(),
                edited_at: entry.edited_at,
                deleted: entry.deleted,
                reactions: entry.reactions.clone().unwrap_or_default(),
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
            None,
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
            None
        );
        log.fold(&reaction(4, "c", "👍", ReactOp::Add, false), "me", None);
        assert_eq!(log.get(&uuid::Uuid::from_u128(1)).expect("known").reactions[0].count, 2);
    }
}
