//! The checker: reads the whole recorded history against what is stored.
//!
//! Its inputs are what the devices recorded ([`ClientLog`]: intents, ACKs,
//! refusals, entries handed to the application, receipts, HELLO watermarks,
//! and at the end each message's folded state), the channels' stored logs as
//! the admin reads them, and each user's own render-ready read of its
//! channels. The expected state of every message is folded from the ACKed
//! intents alone ([`crate::model`]), so a change the server applied twice or
//! lost shows as a difference between it and what the server reads.

use std::collections::{HashMap, HashSet};

use chatd_client::chatd_proto::protocol::{EntryKind, ErrorCode, ReactOp, RecvMessage};
use serde::Serialize;

use crate::model::{self, Expected};
use crate::record::{summary_tuple, ClientLog, Intent, Sent, UserReads};
use crate::threads;

/// What the checker found.
#[derive(Debug, Default, Serialize)]
pub struct Findings {
    /// Entries stored (every kind).
    pub messages_stored: usize,
    /// Intents (sends and entries) made.
    pub sends: usize,
    pub acks: usize,
    /// ACKs with `duplicate: true` (a retry found the entry already stored).
    pub duplicate_acks: usize,
    /// ACKed entries by kind: `message`, `edit`, `delete`, `reaction`.
    pub acked_by_kind: HashMap<&'static str, usize>,
    /// Reaction entries the server stored as `noop` (they changed nothing).
    pub noop_reactions: usize,
    /// Entries refused with `not_found` because their target was deleted
    /// meanwhile (allowed; nothing stored).
    pub refused_deleted_target: usize,
    /// Folded message states compared with the server's reads (all devices).
    pub states_compared: usize,
    /// ACKed replies (`replyTo` and/or `threadId`), among the `message`s.
    pub replies_acked: usize,
    /// Roots whose thread summary (k) compared with the ACKed replies.
    pub thread_summaries_compared: usize,
    pub violations: Vec<String>,
}

impl Findings {
    fn violation(&mut self, v: String) {
        if self.violations.len() < 50 {
            self.violations.push(v);
        }
    }
}

/// A stored entry as the checker indexes it by (sender, clientMsgId).
struct Stored<'a> {
    channel: &'a str,
    entry: &'a RecvMessage,
}

fn kind_name(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::Message => "message",
        EntryKind::Edit => "edit",
        EntryKind::Delete => "delete",
        EntryKind::Reaction => "reaction",
    }
}

/// The kind, target, emoji and op an intent stores.
fn intent_shape(intent: &Intent) -> (EntryKind, Option<uuid::Uuid>, Option<&str>, Option<ReactOp>) {
    match intent {
        Intent::Message | Intent::Reply { .. } => (EntryKind::Message, None, None, None),
        Intent::Edit { target } => (EntryKind::Edit, Some(*target), None, None),
        Intent::Delete { target } => (EntryKind::Delete, Some(*target), None, None),
        Intent::React { target, emoji, add } => (
            EntryKind::Reaction,
            Some(*target),
            Some(emoji.as_str()),
            Some(if *add { ReactOp::Add } else { ReactOp::Remove }),
        ),
    }
}

