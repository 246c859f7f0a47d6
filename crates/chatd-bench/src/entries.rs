//! Log entries other than messages in the load (`mix`): which entry a
//! connection writes next, what it wrote, and the render-ready check of the
//! state read back (protocol §8).
//!
//! A connection of the `mix` scenario writes, out of every 100 entries,
//! `edit_pct` MSG_EDIT (of one of its own recent messages), `react_pct`
//! MSG_REACT (on a recent message of another member it received, else on one
//! of its own), `reply_pct` replies (a MSG_SEND in the thread of one of its
//! own recent messages, quoting it: `threadId` and `replyTo`, protocol §14)
//! and the rest MSG_SEND. A reaction removes the emoji when the connection
//! believes it holds it and adds it otherwise, so both ops occur. Until a
//! connection has a message to edit, react or reply to, it sends.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use chatd_client::chatd_proto::protocol::{EntryKind, RecvMessage};
use uuid::Uuid;

/// The emoji the generator reacts with.
pub const EMOJI: [&str; 4] = ["👍", "🎉", "😂", "🔥"];

/// How many recent messages a connection keeps as targets.
const RECENT: usize = 64;

/// The share of each kind of entry, in percent (sends are the rest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mix {
    /// MSG_REACT per 100 entries.
    pub react_pct: u32,
    /// MSG_EDIT per 100 entries.
    pub edit_pct: u32,
    /// Thread replies (MSG_SEND with `threadId` and `replyTo`) per 100 entries.
    pub reply_pct: u32,
}

/// The kind of entry a connection writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// MSG_SEND.
    Send,
    /// MSG_REACT.
    React,
    /// MSG_EDIT.
    Edit,
    /// MSG_SEND with `threadId` and `replyTo`.
    Reply,
}

impl Kind {
    /// The frame's name, as reports show it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Send => "MSG_SEND",
            Kind::React => "MSG_REACT",
            Kind::Edit => "MSG_EDIT",
            Kind::Reply => "MSG_SEND (reply)",
        }
    }
}

/// The next entry to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// A message into the connection's next channel.
    Send,
    /// A new text for this message of the connection's own.
    Edit(Uuid),
    /// Add (`true`) or remove this emoji on this message.
    React(Uuid, &'static str, bool),
    /// A reply in the thread of this root of the connection's own, in its
    /// channel, quoting it.
    Reply {
        /// The root's channel.
        channel_id: String,
        /// The root.
        root: Uuid,
    },
}

impl Op {
    /// Its kind.
    pub fn kind(&self) -> Kind {
        match self {
            Op::Send => Kind::Send,
            Op::Edit(_) => Kind::Edit,
            Op::React(..) => Kind::React,
            Op::Reply { .. } => Kind::Reply,
        }
    }
}

/// Messages of other members a connection received, newest last (filled by
/// its receiving task, read by its sending loop).
pub type Seen = Arc<Mutex<VecDeque<Uuid>>>;

/// Remembers a message of another member as a reaction target.
pub fn saw(seen: &Seen, message: &RecvMessage) {
    if message.kind != EntryKind::Message {
        return;
    }
    let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
    if seen.len() == RECENT {
        seen.pop_front();
    }
    seen.push_back(message.message_id);
}

/// One connection's choice of entries.
pub struct Picker {
    mix: Mix,
    /// Spreads each connection's kinds differently over its counter.
    offset: u64,
    /// The connection's own recent messages (not replies): (channel, id).
    own: VecDeque<(String, Uuid)>,
    seen: Seen,
    held: HashSet<(Uuid, &'static str)>,
}

impl Picker {
    /// A picker for connection `index`, with `seen` filled by its receiver.
    pub fn new(mix: Mix, index: usize, seen: Seen) -> Self {
        Self {
            mix,
            offset: index as u64 * 13,
            own: VecDeque::new(),
            seen,
            held: HashSet::new(),
        }
    }

