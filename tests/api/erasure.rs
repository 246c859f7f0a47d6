//! Erasing a user (protocol.md §19, guarantee 14), on both stores: every
//! message deleted as by `MSG_DELETE` (entries with `byAdmin`), reactions
//! removed, memberships ended with `MEMBER` `leave`, the user's other rows
//! gone; the erased text nowhere in any table's live rows, the SQLite file,
//! the search index or the attachment storage; every other sender's rows
//! byte-identical; old tokens refused and live sessions closed with 1008;
//! idempotent; an unknown user 204; an erasure killed mid-way completed
//! after the restart.

use std::time::Duration;

use serde_json::{json, Value};

use chatd_testkit::{chatd, mint_token, on_both_stores, ServerProcess, TestDb};
use chatd_testkit::{spawn_app, spawn_app_with, Backend, TestApp, WsClient, ADMIN_TOKEN, JWT_SECRET};

use crate::attachments::{png, send_with, stored_files, upload};
use crate::entries::rows_holding;
use crate::search::index_holds;
use chatd_testkit::eventually;

on_both_stores!(
    erasing_a_user_deletes_its_entries_ends_its_memberships_and_leaves_no_text,
    an_erasure_leaves_every_other_senders_rows_byte_identical,
    old_tokens_are_refused_and_sessions_closed_new_tokens_work,
    erasure_is_idempotent_and_answers_an_unknown_user,
    an_erasure_killed_mid_way_is_completed_after_the_restart,
    an_erasure_removes_the_users_objects_from_s3,
    an_erasure_keeps_the_users_bans_and_forgets_who_banned,
);

/// `DELETE /v1/users/{user}` with `bearer`: the status.
async fn erase(app: &TestApp, user: &str, bearer: &str) -> u16 {
    app.request("DELETE", &format!("/v1/users/{user}"), Some(bearer), None)
        .await
        .0
}

/// The next MSG_ACK or ERROR, skipping other frames.
async fn answer(client: &mut WsClient, frame: Value) -> Value {
    client.send_json(frame.clone()).await;
    loop {
        let got = client.recv().await;
        if got["type"] == "MSG_ACK" || got["type"] == "ERROR" {
            assert_eq!(got["type"], "MSG_ACK", "{frame} answered {got}");
            return got;
        }
    }
}

fn send(channel: &str, key: &str, body: &str) -> Value {
    json!({"type": "MSG_SEND", "channelId": channel, "clientMsgId": key, "body": body})
}

/// Every entry of `channel` as the admin reads it.
async fn entries(app: &TestApp, channel: &str) -> Vec<Value> {
    app.all_messages(channel).await
}

/// The rows of `sql` on the test's database, each as one text.
async fn rows(url: &str, backend: Backend, sql: &str) -> Vec<String> {
    use sqlx::{Connection, Row};
    match backend {
        Backend::Postgres => {
            let mut conn = sqlx::PgConnection::connect(url).await.expect("pg");
            sqlx::query_scalar::<_, String>(sql)
                .fetch_all(&mut conn)
                .await
                .expect("rows")
        }
        Backend::Sqlite => {
            let mut conn = sqlx::SqliteConnection::connect(url).await.expect("sqlite");
            sqlx::query(sql)
                .fetch_all(&mut conn)
                .await
                .expect("rows")
                .iter()
                .map(|r| r.get::<String, _>(0))
                .collect()
        }
    }
}

/// `SELECT count(*)` of `sql` on the database at `url`.
async fn count_at(url: &str, backend: Backend, sql: &str) -> i64 {
    let text = format!("SELECT CAST(({sql}) AS TEXT)");
    rows(url, backend, &text)
        .await
        .first()
        .and_then(|n| n.parse().ok())
        .expect("a count")
}

/// Every row of `messages` not sent by `user`, each whole row as text, in
/// (channel, seq) order.
async fn others_rows(app: &TestApp, backend: Backend, user: &str) -> Vec<String> {
    let sql = match backend {
        Backend::Postgres => {
            format!("SELECT x::text FROM messages x WHERE sender_id <> '{user}' ORDER BY channel_id, seq")
        }
        Backend::Sqlite => {
            let columns = rows(
                &app.db.url,
                backend,
                "SELECT name FROM pragma_table_info('messages') ORDER BY cid",
            )
            .await;
            assert!(columns.len() > 10, "{columns:?}");
            let all = columns
                .iter()
                .map(|c| format!("quote(\"{c}\")"))
                .collect::<Vec<_>>()
                .join(" || '|' || ");
            format!("SELECT {all} FROM messages WHERE sender_id <> '{user}' ORDER BY channel_id, seq")
        }
    };
    rows(&app.db.url, backend, &sql).await
}