/// Checks, over the whole run:
/// - (a) every ACKed entry is stored once, with the ACK's channel, seq and
///   id, and with its intent's kind, target, emoji and op (an edit's text
///   unless its target was deleted since);
/// - (b) no (sender, clientMsgId) is stored twice;
/// - (c) every channel's seq is exactly 1..N;
/// - (d) every device got every entry of its channels exactly once, in
///   order, with the stored ids;
/// - (e) no watermark moved back (RECEIPT seqs per observer and HELLO
///   watermarks per device never decrease);
/// - (f) every intent ended ACKed, or refused with `not_found` because its
///   target (a reply's quoted message or root) is deleted (and then nothing
///   is stored under its key);
/// - (g) every message's state as the server reads it (body, `editedAt`,
///   `deleted`, reactions and their counts in order, and each reaction
///   entry's `noop`) equals the state folded from the ACKed intents in seq
///   order: an ACKed edit is the body unless a later ACKed edit or delete
///   exists, an ACKed delete deleted it, each reaction counts once however
///   often it was retried;
/// - (h) each user's read equals the admin's, with `me` true exactly on the
///   reactions the model says the user holds;
/// - (i) every device's folded state of every message it was handed equals
///   its user's read;
/// - (k) every ACKed entry is stored with the `replyTo` and `threadId` it was
///   sent with, and every root's thread summary as the admin reads it equals
///   the one folded from the ACKed replies ([`threads`]).
///
/// ((j), the churn's membership check, is [`crate::churn`]'s.)
pub fn check(history: &HashMap<String, Vec<RecvMessage>>, reads: &UserReads, logs: &[ClientLog]) -> Findings {
    let mut f = Findings::default();
    let mut stored: HashMap<(&str, &str), Stored<'_>> = HashMap::new();
    let mut by_id: HashMap<uuid::Uuid, &RecvMessage> = HashMap::new();
    for (channel, messages) in history {
        f.messages_stored += messages.len();
        for (i, m) in messages.iter().enumerate() {
            if m.seq != i as i64 + 1 {
                f.violation(format!("(c) {channel}: position {} holds seq {}", i + 1, m.seq));
                break;
            }
        }
        for m in messages {
            by_id.insert(m.message_id, m);
            if m.kind == EntryKind::Reaction && m.noop {
                f.noop_reactions += 1;
            }
            // An entry made through an HTTP route shows no key (§12); the
            // workload's entries all come from frames.
            let Some(client_msg_id) = m.client_msg_id.as_deref() else {
                continue;
            };
            let key = (m.sender_id.as_str(), client_msg_id);
            if stored.insert(key, Stored { channel, entry: m }).is_some() {
                f.violation(format!("(b) {client_msg_id} of {} stored twice", m.sender_id));
            }
        }
    }
    let deleted = |id: &uuid::Uuid| by_id.get(id).is_some_and(|m| m.deleted);

    for log in logs {
        f.sends += log.sent.len();
        f.acks += log.acks.len();
        f.duplicate_acks += log.acks.iter().filter(|a| a.duplicate).count();
        let sent: HashMap<&str, &Sent> = log.sent.iter().map(|s| (s.key.as_str(), s)).collect();
        for ack in &log.acks {
            let intent = sent.get(ack.client_msg_id.as_str());
            if let Some(s) = intent {
                *f.acked_by_kind.entry(kind_name(intent_shape(&s.intent).0)).or_default() += 1;
                if matches!(s.intent, Intent::Reply { .. }) {
                    f.replies_acked += 1;
                }
            }
            let Some(Stored { channel, entry }) = stored.get(&(log.user.as_str(), ack.client_msg_id.as_str())) else {
                f.violation(format!(
                    "(a) {} of {}: ACKed but not stored",
                    ack.client_msg_id, log.user
                ));
                continue;
            };
            if entry.seq != ack.seq || entry.message_id != ack.message_id || *channel != ack.channel_id {
                f.violation(format!(
                    "(a) {}: ACKed as {}#{} {}, stored as {channel}#{} {}",
                    ack.client_msg_id, ack.channel_id, ack.seq, ack.message_id, entry.seq, entry.message_id
                ));
            }
            let Some(s) = intent else { continue };
            let (kind, target, emoji, op) = intent_shape(&s.intent);
            if entry.kind != kind
                || entry.target_id != target
                || entry.emoji.as_deref() != emoji
                || entry.op != op
                || s.channel != *channel
            {
                f.violation(format!(
                    "(a) {}: stored as {:?} of {:?} ({:?} {:?}) in {channel}, sent as {kind:?} of {target:?} ({emoji:?} {op:?}) in {}",
                    ack.client_msg_id, entry.kind, entry.target_id, entry.emoji, entry.op, s.channel
                ));
            }
            if let Some(v) = threads::references_differ(&s.intent, entry) {
                f.violation(format!("(k) {}: {v}", ack.client_msg_id));
            }
            if let Intent::Edit { target } = &s.intent {
                let want = if deleted(target) { "" } else { s.body.as_str() };
                if entry.body != want {
                    f.violation(format!(
                        "(a) {}: the edit's stored text differs from the sent one",
                        ack.client_msg_id
                    ));
                }
            }
        }
        let acked: HashSet<&str> = log.acks.iter().map(|a| a.client_msg_id.as_str()).collect();
        let refused: HashMap<&str, ErrorCode> = log.refused.iter().map(|(k, c)| (k.as_str(), *c)).collect();
        for s in &log.sent {
            if acked.contains(s.key.as_str()) {
                continue;
            }
            let Some(&code) = refused.get(s.key.as_str()) else {
                f.violation(format!("(f) {}: sent by {} but never ACKed", s.key, log.name));
                continue;
            };
            // What the intent names: a target, or a reply's quoted message and root.
            let named: Vec<&uuid::Uuid> = match &s.intent {
                Intent::Message => Vec::new(),
                Intent::Reply { reply_to, thread_id } => reply_to.iter().chain(thread_id).collect(),
                Intent::Edit { target } | Intent::Delete { target } | Intent::React { target, .. } => vec![target],
            };
            if code == ErrorCode::NotFound && named.into_iter().any(deleted) {
                f.refused_deleted_target += 1;
                if stored.contains_key(&(log.user.as_str(), s.key.as_str())) {
                    f.violation(format!("(f) {}: refused, yet stored", s.key));
                }
            } else {
                f.violation(format!("(f) {}: refused with {code:?} ({:?})", s.key, s.intent));
            }
        }
        for (key, why) in &log.failed {
            f.violation(format!("(f) {key}: send failed for good: {why}"));
        }
        for channel in &log.channels {
            let want: Vec<(i64, uuid::Uuid)> = history
                .get(channel)
                .map(|ms| ms.iter().map(|m| (m.seq, m.message_id)).collect())
                .unwrap_or_default();
            let got = log.delivered.get(channel).cloned().unwrap_or_default();
            if got != want {
                let first_diff = got.iter().zip(&want).position(|(a, b)| a != b);
                f.violation(format!(
                    "(d) {} in {channel}: delivered {} entries, stored {}; first difference at index {:?}",
                    log.name,
                    got.len(),
                    want.len(),
                    first_diff
                ));
            }
        }
        check_watermarks(&mut f, log);
    }

    let (expected, noops, model_errors) = model::fold_intents(logs);
    for e in model_errors {
        f.violation(format!("(g) {e}"));
    }
    check_states(&mut f, history, &expected, &noops);
    check_reads(&mut f, history, reads, &expected);
    check_folded(&mut f, reads, logs);
    let (roots, differences) = threads::check_summaries(history, logs, &expected);
    f.thread_summaries_compared = roots;
    for v in differences {
        f.violation(format!("(k) {v}"));
    }
    f
}

