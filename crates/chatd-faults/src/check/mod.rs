//! The checker: reads the whole recorded history against what is stored.
//!
//! Its inputs are what the devices recorded ([`ClientLog`]: intents, ACKs,
//! refusals, entries handed to the application, receipts, HELLO watermarks,
//! and at the end each message's folded state), the channels' stored logs as
//! the admin reads them, and each user's own render-ready read of its
//! channels. The expected state of every message is folded from the ACKed
//! intents alone ([`crate::model`]), so a change the server applied twice or
//! lost shows as a difference between it and what the server reads.
//!
//! By concern: this file checks what was sent, ACKed and refused against
//! what is stored ((a), (b), (c), (f), (k)'s references) and runs the rest;
//! `delivery.rs` what each device was handed ((d), (e)); `states.rs` the
//! messages' states as read and folded against the model ((g), (h), (i)).

use std::collections::{HashMap, HashSet};

use chatd_client::chatd_proto::protocol::{EntryKind, ErrorCode, ReactOp, RecvMessage};
use serde::Serialize;

use crate::model;
use crate::record::{ClientLog, Intent, Sent, UserReads};
use crate::threads;

mod delivery;
mod states;
#[cfg(test)]
mod tests;

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
        delivery::check_delivered(&mut f, history, log);
        delivery::check_watermarks(&mut f, log);
    }

    let (expected, noops, model_errors) = model::fold_intents(logs);
    for e in model_errors {
        f.violation(format!("(g) {e}"));
    }
    states::check_states(&mut f, history, &expected, &noops);
    states::check_reads(&mut f, history, reads, &expected);
    states::check_folded(&mut f, reads, logs);
    let (roots, differences) = threads::check_summaries(history, logs, &expected);
    f.thread_summaries_compared = roots;
    for v in differences {
        f.violation(format!("(k) {v}"));
    }
    f
}
