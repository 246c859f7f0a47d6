//! Store conformance suite: the same cases against PostgreSQL and SQLite.

use chatd::ids::{ChannelId, ClientMsgId, UserId};
use chatd::store::{NewMessage, SendOutcome, Store, StoreError};

use crate::helpers::{Backend, TestDb};
use crate::on_both_stores;

on_both_stores!(
    channels_and_members,
    batch_assigns_gapless_seqs_and_resolves_keys,
    ts_never_decreases_when_the_clock_steps_back,
    pages_report_has_more_exactly,
    watermarks_only_move_forward,
    bodies_round_trip_byte_identical,
    migrations_are_idempotent,
);

async fn open(backend: Backend) -> (Store, TestDb) {
    let db = TestDb::new(backend).await;
    let store = db.store().await;
    store.migrate().await.expect("migrate");
    (store, db)
}

fn ch(s: &str) -> ChannelId {
    ChannelId::parse(s).expect("channel id")
}

fn user(s: &str) -> UserId {
    UserId::parse(s).expect("user id")
}

fn send(sender: &str, channel: &str, key: &str, body: &str) -> NewMessage {
    NewMessage {
        sender_id: user(sender),
        channel_id: ch(channel),
        client_msg_id: ClientMsgId::parse(key).expect("key"),
        body: body.into(),
    }
}

async fn channels_and_members(backend: Backend) {
    let (store, _db) = open(backend).await;
    let created = store
        .create_channel(&ch("room"), &[user("bob"), user("alice")], 42)
        .await
        .expect("create");
    assert_eq!(created.members, vec![user("alice"), user("bob")]);
    assert!(matches!(
        store.create_channel(&ch("room"), &[], 43).await,
        Err(StoreError::Exists)
    ));
    let got = store.channel(&ch("room")).await.expect("read").expect("exists");
    assert_eq!(got.created_at, 42);
    assert_eq!(got.last_seq, 0);
    assert!(store.channel(&ch("nope")).await.expect("read").is_none());
    store
        .set_member(&ch("room"), &user("carol"), true, 50)
        .await
        .expect("add");
    store
        .set_member(&ch("room"), &user("carol"), true, 50)
        .await
        .expect("add again");
    store
        .set_member(&ch("room"), &user("bob"), false, 50)
        .await
        .expect("remove");
    assert!(matches!(
        store.set_member(&ch("nope"), &user("bob"), true, 50).await,
        Err(StoreError::NotFound)
    ));
    assert!(store.is_member(&ch("room"), &user("carol")).await.expect("member"));
    assert!(!store.is_member(&ch("room"), &user("bob")).await.expect("member"));
    assert!(!store.is_member(&ch("nope"), &user("carol")).await.expect("member"));
    let states = store.channel_states(&user("carol")).await.expect("states");
    assert_eq!(states.len(), 1);
    assert_eq!(states[0].channel_id, "room");
    store.ping().await.expect("ping");
}

