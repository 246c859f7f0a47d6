//! The reference fold of the checker: every message's expected state,
//! computed from the ACKed intents alone (what each device asked for and the
//! `seq` its ACK gave it), independently of the server's reads and of the
//! client library's fold (`docs/protocol.md` §8 and §11.3).

use std::collections::{BTreeSet, HashMap};

use crate::record::{ClientLog, Intent};

/// One message's expected state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expected {
    /// The current text: the latest ACKed edit's, `""` once deleted.
    pub body: String,
    /// The ts of the latest ACKed edit (its ACK's `ts`), unless deleted.
    pub edited_at: Option<i64>,
    pub deleted: bool,
    /// Emojis held by at least one user, by first use (the seq at which the
    /// emoji's count last rose from 0), with their holders.
    pub reactions: Vec<(String, BTreeSet<String>)>,
}

impl Expected {
    /// (emoji, count) in order, as a read returns them.
    pub fn counts(&self) -> Vec<(String, i64)> {
        self.reactions
            .iter()
            .map(|(emoji, holders)| (emoji.clone(), holders.len() as i64))
            .collect()
    }

    /// Whether `user` holds `emoji`.
    pub fn holds(&self, emoji: &str, user: &str) -> bool {
        self.reactions
            .iter()
            .any(|(e, holders)| e == emoji && holders.contains(user))
    }
}

/// One ACKed intent, placed in its channel's log.
struct Placed<'a> {
    channel: &'a str,
    seq: i64,
    ts: i64,
    entry_id: uuid::Uuid,
    user: &'a str,
    body: &'a str,
    intent: &'a Intent,
}

/// Folds every ACKed intent of every device in (channel, seq) order.
/// Returns the expected state of each message (by id), the expected `noop`
/// of each reaction entry (by entry id: `true` when it changed nothing),
/// and the ACKs that cannot be right whatever the server stored (an edit or
/// reaction ACKed after its target's ACKed delete, two ACKs at one seq).
pub fn fold_intents(logs: &[ClientLog]) -> (HashMap<uuid::Uuid, Expected>, HashMap<uuid::Uuid, bool>, Vec<String>) {
    let mut placed: Vec<Placed<'_>> = Vec::new();
    for log in logs {
        let sent: HashMap<&str, _> = log.sent.iter().map(|s| (s.key.as_str(), s)).collect();
        for ack in &log.acks {
            if let Some(s) = sent.get(ack.client_msg_id.as_str()) {
                placed.push(Placed {
                    channel: &ack.channel_id,
                    seq: ack.seq,
                    ts: ack.ts,
                    entry_id: ack.message_id,
                    user: &log.user,
                    body: &s.body,
                    intent: &s.intent,
                });
            }
        }
    }
    placed.sort_by(|a, b| (a.channel, a.seq).cmp(&(b.channel, b.seq)));
    let mut errors = Vec::new();
    for pair in placed.windows(2) {
        if (pair[0].channel, pair[0].seq) == (pair[1].channel, pair[1].seq) {
            errors.push(format!("two ACKs name {}#{}", pair[0].channel, pair[0].seq));
        }
    }
    let mut states: HashMap<uuid::Uuid, Expected> = HashMap::new();
    let mut noops: HashMap<uuid::Uuid, bool> = HashMap::new();
    for p in &placed {
        let target = match p.intent {
            Intent::Message | Intent::Reply { .. } => {
                states.insert(
                    p.entry_id,
                    Expected {
                        body: p.body.to_owned(),
                        ..Expected::default()
                    },
                );
                continue;
            }
            Intent::Edit { target } | Intent::Delete { target } | Intent::React { target, .. } => target,
        };
        let Some(state) = states.get_mut(target) else {
            // A target no device has an ACK of (already reported by (f)).
            continue;
        };
        if state.deleted {
            errors.push(format!(
                "{}#{}: {:?} ACKed after its target's ACKed delete",
                p.channel, p.seq, p.intent
            ));
            continue;
        }
        match p.intent {
            Intent::Message | Intent::Reply { .. } => {}
            Intent::Edit { .. } => {
                state.body = p.body.to_owned();
                state.edited_at = Some(p.ts);
            }
            Intent::Delete { .. } => {
                *state = Expected {
                    deleted: true,
                    ..Expected::default()
                };
            }
            Intent::React { emoji, add, .. } => {
                let at = state.reactions.iter().position(|(e, _)| e == emoji);
                let changed = match (add, at) {
                    (true, Some(i)) => state.reactions[i].1.insert(p.user.to_owned()),
                    (true, None) => {
                        state
                            .reactions
                            .push((emoji.clone(), BTreeSet::from([p.user.to_owned()])));
                        true
                    }
                    (false, Some(i)) => {
                        let removed = state.reactions[i].1.remove(p.user);
                        if state.reactions[i].1.is_empty() {
                            state.reactions.remove(i);
                        }
                        removed
                    }
                    (false, None) => false,
                };
                noops.insert(p.entry_id, !changed);
            }
        }
    }
    (states, noops, errors)
}
