//! Unit tests of the per-channel message state ([`super::ChannelMessages`]).

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

/// A bounded state keeps the newest `limit` messages held: the one held
/// longest goes, entries of it change nothing afterwards, and nothing of
/// it stays in the quote index (a client of 100,000 messages in a
/// channel holds 3 here, where it held every one before the bound).
#[test]
fn a_bounded_state_forgets_the_message_held_longest() {
    let id = uuid::Uuid::from_u128;
    let mut log = ChannelMessages::bounded(3);
    for seq in 1..=100_000 {
        let quoting = RecvMessage {
            body: format!("message {seq}"),
            reply_to: (seq > 1).then(|| id(seq as u128 - 1)),
            ..entry(seq, EntryKind::Message, "a", None)
        };
        log.fold(&quoting, "me", None);
    }
    assert_eq!(log.len(), 3);
    let mut held: Vec<i64> = log.iter().map(|m| m.seq).collect();
    held.sort_unstable();
    assert_eq!(held, [99_998, 99_999, 100_000]);
    assert!(log.get(&id(1)).is_none());
    // quoted_by names only what is held: the quotes of 99,998 and 99,999
    assert_eq!(log.quoted_by.len(), 2, "{:?}", log.quoted_by.keys().collect::<Vec<_>>());
    // An edit of a forgotten message changes nothing; of a held one, it does.
    let edit = |seq: i64, target: u128| RecvMessage {
        body: "edited".into(),
        edited_at: Some(seq * 10),
        ..entry(seq, EntryKind::Edit, "a", Some(target))
    };
    assert_eq!(log.fold(&edit(100_001, 5), "me", None), Vec::<uuid::Uuid>::new());
    assert!(log.get(&id(5)).is_none());
    assert_eq!(log.fold(&edit(100_002, 99_999), "me", None), [id(99_999), id(100_000)]);
    assert_eq!(log.get(&id(99_999)).map(|m| m.body.as_str()), Some("edited"));
    // A message held again (a newer read of it) does not count twice.
    let again = RecvMessage {
        reactions: Some(Vec::new()),
        ..entry(100_000, EntryKind::Message, "a", None)
    };
    log.fold(&again, "me", Some(100_010));
    assert_eq!(log.len(), 3);
    assert!(
        log.get(&id(99_998)).is_some(),
        "nothing forgotten for a message already held"
    );
}

/// Without a bound (`ChannelMessages::default`) every message stays.
#[test]
fn an_unbounded_state_keeps_every_message() {
    let mut log = ChannelMessages::default();
    for seq in 1..=1_000 {
        log.fold(&entry(seq, EntryKind::Message, "a", None), "me", None);
    }
    assert_eq!(log.len(), 1_000);
}