    /// The entry to write as this connection's `counter`-th. Over any 100
    /// consecutive counters the kinds come in exactly the mix's shares
    /// (`counter × 37 mod 100` runs through 0..100), except that an edit or
    /// a reaction with no message to target yet is a send.
    pub fn next(&mut self, counter: u64) -> Op {
        let r = (counter.wrapping_mul(37).wrapping_add(self.offset) % 100) as u32;
        let pick = |list: &VecDeque<Uuid>| (!list.is_empty()).then(|| list[(counter as usize / 7) % list.len()]);
        let own = (!self.own.is_empty()).then(|| self.own[(counter as usize / 7) % self.own.len()].clone());
        if r < self.mix.edit_pct {
            if let Some((_, id)) = own {
                return Op::Edit(id);
            }
        } else if r < self.mix.edit_pct + self.mix.react_pct {
            let other = pick(&self.seen.lock().unwrap_or_else(|e| e.into_inner()));
            if let Some(id) = other.or_else(|| own.map(|(_, id)| id)) {
                let emoji = EMOJI[(counter as usize / 3) % EMOJI.len()];
                let add = !self.held.remove(&(id, emoji));
                if add {
                    self.held.insert((id, emoji));
                }
                return Op::React(id, emoji, add);
            }
        } else if r < self.mix.edit_pct + self.mix.react_pct + self.mix.reply_pct {
            if let Some((channel_id, root)) = own {
                return Op::Reply { channel_id, root };
            }
        }
        Op::Send
    }

