//! Fan-out (guarantee 5): who gets MSG_RECV, membership changes taking effect
//! at once, and a slow session closed with 1013 without slowing the others.

use std::time::Duration;

use futures_util::SinkExt;
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, spawn_app_with, Backend};

on_both_stores!(
    every_session_of_every_member_but_the_sending_one,
    membership_changes_apply_at_once,
    a_slow_session_is_closed_with_1013_and_others_keep_receiving,
    a_session_that_sends_and_receives_sees_the_channel_in_seq_order,
);

/// Two members pipeline sends into one channel at once, so group commit puts
/// both senders' messages in the same batches. Each session must see the
/// channel's seqs, its own ACKs and the other's MSG_RECVs together, strictly
/// increasing: an ACK for seq n arriving before the MSG_RECV of seq n-1 looks
/// like a gap to a client (protocol.md section 4.4).
async fn a_session_that_sends_and_receives_sees_the_channel_in_seq_order(backend: Backend) {
    const SENDS: usize = 150;
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    // Both sessions exist before either sends: a message committed before a
    // session registered is not fanned out to it (that session catches up
    // with SYNC from HELLO's lastSeq), so a session connected while the other
    // was already sending would wait forever for frames it is not owed.
    let mut clients = Vec::new();
    for user in ["alice", "bob"] {
        clients.push((user, app.connect(user).await));
    }
    let mut tasks = Vec::new();
    for (user, mut client) in clients {
        assert_eq!(client.hello["channels"][0]["lastSeq"], 0, "{user}: {}", client.hello);
        tasks.push(tokio::spawn(async move {
            for n in 0..SENDS {
                client.send_msg("room", &format!("{user}-{n}"), "x").await;
            }
            let mut seqs = Vec::with_capacity(2 * SENDS);
            let mut acks = 0;
            while seqs.len() < 2 * SENDS {
                let frame = client.recv().await;
                match frame["type"].as_str() {
                    Some("MSG_ACK") => acks += 1,
                    Some("MSG_RECV") => {}
                    _ => panic!("{user}: unexpected {frame}"),
                }
                seqs.push(frame["seq"].as_i64().expect("seq"));
            }
            assert_eq!(acks, SENDS, "{user}");
            let out_of_order: Vec<_> = seqs.windows(2).filter(|w| w[1] <= w[0]).collect();
            assert!(out_of_order.is_empty(), "{user} saw seqs go back: {out_of_order:?}");
            assert_eq!(seqs.last().copied(), Some(2 * SENDS as i64), "{user}");
        }));
    }
    for task in tasks {
        task.await.expect("client");
    }
    app.stop().await;
}

async fn every_session_of_every_member_but_the_sending_one(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob", "carol"]).await;
    let mut alice_phone = app.connect("alice").await;
    let mut alice_laptop = app.connect("alice").await;
    let mut bob1 = app.connect("bob").await;
    let mut bob2 = app.connect("bob").await;
    let mut eve = app.connect("eve").await;
    let ack = alice_phone.send_and_ack("room", "c-1", "hi all").await;
    for (name, client) in [
        ("alice's other session", &mut alice_laptop),
        ("bob1", &mut bob1),
        ("bob2", &mut bob2),
    ] {
        let recv = client.recv_type("MSG_RECV").await;
        assert_eq!(recv["messageId"], ack["messageId"], "{name}");
        assert_eq!(recv["channelId"], "room");
        assert_eq!(recv["senderId"], "alice");
        assert_eq!(recv["seq"], 1);
        assert_eq!(recv["body"], "hi all");
        assert_eq!(recv["ts"], ack["ts"]);
        assert_eq!(recv["clientMsgId"], "c-1");
    }
    // Not the sending session (it has the ACK), never a non-member.
    alice_phone.expect_silence(Duration::from_millis(300)).await;
    eve.expect_silence(Duration::from_millis(100)).await;
    app.stop().await;
}

