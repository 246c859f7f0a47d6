//! The API a product's backend needs (`docs/protocol.md`, "The API a
//! product's backend needs"): server-side posts through group commit,
//! channel listing, name and metadata, deletion with CHANNEL_REMOVED, a
//! user's own channels, paging back on the history route and SYNC; and the
//! first-use fixes (README snippets, startup refusals).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use chatd_testkit::on_both_stores;
use chatd_testkit::*;

on_both_stores!(
    a_post_is_a_send_with_the_same_keys_and_fan_out,
    bad_posts_are_refused_and_store_nothing,
    a_post_is_unavailable_when_the_database_is,
    channels_are_listed_in_id_order_with_keyset_pages,
    name_and_metadata_are_set_shown_everywhere_and_cleared,
    bad_patches_are_refused_and_change_nothing,
    metadata_nested_past_what_clients_decode_is_refused,
    a_delete_removes_everything_and_tells_live_sessions,
    a_delete_that_fails_midway_leaves_everything,
    history_and_sync_page_back_from_a_seq_or_the_newest,
    bad_paging_back_is_invalid_field,
);

fn path_messages(channel: &str) -> String {
    format!("/v1/channels/{channel}/messages")
}

async fn post(app: &TestApp, channel: &str, body: Value) -> (u16, Value) {
    app.request(
        "POST",
        &path_messages(channel),
        Some(ADMIN_TOKEN),
        Some(&body.to_string()),
    )
    .await
}

fn send_body(sender: &str, key: &str, body: &str) -> Value {
    json!({"senderId": sender, "clientMsgId": key, "body": body})
}

/// Rows of `table` for `channel`, read straight from the database.
async fn rows(db: &TestDb, table: &str, channel: &str) -> i64 {
    count(
        db,
        &format!("SELECT COUNT(*) FROM {table} WHERE channel_id = $1"),
        channel,
    )
    .await
}

/// The count `sql` (a `SELECT COUNT(*)` with one text parameter `$1`) reads
/// straight from the database.
async fn count(db: &TestDb, sql: &str, channel: &str) -> i64 {
    if db.url.starts_with("sqlite:") {
        let mut conn = <sqlx::SqliteConnection as sqlx::Connection>::connect(&db.url)
            .await
            .expect("sqlite");
        sqlx::query_scalar(sql)
            .bind(channel)
            .fetch_one(&mut conn)
            .await
            .expect("count")
    } else {
        let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&db.url)
            .await
            .expect("postgres");
        sqlx::query_scalar(sql)
            .bind(channel)
            .fetch_one(&mut conn)
            .await
            .expect("count")
    }
}

/// Runs `sql` (one statement) straight on the database.
async fn execute(db: &TestDb, sql: &str) {
    if db.url.starts_with("sqlite:") {
        let mut conn = <sqlx::SqliteConnection as sqlx::Connection>::connect(&db.url)
            .await
            .expect("sqlite");
        sqlx::raw_sql(sql).execute(&mut conn).await.expect("execute");
    } else {
        let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&db.url)
            .await
            .expect("postgres");
        sqlx::raw_sql(sql).execute(&mut conn).await.expect("execute");
    }
}

async fn a_post_is_a_send_with_the_same_keys_and_fan_out(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;

    let (status, ack) = post(&app, "room", send_body("alice", "k1", "hello")).await;
    assert_eq!(status, 201, "{ack}");
    assert_eq!(ack["type"], "MSG_ACK");
    assert_eq!(ack["seq"], 1);
    assert_eq!(ack["duplicate"], false);
    assert_eq!(ack["clientMsgId"], "k1");
    assert_eq!(ack["channelId"], "room");
    // Every live session gets it, the sender's own included: the HTTP
    // caller has no session to skip.
    for client in [&mut alice, &mut bob] {
        let recv = client.recv_type("MSG_RECV").await;
        assert_eq!(recv["messageId"], ack["messageId"]);
        assert_eq!(recv["senderId"], "alice");
        assert_eq!(recv["body"], "hello");
    }

    let (status, again) = post(&app, "room", send_body("alice", "k1", "hello")).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["duplicate"], true);
    assert_eq!(again["messageId"], ack["messageId"]);
    assert_eq!(again["seq"], 1);

    let (status, conflict) = post(&app, "room", send_body("alice", "k1", "changed")).await;
    assert_eq!(status, 409, "{conflict}");
    assert_eq!(conflict["error"]["code"], "idempotency_conflict");

    // One key space with MSG_SEND: the WebSocket retry of the HTTP send is a
    // duplicate, and an HTTP retry of a WebSocket send too.
    let ws_ack = alice.send_and_ack("room", "k1", "hello").await;
    assert_eq!(ws_ack["duplicate"], true);
    assert_eq!(ws_ack["messageId"], ack["messageId"]);
    let second = alice.send_and_ack("room", "k2", "from ws").await;
    assert_eq!(second["seq"], 2);
    let (status, from_http) = post(&app, "room", send_body("alice", "k2", "from ws")).await;
    assert_eq!(status, 200);
    assert_eq!(from_http["messageId"], second["messageId"]);

    let all = app.all_messages("room").await;
    assert_eq!(seqs(&all), vec![1, 2], "no duplicate stored");
    app.stop().await;
}