async fn batch_assigns_gapless_seqs_and_resolves_keys(backend: Backend) {
    let (store, _db) = open(backend).await;
    store
        .create_channel(&ch("a"), &[user("alice"), user("bob")], 1)
        .await
        .expect("create");
    store
        .create_channel(&ch("b"), &[user("alice")], 1)
        .await
        .expect("create");
    let batch = vec![
        send("alice", "a", "k1", "one"),
        send("alice", "b", "k2", "two"),
        send("alice", "a", "k1", "one"),        // duplicate inside the batch
        send("alice", "a", "k1", "different"),  // conflict inside the batch
        send("bob", "b", "k3", "not a member"), // forbidden
        send("bob", "zzz", "k4", "unknown"),    // forbidden
        send("bob", "a", "k1", "same key, other sender"),
        send("alice", "a", "k5", "three"),
    ];
    let out = store.write_batch(&batch, 100).await.expect("batch");
    let SendOutcome::Stored(first) = &out.outcomes[0] else {
        panic!("{:?}", out.outcomes[0])
    };
    assert_eq!(first.seq, 1);
    assert!(matches!(&out.outcomes[1], SendOutcome::Stored(m) if m.seq == 1 && m.channel_id == ch("b")));
    assert!(matches!(&out.outcomes[2], SendOutcome::Duplicate(m) if m.message_id == first.message_id));
    assert_eq!(out.outcomes[3], SendOutcome::Conflict);
    assert_eq!(out.outcomes[4], SendOutcome::Forbidden);
    assert_eq!(out.outcomes[5], SendOutcome::Forbidden);
    assert!(matches!(&out.outcomes[6], SendOutcome::Stored(m) if m.seq == 2));
    assert!(
        matches!(&out.outcomes[7], SendOutcome::Stored(m) if m.seq == 3),
        "no seq used by refusals"
    );
    let members: Vec<_> = out
        .members
        .iter()
        .map(|(c, m)| (c.as_str().to_owned(), m.len()))
        .collect();
    assert_eq!(members, vec![("a".to_owned(), 2), ("b".to_owned(), 1)]);
    // Against stored rows in a later batch.
    let out = store
        .write_batch(
            &[
                send("alice", "a", "k1", "one"),
                send("alice", "b", "k1", "one"),
                send("alice", "a", "k6", "four"),
            ],
            200,
        )
        .await
        .expect("batch");
    assert!(matches!(&out.outcomes[0], SendOutcome::Duplicate(m) if m.seq == 1 && m.ts == 100));
    assert_eq!(out.outcomes[1], SendOutcome::Conflict);
    assert!(matches!(&out.outcomes[2], SendOutcome::Stored(m) if m.seq == 4));
    // A sender who left: a retry of a stored key still gets the original
    // (the key decides before membership); a new key is refused.
    store
        .set_member(&ch("a"), &user("bob"), false, 300)
        .await
        .expect("remove");
    let out = store
        .write_batch(
            &[
                send("bob", "a", "k1", "same key, other sender"),
                send("bob", "a", "k7", "after leaving"),
                send("bob", "b", "k1", "same key, other sender"),
                send("bob", "zzz", "k1", "same key, other sender"),
            ],
            300,
        )
        .await
        .expect("batch");
    assert!(matches!(&out.outcomes[0], SendOutcome::Duplicate(m) if m.seq == 2));
    assert_eq!(out.outcomes[1], SendOutcome::Forbidden);
    assert_eq!(out.outcomes[2], SendOutcome::Conflict);
    assert_eq!(out.outcomes[3], SendOutcome::Conflict);
    assert!(out.members.is_empty(), "nothing new stored");
    let (messages, more) = store.messages_after(&ch("a"), 0, 100).await.expect("read");
    assert!(!more);
    assert_eq!(messages.iter().map(|m| m.seq).collect::<Vec<_>>(), vec![1, 2, 3, 4]);
    assert_eq!(
        store.channel(&ch("a")).await.expect("read").expect("exists").last_seq,
        4
    );
    let by_key = store
        .message_by_key(&user("alice"), &ClientMsgId::parse("k1").expect("key"))
        .await
        .expect("read")
        .expect("stored");
    assert_eq!(by_key.message_id, first.message_id);
    assert_eq!(
        store.message(first.message_id).await.expect("read").expect("stored"),
        *first
    );
    assert!(store.message(uuid::Uuid::now_v7()).await.expect("read").is_none());
}

async fn ts_never_decreases_when_the_clock_steps_back(backend: Backend) {
    let (store, _db) = open(backend).await;
    store
        .create_channel(&ch("a"), &[user("alice")], 1)
        .await
        .expect("create");
    let first = store
        .write_batch(&[send("alice", "a", "k1", "x")], 5_000)
        .await
        .expect("batch");
    let later = store
        .write_batch(&[send("alice", "a", "k2", "x")], 4_000)
        .await
        .expect("batch");
    let (SendOutcome::Stored(a), SendOutcome::Stored(b)) = (&first.outcomes[0], &later.outcomes[0]) else {
        panic!()
    };
    assert_eq!(a.ts, 5_000);
    assert_eq!(b.ts, 5_000, "the clock stepped back; ts did not");
    assert_eq!(b.seq, 2);
}