/// The tables that hold a user's rows other than entries, with the
/// condition naming `alice` in each.
const ALICE_ROWS: [&str; 10] = [
    "SELECT count(*) FROM members WHERE user_id = 'alice'",
    "SELECT count(*) FROM watermarks WHERE user_id = 'alice'",
    "SELECT count(*) FROM channel_settings WHERE user_id = 'alice'",
    "SELECT count(*) FROM blocks WHERE blocker_id = 'alice' OR blocked_id = 'alice'",
    "SELECT count(*) FROM flags WHERE reporter_id = 'alice'",
    "SELECT count(*) FROM presence WHERE user_id = 'alice'",
    "SELECT count(*) FROM member_limits WHERE user_id = 'alice'",
    "SELECT count(*) FROM mentions WHERE user_id = 'alice'",
    "SELECT count(*) FROM reactions WHERE user_id = 'alice'",
    "SELECT count(*) FROM attachments WHERE uploader_id = 'alice'",
];

async fn erasing_a_user_deletes_its_entries_ends_its_memberships_and_leaves_no_text(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob", "carol"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    // A direct channel, which a user cannot leave: an erasure ends it too.
    let (status, direct) = app
        .request("PUT", "/v1/me/direct/bob", Some(&app.token("alice")), None)
        .await;
    assert_eq!(status, 201, "{direct}");
    let direct = direct["channelId"].as_str().expect("id").to_owned();

    let a1 = answer(&mut alice, send("room", "a-1", "ERASED-first-9c1d mentions bob")).await["messageId"].clone();
    let b1 = answer(&mut bob, send("room", "b-1", "KEPT-bob-9c1d")).await["messageId"].clone();
    answer(
        &mut alice,
        json!({"type": "MSG_EDIT", "clientMsgId": "a-2", "messageId": a1, "body": "ERASED-edited-9c1d"}),
    )
    .await;
    // A reply of bob's quotes alice's text; alice reacts to bob's message,
    // and bob to alice's.
    answer(
        &mut bob,
        json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "b-2", "body": "KEPT-reply-9c1d", "replyTo": a1}),
    )
    .await;
    answer(
        &mut alice,
        json!({"type": "MSG_REACT", "clientMsgId": "a-3", "messageId": b1, "emoji": "👍", "op": "add"}),
    )
    .await;
    answer(
        &mut bob,
        json!({"type": "MSG_REACT", "clientMsgId": "b-3", "messageId": b1, "emoji": "👍", "op": "add"}),
    )
    .await;
    answer(&mut alice, send(&direct, "a-4", "ERASED-direct-9c1d")).await;
    // An attachment on a message, and an upload no message carries.
    let (status, sent) = upload(
        &app,
        "alice",
        "room",
        Some("image/png"),
        png(8, 8),
        Some("ERASED-file.png"),
    )
    .await;
    assert_eq!(status, 201, "{sent}");
    let attachment = sent["attachmentId"].as_str().expect("id").to_owned();
    let ack = send_with(&mut alice, "room", "a-5", "ERASED-with-file-9c1d", &[&attachment]).await;
    assert_eq!(ack["type"], "MSG_ACK", "{ack}");
    let (status, orphan) = upload(
        &app,
        "alice",
        "room",
        Some("text/plain"),
        b"ERASED-orphan".to_vec(),
        None,
    )
    .await;
    assert_eq!(status, 201, "{orphan}");
    // Settings, blocks both ways, a flag with a note, a read watermark.
    let alice_token = app.token("alice");
    let (status, _) = app
        .request(
            "PUT",
            "/v1/me/channels/room/settings",
            Some(&alice_token),
            Some(r#"{"notify":"mentions"}"#),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        app.request("PUT", "/v1/me/blocks/carol", Some(&alice_token), None)
            .await
            .0,
        204
    );
    assert_eq!(
        app.request("PUT", "/v1/me/blocks/alice", Some(&app.token("carol")), None)
            .await
            .0,
        204
    );
    let (status, flag) = app
        .request(
            "POST",
            &format!("/v1/messages/{}/flags", b1.as_str().expect("id")),
            Some(&alice_token),
            Some(r#"{"reason":"other","note":"ERASED-note-9c1d"}"#),
        )
        .await;
    assert_eq!(status, 201, "{flag}");
    alice.send_json(json!({"type": "MSG_READ", "messageId": b1})).await;
    eventually("alice's watermark stored", || async {
        count_at(
            &app.db.url,
            backend,
            "SELECT count(*) FROM watermarks WHERE user_id = 'alice'",
        )
        .await
            > 0
    })
    .await;
    // A mention of alice by bob: a `mentions` row of hers.
    answer(
        &mut bob,
        json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "b-4", "body": "KEPT-hi-9c1d", "mentions": ["alice"]}),
    )
    .await;
    assert!(!rows_holding(&app, backend, "ERASED-").await.is_empty());
    assert!(index_holds(&app, backend, "ERASED-first").await || index_holds(&app, backend, "ERASED-edited").await);
    assert!(
        stored_files(&app).len() >= 2,
        "the image and the orphan: {:?}",
        stored_files(&app)
    );
    let room_before = entries(&app, "room").await;
    let alice_messages = room_before
        .iter()
        .filter(|e| e["kind"] == "message" && e["senderId"] == "alice")
        .count();
    assert_eq!(alice_messages, 2);

    assert_eq!(erase(&app, "alice", ADMIN_TOKEN).await, 204);

    // Bob's session saw alice leave, ordered with the log.
    let member = loop {
        let frame = bob.recv().await;
        if frame["type"] == "MEMBER" && frame["channelId"] == "room" {
            break frame;
        }
    };
    assert_eq!(member["userId"], "alice");
    assert_eq!(member["op"], "leave");
    assert!(member.get("actorId").is_none(), "made by the admin token: {member}");
    let room = entries(&app, "room").await;
    assert_eq!(
        member["afterSeq"],
        room.last().expect("entries")["seq"],
        "after every erasure entry"
    );
    // Every message of alice's deleted, with a delete entry in her name
    // made by the admin token; her reaction removed likewise.
    for message in room
        .iter()
        .filter(|e| e["kind"] == "message" && e["senderId"] == "alice")
    {
        assert_eq!(message["deleted"], true, "{message}");
        assert_eq!(message["body"], "");
        assert!(message.get("attachments").is_none_or(|a| a == &json!([])), "{message}");
    }
    let new: Vec<&Value> = room.iter().skip(room_before.len()).collect();
    let deletes: Vec<&&Value> = new.iter().filter(|e| e["kind"] == "delete").collect();
    assert_eq!(deletes.len(), alice_messages);
    for entry in &new {
        assert_eq!(entry["senderId"], "alice", "{entry}");
        assert_eq!(entry["byAdmin"], true, "{entry}");
        assert!(entry.get("clientMsgId").is_none(), "{entry}");
    }
    let removals: Vec<&&Value> = new.iter().filter(|e| e["kind"] == "reaction").collect();
    assert_eq!(removals.len(), 1, "{new:?}");
    assert_eq!(removals[0]["op"], "remove");
    assert_eq!(removals[0]["targetId"], b1);
    assert_eq!(new.len(), deletes.len() + removals.len());
    let bob_message = room.iter().find(|e| e["messageId"] == b1).expect("b1");
    assert_eq!(
        bob_message["reactions"],
        json!([{"emoji": "👍", "count": 1, "me": false}])
    );
    let reply = room.iter().find(|e| e["clientMsgId"] == "b-2").expect("reply");
    assert_eq!(reply["replyPreview"]["deleted"], true, "{reply}");
    assert_eq!(reply["replyPreview"]["body"], "");
    let direct_entries = entries(&app, &direct).await;
    assert_eq!(direct_entries[0]["deleted"], true);
    // Her memberships ended, the direct channel's included.
    for channel in ["room", direct.as_str()] {
        let (status, members) = app
            .request(
                "GET",
                &format!("/v1/channels/{channel}/members"),
                Some(ADMIN_TOKEN),
                None,
            )
            .await;
        assert_eq!(status, 200);
        let users: Vec<&Value> = members["members"]
            .as_array()
            .expect("members")
            .iter()
            .map(|m| &m["userId"])
            .collect();
        assert!(!users.is_empty() && !users.contains(&&json!("alice")), "{members}");
    }
    // Nothing of hers is left in the rows that are not entries, and none
    // of her idempotency keys.
    for sql in ALICE_ROWS {
        assert_eq!(count_at(&app.db.url, backend, sql).await, 0, "{sql}");
    }
    let keys = count_at(
        &app.db.url,
        backend,
        "SELECT count(*) FROM messages WHERE sender_id = 'alice' AND client_msg_id NOT LIKE 'erased-%'",
    )
    .await;
    assert_eq!(keys, 0, "her idempotency keys are gone");
    // Guarantee 14: no erased text in any table, the index or the files.
    let left = rows_holding(&app, backend, "ERASED-").await;
    assert!(left.is_empty(), "erased text left: {left:?}");
    for needle in ["ERASED-first", "ERASED-edited", "ERASED-direct", "ERASED-with-file"] {
        assert!(!index_holds(&app, backend, needle).await, "{needle} is still indexed");
    }
    eventually("the attachment bytes removed", || async {
        stored_files(&app).is_empty()
    })
    .await;
    let (status, _) = app
        .request("GET", &format!("/v1/attachments/{attachment}"), Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(status, 404);
    // Bob's text is all there.
    assert_eq!(rows_holding(&app, backend, "KEPT-").await.len(), 3);
    if backend == Backend::Sqlite {
        // secure_delete and the checkpoints: the erased bytes are gone
        // from the files themselves.
        let db = app.db.dir.path().join("chatd.db");
        for path in [db.clone(), db.with_extension("db-wal")] {
            if let Ok(bytes) = std::fs::read(&path) {
                let hit = bytes.windows(7).any(|w| w == b"ERASED-");
                assert!(!hit, "{} still holds erased text", path.display());
            }
        }
    }
}

