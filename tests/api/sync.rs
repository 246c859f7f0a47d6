//! Catch-up: HELLO's per-channel state, SYNC / SYNC_BATCH paging, the history
//! route, and a member who was offline recovering everything once, in order.

use std::collections::HashSet;

use serde_json::Value;

use chatd_testkit::on_both_stores;
use chatd_testkit::{seqs, spawn_app, spawn_app_with, sync, Backend, TestDb, ADMIN_TOKEN};

on_both_stores!(
    hello_reports_each_channels_state,
    sync_pages_through_history_in_order,
    history_route_pages_and_checks_membership,
    offline_member_recovers_all_30_messages_once_in_order,
    sync_after_send_on_the_same_connection_sees_it,
    a_sync_page_of_large_messages_stops_early,
    a_history_page_of_large_messages_stops_early,
    a_hello_too_large_for_the_write_buffer_is_refused_clearly,
);

/// Makes `user` a member of `count` channels with 59-character ids, written
/// straight to the database in two statements (through the API this would
/// take minutes); the schema's own tables, on either store.
async fn join_many_channels(db: &TestDb, backend: Backend, user: &str, count: u32) {
    const PREFIX: &str = "a-channel-with-a-long-name-so-that-the-hello-is-large-";
    let channels = format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {count}) \
         INSERT INTO channels (channel_id, created_at) SELECT '{PREFIX}' || i, 0 FROM n"
    );
    let members = format!(
        "INSERT INTO members (channel_id, user_id, joined_at) \
         SELECT channel_id, '{user}', 0 FROM channels WHERE channel_id LIKE '{PREFIX}%'"
    );
    match backend {
        Backend::Sqlite => {
            let pool = sqlx::SqlitePool::connect(&db.url).await.expect("sqlite");
            for sql in [&channels, &members] {
                sqlx::query(sql).execute(&pool).await.expect("insert");
            }
            pool.close().await;
        }
        Backend::Postgres => {
            let pool = sqlx::PgPool::connect(&db.url).await.expect("postgres");
            for sql in [&channels, &members] {
                sqlx::query(sql).execute(&pool).await.expect("insert");
            }
            pool.close().await;
        }
    }
}

/// A HELLO too large for the session's WebSocket write buffer
/// (`ws_write_buffer_bytes` + `outbound_queue_bytes`) gets an `ERROR`
/// `internal` and a close with 1011; before, tungstenite refused the frame
/// and the connection ended with neither. 25,000 channels make a HELLO of
/// about 3 MB: whole at the default 16 MiB, refused at the 2 MiB minimum.
async fn a_hello_too_large_for_the_write_buffer_is_refused_clearly(backend: Backend) {
    let app = spawn_app_with(backend, |_| {}).await;
    join_many_channels(&app.db, backend, "alice", 25_000).await;
    let alice = app.connect("alice").await;
    assert_eq!(alice.hello["channels"].as_array().map(Vec::len), Some(25_000));
    drop(alice);

    let app = app.restart(|c| c.outbound_queue_bytes = 2 * 1024 * 1024).await;
    let mut alice = app.connect_raw(&app.token("alice")).await.expect("upgrade");
    let first = alice.recv().await;
    assert_eq!(
        (
            first["type"].as_str(),
            first["code"].as_str(),
            first["retryable"].as_bool()
        ),
        (Some("ERROR"), Some("internal"), Some(true)),
        "{first}"
    );
    assert_eq!(alice.recv_close_code().await, 1011);
    // Other users are not affected.
    app.create_channel("room", &["bob"]).await;
    let mut bob = app.connect("bob").await;
    bob.send_and_ack("room", "b1", "hello").await;
    app.stop().await;
}

/// A server whose channel `room` holds 100 messages of 16,000 bytes
/// (8,000 times `"x`, 24,000 bytes as JSON) from alice; her session, and
/// the body.
async fn room_of_100_large_messages(backend: Backend) -> (chatd_testkit::TestApp, chatd_testkit::WsClient, String) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    let body = "\"x".repeat(8_000);
    for n in 0..100 {
        alice.send_and_ack("room", &format!("big{n}"), &body).await;
    }
    (app, alice, body)
}

