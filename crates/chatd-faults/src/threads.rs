//! Check (k), replies and threads under faults (`docs/protocol.md` §14):
//! every ACKed entry is stored with the `replyTo` and `threadId` it was sent
//! with (a retry after a lost ACK must not drop or change them), and every
//! root's thread summary as the admin reads it equals the one folded from
//! the ACKed replies alone: `replyCount` the replies not deleted (by the
//! model of [`crate::model`]), `lastReplySeq`/`lastReplyAt` the latest reply's
//! ACK, `participants` the first 10 distinct senders in seq order. A summary
//! kept twice for a retried reply, or lost with a crash between the reply's
//! insert and the root's update, shows as a difference.

use std::collections::HashMap;

use chatd_client::chatd_proto::protocol::{EntryKind, RecvMessage};

use crate::model::Expected;
use crate::record::{ClientLog, Intent};

/// Most `participants` a summary names (§14).
const MAX_PARTICIPANTS: usize = 10;

/// A root's thread summary: (replyCount, lastReplyAt, lastReplySeq, participants).
type Summary = (i64, i64, i64, Vec<String>);

/// Why `stored` does not carry the references `intent` was sent with, or `None`.
pub fn references_differ(intent: &Intent, stored: &RecvMessage) -> Option<String> {
    let sent = match intent {
        Intent::Reply { reply_to, thread_id } => (*reply_to, *thread_id),
        _ => (None, None),
    };
    let got = (stored.reply_to, stored.thread_id);
    (got != sent).then(|| format!("stored with (replyTo, threadId) {got:?}, sent with {sent:?}"))
}

/// Every root's summary in `history` (the admin's read) against the one
/// folded from the ACKed replies of `logs`, with each reply's deletion as
/// `expected` has it. Returns the number of roots with ACKed replies and
/// the differences found.
pub fn check_summaries(
    history: &HashMap<String, Vec<RecvMessage>>,
    logs: &[ClientLog],
    expected: &HashMap<uuid::Uuid, Expected>,
) -> (usize, Vec<String>) {
    let want = fold_summaries(logs, expected);
    let mut found = Vec::new();
    for (channel, messages) in history {
        for m in messages.iter().filter(|m| m.kind == EntryKind::Message) {
            let read = m
                .thread
                .as_ref()
                .map(|t| (t.reply_count, t.last_reply_at, t.last_reply_seq, t.participants.clone()));
            let model = want.get(&m.message_id).cloned();
            if read != model {
                found.push(format!(
                    "{channel}#{}: thread summary read as {read:?}, the ACKed replies give {model:?}",
                    m.seq
                ));
            }
        }
    }
    (want.len(), found)
}