async fn an_erasure_leaves_every_other_senders_rows_byte_identical(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("one", &["alice", "bob", "carol"]).await;
    app.create_channel("two", &["alice", "bob", "carol"]).await;
    let mut clients = [
        ("alice", app.connect("alice").await),
        ("bob", app.connect("bob").await),
        ("carol", app.connect("carol").await),
    ];
    let mut ids = Vec::new();
    for n in 0..30 {
        let (who, client) = &mut clients[n % 3];
        let channel = if n % 2 == 0 { "one" } else { "two" };
        let ack = answer(
            client,
            send(channel, &format!("{who}-{n}"), &format!("{who} says {n} 7e2b")),
        )
        .await;
        ids.push((who.to_owned(), ack["messageId"].clone()));
    }
    // Alice reacts to the others' messages and edits her own; the others
    // react to hers.
    for (n, (who, id)) in ids.clone().into_iter().enumerate() {
        let reactor = if who == "alice" { 1 } else { 0 };
        let frame =
            json!({"type": "MSG_REACT", "clientMsgId": format!("r-{n}"), "messageId": id, "emoji": "🎉", "op": "add"});
        answer(&mut clients[reactor].1, frame).await;
        if who == "alice" {
            let frame = json!({"type": "MSG_EDIT", "clientMsgId": format!("e-{n}"), "messageId": id, "body": format!("alice edited {n}")});
            answer(&mut clients[0].1, frame).await;
        }
    }
    let before = others_rows(&app, backend, "alice").await;
    assert!(before.len() >= 20, "{}", before.len());
    let read_before: Vec<Value> = [entries(&app, "one").await, entries(&app, "two").await].concat();

    assert_eq!(erase(&app, "alice", ADMIN_TOKEN).await, 204);

    assert_eq!(
        others_rows(&app, backend, "alice").await,
        before,
        "another sender's row changed"
    );
    let read_after: Vec<Value> = [entries(&app, "one").await, entries(&app, "two").await].concat();
    let others = |entries: &[Value]| -> Vec<Value> {
        entries
            .iter()
            .filter(|e| e["senderId"] != "alice")
            .map(|e| {
                let mut e = e.clone();
                // Alice's reactions were removed from their counts: compared below.
                e.as_object_mut().expect("object").remove("reactions");
                e
            })
            .collect()
    };
    assert_eq!(others(&read_after), others(&read_before));
    // Alice's messages were deleted with their reactions, and her
    // reactions to the others' messages were removed.
    for entry in read_before.iter().filter(|e| e["kind"] == "message") {
        assert_eq!(entry["reactions"].as_array().map(Vec::len), Some(1), "{entry}");
    }
    for entry in read_after.iter().filter(|e| e["kind"] == "message") {
        assert_eq!(entry["reactions"], json!([]), "{entry}");
        assert_eq!(entry["deleted"] == true, entry["senderId"] == "alice", "{entry}");
    }
}

