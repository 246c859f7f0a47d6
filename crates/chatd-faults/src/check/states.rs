//! (g), (h) and (i): each message's state as the server reads it, for the
//! admin and for each user, and as each device folded it, against the
//! state folded from the ACKed intents ([`crate::model`]).

use std::collections::HashMap;

use chatd_client::chatd_proto::protocol::{EntryKind, RecvMessage};

use super::Findings;
use crate::model::Expected;
use crate::record::{summary_tuple, ClientLog, UserReads};

/// A read's reactions as (emoji, count, me).
fn reactions_of(m: &RecvMessage) -> Vec<(String, i64, bool)> {
    m.reactions
        .iter()
        .flatten()
        .map(|r| (r.emoji.clone(), r.count, r.me))
        .collect()
}

/// (g): the admin's read of every message against the model.
pub(super) fn check_states(
    f: &mut Findings,
    history: &HashMap<String, Vec<RecvMessage>>,
    expected: &HashMap<uuid::Uuid, Expected>,
    noops: &HashMap<uuid::Uuid, bool>,
) {
    for (channel, messages) in history {
        for m in messages {
            if m.kind == EntryKind::Reaction {
                if let Some(&noop) = noops.get(&m.message_id) {
                    if noop != m.noop {
                        f.violation(format!(
                            "(g) {channel}#{}: reaction stored with noop={}, the ACKed intents say {noop}",
                            m.seq, m.noop
                        ));
                    }
                }
            }
            if m.kind != EntryKind::Message {
                continue;
            }
            let Some(want) = expected.get(&m.message_id) else {
                continue;
            };
            let read = (m.body.as_str(), m.edited_at, m.deleted);
            let model = (want.body.as_str(), want.edited_at, want.deleted);
            if read != model {
                f.violation(format!(
                    "(g) {channel}#{}: read as (body {:?}, editedAt {:?}, deleted {}), the ACKed intents give ({:?}, {:?}, {})",
                    m.seq, read.0, read.1, read.2, model.0, model.1, model.2
                ));
            }
            let got: Vec<(String, i64)> = reactions_of(m).into_iter().map(|(e, c, _)| (e, c)).collect();
            let want_reactions = want.counts();
            if got != want_reactions {
                f.violation(format!(
                    "(g) {channel}#{}: reactions read as {got:?}, the ACKed intents give {want_reactions:?}",
                    m.seq
                ));
            }
        }
    }
}

/// (h): each user's read against the admin's and the model's `me`.
pub(super) fn check_reads(
    f: &mut Findings,
    history: &HashMap<String, Vec<RecvMessage>>,
    reads: &UserReads,
    expected: &HashMap<uuid::Uuid, Expected>,
) {
    for (user, channels) in reads {
        for (channel, read) in channels {
            let admin = history.get(channel).map_or(&[][..], Vec::as_slice);
            if read.len() != admin.len() {
                f.violation(format!(
                    "(h) {user}'s read of {channel} has {} entries, the admin's {}",
                    read.len(),
                    admin.len()
                ));
                continue;
            }
            for (mine, theirs) in read.iter().zip(admin) {
                let strip = |m: &RecvMessage| -> (uuid::Uuid, String, Option<i64>, bool, Vec<(String, i64)>) {
                    let r = reactions_of(m).into_iter().map(|(e, c, _)| (e, c)).collect();
                    (m.message_id, m.body.clone(), m.edited_at, m.deleted, r)
                };
                if strip(mine) != strip(theirs) {
                    f.violation(format!(
                        "(h) {user}'s read of {channel}#{} differs from the admin's",
                        mine.seq
                    ));
                    continue;
                }
                if mine.kind != EntryKind::Message {
                    continue;
                }
                let Some(want) = expected.get(&mine.message_id) else {
                    continue;
                };
                for (emoji, _, me) in reactions_of(mine) {
                    if me != want.holds(&emoji, user) {
                        f.violation(format!(
                            "(h) {user}'s read of {channel}#{}: {emoji} me={me}, the ACKed intents say {}",
                            mine.seq, !me
                        ));
                    }
                }
            }
        }
    }
}

/// (i): every device's folded state against its user's read.
pub(super) fn check_folded(f: &mut Findings, reads: &UserReads, logs: &[ClientLog]) {
    for log in logs {
        let Some(channels) = reads.get(&log.user) else {
            if !log.folded.is_empty() {
                f.violation(format!(
                    "(i) no read as {} to compare {}'s state with",
                    log.user, log.name
                ));
            }
            continue;
        };
        for (channel, states) in &log.folded {
            let read: HashMap<uuid::Uuid, &RecvMessage> = channels
                .get(channel)
                .into_iter()
                .flatten()
                .map(|m| (m.message_id, m))
                .collect();
            for (id, state) in states {
                f.states_compared += 1;
                let Some(m) = read.get(id) else {
                    f.violation(format!(
                        "(i) {} holds a state of {id} in {channel}, which the server does not read",
                        log.name
                    ));
                    continue;
                };
                let Some(state) = state else {
                    f.violation(format!("(i) {} has no folded state of {channel}#{}", log.name, m.seq));
                    continue;
                };
                let folded = (
                    state.body.as_str(),
                    state.edited_at,
                    state.deleted,
                    state.reactions.clone(),
                    (state.reply_to, state.thread_id, state.thread.clone()),
                );
                let server = (
                    m.body.as_str(),
                    m.edited_at,
                    m.deleted,
                    reactions_of(m),
                    (m.reply_to, m.thread_id, m.thread.as_ref().map(summary_tuple)),
                );
                if folded != server {
                    f.violation(format!(
                        "(i) {}'s folded state of {channel}#{} is {folded:?}, the server reads {server:?}",
                        log.name, m.seq
                    ));
                }
            }
        }
    }
}