/// (e): RECEIPT seqs per (channel, user, kind) and HELLO watermarks per
/// channel never go back as one device sees them.
fn check_watermarks(f: &mut Findings, log: &ClientLog) {
    let mut last: HashMap<(String, String, String), i64> = HashMap::new();
    for (channel, user, kind, seq) in &log.receipts {
        let k = (channel.clone(), user.clone(), format!("{kind:?}"));
        let prev = last.entry(k).or_insert(0);
        if *seq < *prev {
            f.violation(format!(
                "(e) {} saw {user}'s {kind:?} watermark in {channel} go back from {prev} to {seq}",
                log.name
            ));
        }
        *prev = (*prev).max(*seq);
    }
    let mut marks: HashMap<&str, (i64, i64)> = HashMap::new();
    for hello in &log.hellos {
        for (channel, &(delivered, read)) in hello {
            let prev = marks.entry(channel.as_str()).or_insert((0, 0));
            if delivered < prev.0 || read < prev.1 {
                f.violation(format!(
                    "(e) {}: HELLO watermarks in {channel} went back from {prev:?} to {:?}",
                    log.name,
                    (delivered, read)
                ));
            }
            if read > delivered {
                f.violation(format!(
                    "(e) {}: readSeq {read} above deliveredSeq {delivered}",
                    log.name
                ));
            }
            *prev = (delivered.max(prev.0), read.max(prev.1));
        }
    }
}

