//! The client library's replies and threads (protocol §14) against the
//! real server: `send_with` quotes and answers in a thread, a refused
//! reference is a `Refused` send (not retried), and every client's folded
//! previews and thread summaries equal what the server reads, after edits
//! and deletes, live and from a fresh client's sync.

use std::time::Duration;

use chatd_client::{Client, ClientConfig, Event, MessageState, SendError, SendOptions};
use chatd_proto::protocol::ErrorCode;
use serde_json::Value;
use tokio::sync::mpsc;

use chatd_testkit::on_both_stores;
use chatd_testkit::*;

on_both_stores!(the_client_replies_in_threads_and_folds_previews_and_summaries);

fn config(app: &TestApp, user: &str) -> ClientConfig {
    let mut config = ClientConfig::new(app.ws_url(), app.token(user));
    config.backoff_initial = Duration::from_millis(20);
    config.backoff_max = Duration::from_millis(500);
    config.start_from = chatd_client::StartFrom::Beginning;
    config
}

/// Reads events until the message at `seq` was delivered and every
/// Changed event right after it; returns those states by id.
async fn changes_after(events: &mut mpsc::Receiver<Event>, seq: i64) -> Vec<MessageState> {
    let mut seen = 0;
    let mut states = Vec::new();
    loop {
        let wait = if seen == seq {
            Duration::from_millis(300)
        } else {
            Duration::from_secs(20)
        };
        match tokio::time::timeout(wait, events.recv()).await {
            Ok(Some(Event::Message(m))) if seen == seq => panic!("nothing after {seq} expected, got {m:?}"),
            Ok(Some(Event::Message(m))) => seen = m.seq,
            Ok(Some(Event::Changed { state, .. })) if seen == seq => states.push(*state),
            Ok(Some(_)) => {}
            Ok(None) => panic!("events closed"),
            Err(_) if seen == seq => return states,
            Err(_) => panic!("no message at {seq} in time"),
        }
    }
}

/// The server's read of `id` as `user`.
async fn server_read(app: &TestApp, user: &str, id: uuid::Uuid) -> Value {
    let (status, page) = app.history("room", &app.token(user), "afterSeq=0&limit=500").await;
    assert_eq!(status, 200);
    page["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .find(|m| m["messageId"] == id.to_string())
        .expect("the message")
        .clone()
}

/// `state`'s preview and summary equal the server's read.
async fn assert_matches_server(app: &TestApp, user: &str, state: &MessageState) {
    let read = server_read(app, user, state.message_id).await;
    let preview = serde_json::to_value(&state.reply_preview).expect("json");
    assert_eq!(
        read.get("replyPreview").cloned().unwrap_or(Value::Null),
        preview,
        "{user}"
    );
    let thread = serde_json::to_value(&state.thread).expect("json");
    assert_eq!(read.get("thread").cloned().unwrap_or(Value::Null), thread, "{user}");
    assert_eq!(read["body"], state.body.as_str(), "{user}");
}

async fn the_client_replies_in_threads_and_folds_previews_and_summaries(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    app.create_channel("other", &["alice"]).await;
    let (alice, mut alice_events) = Client::connect(config(&app, "alice")).await.expect("alice");
    let (bob, mut bob_events) = Client::connect(config(&app, "bob")).await.expect("bob");

    let root = alice.send("room", "the root").await.expect("send");
    let quote = SendOptions {
        reply_to: Some(root.message_id),
        thread_id: Some(root.message_id),
        ..SendOptions::default()
    };
    let reply = bob.send_with("room", "a reply", quote).await.expect("reply");
    let bob_changes = changes_after(&mut bob_events, reply.seq).await;
    let alice_changes = changes_after(&mut alice_events, reply.seq).await;
    for (user, client, changes) in [("alice", &alice, alice_changes), ("bob", &bob, bob_changes)] {
        assert_eq!(changes.len(), 1, "{user}: the root's summary moved");
        assert_matches_server(&app, user, &changes[0]).await;
        let folded = client.message("room", reply.message_id).expect("folded");
        assert_eq!(folded.reply_to, Some(root.message_id));
        assert_eq!(folded.thread_id, Some(root.message_id));
        assert_matches_server(&app, user, &folded).await;
    }

    // An edit and a delete of the quoted message reach the quote.
    let edit = alice.edit(root.message_id, "the root, edited").await.expect("edit");
    let changes = changes_after(&mut bob_events, edit.seq).await;
    assert_eq!(changes.len(), 2, "the root and its quote");
    for state in &changes {
        assert_matches_server(&app, "bob", state).await;
    }
    let second = alice
        .send_with(
            "room",
            "another",
            SendOptions {
                reply_to: None,
                thread_id: Some(root.message_id),
                ..SendOptions::default()
            },
        )
        .await
        .expect("reply");
    changes_after(&mut bob_events, second.seq).await;
    let deleted = bob.delete(reply.message_id).await.expect("delete");
    let changes = changes_after(&mut alice_events, deleted.seq).await;
    let ids: Vec<uuid::Uuid> = changes.iter().map(|s| s.message_id).collect();
    assert_eq!(
        ids,
        [reply.message_id, root.message_id],
        "the deleted reply, then its root"
    );
    assert_eq!(changes[1].thread.as_ref().map(|t| t.reply_count), Some(1));
    for state in &changes {
        assert_matches_server(&app, "alice", state).await;
    }
    let gone = alice.delete(root.message_id).await.expect("delete root");
    changes_after(&mut bob_events, gone.seq).await;
    let quoting = bob.message("room", reply.message_id).expect("folded");
    assert_matches_server(&app, "bob", &quoting).await;

    // A refused reference is not retried.
    match bob
        .send_with(
            "room",
            "x",
            SendOptions {
                reply_to: Some(root.message_id),
                thread_id: None,
                ..SendOptions::default()
            },
        )
        .await
    {
        Err(SendError::Refused { code, .. }) => assert_eq!(code, ErrorCode::NotFound),
        other => panic!("{other:?}"),
    }
    let elsewhere = alice.send("other", "x").await.expect("send");
    let into_other = SendOptions {
        reply_to: None,
        thread_id: Some(elsewhere.message_id),
        ..SendOptions::default()
    };
    match bob.send_with("room", "x", into_other).await {
        Err(SendError::Refused { code, .. }) => assert_eq!(code, ErrorCode::InvalidField),
        other => panic!("{other:?}"),
    }

    // A fresh client folds the read states and matches the server.
    let (fresh, mut events) = Client::connect(config(&app, "bob")).await.expect("again");
    changes_after(&mut events, gone.seq).await;
    for id in [root.message_id, reply.message_id, second.message_id] {
        let state = fresh.message("room", id).expect("folded");
        assert_matches_server(&app, "bob", &state).await;
    }
    alice.close().await;
    bob.close().await;
    fresh.close().await;
}