/// A SYNC page of large messages stops past about 1 MiB of JSON with
/// `hasMore: true` (one frame of 500 × 16 KiB would be 8 MB or more), and
/// paging on from its last seq still yields every message once, in order.
async fn a_sync_page_of_large_messages_stops_early(backend: Backend) {
    let (app, mut alice, body) = room_of_100_large_messages(backend).await;
    alice.send_json(sync("room", 0, Some(100))).await;
    let first = alice.recv_type("SYNC_BATCH").await;
    let page = first["messages"].as_array().expect("messages").len();
    assert!((2..100).contains(&page), "first page held {page} of 100 messages");
    assert_eq!(first["hasMore"], true);
    let mut got = first["messages"].as_array().expect("messages").clone();
    loop {
        let after = got.last().map_or(0, |m| m["seq"].as_i64().expect("seq"));
        alice.send_json(sync("room", after, Some(100))).await;
        let batch = alice.recv_type("SYNC_BATCH").await;
        got.extend(batch["messages"].as_array().expect("messages").iter().cloned());
        if batch["hasMore"] == false {
            break;
        }
    }
    assert_eq!(seqs(&got), (1..=100).collect::<Vec<_>>());
    assert!(got.iter().all(|m| m["body"] == body.as_str()));
    app.stop().await;
}

/// The history route pages like SYNC: a page of large messages stops past
/// about 1 MiB of JSON with `hasMore: true` (before, 500 messages of escaped
/// characters made one response of tens of MB), and paging on from its last
/// seq yields every message once, in order.
async fn a_history_page_of_large_messages_stops_early(backend: Backend) {
    let (app, _alice, body) = room_of_100_large_messages(backend).await;
    let token = app.token("alice");
    let (status, first) = app.history("room", &token, "afterSeq=0&limit=100").await;
    assert_eq!(status, 200, "{first}");
    let page = first["messages"].as_array().expect("messages").len();
    assert!((2..100).contains(&page), "first page held {page} of 100 messages");
    assert_eq!(first["hasMore"], true);
    let got = app.all_messages("room").await;
    assert_eq!(seqs(&got), (1..=100).collect::<Vec<_>>());
    assert!(got.iter().all(|m| m["body"] == body.as_str()));
    app.stop().await;
}