async fn bad_posts_are_refused_and_store_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let too_long = "x".repeat(16_385);
    let cases: Vec<(&str, Option<&str>, String, u16, &str)> = vec![
        (
            "room",
            Some(ADMIN_TOKEN),
            send_body("eve", "k1", "hi").to_string(),
            403,
            "forbidden",
        ),
        (
            "nope",
            Some(ADMIN_TOKEN),
            send_body("alice", "k1", "hi").to_string(),
            404,
            "not_found",
        ),
        (
            "room",
            Some(ADMIN_TOKEN),
            send_body("a b", "k1", "hi").to_string(),
            400,
            "invalid_field",
        ),
        (
            "room",
            Some(ADMIN_TOKEN),
            send_body("alice", "k 1", "hi").to_string(),
            400,
            "invalid_field",
        ),
        (
            "room",
            Some(ADMIN_TOKEN),
            send_body("alice", "k1", "").to_string(),
            400,
            "invalid_field",
        ),
        (
            "room",
            Some(ADMIN_TOKEN),
            send_body("alice", "k1", "a\u{0}b").to_string(),
            400,
            "invalid_field",
        ),
        (
            "room",
            Some(ADMIN_TOKEN),
            send_body("alice", "k1", &too_long).to_string(),
            400,
            "body_too_large",
        ),
        (
            "bad%20id",
            Some(ADMIN_TOKEN),
            send_body("alice", "k1", "hi").to_string(),
            400,
            "invalid_field",
        ),
        ("room", Some(ADMIN_TOKEN), "not json".into(), 400, "bad_request"),
        (
            "room",
            Some(ADMIN_TOKEN),
            json!({"senderId": "alice"}).to_string(),
            400,
            "bad_request",
        ),
        (
            "room",
            Some(ADMIN_TOKEN),
            json!({"senderId": "alice", "clientMsgId": "k1", "body": 5}).to_string(),
            400,
            "bad_request",
        ),
        (
            "room",
            None,
            send_body("alice", "k1", "hi").to_string(),
            401,
            "unauthorized",
        ),
    ];
    let user = app.token("alice");
    let mut cases = cases;
    cases.push((
        "room",
        Some(user.as_str()),
        send_body("alice", "k1", "hi").to_string(),
        403,
        "forbidden",
    ));
    for (channel, bearer, body, status, code) in cases {
        let (got, answer) = app.request("POST", &path_messages(channel), bearer, Some(&body)).await;
        assert_eq!(got, status, "{channel} {body:.80}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{channel} {body:.80}: {answer}");
        assert!(answer["error"]["message"].is_string());
    }
    assert!(app.all_messages("room").await.is_empty(), "nothing stored");
    // The key was never used: a good send with it is new.
    let (status, ack) = post(&app, "room", send_body("alice", "k1", "hi")).await;
    assert_eq!((status, ack["seq"].clone()), (201, json!(1)));
    // An unknown field is ignored, as everywhere else in the API.
    let extra = json!({"senderId": "alice", "clientMsgId": "k2", "body": "hi", "extra": 1});
    let (status, ack) = post(&app, "room", extra).await;
    assert_eq!((status, ack["seq"].clone()), (201, json!(2)), "{ack}");
    app.stop().await;
}

