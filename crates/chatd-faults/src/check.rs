//! The checker: reads the whole recorded history against what is stored.

use std::collections::{HashMap, HashSet};

use chatd_client::chatd_proto::protocol::{ReceiptKind, RecvMessage};
use chatd_client::Ack;
use serde::Serialize;

/// One send the workload made (the intent).
#[derive(Debug, Clone)]
pub struct Sent {
    pub key: String,
    pub channel: String,
    pub body: String,
}

/// Everything one client device recorded.
#[derive(Debug, Default)]
pub struct ClientLog {
    /// `user/device`.
    pub name: String,
    pub user: String,
    /// Channels the user is a member of.
    pub channels: Vec<String>,
    pub sent: Vec<Sent>,
    pub acks: Vec<Ack>,
    /// Sends that ended without an ACK: (key, why).
    pub failed: Vec<(String, String)>,
    /// Messages handed to the application, per channel, in arrival order.
    pub delivered: HashMap<String, Vec<(i64, uuid::Uuid)>>,
    /// RECEIPT frames seen: (channel, user, kind, seq), in arrival order.
    pub receipts: Vec<(String, String, ReceiptKind, i64)>,
    /// HELLO watermarks at each (re)connect: channel → (deliveredSeq, readSeq).
    pub hellos: Vec<HashMap<String, (i64, i64)>>,
    /// Sessions started (1 + reconnects).
    pub sessions: usize,
}

/// What the checker found.
#[derive(Debug, Default, Serialize)]
pub struct Findings {
    pub messages_stored: usize,
    pub sends: usize,
    pub acks: usize,
    /// ACKs with `duplicate: true` (a retry found the message already stored).
    pub duplicate_acks: usize,
    pub violations: Vec<String>,
}

impl Findings {
    fn violation(&mut self, v: String) {
        if self.violations.len() < 50 {
            self.violations.push(v);
        }
    }
}

