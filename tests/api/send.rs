//! The send path: ACK after commit, idempotency (guarantee 2), gapless
//! sequence under concurrent load (guarantee 3), order per connection (4).

use std::collections::HashSet;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

use chatd_testkit::on_both_stores;
use chatd_testkit::{seqs, spawn_app, Backend, ADMIN_TOKEN};

on_both_stores!(
    ack_carries_ids_after_the_message_is_stored,
    retry_on_same_and_new_connection_is_a_duplicate,
    same_key_with_other_body_or_channel_is_a_conflict,
    two_senders_may_share_a_client_msg_id,
    concurrent_copies_store_one_message,
    gapless_sequence_under_concurrent_pipelined_load,
    non_member_and_unknown_channel_are_forbidden_alike,
    retry_after_leaving_the_channel_is_still_a_duplicate,
    client_ts_is_ignored_and_ts_never_decreases,
    a_refused_send_is_answered_by_its_stored_key_first,
);

async fn ack_carries_ids_after_the_message_is_stored(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let ack = alice.send_and_ack("room", "c-1", "hello").await;
    assert_eq!(ack["channelId"], "room");
    assert_eq!(ack["seq"], 1);
    assert_eq!(ack["duplicate"], false);
    let message_id = ack["messageId"].as_str().expect("messageId");
    let parsed = uuid::Uuid::parse_str(message_id).expect("uuid");
    assert_eq!(parsed.get_version_num(), 7, "messageId is a UUIDv7");
    assert_eq!(message_id, message_id.to_lowercase());
    assert!(ack["ts"].as_i64().expect("ts") > 1_600_000_000_000, "ts is in ms");
    // The ACK came after the commit: the row is visible to any reader now.
    let stored = app.all_messages("room").await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0]["messageId"], message_id);
    assert_eq!(stored[0]["ts"], ack["ts"]);
    assert_eq!(stored[0]["senderId"], "alice");
    assert_eq!(stored[0]["body"], "hello");
    assert_eq!(stored[0]["clientMsgId"], "c-1");
    app.stop().await;
}

async fn retry_on_same_and_new_connection_is_a_duplicate(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut bob = app.connect("bob").await;
    let mut alice = app.connect("alice").await;
    let first = alice.send_and_ack("room", "c-1", "hello").await;
    let recv = bob.recv_type("MSG_RECV").await;
    assert_eq!(recv["messageId"], first["messageId"]);

    let again = alice.send_and_ack("room", "c-1", "hello").await;
    drop(alice);
    let mut alice2 = app.connect("alice").await;
    let third = alice2.send_and_ack("room", "c-1", "hello").await;
    for retry in [&again, &third] {
        assert_eq!(retry["duplicate"], true);
        assert_eq!(retry["messageId"], first["messageId"]);
        assert_eq!(retry["seq"], first["seq"]);
        assert_eq!(retry["ts"], first["ts"]);
    }
    // No new row, no new MSG_RECV.
    assert_eq!(app.all_messages("room").await.len(), 1);
    bob.expect_silence(std::time::Duration::from_millis(300)).await;
    // A new message still takes the next seq: the duplicates used none.
    let next = alice2.send_and_ack("room", "c-2", "next").await;
    assert_eq!(next["seq"], 2);
    app.stop().await;
}

async fn same_key_with_other_body_or_channel_is_a_conflict(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    app.create_channel("other", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    alice.send_and_ack("room", "c-1", "hello").await;
    alice.send_msg("room", "c-1", "changed").await;
    let err = alice.recv_type("ERROR").await;
    assert_eq!(err["code"], "idempotency_conflict");
    assert_eq!(err["clientMsgId"], "c-1");
    assert_eq!(err["retryable"], false);
    alice.send_msg("other", "c-1", "hello").await;
    let err = alice.recv_type("ERROR").await;
    assert_eq!(err["code"], "idempotency_conflict");
    assert_eq!(app.all_messages("room").await.len(), 1);
    assert_eq!(app.all_messages("other").await.len(), 0);
    assert_eq!(
        app.all_messages("room").await[0]["body"],
        "hello",
        "stored message unchanged"
    );
    app.stop().await;
}

async fn two_senders_may_share_a_client_msg_id(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let a = alice.send_and_ack("room", "same", "from alice").await;
    let _ = bob.recv_type("MSG_RECV").await;
    let b = bob.send_and_ack("room", "same", "from bob").await;
    assert_eq!(a["duplicate"], false);
    assert_eq!(b["duplicate"], false);
    assert_ne!(a["messageId"], b["messageId"]);
    assert_eq!(seqs(&app.all_messages("room").await), vec![1, 2]);
    app.stop().await;
}

async fn concurrent_copies_store_one_message(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let mut clients = Vec::new();
    for _ in 0..6 {
        clients.push(app.connect("alice").await);
    }
    // Every connection sends the same send at once.
    let frame = json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "dup", "body": "once"}).to_string();
    let mut tasks = Vec::new();
    for mut client in clients {
        let frame = frame.clone();
        tasks.push(tokio::spawn(async move {
            client.stream.send(Message::text(frame)).await.expect("send");
            loop {
                let f = client.recv().await;
                if f["type"] == "MSG_ACK" {
                    return f;
                }
                // Another copy's MSG_RECV may arrive first on this session.
                assert_eq!(f["type"], "MSG_RECV", "{f}");
            }
        }));
    }
    let mut acks = Vec::new();
    for task in tasks {
        acks.push(task.await.expect("task"));
    }
    let ids: HashSet<_> = acks.iter().map(|a| a["messageId"].clone()).collect();
    assert_eq!(ids.len(), 1, "every ACK carries the same messageId: {acks:?}");
    assert_eq!(
        acks.iter().filter(|a| a["duplicate"] == false).count(),
        1,
        "exactly one copy was stored"
    );
    assert!(acks.iter().all(|a| a["seq"] == 1));
    assert_eq!(app.all_messages("room").await.len(), 1);
    app.stop().await;
}