async fn pages_report_has_more_exactly(backend: Backend) {
    let (store, _db) = open(backend).await;
    store
        .create_channel(&ch("a"), &[user("alice")], 1)
        .await
        .expect("create");
    let sends: Vec<_> = (0..10).map(|n| send("alice", "a", &format!("k{n}"), "x")).collect();
    store.write_batch(&sends, 10).await.expect("batch");
    let (page, more) = store.messages_after(&ch("a"), 0, 9).await.expect("read");
    assert_eq!((page.len(), more), (9, true));
    let (page, more) = store.messages_after(&ch("a"), 0, 10).await.expect("read");
    assert_eq!((page.len(), more), (10, false));
    let (page, more) = store.messages_after(&ch("a"), 8, 1).await.expect("read");
    assert_eq!((page[0].seq, more), (9, true));
    let (page, more) = store.messages_after(&ch("a"), 10, 5).await.expect("read");
    assert_eq!((page.len(), more), (0, false));
}

async fn watermarks_only_move_forward(backend: Backend) {
    let (store, _db) = open(backend).await;
    store
        .create_channel(&ch("a"), &[user("alice"), user("bob")], 1)
        .await
        .expect("create");
    let sends: Vec<_> = (0..5).map(|n| send("alice", "a", &format!("k{n}"), "x")).collect();
    let out = store.write_batch(&sends, 10).await.expect("batch");
    let m: Vec<_> = out
        .outcomes
        .iter()
        .map(|o| match o {
            SendOutcome::Stored(m) => m.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    let bob = user("bob");
    assert!(store.advance_watermark(&bob, &m[2], false).await.expect("delivered"));
    assert!(!store.advance_watermark(&bob, &m[1], false).await.expect("backwards"));
    assert!(!store.advance_watermark(&bob, &m[2], false).await.expect("same"));
    assert!(store.advance_watermark(&bob, &m[3], true).await.expect("read"));
    let state = &store.channel_states(&bob).await.expect("states")[0];
    assert_eq!((state.delivered_seq, state.read_seq), (4, 4), "read implies delivered");
    assert!(!store
        .advance_watermark(&bob, &m[0], true)
        .await
        .expect("read backwards"));
    assert!(store
        .advance_watermark(&bob, &m[4], false)
        .await
        .expect("delivered ahead of read"));
    let state = &store.channel_states(&bob).await.expect("states")[0];
    assert_eq!((state.delivered_seq, state.read_seq), (5, 4));
    let alice_state = &store.channel_states(&user("alice")).await.expect("states")[0];
    assert_eq!(
        (alice_state.delivered_seq, alice_state.read_seq),
        (0, 0),
        "sending moves no watermark"
    );
}

async fn bodies_round_trip_byte_identical(backend: Backend) {
    let (store, _db) = open(backend).await;
    store
        .create_channel(&ch("a"), &[user("alice")], 1)
        .await
        .expect("create");
    let bodies = [
        " leading and trailing spaces ",
        "tabs\tand\nnewlines\r\n",
        "e\u{301} vs \u{e9}",
        "\u{feff}BOM and zero\u{200b}width",
        "emoji 👩‍👩‍👧‍👦 and flags 🇫🇷",
        "RTL \u{202e}reversed\u{202c} text",
        "quotes \" ' ` and backslash \\ and %s %n",
        "<script>alert(1)</script>",
        "'; DROP TABLE messages; --",
        "\u{10ffff}\u{fffd}\u{1}\u{1f}",
        "ＡＢＣ full width",
    ];
    let sends: Vec<_> = bodies
        .iter()
        .enumerate()
        .map(|(n, b)| send("alice", "a", &format!("k{n}"), b))
        .collect();
    store.write_batch(&sends, 10).await.expect("batch");
    let (page, _) = store.messages_after(&ch("a"), 0, 100).await.expect("read");
    for (stored, body) in page.iter().zip(bodies) {
        assert_eq!(stored.body.as_bytes(), body.as_bytes());
    }
}

async fn migrations_are_idempotent(backend: Backend) {
    let (store, _db) = open(backend).await;
    store.migrate().await.expect("second run is a no-op");
    store.close().await;
}