    /// One of the connection's own messages (not a reply) was stored in
    /// `channel_id`: a target for edits and a root for replies.
    pub fn stored(&mut self, channel_id: &str, message_id: Uuid) {
        if self.own.len() == RECENT {
            self.own.pop_front();
        }
        self.own.push_back((channel_id.to_owned(), message_id));
    }
}

/// An ACKed edit or reaction, as the check needs it.
#[derive(Debug, Clone)]
pub struct Change {
    /// The channel it was stored in (from its ACK).
    pub channel_id: String,
    /// Its seq (from its ACK).
    pub seq: i64,
    /// The message it changes.
    pub target: Uuid,
    /// What it does.
    pub what: ChangeKind,
}

/// What a [`Change`] does.
#[derive(Debug, Clone)]
pub enum ChangeKind {
    /// The target's text becomes this.
    Edit(String),
    /// A reply in the target's thread (the target's `replyCount` rises).
    Reply,
    /// `user` adds (`true`) or removes `emoji`.
    React {
        /// Who reacts.
        user: String,
        /// The emoji.
        emoji: String,
        /// Add or remove.
        add: bool,
    },
}

/// The state a message must be read in: its body when edited, and its
/// reactions (emoji, holders) by first use.
#[derive(Debug, Default)]
struct Expected {
    body: Option<(i64, String)>,
    reactions: Vec<(String, HashSet<String>, i64)>,
    /// Replies in its thread.
    replies: i64,
}

/// Folds the ACKed `changes` of `channel_id` in seq order and compares the
/// result with `history` (the whole channel read back as the admin, so `me`
/// is always false): each edited message's `body` is its latest edit's text
/// with `editedAt` set, each unedited one has no `editedAt`, and each
/// message's `reactions` hold exactly the emoji some user holds, with their
/// counts, in first-use order, and its thread's `replyCount` is the number
/// of ACKed replies in it. Returns what is wrong (at most 20 lines).
pub fn check_state(channel_id: &str, history: &[RecvMessage], changes: &[Change]) -> Vec<String> {
    let mut mine: Vec<&Change> = changes.iter().filter(|c| c.channel_id == channel_id).collect();
    mine.sort_by_key(|c| c.seq);
    let mut expected: HashMap<Uuid, Expected> = HashMap::new();
    for change in mine {
        let state = expected.entry(change.target).or_default();
        match &change.what {
            ChangeKind::Edit(body) => state.body = Some((change.seq, body.clone())),
            ChangeKind::Reply => state.replies += 1,
            ChangeKind::React { user, emoji, add } => match state.reactions.iter().position(|(e, _, _)| e == emoji) {
                Some(i) => {
                    let (_, holders, first) = &mut state.reactions[i];
                    if *add && holders.is_empty() {
                        *first = change.seq;
                    }
                    if *add {
                        holders.insert(user.clone());
                    } else {
                        holders.remove(user);
                    }
                }
                None if *add => state
                    .reactions
                    .push((emoji.clone(), HashSet::from([user.clone()]), change.seq)),
                None => {}
            },
        }
    }
    let mut problems = Vec::new();
    for m in history.iter().filter(|m| m.kind == EntryKind::Message) {
        let want = expected.remove(&m.message_id).unwrap_or_default();
        match (&want.body, m.edited_at) {
            (Some((_, body)), Some(_)) if &m.body == body => {}
            (None, None) => {}
            (Some((seq, _)), _) => problems.push(format!(
                "{channel_id} seq {}: read as {:?} (editedAt {:?}), want the text of the edit at seq {seq}",
                m.seq,
                m.body.get(..20).unwrap_or(&m.body),
                m.edited_at
            )),
            (None, Some(at)) => problems.push(format!("{channel_id} seq {}: editedAt {at} but never edited", m.seq)),
        }
        let mut want_reactions: Vec<(i64, String, i64)> = want
            .reactions
            .into_iter()
            .filter(|(_, holders, _)| !holders.is_empty())
            .map(|(emoji, holders, first)| (first, emoji, holders.len() as i64))
            .collect();
        want_reactions.sort();
        let want_reactions: Vec<(String, i64)> = want_reactions.into_iter().map(|(_, e, n)| (e, n)).collect();
        let got: Option<Vec<(String, i64)>> = m
            .reactions
            .as_ref()
            .map(|r| r.iter().map(|c| (c.emoji.clone(), c.count)).collect());
        let me = m.reactions.iter().flatten().any(|c| c.me);
        if got.as_ref() != Some(&want_reactions) || me {
            problems.push(format!(
                "{channel_id} seq {}: reactions read {got:?} (me {me}), want {want_reactions:?}",
                m.seq
            ));
        }
        let replies = m.thread.as_ref().map_or(0, |t| t.reply_count);
        if replies != want.replies {
            problems.push(format!(
                "{channel_id} seq {}: replyCount read {replies}, want {} (ACKed replies in its thread)",
                m.seq, want.replies
            ));
        }
        if problems.len() >= 20 {
            break;
        }
    }
    if problems.len() < 20 {
        for id in expected.keys().take(20 - problems.len()) {
            problems.push(format!("{channel_id}: changed message {id} not found in the history"));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatd_client::chatd_proto::protocol::ReactionCount;

    fn message(seq: i64, id: Uuid, body: &str) -> RecvMessage {
        RecvMessage {
            message_id: id,
            channel_id: "c".into(),
            sender_id: "u".into(),
            seq,
            body: body.into(),
            ts: seq,
            client_msg_id: Some(format!("k{seq}")),
            kind: EntryKind::Message,
            target_id: None,
            emoji: None,
            op: None,
            noop: false,
            edited_at: None,
            deleted: false,
            reactions: Some(Vec::new()),
            ..Default::default()
        }
    }

    #[test]
    fn the_mix_comes_in_its_shares_once_targets_exist() {
        let seen: Seen = Arc::default();
        let mut picker = Picker::new(
            Mix {
                react_pct: 20,
                edit_pct: 10,
                reply_pct: 0,
            },
            3,
            seen,
        );
        picker.stored("c", Uuid::now_v7());
        let ops: Vec<Op> = (0..1000).map(|c| picker.next(c)).collect();
        let count = |k: Kind| ops.iter().filter(|o| o.kind() == k).count();
        assert_eq!(
            (count(Kind::Send), count(Kind::React), count(Kind::Edit)),
            (700, 200, 100)
        );
        // Reacting on the one message alternates add and remove per emoji.
        let adds = ops.iter().filter(|o| matches!(o, Op::React(_, _, true))).count();
        assert!((90..=110).contains(&adds), "{adds} adds of 200 reactions");
    }

    #[test]
    fn without_a_target_an_edit_or_a_reaction_is_a_send() {
        let mut picker = Picker::new(
            Mix {
                react_pct: 50,
                edit_pct: 50,
                reply_pct: 0,
            },
            0,
            Arc::default(),
        );
        assert!((0..100).all(|c| picker.next(c) == Op::Send));
    }

    #[test]
    fn the_check_folds_edits_and_reactions_in_seq_order() {
        let (a, b) = (Uuid::now_v7(), Uuid::now_v7());
        let change = |seq, target, what| Change {
            channel_id: "c".into(),
            seq,
            target,
            what,
        };
        let react = |user: &str, emoji: &str, add| ChangeKind::React {
            user: user.into(),
            emoji: emoji.into(),
            add,
        };
        // Given out of order: the fold sorts by seq.
        let changes = vec![
            change(5, a, ChangeKind::Edit("second".into())),
            change(3, a, ChangeKind::Edit("first".into())),
            change(4, b, react("x", "🎉", true)),
            change(6, b, react("y", "👍", true)),
            change(7, b, react("x", "🎉", false)),
            change(8, b, react("x", "🎉", true)),
        ];
        let mut ma = message(1, a, "second");
        ma.edited_at = Some(5);
        let mut mb = message(2, b, "plain");
        mb.reactions = Some(vec![
            ReactionCount {
                emoji: "👍".into(),
                count: 1,
                me: false,
            },
            ReactionCount {
                emoji: "🎉".into(),
                count: 1,
                me: false,
            },
        ]);
        assert_eq!(
            check_state("c", &[ma.clone(), mb.clone()], &changes),
            Vec::<String>::new()
        );
        // The first edit's text, or 🎉 still first (its count fell to 0 and rose again at 8), fail.
        let mut stale = ma.clone();
        stale.body = "first".into();
        assert_eq!(check_state("c", &[stale, mb.clone()], &changes).len(), 1);
        let mut order = mb.clone();
        if let Some(r) = order.reactions.as_mut() {
            r.reverse();
        }
        assert_eq!(check_state("c", &[ma.clone(), order], &changes).len(), 1);
        // A message never edited must not carry editedAt.
        let mut marked = message(9, Uuid::now_v7(), "x");
        marked.edited_at = Some(1);
        assert_eq!(check_state("c", &[ma, mb, marked], &changes).len(), 1);
    }

    #[test]
    fn replies_go_to_an_own_root_in_its_channel_and_the_check_counts_them() {
        let mut picker = Picker::new(
            Mix {
                react_pct: 0,
                edit_pct: 0,
                reply_pct: 25,
            },
            1,
            Arc::default(),
        );
        assert!((0..100).all(|c| picker.next(c) == Op::Send), "no root yet");
        let root = Uuid::now_v7();
        picker.stored("room", root);
        let ops: Vec<Op> = (0..400).map(|c| picker.next(c)).collect();
        let replies: Vec<&Op> = ops.iter().filter(|o| o.kind() == Kind::Reply).collect();
        assert_eq!(replies.len(), 100);
        assert!(replies.iter().all(|o| **o
            == Op::Reply {
                channel_id: "room".into(),
                root
            }));
        // Two ACKed replies: the root must read replyCount 2.
        let reply = |seq| Change {
            channel_id: "c".into(),
            seq,
            target: root,
            what: ChangeKind::Reply,
        };
        let changes = vec![reply(2), reply(3)];
        let mut m = message(1, root, "root");
        assert_eq!(
            check_state("c", std::slice::from_ref(&m), &changes).len(),
            1,
            "no summary read"
        );
        m.thread = Some(chatd_client::chatd_proto::protocol::ThreadSummary {
            reply_count: 2,
            last_reply_at: 3,
            last_reply_seq: 3,
            participants: vec!["u".into()],
        });
        assert_eq!(check_state("c", &[m], &changes), Vec::<String>::new());
    }
}