async fn old_tokens_are_refused_and_sessions_closed_new_tokens_work(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let old = app.token("alice");
    let (status, direct) = app.request("PUT", "/v1/me/direct/bob", Some(&old), None).await;
    assert_eq!(status, 201, "{direct}");
    let mut session = app.connect("alice").await;
    let mut second = app.connect("alice").await;
    assert_eq!(app.request("GET", "/v1/me/channels", Some(&old), None).await.0, 200);

    assert_eq!(erase(&app, "alice", ADMIN_TOKEN).await, 204);

    assert_eq!(session.recv_close_code().await, 1008);
    assert_eq!(second.recv_close_code().await, 1008);
    let (status, body) = app.request("GET", "/v1/me/channels", Some(&old), None).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["error"]["code"], "unauthorized", "{body}");
    let refused = app.connect_raw(&old).await;
    assert!(
        matches!(&refused, Err(tokio_tungstenite::tungstenite::Error::Http(r)) if r.status() == 401),
        "{:?}",
        refused.map(|_| ())
    );
    // Another user's token is not touched.
    assert_eq!(
        app.request("GET", "/v1/me/channels", Some(&app.token("bob")), None)
            .await
            .0,
        200
    );
    // A token issued after the erasure (iat is in whole seconds) works:
    // the user starts afresh, in no channel.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let fresh = app.token("alice");
    let (status, channels) = app.request("GET", "/v1/me/channels", Some(&fresh), None).await;
    assert_eq!(status, 200, "{channels}");
    assert_eq!(channels["channels"], json!([]), "{channels}");
    let ws = app.connect_raw(&fresh).await.expect("a fresh token connects");
    drop(ws);
    // Her direct channel with bob is not hers any more: a new one is made.
    let (status, again) = app.request("PUT", "/v1/me/direct/bob", Some(&fresh), None).await;
    assert_eq!(status, 201, "{again}");
    assert_ne!(again["channelId"], direct["channelId"]);
    let (status, from_bob) = app
        .request("PUT", "/v1/me/direct/alice", Some(&app.token("bob")), None)
        .await;
    assert_eq!(status, 200, "{from_bob}");
    assert_eq!(from_bob["channelId"], again["channelId"]);
}