async fn hello_reports_each_channels_state(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("a-room", &["alice", "bob"]).await;
    app.create_channel("b-room", &["alice"]).await;
    let mut bob = app.connect("bob").await;
    for n in 0..3 {
        bob.send_and_ack("a-room", &format!("c{n}"), "x").await;
    }
    let mut alice = app.connect("alice").await;
    let hello = &alice.hello;
    assert_eq!(hello["userId"], "alice");
    assert!(hello["sessionId"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(hello["serverTs"].as_i64().expect("serverTs") > 1_600_000_000_000);
    let channels = hello["channels"].as_array().expect("channels");
    assert_eq!(channels.len(), 2);
    assert_eq!(channels[0]["channelId"], "a-room");
    assert_eq!(channels[0]["lastSeq"], 3);
    assert_eq!(channels[0]["deliveredSeq"], 0);
    assert_eq!(channels[0]["readSeq"], 0);
    assert_eq!(channels[1]["channelId"], "b-room");
    assert_eq!(channels[1]["lastSeq"], 0);
    // Watermarks show up in the next HELLO.
    let second = app.all_messages("a-room").await[1]["messageId"].clone();
    alice
        .send_json(serde_json::json!({"type": "MSG_READ", "messageId": second}))
        .await;
    bob.recv_type("RECEIPT").await;
    let again = app.connect("alice").await;
    assert_eq!(again.hello["channels"][0]["readSeq"], 2);
    assert_eq!(again.hello["channels"][0]["deliveredSeq"], 2);
    app.stop().await;
}

async fn sync_pages_through_history_in_order(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    for n in 0..25 {
        alice.send_and_ack("room", &format!("c{n}"), &format!("body {n}")).await;
    }
    let mut after = 0;
    let mut got = Vec::new();
    loop {
        alice.send_json(sync("room", after, Some(10))).await;
        let batch = alice.recv_type("SYNC_BATCH").await;
        assert_eq!(batch["channelId"], "room");
        let messages = batch["messages"].as_array().expect("messages").clone();
        assert!(messages.iter().all(|m| m["type"] == "MSG_RECV"));
        after = messages.last().map_or(after, |m| m["seq"].as_i64().expect("seq"));
        got.extend(messages);
        if batch["hasMore"] == false {
            break;
        }
    }
    assert_eq!(seqs(&got), (1..=25).collect::<Vec<_>>());
    assert_eq!(got[24]["body"], "body 24");
    // The page that reaches the last seq says hasMore: false.
    alice.send_json(sync("room", 15, Some(10))).await;
    let batch = alice.recv_type("SYNC_BATCH").await;
    assert_eq!(batch["messages"].as_array().expect("messages").len(), 10);
    assert_eq!(batch["hasMore"], false);
    // Default limit is 100; past the end is empty.
    alice.send_json(sync("room", 25, None)).await;
    let batch = alice.recv_type("SYNC_BATCH").await;
    assert_eq!(batch["messages"].as_array().expect("messages").len(), 0);
    assert_eq!(batch["hasMore"], false);
    // Unknown channel and non-member: forbidden alike.
    alice.send_json(sync("nope", 0, None)).await;
    assert_eq!(alice.recv_type("ERROR").await["code"], "forbidden");
    app.stop().await;
}

async fn history_route_pages_and_checks_membership(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    for n in 0..5 {
        alice.send_and_ack("room", &format!("c{n}"), "x").await;
    }
    let token = app.token("alice");
    let (status, body) = app.history("room", &token, "afterSeq=1&limit=2").await;
    assert_eq!(status, 200);
    assert_eq!(seqs(body["messages"].as_array().expect("messages")), vec![2, 3]);
    assert_eq!(body["hasMore"], true);
    assert_eq!(body["messages"][0]["type"], "MSG_RECV");
    let (_, body) = app.history("room", &token, "afterSeq=3&limit=2").await;
    assert_eq!(seqs(body["messages"].as_array().expect("messages")), vec![4, 5]);
    assert_eq!(body["hasMore"], false);
    let (_, body) = app.history("room", &token, "").await;
    assert_eq!(
        body["messages"].as_array().expect("messages").len(),
        5,
        "defaults: afterSeq=0, limit=100"
    );
    // access_token query parameter works too.
    let res = app
        .http
        .get(app.url(&format!("/v1/channels/room/messages?access_token={token}")))
        .send()
        .await
        .expect("http");
    assert_eq!(res.status(), 200);
    // Non-member and unknown channel: 403 alike for users; admin gets 404.
    let outsider = app.token("mallory");
    assert_eq!(app.history("room", &outsider, "").await.0, 403);
    let (status, body) = app.history("nope", &outsider, "").await;
    assert_eq!(status, 403);
    assert_eq!(body["error"]["code"], "forbidden");
    assert_eq!(app.history("nope", ADMIN_TOKEN, "").await.0, 404);
    // Bad parameters.
    for query in [
        "limit=0",
        "limit=501",
        "limit=x",
        "afterSeq=-1",
        "afterSeq=9007199254740992",
    ] {
        let (status, body) = app.history("room", &token, query).await;
        assert_eq!(status, 400, "{query}");
        assert_eq!(body["error"]["code"], "invalid_field", "{query}");
    }
    assert_eq!(app.history("room", "garbage", "").await.0, 401);
    // The admin token is never accepted in the URL (proxies log URLs).
    let (status, _) = app
        .request(
            "GET",
            &format!("/v1/channels/room/messages?access_token={ADMIN_TOKEN}"),
            None,
            None,
        )
        .await;
    assert_eq!(status, 401);
    app.stop().await;
}

async fn offline_member_recovers_all_30_messages_once_in_order(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    alice.send_and_ack("room", "before", "seen live").await;
    let seen = bob.recv_type("MSG_RECV").await;
    let last_seen = seen["seq"].as_i64().expect("seq");
    drop(bob);
    let mut sent = Vec::new();
    for n in 0..30 {
        sent.push(
            alice
                .send_and_ack("room", &format!("offline-{n}"), &format!("missed {n}"))
                .await,
        );
    }
    let mut bob = app.connect("bob").await;
    let last_seq = bob.hello["channels"][0]["lastSeq"].as_i64().expect("lastSeq");
    assert_eq!(last_seq, 31);
    let mut recovered: Vec<Value> = Vec::new();
    let mut after = last_seen;
    while after < last_seq {
        bob.send_json(sync("room", after, Some(7))).await;
        let batch = bob.recv_type("SYNC_BATCH").await;
        let page = batch["messages"].as_array().expect("messages").clone();
        after = page.last().expect("non-empty page")["seq"].as_i64().expect("seq");
        recovered.extend(page);
    }
    assert_eq!(recovered.len(), 30);
    let ids: HashSet<_> = recovered.iter().map(|m| m["messageId"].clone()).collect();
    assert_eq!(ids.len(), 30, "nothing twice");
    for (ack, message) in sent.iter().zip(&recovered) {
        assert_eq!(ack["messageId"], message["messageId"], "in order");
    }
    assert_eq!(seqs(&recovered), (2..=31).collect::<Vec<_>>());
    app.stop().await;
}

async fn sync_after_send_on_the_same_connection_sees_it(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    // Pipelined: the SYNC is read before the send's ACK is out.
    alice.send_msg("room", "p-1", "first").await;
    alice.send_json(sync("room", 0, None)).await;
    assert_eq!(alice.recv_type("MSG_ACK").await["seq"], 1);
    let batch = alice.recv_type("SYNC_BATCH").await;
    assert_eq!(seqs(batch["messages"].as_array().expect("messages")), vec![1]);
    app.stop().await;
}