async fn a_post_is_unavailable_when_the_database_is(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.db_timeout_ms = 1_000).await;
    app.create_channel("room", &["alice"]).await;
    // The pool closed: every call fails at once, as with a database gone.
    app.state.store.close().await;
    let (status, answer) = post(&app, "room", send_body("alice", "k1", "hi")).await;
    assert_eq!(status, 503, "{answer}");
    assert_eq!(answer["error"]["code"], "unavailable");
    app.stop().await;
}

async fn channels_are_listed_in_id_order_with_keyset_pages(backend: Backend) {
    let app = spawn_app(backend).await;
    for (id, members) in [
        ("b", vec!["bob"]),
        ("a", vec!["alice", "bob"]),
        ("C", vec![]),
        ("a-1", vec!["carol"]),
    ] {
        app.create_channel(id, &members).await;
    }
    let list = |query: &'static str| app.request("GET", query, Some(ADMIN_TOKEN), None);
    let (status, page) = list("/v1/channels?limit=2").await;
    assert_eq!(status, 200, "{page}");
    let ids = |page: &Value| -> Vec<String> {
        page["channels"]
            .as_array()
            .expect("channels")
            .iter()
            .map(|c| c["channelId"].as_str().expect("id").to_owned())
            .collect()
    };
    // Byte order: upper case before lower case, "a" before "a-1".
    assert_eq!(ids(&page), ["C", "a"]);
    assert_eq!(page["hasMore"], true);
    let first = &page["channels"][1];
    assert_eq!(first["members"], json!(["alice", "bob"]));
    assert_eq!(first["lastSeq"], 0);
    assert!(first["createdAt"].is_i64());
    assert!(first["name"].is_null() && first["metadata"].is_null(), "{first}");
    let (_, page) = list("/v1/channels?after=a&limit=2").await;
    assert_eq!(ids(&page), ["a-1", "b"]);
    assert_eq!(page["hasMore"], false);
    assert_eq!(page["channels"][0]["members"], json!(["carol"]));
    let (_, all) = list("/v1/channels").await;
    assert_eq!(ids(&all), ["C", "a", "a-1", "b"]);
    assert_eq!(all["hasMore"], false);
    let (_, none) = list("/v1/channels?after=b").await;
    assert_eq!(none, json!({"channels": [], "hasMore": false}));

    for bad in [
        "/v1/channels?limit=0",
        "/v1/channels?limit=501",
        "/v1/channels?limit=x",
        "/v1/channels?after=a%20b",
        "/v1/channels?limit=1&limit=2",
    ] {
        let (status, answer) = list(bad).await;
        assert_eq!(status, 400, "{bad}: {answer}");
        assert_eq!(answer["error"]["code"], "invalid_field", "{bad}");
    }
    let (status, _) = app
        .request("GET", "/v1/channels", Some(&app.token("alice")), None)
        .await;
    assert_eq!(status, 403);
    let (status, _) = app.request("GET", "/v1/channels", None, None).await;
    assert_eq!(status, 401);
    app.stop().await;
}

async fn patch(app: &TestApp, channel: &str, body: &str) -> (u16, Value) {
    app.request(
        "PATCH",
        &format!("/v1/channels/{channel}"),
        Some(ADMIN_TOKEN),
        Some(body),
    )
    .await
}