async fn gapless_sequence_under_concurrent_pipelined_load(backend: Backend) {
    const CONNECTIONS: usize = 8;
    const SENDS: usize = 200;
    let app = spawn_app(backend).await;
    let users: Vec<String> = (0..CONNECTIONS).map(|i| format!("user{i}")).collect();
    let members: Vec<&str> = users.iter().map(String::as_str).collect();
    app.create_channel("load", &members).await;
    let mut clients = Vec::new();
    for user in &users {
        clients.push(app.connect(user).await);
    }
    let mut tasks = Vec::new();
    for (i, client) in clients.into_iter().enumerate() {
        tasks.push(tokio::spawn(async move {
            let (mut sink, mut stream) = client.stream.split();
            let writer = tokio::spawn(async move {
                for n in 0..SENDS {
                    let frame = json!({"type": "MSG_SEND", "channelId": "load", "clientMsgId": format!("u{i}-{n}"), "body": format!("message {n} from {i}")});
                    sink.feed(Message::text(frame.to_string())).await.expect("feed");
                }
                sink.flush().await.expect("flush");
                sink
            });
            let mut acks: Vec<Value> = Vec::new();
            let mut recv_seqs: Vec<i64> = Vec::new();
            let expected_recv = (CONNECTIONS - 1) * SENDS;
            while acks.len() < SENDS || recv_seqs.len() < expected_recv {
                let next = tokio::time::timeout(std::time::Duration::from_secs(60), stream.next())
                    .await
                    .expect("frame within 60 s")
                    .expect("stream open")
                    .expect("frame");
                let Message::Text(text) = next else { continue };
                let frame: Value = serde_json::from_str(text.as_str()).expect("json");
                match frame["type"].as_str() {
                    Some("MSG_ACK") => acks.push(frame),
                    Some("MSG_RECV") => recv_seqs.push(frame["seq"].as_i64().expect("seq")),
                    _ => panic!("unexpected {frame}"),
                }
            }
            let _sink = writer.await.expect("writer");
            (acks, recv_seqs)
        }));
    }
    let mut all_seqs = Vec::new();
    for (i, task) in tasks.into_iter().enumerate() {
        let (acks, recv_seqs) = task.await.expect("client task");
        // ACKs come back in send order with increasing seq.
        for (n, ack) in acks.iter().enumerate() {
            assert_eq!(ack["clientMsgId"], format!("u{i}-{n}"), "ACK order on connection {i}");
            assert_eq!(ack["duplicate"], false);
        }
        let mine = seqs(&acks);
        assert!(
            mine.windows(2).all(|w| w[0] < w[1]),
            "seqs increase in send order on connection {i}"
        );
        // Every session received the others' messages in seq order.
        assert!(
            recv_seqs.windows(2).all(|w| w[0] < w[1]),
            "MSG_RECV in seq order on connection {i}"
        );
        all_seqs.extend(mine);
    }
    all_seqs.sort_unstable();
    let n = (CONNECTIONS * SENDS) as i64;
    assert_eq!(all_seqs, (1..=n).collect::<Vec<_>>(), "ACK seqs are exactly 1..N");
    let history = app.all_messages("load").await;
    assert_eq!(seqs(&history), (1..=n).collect::<Vec<_>>(), "history is exactly 1..N");
    let (status, channel) = {
        let res = app
            .http
            .get(app.url("/v1/channels/load"))
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .expect("http");
        (res.status(), res.json::<Value>().await.expect("json"))
    };
    assert_eq!(status, 200);
    assert_eq!(channel["lastSeq"], n);
    app.stop().await;
}

async fn non_member_and_unknown_channel_are_forbidden_alike(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let mut mallory = app.connect("mallory").await;
    mallory.send_msg("room", "m-1", "let me in").await;
    let a = mallory.recv_type("ERROR").await;
    mallory.send_msg("no-such-room", "m-2", "hello?").await;
    let b = mallory.recv_type("ERROR").await;
    assert_eq!(a["code"], "forbidden");
    assert_eq!(b["code"], "forbidden");
    assert_eq!(
        a["message"], b["message"],
        "unknown and not-a-member are not told apart"
    );
    assert_eq!(a["clientMsgId"], "m-1");
    assert_eq!(app.all_messages("room").await.len(), 0);
    // A refused send used up no seq.
    let mut alice = app.connect("alice").await;
    assert_eq!(alice.send_and_ack("room", "a-1", "first").await["seq"], 1);
    app.stop().await;
}