/// The expected summary of each root that has ACKed replies.
fn fold_summaries(logs: &[ClientLog], expected: &HashMap<uuid::Uuid, Expected>) -> HashMap<uuid::Uuid, Summary> {
    // (root, seq, ts, sender, reply id) of every ACKed reply in a thread.
    let mut replies: Vec<(uuid::Uuid, i64, i64, &str, uuid::Uuid)> = Vec::new();
    for log in logs {
        let sent: HashMap<&str, &Intent> = log.sent.iter().map(|s| (s.key.as_str(), &s.intent)).collect();
        for ack in &log.acks {
            if let Some(Intent::Reply {
                thread_id: Some(root), ..
            }) = sent.get(ack.client_msg_id.as_str())
            {
                replies.push((*root, ack.seq, ack.ts, log.user.as_str(), ack.message_id));
            }
        }
    }
    replies.sort_by_key(|r| (r.0, r.1));
    replies.dedup_by_key(|r| (r.0, r.1));
    let mut out: HashMap<uuid::Uuid, Summary> = HashMap::new();
    for (root, seq, ts, sender, id) in replies {
        let summary = out.entry(root).or_insert_with(|| (0, 0, 0, Vec::new()));
        if !expected.get(&id).is_some_and(|e| e.deleted) {
            summary.0 += 1;
        }
        summary.1 = ts;
        summary.2 = seq;
        if summary.3.len() < MAX_PARTICIPANTS && !summary.3.iter().any(|p| p == sender) {
            summary.3.push(sender.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use chatd_client::chatd_proto::protocol::ThreadSummary;
    use chatd_client::Ack;

    use super::*;
    use crate::record::Sent;

    fn id(n: u128) -> uuid::Uuid {
        uuid::Uuid::from_u128(n)
    }

    fn stored(seq: i64, sender: &str, reply_to: Option<uuid::Uuid>, thread_id: Option<uuid::Uuid>) -> RecvMessage {
        RecvMessage {
            message_id: id(seq as u128),
            channel_id: "c".into(),
            sender_id: sender.into(),
            seq,
            body: format!("m{seq}"),
            ts: 1000 + seq,
            client_msg_id: Some(format!("k{seq}")),
            reply_to,
            thread_id,
            ..RecvMessage::default()
        }
    }

    fn log(user: &str, sends: &[(i64, Intent)]) -> ClientLog {
        ClientLog {
            user: user.into(),
            sent: sends
                .iter()
                .map(|(seq, intent)| Sent {
                    key: format!("k{seq}"),
                    channel: "c".into(),
                    body: format!("m{seq}"),
                    intent: intent.clone(),
                })
                .collect(),
            acks: sends
                .iter()
                .map(|(seq, _)| Ack {
                    client_msg_id: format!("k{seq}"),
                    message_id: id(*seq as u128),
                    channel_id: "c".into(),
                    seq: *seq,
                    ts: 1000 + seq,
                    duplicate: false,
                    attempts: 1,
                })
                .collect(),
            ..ClientLog::default()
        }
    }

    /// A root (seq 1) by alice, two replies in its thread by bob (2) and
    /// carol (3), and a quote of the root by alice (4), stored as sent.
    fn thread() -> (HashMap<String, Vec<RecvMessage>>, Vec<ClientLog>) {
        let reply = |thread: bool, quote: bool| Intent::Reply {
            reply_to: quote.then(|| id(1)),
            thread_id: thread.then(|| id(1)),
        };
        let mut root = stored(1, "alice", None, None);
        root.thread = Some(ThreadSummary {
            reply_count: 2,
            last_reply_at: 1003,
            last_reply_seq: 3,
            participants: vec!["bob".into(), "carol".into()],
        });
        let history = HashMap::from([(
            "c".to_owned(),
            vec![
                root,
                stored(2, "bob", None, Some(id(1))),
                stored(3, "carol", Some(id(1)), Some(id(1))),
                stored(4, "alice", Some(id(1)), None),
            ],
        )]);
        let logs = vec![
            log("alice", &[(1, Intent::Message), (4, reply(false, true))]),
            log("bob", &[(2, reply(true, false))]),
            log("carol", &[(3, reply(true, true))]),
        ];
        (history, logs)
    }

    fn states(deleted: &[i64]) -> HashMap<uuid::Uuid, Expected> {
        (1..=4)
            .map(|seq| {
                let state = Expected {
                    deleted: deleted.contains(&seq),
                    ..Expected::default()
                };
                (id(seq as u128), state)
            })
            .collect()
    }

    #[test]
    fn a_thread_stored_and_summed_as_sent_passes() {
        let (history, logs) = thread();
        assert_eq!(
            check_summaries(&history, &logs, &states(&[])),
            (1, Vec::<String>::new())
        );
        for log in &logs {
            for (sent, m) in log
                .sent
                .iter()
                .zip(log.acks.iter().map(|a| &history["c"][a.seq as usize - 1]))
            {
                assert_eq!(references_differ(&sent.intent, m), None);
            }
        }
    }

    #[test]
    fn a_summary_that_still_counts_a_deleted_reply_is_caught() {
        let (history, logs) = thread();
        // bob's reply (seq 2) deleted: the model counts 1, the read still says 2.
        let (_, found) = check_summaries(&history, &logs, &states(&[2]));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("c#1: thread summary read as Some((2,"),
            "{found:?}"
        );
    }

    #[test]
    fn a_lost_summary_and_a_summary_on_a_message_with_no_thread_are_caught() {
        let (mut history, logs) = thread();
        let moved = history.get_mut("c").and_then(|ms| ms[0].thread.take());
        history.get_mut("c").expect("channel c")[3].thread = moved;
        let (_, found) = check_summaries(&history, &logs, &states(&[]));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found.iter().any(|v| v.starts_with("c#1: thread summary read as None")),
            "{found:?}"
        );
        assert!(
            found.iter().any(|v| v.starts_with("c#4:") && v.ends_with("give None")),
            "{found:?}"
        );
    }

    #[test]
    fn a_reply_stored_without_its_thread_is_caught() {
        let sent = Intent::Reply {
            reply_to: None,
            thread_id: Some(id(1)),
        };
        let found = references_differ(&sent, &stored(2, "bob", None, None));
        assert!(found.is_some_and(|v| v.contains("(None, None)")));
        assert!(references_differ(&Intent::Message, &stored(2, "bob", Some(id(1)), None)).is_some());
    }
}
