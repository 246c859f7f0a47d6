//! Receipts (guarantee 6): watermarks only move forward, read implies
//! delivered, RECEIPT reaches the right sessions.

use std::time::Duration;

use serde_json::json;

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, Backend};

on_both_stores!(
    receipts_move_watermarks_forward_and_reach_the_right_sessions,
    receipt_errors,
    concurrent_reads_from_two_devices_never_show_a_watermark_going_back,
    users_marking_their_own_message_get_the_receipt_on_every_session,
);

async fn receipts_move_watermarks_forward_and_reach_the_right_sessions(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob_phone = app.connect("bob").await;
    let mut bob_laptop = app.connect("bob").await;
    let mut ids = Vec::new();
    for n in 0..3 {
        let ack = alice.send_and_ack("room", &format!("c{n}"), "x").await;
        ids.push(ack["messageId"].clone());
        bob_phone.recv_type("MSG_RECV").await;
        bob_laptop.recv_type("MSG_RECV").await;
    }
    // Sending does not move the sender's own watermarks.
    let check = app.connect("alice").await;
    assert_eq!(check.hello["channels"][0]["deliveredSeq"], 0);
    assert_eq!(check.hello["channels"][0]["readSeq"], 0);
    drop(check);

    // delivered → the sender's sessions only.
    bob_phone
        .send_json(json!({"type": "MSG_DELIVERED", "messageId": ids[1]}))
        .await;
    let receipt = alice.recv_type("RECEIPT").await;
    assert_eq!(receipt["kind"], "delivered");
    assert_eq!(receipt["channelId"], "room");
    assert_eq!(receipt["userId"], "bob");
    assert_eq!(receipt["messageId"], ids[1]);
    assert_eq!(receipt["seq"], 2);
    assert!(receipt["ts"].as_i64().expect("ts") > 1_600_000_000_000);
    bob_laptop.expect_silence(Duration::from_millis(200)).await;

    // Going backwards moves nothing and sends nothing.
    bob_phone
        .send_json(json!({"type": "MSG_DELIVERED", "messageId": ids[0]}))
        .await;
    bob_phone
        .send_json(json!({"type": "MSG_DELIVERED", "messageId": ids[1]}))
        .await;
    alice.expect_silence(Duration::from_millis(300)).await;

    // read (also moving delivered) → one read RECEIPT to the sender and the reader's other sessions.
    bob_phone
        .send_json(json!({"type": "MSG_READ", "messageId": ids[2]}))
        .await;
    let to_sender = alice.recv_type("RECEIPT").await;
    assert_eq!(to_sender["kind"], "read");
    assert_eq!(to_sender["seq"], 3);
    let to_other = bob_laptop.recv_type("RECEIPT").await;
    assert_eq!(to_other["kind"], "read");
    assert_eq!(to_other["messageId"], ids[2]);
    alice.expect_silence(Duration::from_millis(200)).await;
    bob_phone.expect_silence(Duration::from_millis(100)).await;

    // Reading an older message moves nothing.
    bob_laptop
        .send_json(json!({"type": "MSG_READ", "messageId": ids[0]}))
        .await;
    alice.expect_silence(Duration::from_millis(300)).await;
    let hello = app.connect("bob").await.hello;
    assert_eq!(hello["channels"][0]["deliveredSeq"], 3);
    assert_eq!(hello["channels"][0]["readSeq"], 3);
    app.stop().await;
}

async fn receipt_errors(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    app.create_channel("secret", &["carol"]).await;
    let mut carol = app.connect("carol").await;
    let secret = carol.send_and_ack("secret", "s1", "x").await;
    let mut alice = app.connect("alice").await;
    let unknown = uuid::Uuid::now_v7().to_string();
    alice.send_json(json!({"type": "MSG_READ", "messageId": unknown})).await;
    let err = alice.recv_type("ERROR").await;
    assert_eq!(err["code"], "not_found");
    assert_eq!(err["messageId"], unknown);
    alice
        .send_json(json!({"type": "MSG_DELIVERED", "messageId": secret["messageId"]}))
        .await;
    assert_eq!(alice.recv_type("ERROR").await["code"], "forbidden");
    carol.expect_silence(Duration::from_millis(200)).await;
    let hello = app.connect("carol").await.hello;
    assert_eq!(hello["channels"][0]["deliveredSeq"], 0);
    app.stop().await;
}

/// Two devices of one user reading at the same time: the RECEIPTs reach the
/// sender in the order their moves were committed, so the read watermark the
/// sender sees never goes back.
async fn concurrent_reads_from_two_devices_never_show_a_watermark_going_back(backend: Backend) {
    use futures_util::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    const N: usize = 300;
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let mut ids = Vec::new();
    for n in 0..N {
        alice.send_msg("room", &format!("m{n}"), "x").await;
    }
    for _ in 0..N {
        ids.push(alice.recv_type("MSG_ACK").await["messageId"].clone());
    }
    let mut phone = app.connect("bob").await;
    let mut laptop = app.connect("bob").await;
    // Both devices read every message, in step, as fast as they can.
    for id in &ids {
        let frame = json!({"type": "MSG_READ", "messageId": id}).to_string();
        phone.stream.feed(Message::text(frame.clone())).await.expect("feed");
        laptop.stream.feed(Message::text(frame)).await.expect("feed");
    }
    let (a, b) = tokio::join!(phone.stream.flush(), laptop.stream.flush());
    a.expect("flush");
    b.expect("flush");
    let mut last = 0;
    loop {
        let receipt = alice.recv_type("RECEIPT").await;
        let seq = receipt["seq"].as_i64().expect("seq");
        assert!(seq > last, "read watermark went from {last} back to {seq}");
        last = seq;
        if seq == N as i64 {
            break;
        }
    }
    app.stop().await;
}

/// A receipt goes to "the sessions of that message's sender" (the spec), so
/// when users mark their own message every one of their sessions gets it,
/// the one that sent the receipt included; other members get nothing.
async fn users_marking_their_own_message_get_the_receipt_on_every_session(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut phone = app.connect("alice").await;
    let mut laptop = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let ack = phone.send_and_ack("room", "c1", "note to self").await;
    laptop.recv_type("MSG_RECV").await;
    bob.recv_type("MSG_RECV").await;
    for (kind, frame) in [("delivered", "MSG_DELIVERED"), ("read", "MSG_READ")] {
        phone
            .send_json(json!({"type": frame, "messageId": ack["messageId"]}))
            .await;
        for session in [&mut phone, &mut laptop] {
            let receipt = session.recv_type("RECEIPT").await;
            assert_eq!(
                (
                    receipt["kind"].as_str(),
                    receipt["userId"].as_str(),
                    receipt["seq"].as_i64()
                ),
                (Some(kind), Some("alice"), Some(1)),
                "{receipt}"
            );
            assert_eq!(receipt["messageId"], ack["messageId"]);
        }
        bob.expect_silence(Duration::from_millis(200)).await;
    }
    app.stop().await;
}
