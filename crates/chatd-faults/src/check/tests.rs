//! The checker's own tests: clean histories pass, and each kind of
//! violation is caught.

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
