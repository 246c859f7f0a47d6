//! The client library's thread store (protocol §14, `chatd_client::thread`)
//! against the real server: a thread opened by a client that never saw its
//! replies reads them page by page, each once and in seq order; edits,
//! deletes, reactions and new replies that arrive later fold onto it; a
//! reply held back (slow mode) shows as pending, then once as a reply; an
//! unknown root is refused.

use std::time::Duration;

use chatd_client::{Client, ClientConfig, SendError, SendOptions, StartFrom, Thread};
use chatd_proto::protocol::ErrorCode;
use serde_json::json;

use chatd_testkit::on_both_stores;
use chatd_testkit::*;

on_both_stores!(a_client_thread_holds_each_reply_once_in_order_with_pending_replies);

fn seqs(thread: &Thread) -> Vec<i64> {
    thread.replies.iter().map(|r| r.seq).collect()
}

async fn a_client_thread_holds_each_reply_once_in_order_with_pending_replies(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "room", "owners": ["olive"], "members": ["alice", "bob"]}))
        .await;
    // alice writes a root, 25 replies in its thread and, between them,
    // plain messages: before bob's client exists.
    let mut alice = app.connect("alice").await;
    let root = alice.send_and_ack("room", "root", "the root").await;
    let root_id: uuid::Uuid = root["messageId"].as_str().expect("id").parse().expect("uuid");
    let mut reply_seqs = Vec::new();
    let mut reply_ids = Vec::new();
    for i in 0..25 {
        alice.send_and_ack("room", &format!("plain-{i}"), "plain").await;
        alice
            .send_json(
                json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": format!("r{i}"),
                "body": format!("reply {i}"), "threadId": root_id}),
            )
            .await;
        let ack = alice.recv_type("MSG_ACK").await;
        reply_seqs.push(ack["seq"].as_i64().expect("seq"));
        reply_ids.push(
            ack["messageId"]
                .as_str()
                .expect("id")
                .parse::<uuid::Uuid>()
                .expect("uuid"),
        );
    }

    // bob starts from now: he holds none of it; pages of 10.
    let mut config = ClientConfig::new(app.ws_url(), app.token("bob"));
    config.start_from = StartFrom::Now;
    config.sync_limit = 10;
    config.backoff_initial = Duration::from_millis(20);
    let (bob, mut events) = Client::connect(config).await.expect("connect");
    assert_eq!(bob.thread("room", root_id).await, None, "not opened yet");
    let thread = bob.open_thread("room", root_id).await.expect("open");
    assert_eq!(seqs(&thread), reply_seqs[15..].to_vec(), "the newest page, in order");
    assert!(thread.has_older);
    assert!(thread.replies.iter().all(|r| r.thread_id == Some(root_id)));
    let thread = bob.load_older_replies("room", root_id).await.expect("older");
    assert_eq!(seqs(&thread), reply_seqs[5..].to_vec());
    let thread = bob.load_older_replies("room", root_id).await.expect("older");
    assert_eq!(seqs(&thread), reply_seqs, "every reply once, in seq order");
    assert!(!thread.has_older);
    assert_eq!(thread.replies[3].body, "reply 3");
    // Nothing older is left: the same thread back.
    assert_eq!(bob.load_older_replies("room", root_id).await.expect("older"), thread);

    // Later entries fold onto the replies read: an edit, a delete, a
    // reaction; and a new reply comes at the end.
    for frame in [
        json!({"type": "MSG_EDIT", "clientMsgId": "e1", "messageId": reply_ids[2], "body": "reply 2, edited"}),
        json!({"type": "MSG_DELETE", "clientMsgId": "d1", "messageId": reply_ids[4]}),
        json!({"type": "MSG_REACT", "clientMsgId": "x1", "messageId": reply_ids[0], "emoji": "👍", "op": "add"}),
        json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "r-late", "body": "late reply", "threadId": root_id}),
    ] {
        alice.send_json(frame).await;
        alice.recv_type("MSG_ACK").await;
    }
    let thread = thread_until(&bob, &mut events, "room", root_id, "the later entries", |t| {
        t.replies.len() == 26
    })
    .await;
    assert_eq!(thread.replies[2].body, "reply 2, edited");
    assert!(thread.replies[2].edited_at.is_some());
    assert!(thread.replies[4].deleted && thread.replies[4].body.is_empty());
    assert_eq!(thread.replies[0].reactions.len(), 1);
    assert_eq!(thread.replies[25].body, "late reply");
    let mut sorted = seqs(&thread);
    sorted.dedup();
    assert_eq!(sorted, seqs(&thread), "no reply twice");

    // Slow mode holds bob's second reply back: pending, then once a reply.
    let (status, body) = app
        .request(
            "PATCH",
            "/v1/channels/room",
            Some(&app.token("olive")),
            Some(&json!({"slowModeMs": 2000}).to_string()),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let in_thread = SendOptions {
        thread_id: Some(root_id),
        ..SendOptions::default()
    };
    bob.send_with("room", "bob 1", in_thread.clone()).await.expect("first");
    let second = bob
        .submit_with("room", "b2", "bob 2", in_thread.clone())
        .await
        .expect("submitted");
    let held = thread_until(
        &bob,
        &mut events,
        "room",
        root_id,
        "bob 2 pending after a refusal",
        |t| t.pending.iter().any(|p| p.client_msg_id == "b2" && p.attempts >= 1),
    )
    .await;
    assert_eq!(held.pending.len(), 1, "{held:#?}");
    assert_eq!(held.pending[0].body, "bob 2");
    assert!(held.replies.iter().any(|r| r.body == "bob 1"));
    let ack = second.await.expect("sent after the wait");
    let thread = thread_until(&bob, &mut events, "room", root_id, "bob 2 a reply", |t| {
        t.pending.is_empty() && t.replies.iter().any(|r| r.message_id == ack.message_id)
    })
    .await;
    assert_eq!(thread.replies.iter().filter(|r| r.body == "bob 2").count(), 1);
    assert_eq!(thread.replies.len(), 28);

    // An unknown root: refused, not retried.
    match bob.open_thread("room", uuid::Uuid::now_v7()).await {
        Err(SendError::Refused { code, .. }) => assert_eq!(code, ErrorCode::NotFound),
        other => panic!("expected a refusal, got {other:?}"),
    }
    bob.close().await;
    app.stop().await;
}