async fn membership_changes_apply_at_once(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let mut carol = app.connect("carol").await;
    alice.send_and_ack("room", "c-1", "one").await;
    bob.recv_type("MSG_RECV").await;

    assert_eq!(app.delete_member("room", "bob").await, 204);
    assert_eq!(app.delete_member("room", "bob").await, 204, "also when not a member");
    assert_eq!(bob.recv_type("MEMBER").await["op"], "leave");
    assert_eq!(bob.recv_type("CHANNEL_REMOVED").await["reason"], "removed");
    assert_eq!(alice.recv_type("MEMBER").await["userId"], "bob");
    assert_eq!(app.put_member("room", "carol").await, 204);
    assert_eq!(app.put_member("room", "carol").await, 204, "also when already a member");
    assert_eq!(carol.recv_type("CHANNEL_ADDED").await["channel"]["channelId"], "room");
    assert_eq!(carol.recv_type("MEMBER").await["op"], "join");
    assert_eq!(alice.recv_type("MEMBER").await["userId"], "carol");
    alice.send_and_ack("room", "c-2", "two").await;
    let recv = carol.recv_type("MSG_RECV").await;
    assert_eq!(recv["seq"], 2);
    bob.expect_silence(Duration::from_millis(300)).await;
    // A removed member cannot sync either.
    bob.send_json(chatd_testkit::sync("room", 0, None)).await;
    assert_eq!(bob.recv_type("ERROR").await["code"], "forbidden");
    // Unknown channel: 404.
    assert_eq!(app.put_member("nope", "carol").await, 404);
    assert_eq!(app.delete_member("nope", "carol").await, 404);
    app.stop().await;
}

async fn a_slow_session_is_closed_with_1013_and_others_keep_receiving(backend: Backend) {
    const SENDS: usize = 1500;
    let app = spawn_app_with(backend, |c| {
        c.outbound_queue = 16;
        c.max_sends_in_flight = 100;
        c.rate_limit_per_sec = 0;
    })
    .await;
    app.create_channel("room", &["alice", "fast", "slow"]).await;
    let mut slow = app.connect("slow").await;
    let fast = app.connect("fast").await;
    let mut alice = app.connect("alice").await;
    // The fast member reads everything as it comes.
    let fast_reader = tokio::spawn(async move {
        let mut fast = fast;
        let mut seqs = Vec::with_capacity(SENDS);
        while seqs.len() < SENDS {
            let frame = fast.recv().await;
            assert_eq!(frame["type"], "MSG_RECV");
            seqs.push(frame["seq"].as_i64().expect("seq"));
        }
        seqs
    });
    // 16 KiB bodies: the slow member's socket buffers fill, then its queue.
    let sender = tokio::spawn(async move {
        let body = "s".repeat(16_000);
        for chunk in 0..(SENDS / 100) {
            for n in 0..100 {
                let frame = json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": format!("m-{chunk}-{n}"), "body": body});
                alice.stream.feed(Message::text(frame.to_string())).await.expect("feed");
            }
            alice.stream.flush().await.expect("flush");
            for _ in 0..100 {
                assert_eq!(alice.recv().await["type"], "MSG_ACK");
            }
        }
        alice
    });
    // Wait until the server dropped the slow session (3 sessions → 2) ...
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while app.state.hub.session_count() > 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the slow session was never closed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // ... then it reads its backlog and finds the close frame.
    assert_eq!(slow.recv_close_code().await, 1013);
    let _alice = sender.await.expect("sender");
    let seqs = tokio::time::timeout(Duration::from_secs(60), fast_reader)
        .await
        .expect("fast member got everything")
        .expect("task");
    assert_eq!(
        seqs,
        (1..=SENDS as i64).collect::<Vec<_>>(),
        "the fast member got every message in order"
    );
    // And recovers by reconnecting and syncing.
    let mut again = app.connect("slow").await;
    let state = &again.hello["channels"][0];
    assert_eq!(state["lastSeq"], SENDS as i64);
    again
        .send_json(chatd_testkit::sync("room", SENDS as i64 - 1, None))
        .await;
    let batch = again.recv_type("SYNC_BATCH").await;
    assert_eq!(batch["messages"][0]["seq"], SENDS as i64);
    app.stop().await;
}