async fn erasure_is_idempotent_and_answers_an_unknown_user(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    answer(&mut alice, send("room", "a-1", "gone soon")).await;
    assert_eq!(erase(&app, "alice", ADMIN_TOKEN).await, 204);
    let after_first = entries(&app, "room").await;
    assert_eq!(erase(&app, "alice", ADMIN_TOKEN).await, 204, "a second call");
    assert_eq!(entries(&app, "room").await, after_first, "nothing more to erase");
    assert_eq!(erase(&app, "nobody-ever", ADMIN_TOKEN).await, 204, "an unknown user");
    assert_eq!(entries(&app, "room").await, after_first);
    // Bad input and the wrong credentials.
    let (status, body) = app
        .request("DELETE", "/v1/users/bad%20id", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["code"], "invalid_field", "{body}");
    assert_eq!(erase(&app, "bob", &app.token("bob")).await, 403);
    assert_eq!(app.request("DELETE", "/v1/users/bob", None, None).await.0, 401);
    // The Rust client's admin API does the same.
    let client = chatd_client::admin::AdminClient::new(app.url(""), ADMIN_TOKEN);
    client.erase_user("bob").await.expect("erase bob");
    let room = entries(&app, "room").await;
    assert!(room.iter().all(|e| e["kind"] != "message" || e["deleted"] == true));
}