/// A read's reactions as (emoji, count, me).
fn reactions_of(m: &RecvMessage) -> Vec<(String, i64, bool)> {
    m.reactions
        .iter()
        .flatten()
        .map(|r| (r.emoji.clone(), r.count, r.me))
        .collect()
}

/// (g): the admin's read of every message against the model.
fn check_states(
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
fn check_reads(
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
fn check_folded(f: &mut Findings, reads: &UserReads, logs: &[ClientLog]) {
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

#[cfg(test)]
mod tests {
    use chatd_client::chatd_proto::protocol::{ReactionCount, ReceiptKind};
    use chatd_client::Ack;

    use super::*;
    use crate::record::Folded;

    fn id(n: i64) -> uuid::Uuid {
        uuid::Uuid::from_u128(n as u128)
    }

    fn msg(channel: &str, seq: i64, sender: &str, key: &str) -> RecvMessage {
        RecvMessage {
            message_id: id(seq),
            channel_id: channel.into(),
            sender_id: sender.into(),
            seq,
            body: format!("b-{key}"),
            ts: seq * 10,
            client_msg_id: Some(key.into()),
            reactions: Some(Vec::new()),
            ..Default::default()
        }
    }

    fn ack(key: &str, seq: i64) -> Ack {
        Ack {
            client_msg_id: key.into(),
            message_id: id(seq),
            channel_id: "c".into(),
            seq,
            ts: seq * 10,
            duplicate: false,
            attempts: 1,
        }
    }

    fn sent(key: &str, body: &str, intent: Intent) -> Sent {
        Sent {
            key: key.into(),
            channel: "c".into(),
            body: body.into(),
            intent,
        }
    }

    fn state_of(m: &RecvMessage) -> Folded {
        // What the client library would fold: built here from a read,
        // through the library's own fold.
        let mut log = chatd_client::ChannelMessages::default();
        log.fold(m, "u", Some(m.seq));
        Folded::from(log.get(&m.message_id).expect("folded"))
    }

    /// One user `u` with one device; `entries` beyond two plain messages.
    fn clean() -> (HashMap<String, Vec<RecvMessage>>, UserReads, Vec<ClientLog>) {
        let history = HashMap::from([("c".to_owned(), vec![msg("c", 1, "u", "k1"), msg("c", 2, "u", "k2")])]);
        let log = ClientLog {
            name: "u/0".into(),
            user: "u".into(),
            channels: vec!["c".into()],
            sent: ["k1", "k2"]
                .iter()
                .map(|k| sent(k, &format!("b-{k}"), Intent::Message))
                .collect(),
            acks: vec![ack("k1", 1), ack("k2", 2)],
            delivered: HashMap::from([("c".to_owned(), vec![(1, id(1)), (2, id(2))])]),
            ..ClientLog::default()
        };
        finish(history, vec![log])
    }

    /// Sets each user's read to the admin's (with `me` from the reactions'
    /// holders given in the history as the user) and each device's folded
    /// state to the read.
    fn finish(
        history: HashMap<String, Vec<RecvMessage>>,
        mut logs: Vec<ClientLog>,
    ) -> (HashMap<String, Vec<RecvMessage>>, UserReads, Vec<ClientLog>) {
        let mut reads = UserReads::new();
        for log in &mut logs {
            reads.insert(log.user.clone(), history.clone());
            for (channel, entries) in &history {
                log.folded.insert(
                    channel.clone(),
                    entries
                        .iter()
                        .filter(|m| m.kind == EntryKind::Message)
                        .map(|m| (m.message_id, Some(state_of(m))))
                        .collect(),
                );
            }
        }
        (history, reads, logs)
    }

    /// A message edited once and reacted to (👍 add, retried after a crash:
    /// the retry is a duplicate ACK of the same entry), all ACKed.
    fn with_entries() -> (HashMap<String, Vec<RecvMessage>>, UserReads, Vec<ClientLog>) {
        let mut m1 = msg("c", 1, "u", "k1");
        m1.body = "fixed".into();
        m1.edited_at = Some(20);
        m1.reactions = Some(vec![ReactionCount {
            emoji: "👍".into(),
            count: 1,
            me: true,
        }]);
        let edit = RecvMessage {
            kind: EntryKind::Edit,
            target_id: Some(id(1)),
            body: "fixed".into(),
            reactions: None,
            ..msg("c", 2, "u", "k2")
        };
        let react = RecvMessage {
            kind: EntryKind::Reaction,
            target_id: Some(id(1)),
            body: String::new(),
            emoji: Some("👍".into()),
            op: Some(ReactOp::Add),
            reactions: None,
            ..msg("c", 3, "u", "k3")
        };
        let history = HashMap::from([("c".to_owned(), vec![m1, edit, react])]);
        let log = ClientLog {
            name: "u/0".into(),
            user: "u".into(),
            channels: vec!["c".into()],
            sent: vec![
                sent("k1", "b-k1", Intent::Message),
                sent("k2", "fixed", Intent::Edit { target: id(1) }),
                sent(
                    "k3",
                    "",
                    Intent::React {
                        target: id(1),
                        emoji: "👍".into(),
                        add: true,
                    },
                ),
            ],
            acks: vec![
                ack("k1", 1),
                ack("k2", 2),
                Ack {
                    duplicate: true,
                    attempts: 2,
                    ..ack("k3", 3)
                },
            ],
            delivered: HashMap::from([("c".to_owned(), vec![(1, id(1)), (2, id(2)), (3, id(3))])]),
            ..ClientLog::default()
        };
        finish(history, vec![log])
    }

    fn has(f: &Findings, prefix: &str) -> bool {
        f.violations.iter().any(|v| v.starts_with(prefix))
    }

    #[test]
    fn a_clean_history_passes() {
        let (history, reads, logs) = clean();
        let f = check(&history, &reads, &logs);
        assert!(f.violations.is_empty(), "{:?}", f.violations);
        assert_eq!((f.messages_stored, f.acks, f.sends), (2, 2, 2));
    }

    #[test]
    fn a_clean_history_with_an_edit_and_a_retried_reaction_passes() {
        let (history, reads, logs) = with_entries();
        let f = check(&history, &reads, &logs);
        assert!(f.violations.is_empty(), "{:?}", f.violations);
        assert_eq!(f.states_compared, 1);
        assert_eq!(f.acked_by_kind.get("reaction"), Some(&1));
    }

    #[test]
    fn each_kind_of_violation_is_caught() {
        // (c) and (b): a gap and a key stored twice.
        let (mut history, reads, logs) = clean();
        history.get_mut("c").unwrap().push(msg("c", 4, "u", "k1"));
        let f = check(&history, &reads, &logs);
        assert!(has(&f, "(c)"), "{:?}", f.violations);
        assert!(has(&f, "(b)"), "{:?}", f.violations);

        // (a): an ACKed message missing.
        let (mut history, reads, logs) = clean();
        history.get_mut("c").unwrap().pop();
        let f = check(&history, &reads, &logs);
        assert!(has(&f, "(a)"), "{:?}", f.violations);

        // (d): a device got a message twice.
        let (history, reads, mut logs) = clean();
        logs[0].delivered.get_mut("c").unwrap().push((2, id(2)));
        let f = check(&history, &reads, &logs);
        assert!(has(&f, "(d)"), "{:?}", f.violations);

        // (e): a watermark went back.
        let (history, reads, mut logs) = clean();
        logs[0].receipts = vec![
            ("c".into(), "v".into(), ReceiptKind::Read, 2),
            ("c".into(), "v".into(), ReceiptKind::Read, 1),
        ];
        let f = check(&history, &reads, &logs);
        assert!(has(&f, "(e)"), "{:?}", f.violations);

        // (f): a send never ACKed.
        let (history, reads, mut logs) = clean();
        logs[0].acks.pop();
        let f = check(&history, &reads, &logs);
        assert!(has(&f, "(f)"), "{:?}", f.violations);
    }

    #[test]
    fn a_reaction_the_server_counted_twice_is_caught() {
        // The retried add was applied twice: the server reads count 2 where
        // the one ACKed intent gives 1.
        let (mut history, _, logs) = with_entries();
        let m1 = &mut history.get_mut("c").unwrap()[0];
        m1.reactions.as_mut().unwrap()[0].count = 2;
        let (history, reads, logs) = finish(history, logs);
        let f = check(&history, &reads, &logs);
        assert!(
            f.violations
                .iter()
                .any(|v| v.starts_with("(g)") && v.contains("reactions")),
            "{:?}",
            f.violations
        );
    }

    #[test]
    fn a_retried_reaction_stored_as_a_second_entry_is_caught() {
        // The retry got a fresh entry (and a second count) instead of the
        // original ACK: the key is stored twice and the count is 2.
        let (mut history, _, logs) = with_entries();
        let c = history.get_mut("c").unwrap();
        c[0].reactions.as_mut().unwrap()[0].count = 2;
        let again = RecvMessage {
            seq: 4,
            message_id: id(4),
            ..c[2].clone()
        };
        c.push(again);
        let (history, reads, mut logs) = finish(history, logs);
        logs[0].delivered.get_mut("c").unwrap().push((4, id(4)));
        let f = check(&history, &reads, &logs);
        assert!(has(&f, "(b)"), "{:?}", f.violations);
        assert!(has(&f, "(g)"), "{:?}", f.violations);
    }

    #[test]
    fn a_lost_acked_edit_is_caught() {
        // The edit was ACKed but the server reads the original text.
        let (mut history, _, logs) = with_entries();
        let m1 = &mut history.get_mut("c").unwrap()[0];
        m1.body = "b-k1".into();
        m1.edited_at = None;
        let (history, reads, logs) = finish(history, logs);
        let f = check(&history, &reads, &logs);
        assert!(
            f.violations
                .iter()
                .any(|v| v.starts_with("(g)") && v.contains("editedAt")),
            "{:?}",
            f.violations
        );

        // The edit entry is gone altogether (and so is its effect).
        let (mut history, _, mut logs) = with_entries();
        let c = history.get_mut("c").unwrap();
        c.remove(1);
        c[0].body = "b-k1".into();
        c[0].edited_at = None;
        c[1].seq = 2;
        let (history, reads, _) = finish(history, Vec::new());
        logs[0].delivered = HashMap::from([("c".to_owned(), vec![(1, id(1)), (2, id(3))])]);
        let f = check(&history, &reads, &logs);
        assert!(has(&f, "(a)"), "{:?}", f.violations);
        assert!(has(&f, "(g)"), "{:?}", f.violations);
    }

    #[test]
    fn an_earlier_edit_read_as_final_is_caught() {
        // Two ACKed edits; the server reads the first one's text.
        let (mut history, _, mut logs) = with_entries();
        let c = history.get_mut("c").unwrap();
        c[0].edited_at = Some(40);
        c.push(RecvMessage {
            body: "fixed again".into(),
            ..msg("c", 4, "u", "k4")
        });
        c[3].kind = EntryKind::Edit;
        c[3].target_id = Some(id(1));
        c[3].reactions = None;
        logs[0]
            .sent
            .push(sent("k4", "fixed again", Intent::Edit { target: id(1) }));
        logs[0].acks.push(ack("k4", 4));
        logs[0].delivered.get_mut("c").unwrap().push((4, id(4)));
        let (history, reads, logs) = finish(history, logs);
        let f = check(&history, &reads, &logs);
        assert!(has(&f, "(g)"), "{:?}", f.violations);
        assert!(!has(&f, "(a)"), "{:?}", f.violations);
    }

    #[test]
    fn a_device_whose_folded_state_differs_from_the_read_is_caught() {
        // The device applied the retried reaction twice.
        let (history, reads, mut logs) = with_entries();
        let folded = logs[0].folded.get_mut("c").unwrap()[0].1.as_mut().unwrap();
        folded.reactions[0].1 = 2;
        let f = check(&history, &reads, &logs);
        assert!(has(&f, "(i)"), "{:?}", f.violations);

        // A device with no state for a message it was handed.
        let (history, reads, mut logs) = with_entries();
        logs[0].folded.get_mut("c").unwrap()[0].1 = None;
        let f = check(&history, &reads, &logs);
        assert!(has(&f, "(i)"), "{:?}", f.violations);

        // A device that folded a thread summary the server does not read
        // (a reply counted on a message that has none).
        let (history, reads, mut logs) = with_entries();
        let folded = logs[0].folded.get_mut("c").unwrap()[0].1.as_mut().unwrap();
        folded.thread = Some((1, 0, 3, vec!["u".into()]));
        let f = check(&history, &reads, &logs);
        assert!(has(&f, "(i)"), "{:?}", f.violations);

        // A device that lost a message's replyTo.
        let (history, reads, mut logs) = with_entries();
        let folded = logs[0].folded.get_mut("c").unwrap()[0].1.as_mut().unwrap();
        folded.reply_to = Some(id(9));
        let f = check(&history, &reads, &logs);
        assert!(has(&f, "(i)"), "{:?}", f.violations);
    }

    #[test]
    fn a_wrong_me_in_a_users_read_is_caught() {
        let (history, mut reads, logs) = with_entries();
        let m1 = &mut reads.get_mut("u").unwrap().get_mut("c").unwrap()[0];
        m1.reactions.as_mut().unwrap()[0].me = false;
        let f = check(&history, &reads, &logs);
        assert!(has(&f, "(h)"), "{:?}", f.violations);
    }

    #[test]
    fn a_refusal_is_allowed_only_for_a_deleted_target() {
        let (history, reads, mut logs) = with_entries();
        let intent = Intent::React {
            target: id(1),
            emoji: "🎉".into(),
            add: true,
        };
        logs[0].sent.push(sent("k9", "", intent));
        logs[0].refused.push(("k9".into(), ErrorCode::NotFound));
        let f = check(&history, &reads, &logs);
        assert!(has(&f, "(f)"), "the target is not deleted: {:?}", f.violations);

        let (mut history, _, mut logs) = with_entries();
        let c = history.get_mut("c").unwrap();
        c[0].body.clear();
        c[0].edited_at = None;
        c[0].deleted = true;
        c[0].reactions = Some(Vec::new());
        c[1].body.clear();
        c.push(RecvMessage {
            kind: EntryKind::Delete,
            target_id: Some(id(1)),
            body: String::new(),
            reactions: None,
            ..msg("c", 4, "u", "k4")
        });
        logs[0].sent.push(sent("k4", "", Intent::Delete { target: id(1) }));
        logs[0].acks.push(ack("k4", 4));
        logs[0].delivered.get_mut("c").unwrap().push((4, id(4)));
        let intent = Intent::React {
            target: id(1),
            emoji: "🎉".into(),
            add: true,
        };
        logs[0].sent.push(sent("k9", "", intent));
        logs[0].refused.push(("k9".into(), ErrorCode::NotFound));
        // A reply in the deleted message's thread, and one quoting the
        // message that is not deleted: only the first may be refused.
        let in_thread = Intent::Reply {
            reply_to: None,
            thread_id: Some(id(1)),
        };
        logs[0].sent.push(sent("k10", "r", in_thread));
        logs[0].refused.push(("k10".into(), ErrorCode::NotFound));
        let (history, reads, logs) = finish(history, logs);
        let f = check(&history, &reads, &logs);
        assert!(f.violations.is_empty(), "{:?}", f.violations);
        assert_eq!(f.refused_deleted_target, 2);

        let (history, reads, mut logs) = with_entries();
        let quote = Intent::Reply {
            reply_to: Some(id(2)),
            thread_id: None,
        };
        logs[0].sent.push(sent("k11", "r", quote));
        logs[0].refused.push(("k11".into(), ErrorCode::NotFound));
        let f = check(&history, &reads, &logs);
        assert!(
            has(&f, "(f) k11"),
            "the quoted message is not deleted: {:?}",
            f.violations
        );
    }
}
