//! The client library's log entries against the real server: edit, delete
//! and react are ACKed like sends (and retried with the same key), every
//! entry reaches the other members as a typed event, and each client's
//! folded message state equals the state the server reads.

use std::time::Duration;

use chatd_client::{Client, ClientConfig, Event, MessageState, SendError};
use chatd_proto::protocol::{EntryKind, ErrorCode};
use tokio::sync::mpsc;

use chatd_testkit::on_both_stores;
use chatd_testkit::*;

on_both_stores!(the_client_edits_deletes_reacts_and_folds_the_state_the_server_reads);

fn config(app: &TestApp, user: &str) -> ClientConfig {
    let mut config = ClientConfig::new(app.ws_url(), app.token(user));
    config.backoff_initial = Duration::from_millis(20);
    config.backoff_max = Duration::from_millis(500);
    config.start_from = chatd_client::StartFrom::Beginning;
    config
}

/// Waits for the Changed event of `message_id` after the entry at `seq`.
async fn changed(events: &mut mpsc::Receiver<Event>, seq: i64) -> MessageState {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut seen = 0;
    loop {
        let event = tokio::time::timeout_at(deadline, events.recv())
            .await
            .expect("a Changed event in time")
            .expect("events open");
        match event {
            Event::Message(m) => seen = m.seq,
            Event::Changed { state, .. } if seen == seq => return *state,
            _ => {}
        }
    }
}

/// `state` compared with the server's read of the message as `user`.
async fn assert_matches_server(app: &TestApp, user: &str, state: &MessageState) {
    let (status, page) = app.history("room", &app.token(user), "afterSeq=0&limit=500").await;
    assert_eq!(status, 200);
    let read = page["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .find(|m| m["messageId"] == state.message_id.to_string())
        .expect("the message")
        .clone();
    assert_eq!(read["body"], state.body.as_str(), "{user}");
    assert_eq!(read.get("editedAt").and_then(|v| v.as_i64()), state.edited_at, "{user}");
    assert_eq!(read["deleted"].as_bool().unwrap_or(false), state.deleted, "{user}");
    assert_eq!(
        read["reactions"],
        serde_json::to_value(&state.reactions).expect("json"),
        "{user}"
    );
}

async fn the_client_edits_deletes_reacts_and_folds_the_state_the_server_reads(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let (alice, mut alice_events) = Client::connect(config(&app, "alice")).await.expect("alice");
    let (bob, mut bob_events) = Client::connect(config(&app, "bob")).await.expect("bob");

    let sent = alice.send("room", "helo").await.expect("send");
    let edited = alice.edit(sent.message_id, "hello").await.expect("edit");
    assert_eq!((edited.seq, edited.duplicate), (2, false));
    let state = changed(&mut bob_events, 2).await;
    assert_eq!(state.body, "hello");
    assert_eq!(
        changed(&mut alice_events, 2).await.body,
        "hello",
        "own entries fold too"
    );

    let reacted = bob.react(sent.message_id, "👍", true).await.expect("react");
    assert_eq!(reacted.seq, 3);
    bob.react(sent.message_id, "👍", true)
        .await
        .expect("a no-op add is ACKed");
    alice.react(sent.message_id, "🎉", true).await.expect("react");
    let alice_state = changed(&mut alice_events, 5).await;
    let bob_state = changed(&mut bob_events, 5).await;
    assert_eq!(alice_state.reactions.len(), 2);
    assert_eq!(alice_state.reactions[0].count, 1, "the no-op add counted once");
    assert!(bob_state.reactions[0].me && !alice_state.reactions[0].me);
    assert_matches_server(&app, "alice", &alice_state).await;
    assert_matches_server(&app, "bob", &bob_state).await;
    assert_eq!(alice.message("room", sent.message_id), Some(alice_state));

    // Refusals are not retried: bob may not edit alice's message.
    match bob.edit(sent.message_id, "mine").await {
        Err(SendError::Refused { code, .. }) => assert_eq!(code, ErrorCode::Forbidden),
        other => panic!("{other:?}"),
    }

    // A reconnecting client resyncs from its cursor and keeps a folded state
    // equal to the server's.
    bob.reconnect().await;
    let deleted = alice.delete(sent.message_id).await.expect("delete");
    let bob_state = changed(&mut bob_events, deleted.seq).await;
    assert!(bob_state.deleted && bob_state.body.is_empty() && bob_state.reactions.is_empty());
    assert_matches_server(&app, "bob", &bob_state).await;
    let alice_state = changed(&mut alice_events, deleted.seq).await;
    assert_matches_server(&app, "alice", &alice_state).await;

    // A fresh client that starts from the beginning folds the read states.
    let (carol_view, mut events) = Client::connect(config(&app, "alice")).await.expect("again");
    let mut kinds = Vec::new();
    while kinds.len() < deleted.seq as usize {
        match tokio::time::timeout(Duration::from_secs(20), events.recv()).await {
            Ok(Some(Event::Message(m))) => kinds.push(m.kind),
            Ok(Some(_)) => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(kinds[1], EntryKind::Edit);
    let state = carol_view.message("room", sent.message_id).expect("folded");
    assert!(state.deleted);
    assert_matches_server(&app, "alice", &state).await;
    alice.close().await;
    bob.close().await;
    carol_view.close().await;
}