async fn an_erasure_killed_mid_way_is_completed_after_the_restart(backend: Backend) {
    const MESSAGES: usize = 300;
    let db = TestDb::new(backend).await;
    let start = |batch: &str| {
        let mut cmd = chatd!(db.dir.path());
        cmd.env("CHATD_DATABASE_URL", &db.url)
            .env("CHATD_DATA_DIR", db.dir.path())
            .env("CHATD_ADMIN_TOKEN", ADMIN_TOKEN)
            .env("CHATD_JWT_SECRET", JWT_SECRET)
            .env("CHATD_ERASURE_BATCH", batch);
        ServerProcess::start(cmd)
    };
    let mut server = start("1");
    let admin = server.admin(ADMIN_TOKEN);
    admin.create_channel("room", &["alice", "bob"]).await;
    let old = mint_token(JWT_SECRET, "alice", 600);
    let mut alice = server.connect(&old).await;
    for n in 0..MESSAGES {
        alice
            .send_json(send("room", &format!("k{n}"), &format!("ERASED-{n}")))
            .await;
    }
    let mut acked = 0;
    while acked < MESSAGES {
        if alice.recv().await["type"] == "MSG_ACK" {
            acked += 1;
        }
    }
    let deletes = "SELECT count(*) FROM messages WHERE kind = 'delete'";
    let http = reqwest::Client::new();
    let url = server.url("/v1/users/alice");
    let asked = tokio::spawn(async move { http.delete(url).bearer_auth(ADMIN_TOKEN).send().await });
    // Killed once some of the deletes are stored, not all.
    let mut seen = 0;
    for _ in 0..2000 {
        seen = count_at(&db.url, backend, deletes).await;
        if seen >= 5 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    server.kill();
    let _ = asked.await;
    assert!(seen >= 5, "the erasure did not start");
    let stored = count_at(&db.url, backend, deletes).await as usize;
    assert!(stored < MESSAGES, "killed after the erasure ended ({stored} deletes)");
    let pending = "SELECT count(*) FROM user_erasures WHERE user_id = 'alice' AND pending = TRUE";
    assert_eq!(count_at(&db.url, backend, pending).await, 1, "recorded as pending");

    let server = start("64");
    let (url, done) = (
        db.url.clone(),
        "SELECT count(*) FROM user_erasures WHERE pending = FALSE",
    );
    let mut finished = false;
    for _ in 0..300 {
        if count_at(&url, backend, done).await == 1 {
            finished = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(finished, "the erasure was not resumed: {}", server.log_text());
    let admin = server.admin(ADMIN_TOKEN);
    let room = admin.all_messages("room").await;
    let messages: Vec<&Value> = room.iter().filter(|e| e["kind"] == "message").collect();
    assert_eq!(messages.len(), MESSAGES);
    assert!(messages.iter().all(|m| m["deleted"] == true));
    let deletes: Vec<&Value> = room.iter().filter(|e| e["kind"] == "delete").collect();
    assert_eq!(deletes.len(), MESSAGES, "one delete each, none twice");
    let seqs: Vec<i64> = room.iter().map(|e| e["seq"].as_i64().expect("seq")).collect();
    assert_eq!(seqs, (1..=seqs.len() as i64).collect::<Vec<_>>(), "gapless");
    let members = count_at(&url, backend, "SELECT count(*) FROM members WHERE user_id = 'alice'").await;
    assert_eq!(members, 0);
    let text = count_at(
        &url,
        backend,
        "SELECT count(*) FROM messages WHERE body LIKE 'ERASED-%'",
    )
    .await;
    assert_eq!(text, 0);
    // The old token is refused by the restarted server too.
    let res = reqwest::Client::new()
        .get(server.url("/v1/me/channels"))
        .bearer_auth(&old)
        .send()
        .await
        .expect("http");
    assert_eq!(res.status().as_u16(), 401);
}

async fn an_erasure_removes_the_users_objects_from_s3(backend: Backend) {
    let Some(endpoint) = std::env::var("CHATD_TEST_S3_ENDPOINT").ok().filter(|e| !e.is_empty()) else {
        eprintln!("CHATD_TEST_S3_ENDPOINT unset: the S3 erasure test is skipped");
        return;
    };
    for (name, value) in [("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")] {
        if std::env::var_os(name).is_none() {
            std::env::set_var(name, value);
        }
    }
    let bucket = format!("chatd-test-{}", uuid::Uuid::now_v7().simple());
    let created = reqwest::Client::new()
        .put(format!("{endpoint}/{bucket}"))
        .send()
        .await
        .expect("create bucket");
    assert!(created.status().is_success(), "bucket: {}", created.status());
    let app = spawn_app_with(backend, |c| {
        c.attachments_store = chatd::config::AttachmentsStore::S3;
        c.attachments_s3_bucket = Some(bucket.clone());
        c.attachments_s3_endpoint = Some(endpoint.clone());
        c.attachments_s3_region = Some("us-east-1".into());
    })
    .await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let (status, sent) = upload(&app, "alice", "room", Some("image/png"), png(40, 20), Some("a.png")).await;
    assert_eq!(status, 201, "{sent}");
    let sent = sent["attachmentId"].as_str().expect("id").to_owned();
    let ack = send_with(&mut alice, "room", "a-1", "", &[&sent]).await;
    assert_eq!(ack["type"], "MSG_ACK", "{ack}");
    let (status, orphan) = upload(&app, "alice", "room", Some("text/plain"), b"ERASED".to_vec(), None).await;
    assert_eq!(status, 201, "{orphan}");
    let orphan = orphan["attachmentId"].as_str().expect("id").to_owned();
    let (status, kept) = upload(&app, "bob", "room", Some("text/plain"), b"bob's".to_vec(), None).await;
    assert_eq!(status, 201, "{kept}");
    let kept = kept["attachmentId"].as_str().expect("id").to_owned();
    answer(
        &mut bob,
        json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "b-1", "body": "", "attachments": [kept]}),
    )
    .await;
    let storage = &app.state.attachments.storage;
    for key in [
        format!("files/{sent}"),
        format!("thumbnails/{sent}"),
        format!("files/{orphan}"),
    ] {
        assert!(storage.exists(&key).await.expect("s3"), "{key} stored");
    }

    assert_eq!(erase(&app, "alice", ADMIN_TOKEN).await, 204);

    for key in [
        format!("files/{sent}"),
        format!("thumbnails/{sent}"),
        format!("files/{orphan}"),
    ] {
        let mut gone = false;
        for _ in 0..100 {
            if !storage.exists(&key).await.expect("s3") {
                gone = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(gone, "{key} is still in the bucket");
    }
    assert!(
        storage.exists(&format!("files/{kept}")).await.expect("s3"),
        "bob's upload is kept"
    );
}

/// A ban is the channel's decision about an id, not the user's data (§19
/// does not list it): it outlives the erasure, so the backend's new token
/// for the same id is still kept out. An erased moderator's name leaves
/// the bans it made.
async fn an_erasure_keeps_the_users_bans_and_forgets_who_banned(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(
        json!({"channelId": "lobby", "visibility": "public", "owners": ["olive"],
        "members": ["alice", "mona", "bob"]}),
    )
    .await;
    let promote = json!({"role": "moderator"}).to_string();
    let path = "/v1/channels/lobby/members/mona";
    assert_eq!(
        app.request("PUT", path, Some(&app.token("olive")), Some(&promote))
            .await
            .0,
        204
    );
    for (by, user) in [("olive", "alice"), ("mona", "bob")] {
        let path = format!("/v1/channels/lobby/members/{user}?ban=true");
        let (status, body) = app.request("DELETE", &path, Some(&app.token(by)), None).await;
        assert_eq!(status, 204, "{by} bans {user}: {body}");
    }

    assert_eq!(erase(&app, "alice", ADMIN_TOKEN).await, 204);
    assert_eq!(erase(&app, "mona", ADMIN_TOKEN).await, 204);

    let (status, bans) = app
        .request("GET", "/v1/channels/lobby/bans", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(status, 200, "{bans}");
    let listed: Vec<(Value, Value)> = bans["bans"]
        .as_array()
        .expect("bans")
        .iter()
        .map(|ban| {
            (
                ban["userId"].clone(),
                ban.get("actorId").cloned().unwrap_or(Value::Null),
            )
        })
        .collect();
    assert_eq!(
        listed,
        vec![(json!("alice"), json!("olive")), (json!("bob"), Value::Null)],
        "{bans}"
    );
    let by_mona = count_at(
        &app.db.url,
        backend,
        "SELECT count(*) FROM bans WHERE banned_by = 'mona'",
    )
    .await;
    assert_eq!(by_mona, 0);
    // A token made after the erasure: the id is still banned.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (status, body) = app
        .request("PUT", "/v1/me/channels/lobby", Some(&app.token("alice")), None)
        .await;
    assert_eq!((status, &body["error"]["reason"]), (403, &json!("banned")), "{body}");
}