/// Checks (a) every ACKed message stored once, with the ACK's seq and id;
/// (b) no (sender, clientMsgId) stored twice; (c) every channel's seq is
/// exactly 1..N; (d) every device got every message of its channels exactly
/// once, in order, with the stored ids; (e) no watermark moved back (RECEIPT
/// seqs per observer and HELLO watermarks per device never decrease); and
/// (f) every intended send ended ACKed (so stored exactly once).
pub fn check(history: &HashMap<String, Vec<RecvMessage>>, logs: &[ClientLog]) -> Findings {
    let mut f = Findings::default();
    let mut stored: HashMap<(String, String), (String, i64, uuid::Uuid, String)> = HashMap::new();
    for (channel, messages) in history {
        f.messages_stored += messages.len();
        for (i, m) in messages.iter().enumerate() {
            if m.seq != i as i64 + 1 {
                f.violation(format!("(c) {channel}: position {} holds seq {}", i + 1, m.seq));
                break;
            }
        }
        for m in messages {
            let key = (m.sender_id.clone(), m.client_msg_id.clone());
            let value = (channel.clone(), m.seq, m.message_id, m.body.clone());
            if stored.insert(key, value).is_some() {
                f.violation(format!("(b) {} of {} stored twice", m.client_msg_id, m.sender_id));
            }
        }
    }
    for log in logs {
        f.sends += log.sent.len();
        f.acks += log.acks.len();
        f.duplicate_acks += log.acks.iter().filter(|a| a.duplicate).count();
        let sent: HashMap<&str, &Sent> = log.sent.iter().map(|s| (s.key.as_str(), s)).collect();
        for ack in &log.acks {
            match stored.get(&(log.user.clone(), ack.client_msg_id.clone())) {
                Some((channel, seq, id, body)) => {
                    if *seq != ack.seq || *id != ack.message_id || *channel != ack.channel_id {
                        f.violation(format!(
                            "(a) {}: ACKed as {}#{} {}, stored as {channel}#{seq} {id}",
                            ack.client_msg_id, ack.channel_id, ack.seq, ack.message_id
                        ));
                    }
                    if sent
                        .get(ack.client_msg_id.as_str())
                        .is_some_and(|s| &s.body != body || &s.channel != channel)
                    {
                        f.violation(format!(
                            "(a) {}: stored body or channel differs from the sent one",
                            ack.client_msg_id
                        ));
                    }
                }
                None => f.violation(format!(
                    "(a) {} of {}: ACKed but not stored",
                    ack.client_msg_id, log.user
                )),
            }
        }
        let acked: HashSet<&str> = log.acks.iter().map(|a| a.client_msg_id.as_str()).collect();
        for s in &log.sent {
            if !acked.contains(s.key.as_str()) {
                f.violation(format!("(f) {}: sent by {} but never ACKed", s.key, log.name));
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
                    "(d) {} in {channel}: delivered {} messages, stored {}; first difference at index {:?}",
                    log.name,
                    got.len(),
                    want.len(),
                    first_diff
                ));
            }
        }
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
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(channel: &str, seq: i64, sender: &str, key: &str) -> RecvMessage {
        RecvMessage {
            message_id: uuid::Uuid::from_u128(seq as u128),
            channel_id: channel.into(),
            sender_id: sender.into(),
            seq,
            body: format!("b-{key}"),
            ts: 0,
            client_msg_id: key.into(),
            ..Default::default()
        }
    }

    fn clean() -> (HashMap<String, Vec<RecvMessage>>, Vec<ClientLog>) {
        let history = HashMap::from([("c".to_owned(), vec![msg("c", 1, "u", "k1"), msg("c", 2, "u", "k2")])]);
        let log = ClientLog {
            name: "u/0".into(),
            user: "u".into(),
            channels: vec!["c".into()],
            sent: ["k1", "k2"]
                .iter()
                .map(|k| Sent {
                    key: (*k).into(),
                    channel: "c".into(),
                    body: format!("b-{k}"),
                })
                .collect(),
            acks: [1, 2]
                .iter()
                .map(|&seq| Ack {
                    client_msg_id: format!("k{seq}"),
                    message_id: uuid::Uuid::from_u128(seq as u128),
                    channel_id: "c".into(),
                    seq,
                    ts: 0,
                    duplicate: false,
                    attempts: 1,
                })
                .collect(),
            delivered: HashMap::from([(
                "c".to_owned(),
                vec![(1, uuid::Uuid::from_u128(1)), (2, uuid::Uuid::from_u128(2))],
            )]),
            ..ClientLog::default()
        };
        (history, vec![log])
    }

    #[test]
    fn a_clean_history_passes() {
        let (history, logs) = clean();
        let f = check(&history, &logs);
        assert!(f.violations.is_empty(), "{:?}", f.violations);
        assert_eq!((f.messages_stored, f.acks, f.sends), (2, 2, 2));
    }

    #[test]
    fn each_kind_of_violation_is_caught() {
        // (c) and (b): a gap and a key stored twice.
        let (mut history, logs) = clean();
        history.get_mut("c").unwrap().push(msg("c", 4, "u", "k1"));
        let f = check(&history, &logs);
        assert!(f.violations.iter().any(|v| v.starts_with("(c)")), "{:?}", f.violations);
        assert!(f.violations.iter().any(|v| v.starts_with("(b)")), "{:?}", f.violations);

        // (a): an ACKed message missing.
        let (mut history, logs) = clean();
        history.get_mut("c").unwrap().pop();
        let f = check(&history, &logs);
        assert!(f.violations.iter().any(|v| v.starts_with("(a)")), "{:?}", f.violations);

        // (d): a device missed a message / got one twice.
        let (history, mut logs) = clean();
        logs[0]
            .delivered
            .get_mut("c")
            .unwrap()
            .push((2, uuid::Uuid::from_u128(2)));
        let f = check(&history, &logs);
        assert!(f.violations.iter().any(|v| v.starts_with("(d)")), "{:?}", f.violations);

        // (e): a watermark went back.
        let (history, mut logs) = clean();
        logs[0].receipts = vec![
            ("c".into(), "v".into(), ReceiptKind::Read, 2),
            ("c".into(), "v".into(), ReceiptKind::Read, 1),
        ];
        let f = check(&history, &logs);
        assert!(f.violations.iter().any(|v| v.starts_with("(e)")), "{:?}", f.violations);

        // (f): a send never ACKed.
        let (history, mut logs) = clean();
        logs[0].acks.pop();
        let f = check(&history, &logs);
        assert!(f.violations.iter().any(|v| v.starts_with("(f)")), "{:?}", f.violations);
    }
}