async fn retry_after_leaving_the_channel_is_still_a_duplicate(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    let first = alice.send_and_ack("room", "c-1", "hello").await;
    assert_eq!(app.delete_member("room", "alice").await, 204);
    assert_eq!(alice.recv_type("MEMBER").await["op"], "leave");
    assert_eq!(alice.recv_type("CHANNEL_REMOVED").await["reason"], "removed");
    let retry = alice.send_and_ack("room", "c-1", "hello").await;
    assert_eq!(retry["duplicate"], true);
    assert_eq!(retry["messageId"], first["messageId"]);
    alice.send_msg("room", "c-2", "new").await;
    assert_eq!(alice.recv_type("ERROR").await["code"], "forbidden");
    app.stop().await;
}

async fn client_ts_is_ignored_and_ts_never_decreases(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    alice
        .send_json(json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "t-1", "body": "x", "ts": 5, "seq": 99, "messageId": "forged"}))
        .await;
    let ack = alice.recv_type("MSG_ACK").await;
    assert!(ack["ts"].as_i64().expect("ts") > 1_600_000_000_000);
    assert_eq!(ack["seq"], 1);
    let mut last = 0;
    for n in 0..20 {
        let ack = alice.send_and_ack("room", &format!("t-{}", n + 2), "y").await;
        let ts = ack["ts"].as_i64().expect("ts");
        assert!(ts >= last, "ts never decreases as seq grows");
        last = ts;
    }
    app.stop().await;
}

/// Guarantee 2 says the idempotency key "is looked up before anything else
/// about the send", so a stored key answers before the send's own checks:
/// `idempotency_conflict` when the frame is another message, the original
/// ACK (`duplicate: true`) when it is the stored one, also after
/// `max_body_bytes` was lowered. Nothing new is stored.
async fn a_refused_send_is_answered_by_its_stored_key_first(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let long = "L".repeat(100);
    let original = alice.send_and_ack("room", "k", &long).await;
    // The same key on frames that fail their own checks.
    for (what, frame) in [
        (
            "an empty body",
            json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "k", "body": ""}),
        ),
        (
            "a body with U+0000",
            json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "k", "body": "a\u{0}b"}),
        ),
        (
            "a bad channel id",
            json!({"type": "MSG_SEND", "channelId": "no room", "clientMsgId": "k", "body": long}),
        ),
        (
            "no body",
            json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "k"}),
        ),
        (
            "a number for a body",
            json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "k", "body": 5}),
        ),
    ] {
        alice.send_json(frame).await;
        let reply = alice.recv().await;
        assert_eq!(reply["type"], "ERROR", "{what}: {reply}");
        assert_eq!(reply["code"], "idempotency_conflict", "{what}: {reply}");
        assert_eq!(reply["clientMsgId"], "k", "{what}: {reply}");
    }
    // Those conflicts stand for refusals, so they count as bad frames (else
    // a client could send them without end and never be closed); checked
    // below with a low max_bad_frames.
    // A key that is not stored: the frame's own refusal, as before.
    alice
        .send_json(json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "fresh", "body": ""}))
        .await;
    let reply = alice.recv().await;
    assert_eq!(
        (reply["code"].as_str(), reply["field"].as_str()),
        (Some("invalid_field"), Some("body")),
        "{reply}"
    );
    // The stored message, retried after the body limit went below its size.
    drop(alice);
    let app = app.restart(|c| c.max_body_bytes = 10).await;
    let mut alice = app.connect("alice").await;
    alice.send_msg("room", "k", &long).await;
    let ack = alice.recv().await;
    assert_eq!(ack["type"], "MSG_ACK", "{ack}");
    assert_eq!(ack["duplicate"], true);
    for field in ["messageId", "seq", "ts", "channelId"] {
        assert_eq!(ack[field], original[field], "{field}");
    }
    // A new message over the new limit is still refused.
    alice.send_msg("room", "k2", &long).await;
    assert_eq!(alice.recv().await["code"], "body_too_large");
    drop(alice);
    let app = app.restart(|c| c.max_bad_frames = 2).await;
    let mut alice = app.connect("alice").await;
    for _ in 0..3 {
        alice
            .send_json(json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "k", "body": ""}))
            .await;
        assert_eq!(alice.recv_type("ERROR").await["code"], "idempotency_conflict");
    }
    assert_eq!(
        alice.recv_close_code().await,
        1008,
        "three bad frames in a row, two allowed"
    );
    let stored = app.all_messages("room").await;
    assert_eq!(seqs(&stored), vec![1], "nothing new stored");
    assert_eq!(stored[0]["body"], long.as_str());
    app.stop().await;
}