async fn my_channels(app: &TestApp, user: &str) -> Value {
    let (status, body) = app
        .request("GET", "/v1/me/channels", Some(&app.token(user)), None)
        .await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn name_and_metadata_are_set_shown_everywhere_and_cleared(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    app.create_channel("other", &["alice"]).await;
    let metadata = json!({"topic": "launch", "tags": ["a", "b"], "n": 3});
    let (status, channel) = patch(
        &app,
        "room",
        &json!({"name": "Launch 🚀", "metadata": metadata}).to_string(),
    )
    .await;
    assert_eq!(status, 200, "{channel}");
    assert_eq!(channel["name"], "Launch 🚀");
    assert_eq!(channel["metadata"], metadata);
    assert_eq!(channel["members"], json!(["alice"]));

    let (_, got) = app.request("GET", "/v1/channels/room", Some(ADMIN_TOKEN), None).await;
    assert_eq!(
        (got["name"].clone(), got["metadata"].clone()),
        (json!("Launch 🚀"), metadata.clone())
    );
    let (_, listed) = app.request("GET", "/v1/channels", Some(ADMIN_TOKEN), None).await;
    assert_eq!(listed["channels"][1]["channelId"], "room");
    assert_eq!(listed["channels"][1]["metadata"], metadata);

    let alice = app.connect("alice").await;
    let hello_room = &alice.hello["channels"][1];
    assert_eq!(hello_room["channelId"], "room");
    assert_eq!(hello_room["name"], "Launch 🚀");
    assert_eq!(hello_room["metadata"], metadata);
    assert!(alice.hello["channels"][0]["name"].is_null());

    let mine = my_channels(&app, "alice").await;
    assert_eq!(mine["channels"], alice.hello["channels"], "as in HELLO");
    assert_eq!(my_channels(&app, "nobody").await, json!({"channels": []}));

    // Only what is given changes; null clears.
    let (status, channel) = patch(&app, "room", r#"{"metadata": null}"#).await;
    assert_eq!(status, 200);
    assert!(channel["metadata"].is_null());
    assert_eq!(channel["name"], "Launch 🚀");
    let (_, channel) = patch(&app, "room", r#"{"name": ""}"#).await;
    assert_eq!(channel["name"], "");
    let (_, channel) = patch(&app, "room", r#"{"name": null, "metadata": {}}"#).await;
    assert!(channel["name"].is_null());
    assert_eq!(channel["metadata"], json!({}));
    let (_, channel) = patch(&app, "room", "{}").await;
    assert_eq!(channel["metadata"], json!({}));

    let (status, _) = app.request("GET", "/v1/me/channels", Some(ADMIN_TOKEN), None).await;
    assert_eq!(status, 403, "the admin token is no user");
    let (status, _) = app.request("GET", "/v1/me/channels", None, None).await;
    assert_eq!(status, 401);
    app.stop().await;
}

/// `metadata` nested `levels` deep (the object itself is level 1).
fn nested_metadata(levels: usize) -> String {
    format!(r#"{{"metadata":{}1{}}}"#, r#"{"a":"#.repeat(levels), "}".repeat(levels))
}

/// Metadata sits 3 levels down in HELLO (the frame, `channels`, the
/// channel): metadata nested 126 deep made a HELLO that serde_json (the
/// Rust client's decoder, limit 128) refuses, so a channel owner could keep
/// every member's Rust client from ever connecting. Past 32 levels it is
/// refused; 32 levels reach members' clients.
async fn metadata_nested_past_what_clients_decode_is_refused(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let (status, answer) = patch(&app, "room", &nested_metadata(33)).await;
    assert_eq!(
        (status, &answer["error"]["code"]),
        (400, &json!("invalid_field")),
        "{answer}"
    );
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("metadata") && m.contains("32")),
        "{answer}"
    );
    let (status, answer) = patch(&app, "room", &nested_metadata(32)).await;
    assert_eq!(status, 200, "{answer}");
    let config = chatd_client::ClientConfig::new(app.ws_url(), app.token("alice"));
    let (client, _events) = chatd_client::Client::connect(config)
        .await
        .expect("a member's client decodes HELLO");
    client.close().await;
    app.stop().await;
}

async fn bad_patches_are_refused_and_change_nothing(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.max_channel_metadata_bytes = 64).await;
    app.create_channel("room", &["alice"]).await;
    let (status, _) = patch(&app, "room", r#"{"name": "kept", "metadata": {"k": "kept"}}"#).await;
    assert_eq!(status, 200);
    let long_name = json!({"name": "é".repeat(201)}).to_string();
    let big = json!({"metadata": {"k": "x".repeat(60)}}).to_string();
    for (body, status, code) in [
        (long_name.as_str(), 400, "invalid_field"),
        (r#"{"name": 5}"#, 400, "invalid_field"),
        (r#"{"name": "a\u0007b"}"#, 400, "invalid_field"),
        (r#"{"metadata": [1, 2]}"#, 400, "invalid_field"),
        (r#"{"metadata": "text"}"#, 400, "invalid_field"),
        (big.as_str(), 400, "invalid_field"),
        (r#"{"name": "new", "metadata": 3}"#, 400, "invalid_field"),
        (r#"{"nmae": "typo"}"#, 400, "invalid_field"),
        ("not json", 400, "bad_request"),
        ("[1]", 400, "bad_request"),
    ] {
        let (got, answer) = patch(&app, "room", body).await;
        assert_eq!(got, status, "{body:.60}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{body:.60}");
    }
    // 200 characters (not bytes) is the limit.
    let (status, _) = patch(&app, "room", &json!({"name": "é".repeat(200)}).to_string()).await;
    assert_eq!(status, 200);
    let (status, answer) = patch(&app, "nope", r#"{"name": "x"}"#).await;
    assert_eq!((status, answer["error"]["code"].clone()), (404, json!("not_found")));
    let (status, _) = app
        .request(
            "PATCH",
            "/v1/channels/room",
            Some(&app.token("alice")),
            Some(r#"{"name":"x"}"#),
        )
        .await;
    assert_eq!(status, 403);
    let (_, channel) = app.request("GET", "/v1/channels/room", Some(ADMIN_TOKEN), None).await;
    assert_eq!(channel["name"], "é".repeat(200));
    assert_eq!(channel["metadata"], json!({"k": "kept"}), "no refused patch changed it");
    app.stop().await;
}

async fn a_delete_removes_everything_and_tells_live_sessions(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    app.create_channel("other", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let mut bob2 = app.connect("bob").await;
    let mut eve = app.connect("eve").await;
    let ack = alice.send_and_ack("room", "k1", "one").await;
    for client in [&mut bob, &mut bob2] {
        client.recv_type("MSG_RECV").await;
    }
    alice.send_and_ack("other", "k2", "kept").await;
    alice
        .send_json(json!({"type": "MSG_REACT", "clientMsgId": "r1", "messageId": ack["messageId"], "emoji": "👍", "op": "add"}))
        .await;
    alice.recv_type("MSG_ACK").await;
    for client in [&mut bob, &mut bob2] {
        assert_eq!(client.recv_type("MSG_RECV").await["kind"], "reaction");
    }
    alice
        .send_json(json!({"type": "MSG_READ", "messageId": ack["messageId"]}))
        .await;
    alice.recv_type("RECEIPT").await;
    assert_eq!(rows(&app.db, "watermarks", "room").await, 1);
    // The reaction state of the room's messages, which has no channel column.
    let reactions_of = |table: &str| {
        format!(
            "SELECT COUNT(*) FROM {table} WHERE message_id IN (SELECT message_id FROM messages WHERE channel_id = $1)"
        )
    };
    assert_eq!(count(&app.db, &reactions_of("reactions"), "room").await, 1);

    let (status, body) = app
        .request("DELETE", "/v1/channels/room", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(status, 204, "{body}");
    for client in [&mut alice, &mut bob, &mut bob2] {
        let removed = client.recv_type("CHANNEL_REMOVED").await;
        assert_eq!(
            removed,
            json!({"type": "CHANNEL_REMOVED", "channelId": "room", "reason": "deleted"})
        );
    }
    eve.expect_silence(Duration::from_millis(200)).await;
    for table in ["messages", "members", "watermarks", "channels"] {
        assert_eq!(rows(&app.db, table, "room").await, 0, "{table}");
    }
    for table in ["reactions", "reaction_counts"] {
        let left = count(&app.db, &format!("SELECT COUNT(*) FROM {table} WHERE $1 <> ''"), "room").await;
        assert_eq!(left, 0, "{table}: no reaction state outlives its channel");
    }
    assert_eq!(
        rows(&app.db, "messages", "other").await,
        1,
        "another channel is untouched"
    );
    let (status, _) = app.request("GET", "/v1/channels/room", Some(ADMIN_TOKEN), None).await;
    assert_eq!(status, 404);
    let (status, answer) = app
        .request("DELETE", "/v1/channels/room", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!((status, answer["error"]["code"].clone()), (404, json!("not_found")));
    let (status, _) = app
        .request("DELETE", "/v1/channels/a%20b", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(status, 400);
    let (status, _) = app
        .request("DELETE", "/v1/channels/other", Some(&app.token("alice")), None)
        .await;
    assert_eq!(status, 403);
    // A send to it is refused, and nothing more arrives for it.
    alice.send_msg("room", "k3", "late").await;
    let refused = alice.recv_type("ERROR").await;
    assert_eq!(refused["code"], "forbidden");
    let (status, _) = post(&app, "room", send_body("alice", "k4", "late")).await;
    assert_eq!(status, 404);
    assert_eq!(my_channels(&app, "bob").await, json!({"channels": []}));
    app.stop().await;
}

async fn a_delete_that_fails_midway_leaves_everything(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let ack = alice.send_and_ack("room", "k1", "one").await;
    alice
        .send_json(json!({"type": "MSG_READ", "messageId": ack["messageId"]}))
        .await;
    alice.recv_type("RECEIPT").await;
    // The channel row goes last: a failure there comes after the
    // messages, watermarks and members were deleted in the transaction.
    if backend == Backend::Sqlite {
        execute(
            &app.db,
            "CREATE TRIGGER fail_delete BEFORE DELETE ON channels BEGIN SELECT RAISE(ABORT, 'injected'); END",
        )
        .await;
    } else {
        execute(
            &app.db,
            "CREATE FUNCTION fail_delete() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected'; END $$; \
             CREATE TRIGGER fail_delete BEFORE DELETE ON channels FOR EACH ROW EXECUTE FUNCTION fail_delete();",
        )
        .await;
    }
    let (status, answer) = app
        .request("DELETE", "/v1/channels/room", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(status, 500, "{answer}");
    assert_eq!(answer["error"]["code"], "internal");
    for (table, expected) in [("messages", 1), ("members", 2), ("watermarks", 1), ("channels", 1)] {
        assert_eq!(
            rows(&app.db, table, "room").await,
            expected,
            "{table}: nothing half-deleted"
        );
    }
    alice.expect_silence(Duration::from_millis(200)).await;
    let next = alice.send_and_ack("room", "k2", "still here").await;
    assert_eq!(next["seq"], 2);
    app.stop().await;
}

async fn history_and_sync_page_back_from_a_seq_or_the_newest(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    for n in 1..=25 {
        let (status, _) = post(&app, "room", send_body("alice", &format!("k{n}"), &format!("m{n}"))).await;
        assert_eq!(status, 201);
    }
    let token = app.token("alice");
    let page = |query: &'static str| {
        let token = token.clone();
        let app = &app;
        async move {
            let (status, body) = app.history("room", &token, query).await;
            assert_eq!(status, 200, "{query}: {body}");
            let messages = body["messages"].as_array().expect("messages").clone();
            (seqs(&messages), body["hasMore"].as_bool().expect("hasMore"))
        }
    };
    assert_eq!(page("latest=true&limit=10").await, ((16..=25).collect(), true));
    assert_eq!(page("beforeSeq=16&limit=10").await, ((6..=15).collect(), true));
    assert_eq!(page("beforeSeq=6&limit=10").await, ((1..=5).collect(), false));
    assert_eq!(
        page("beforeSeq=3&afterSeq=20").await,
        (vec![1, 2], false),
        "afterSeq ignored"
    );
    assert_eq!(page("latest=true").await, ((1..=25).collect(), false));
    assert_eq!(page("beforeSeq=1").await, (vec![], false));
    assert_eq!(page("beforeSeq=1000&limit=2").await, (vec![24, 25], true));
    assert_eq!(page("latest=false&afterSeq=23").await, (vec![24, 25], false));
    let (_, admin) = app.history("room", ADMIN_TOKEN, "latest=true&limit=1").await;
    assert_eq!(admin["messages"][0]["seq"], 25);
    assert_eq!(admin["messages"][0]["type"], "MSG_RECV");

    let mut alice = app.connect("alice").await;
    let base = |extra: Value| {
        let mut frame = json!({"type": "SYNC", "channelId": "room"});
        for (k, v) in extra.as_object().expect("object") {
            frame[k] = v.clone();
        }
        frame
    };
    for (extra, expected) in [
        (
            json!({"latest": true, "limit": 10}),
            ((16..=25).collect::<Vec<i64>>(), true),
        ),
        (json!({"beforeSeq": 16, "limit": 10}), ((6..=15).collect(), true)),
        (json!({"beforeSeq": 6, "afterSeq": 0}), ((1..=5).collect(), false)),
        (json!({"afterSeq": 20, "latest": false}), ((21..=25).collect(), false)),
    ] {
        alice.send_json(base(extra.clone())).await;
        let batch = alice.recv_type("SYNC_BATCH").await;
        let messages = batch["messages"].as_array().expect("messages").clone();
        let got = (seqs(&messages), batch["hasMore"].as_bool().expect("hasMore"));
        assert_eq!(got, expected, "{extra}");
    }
    app.stop().await;
}

async fn bad_paging_back_is_invalid_field(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let token = app.token("alice");
    for (query, field) in [
        ("beforeSeq=0", "beforeSeq"),
        ("beforeSeq=-1", "beforeSeq"),
        ("beforeSeq=x", "beforeSeq"),
        ("beforeSeq=9007199254740992", "beforeSeq"),
        ("beforeSeq=1&beforeSeq=2", "beforeSeq"),
        ("latest=yes", "latest"),
        ("latest=true&beforeSeq=5", "latest"),
        ("latest=true&limit=0", "limit"),
    ] {
        let (status, answer) = app.history("room", &token, query).await;
        assert_eq!(status, 400, "{query}: {answer}");
        assert_eq!(answer["error"]["code"], "invalid_field", "{query}");
        let message = answer["error"]["message"].as_str().expect("message");
        assert!(message.starts_with(field), "{query}: {message}");
    }
    let mut alice = app.connect("alice").await;
    for (frame, field) in [
        (
            json!({"type": "SYNC", "channelId": "room", "beforeSeq": 0}),
            "beforeSeq",
        ),
        (
            json!({"type": "SYNC", "channelId": "room", "beforeSeq": "5"}),
            "beforeSeq",
        ),
        (json!({"type": "SYNC", "channelId": "room", "latest": "yes"}), "latest"),
        (
            json!({"type": "SYNC", "channelId": "room", "latest": true, "beforeSeq": 3}),
            "latest",
        ),
        (json!({"type": "SYNC", "channelId": "room"}), "afterSeq"),
    ] {
        alice.send_json(frame.clone()).await;
        let error = alice.recv_type("ERROR").await;
        assert_eq!(error["code"], "invalid_field", "{frame}");
        assert_eq!(error["field"], field, "{frame}");
    }
    app.stop().await;
}

// --- The README -----------------------------------------------------------

const README: &str = include_str!("../../README.md");
const README_EXAMPLE: &str = include_str!("../../crates/chatd-client/examples/readme.rs");

/// The fenced block of the README that starts with `opening` (e.g.
/// "```rust"), after the line holding `after`.
fn readme_block(after: &str, opening: &str) -> String {
    let start = README.find(after).expect("README section");
    let rest = &README[start..];
    let open = rest.find(&format!("{opening}\n")).expect("block") + opening.len() + 1;
    let close = rest[open..].find("```\n").expect("block end");
    rest[open..open + close].to_owned()
}

#[test]
fn the_readme_client_snippet_is_the_example_verbatim() {
    let body = README_EXAMPLE
        .split("    // README begin\n")
        .nth(1)
        .and_then(|rest| rest.split("    // README end").next())
        .expect("README marks in the example");
    let dedented: String = body
        .lines()
        .map(|line| line.strip_prefix("    ").unwrap_or(line))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(readme_block("## Client library", "```rust"), dedented);
}

/// The README's snippet (the `readme` example of chatd-client), built and
/// run against a live server: it prints the message it sent. The old
/// snippet's `while let Some(Event::Message(m))` ended at the first
/// `Event::Connected` and printed nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_client_snippet_prints_messages() {
    let app = spawn_app(Backend::Sqlite).await;
    app.create_channel("room1", &["alice"]).await;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut child = Command::new(cargo)
        .args(["run", "--quiet", "-p", "chatd-client", "--example", "readme", "--"])
        .arg(app.ws_url())
        .arg("room1")
        .env("CHATD_TOKEN", app.token("alice"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("cargo run the example");
    let stdout = child.stdout.take().expect("stdout");
    let lines = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let done = line == "#1 alice: hello";
            seen.push(line);
            if done {
                break;
            }
        }
        seen
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(300);
    while !lines.is_finished() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    let seen = lines.join().expect("reader");
    assert_eq!(seen, ["stored as #1", "#1 alice: hello"]);
    app.stop().await;
}

/// The PostgreSQL quick start's commands, run as written (with names of the
/// test's own) against the test PostgreSQL: the role and database they make
/// are enough for chatd to migrate and serve. Before, the README used a
/// role and database that did not exist and never said how to make them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_postgres_quick_start_creates_what_chatd_needs() {
    let Some(admin_url) = postgres_url() else { return };
    let block = readme_block("## PostgreSQL and Docker", "```sh");
    let suffix = uuid::Uuid::now_v7().simple().to_string();
    let (role, password) = (format!("chatd_readme_{suffix}"), "pw-readme-test");
    let rename = |text: &str| {
        text.replace("chatd:PASSWORD", &format!("{role}:{password}"))
            .replace("'PASSWORD'", &format!("'{password}'"))
            .replace("ROLE chatd", &format!("ROLE {role}"))
            .replace("DATABASE chatd OWNER chatd", &format!("DATABASE {role} OWNER {role}"))
            .replace("5432/chatd", &format!("5432/{role}"))
    };
    let statements: Vec<String> = block
        .lines()
        .filter_map(|line| line.strip_prefix("psql -c \""))
        .map(|rest| rename(rest.trim_end_matches('"')))
        .collect();
    assert_eq!(statements.len(), 2, "a role and a database: {block}");
    let url_line = block
        .lines()
        .find(|l| l.starts_with("CHATD_DATABASE_URL="))
        .expect("the serve line");
    let url = rename(
        url_line
            .trim_start_matches("CHATD_DATABASE_URL=")
            .split_whitespace()
            .next()
            .expect("url"),
    );
    // The test server's host and port, the README's role and database.
    let (server, _) = admin_url.rsplit_once('/').expect("path");
    let host = server.rsplit_once('@').map_or(server, |(_, host)| host);
    let url = url.replace("127.0.0.1:5432", host);
    let mut admin = pg_admin().await;
    for statement in &statements {
        sqlx::raw_sql(statement).execute(&mut admin).await.expect(statement);
    }
    let store = chatd::store::Store::connect(&chatd::store::StoreOptions {
        url: url.clone(),
        max_connections: 2,
        timeout: Duration::from_secs(5),
    })
    .await
    .expect("the README's URL connects as the README's role");
    store.migrate().await.expect("the role may create chatd's tables");
    store.close().await;
    let _ = sqlx::raw_sql(&format!(
        "DROP DATABASE IF EXISTS {role} WITH (FORCE); DROP ROLE IF EXISTS {role}"
    ))
    .execute(&mut admin)
    .await;
}

// --- Startup --------------------------------------------------------------

const BIN: &str = env!("CARGO_BIN_EXE_chatd");

/// `chatd serve` with a clean environment in `dir`, its own secrets.
fn chatd(dir: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("CHATD_JWT_SECRET", JWT_SECRET)
        .env("CHATD_ADMIN_TOKEN", ADMIN_TOKEN)
        .current_dir(dir);
    cmd
}

/// Runs `cmd` to its end (at most 30 s) and returns its exit code and stderr.
fn run_to_end(mut cmd: Command) -> (i32, String) {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn chatd");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut stderr = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .expect("stderr")
                .read_to_string(&mut stderr)
                .expect("read");
            return (status.code().unwrap_or(-1), stderr);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("chatd kept running; it should have refused to start");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_on_one_sqlite_data_directory_refuses() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = ServerProcess::start(chatd(dir.path()));
    let mut second = chatd(dir.path());
    second.args(["serve", "--listen", "127.0.0.1:0"]);
    let (code, stderr) = run_to_end(second);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("another chatd is already serving the SQLite database"),
        "{stderr}"
    );
    // The first one still serves.
    let res = reqwest::get(format!("http://{}/readyz", first.addr))
        .await
        .expect("http");
    assert_eq!(res.status(), 200);
    drop(first);
    // Its lock went with it: a new server starts.
    let again = ServerProcess::start(chatd(dir.path()));
    drop(again);
}

#[test]
fn sqlite_with_a_nats_url_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = chatd(dir.path());
    cmd.env("CHATD_NATS_URL", "nats://127.0.0.1:4222")
        .args(["serve", "--listen", "127.0.0.1:0"]);
    let (code, stderr) = run_to_end(cmd);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("needs a PostgreSQL database_url"), "{stderr}");
    assert!(!dir.path().join("data").exists(), "nothing created");
}

/// A taken port: the bind error is printed once (it was printed as the
/// message and again as its "caused by"), and the fresh data directory is
/// never created (the database was opened before the bind).
#[test]
fn a_failed_bind_prints_its_cause_once_and_creates_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr").to_string();
    let data = dir.path().join("fresh");
    let mut cmd = chatd(dir.path());
    cmd.arg("--data-dir").arg(&data).args(["serve", "--listen", &addr]);
    let (code, stderr) = run_to_end(cmd);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains(&format!("cannot listen on {addr}")), "{stderr}");
    assert_eq!(
        stderr.matches("Address already in use").count(),
        1,
        "the cause once: {stderr}"
    );
    assert!(!data.exists(), "the data directory was created: {stderr}");
}
