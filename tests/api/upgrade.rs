//! Migrations are additive (issue 16, point 6): a database created by the
//! schema before the channel log (migrations 0001–0002 only), holding
//! messages and watermarks, upgrades in place when the server starts, keeps
//! every row, and v1 clients keep working on it.

use serde_json::json;

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app_on, AnyPool, Backend, TestDb};

on_both_stores!(
    a_database_of_the_previous_schema_upgrades_in_place_and_v1_keeps_working,
    deletes_stored_by_the_route_before_0018_lose_their_server_made_key,
);

/// Applies only the v1 migrations (0001 and 0002) to `db` and inserts the
/// v1 rows.
async fn previous_schema(db: &TestDb, backend: Backend) {
    match db.apply_v1_schema(backend).await {
        AnyPool::Postgres(pool) => {
            insert_v1_rows(&pool).await;
            pool.close().await;
        }
        AnyPool::Sqlite(pool) => {
            insert_v1_rows(&pool).await;
            pool.close().await;
        }
    }
}

/// Ids of the three v1 messages.
const IDS: [&str; 3] = [
    "01938f5e-6c2a-7b3e-9d41-2f0c8a1b7e51",
    "01938f5e-6c2a-7b3e-9d41-2f0c8a1b7e52",
    "01938f5e-6c2a-7b3e-9d41-2f0c8a1b7e53",
];

/// A channel `room` (alice, bob), three messages from alice, bob's
/// watermarks at delivered 2 / read 1: the rows of the v1 schema.
async fn insert_v1_rows<DB: sqlx::Database>(pool: &sqlx::Pool<DB>)
where
    for<'c> &'c sqlx::Pool<DB>: sqlx::Executor<'c, Database = DB>,
{
    let uuid = |id: &str| -> String {
        if std::any::type_name::<DB>().contains("Postgres") {
            format!("'{id}'::uuid")
        } else {
            format!("'{id}'")
        }
    };
    let mut statements = vec![
        "INSERT INTO channels (channel_id, created_at, last_seq, last_ts) VALUES ('room', 1, 3, 30)".to_owned(),
        "INSERT INTO members (channel_id, user_id, joined_at) VALUES ('room', 'alice', 1), ('room', 'bob', 1)"
            .to_owned(),
        "INSERT INTO watermarks (channel_id, user_id, delivered_seq, read_seq) VALUES ('room', 'bob', 2, 1)".to_owned(),
    ];
    for (n, id) in IDS.iter().enumerate() {
        let seq = n + 1;
        statements.push(format!(
            "INSERT INTO messages (message_id, channel_id, seq, sender_id, client_msg_id, body, ts) \
             VALUES ({}, 'room', {seq}, 'alice', 'k{seq}', 'old message {seq}', {})",
            uuid(id),
            seq * 10
        ));
    }
    for statement in statements {
        sqlx::raw_sql(&statement).execute(pool).await.expect("insert v1 rows");
    }
}

async fn a_database_of_the_previous_schema_upgrades_in_place_and_v1_keeps_working(backend: Backend) {
    let db = TestDb::new(backend).await;
    previous_schema(&db, backend).await;
    // The server migrates at start.
    let app = spawn_app_on(db, |_| {}).await;

    // Every message and watermark is kept.
    let messages = app.all_messages("room").await;
    assert_eq!(messages.len(), 3);
    for (n, m) in messages.iter().enumerate() {
        assert_eq!(m["messageId"], IDS[n]);
        assert_eq!(m["body"], format!("old message {}", n + 1));
        assert_eq!(m["seq"], n as i64 + 1);
        assert_eq!(m["kind"], "message");
        assert_eq!(m["reactions"], json!([]));
    }
    let mut bob = app.connect("bob").await;
    let channel = &bob.hello["channels"][0];
    // Version 1.2: a channel made before it is a private group of members.
    assert_eq!(
        (
            &channel["kind"],
            &channel["visibility"],
            &channel["memberCount"],
            &channel["role"]
        ),
        (&json!("group"), &json!("private"), &json!(2), &json!("member"))
    );
    assert_eq!(
        (
            &channel["lastSeq"],
            &channel["deliveredSeq"],
            &channel["readSeq"],
            &channel["unread"]
        ),
        (&json!(3), &json!(2), &json!(1), &json!(2))
    );

    // v1 clients: send, retry an old key, sync, receipts.
    let mut alice = app.connect("alice").await;
    let ack = alice.send_and_ack("room", "k4", "new message").await;
    assert_eq!(
        (ack["seq"].as_i64(), ack["duplicate"].as_bool()),
        (Some(4), Some(false))
    );
    let recv = bob.recv_type("MSG_RECV").await;
    assert_eq!(
        (recv["seq"].as_i64(), recv["body"].as_str()),
        (Some(4), Some("new message"))
    );
    let retry = alice.send_and_ack("room", "k1", "old message 1").await;
    assert_eq!(retry["duplicate"], true);
    assert_eq!(retry["messageId"], IDS[0]);
    alice
        .send_json(json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "k2", "body": "changed"}))
        .await;
    assert_eq!(alice.recv_type("ERROR").await["code"], "idempotency_conflict");
    bob.send_json(json!({"type": "SYNC", "channelId": "room", "afterSeq": 1}))
        .await;
    let batch = bob.recv_type("SYNC_BATCH").await;
    let seqs: Vec<i64> = batch["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["seq"].as_i64())
        .collect();
    assert_eq!(seqs, [2, 3, 4]);
    bob.send_json(json!({"type": "MSG_READ", "messageId": IDS[2]})).await;
    let receipt = alice.recv_type("RECEIPT").await;
    assert_eq!(
        (receipt["kind"].as_str(), receipt["seq"].as_i64()),
        (Some("read"), Some(3))
    );

    // And the new entries work on the old rows.
    let react = json!({"type": "MSG_REACT", "clientMsgId": "r1", "messageId": IDS[0], "emoji": "👍", "op": "add"});
    bob.send_json(react).await;
    assert_eq!(bob.recv_type("MSG_ACK").await["seq"], 5);
    let edit = json!({"type": "MSG_EDIT", "clientMsgId": "e1", "messageId": IDS[1], "body": "edited"});
    alice.send_json(edit).await;
    loop {
        let frame = alice.recv().await;
        if frame["type"] == "MSG_ACK" {
            assert_eq!(frame["seq"], 6);
            break;
        }
    }
    let messages = app.all_messages("room").await;
    assert_eq!(messages[0]["reactions"][0]["count"], 1);
    assert_eq!(messages[1]["body"], "edited");

    // Version 1.2: the members of a channel made before it are `member`s,
    // with the watermarks they had.
    let (status, page) = app
        .request("GET", "/v1/channels/room/members", Some(&app.token("alice")), None)
        .await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        page["members"],
        json!([
            {"userId": "alice", "role": "member", "joinedAt": 1, "deliveredSeq": 0, "readSeq": 0},
            {"userId": "bob", "role": "member", "joinedAt": 1, "deliveredSeq": 3, "readSeq": 3},
        ])
    );
}

/// Migration 0018 (how an entry was made, §12): a delete the route stored
/// before it, with the key the server made (`http-` and a UUIDv7), reads
/// with no `clientMsgId`; a frame's delete keeps its key, even one that
/// starts with `http-` but is not a UUIDv7 after it.
async fn deletes_stored_by_the_route_before_0018_lose_their_server_made_key(backend: Backend) {
    let db = TestDb::new(backend).await;
    let uuid = |id: &str| match backend {
        Backend::Postgres => format!("'{id}'::uuid"),
        Backend::Sqlite => format!("'{id}'"),
    };
    let target = "01938f5e-6c2a-7b3e-9d41-2f0c8a1b7e51";
    let mut statements = vec![
        "INSERT INTO channels (channel_id, created_at, last_seq, last_ts) VALUES ('room', 1, 3, 30)".to_owned(),
        "INSERT INTO members (channel_id, user_id, joined_at) VALUES ('room', 'alice', 1), ('room', 'mo', 1)"
            .to_owned(),
        format!(
            "INSERT INTO messages (message_id, channel_id, seq, sender_id, client_msg_id, body, ts, deleted) \
             VALUES ({}, 'room', 1, 'alice', 'k1', '', 10, TRUE)",
            uuid(target)
        ),
    ];
    for (seq, key) in [(2, "http-01a248bb-e9b9-7245-a4fc-55f0e9be5a29"), (3, "http-mine")] {
        statements.push(format!(
            "INSERT INTO messages (message_id, channel_id, seq, sender_id, client_msg_id, body, ts, kind, target_id) \
             VALUES ({}, 'room', {seq}, 'mo', '{key}', '', {}, 'delete', {})",
            uuid(&format!("01938f5e-6c2a-7b3e-9d41-2f0c8a1b7e5{seq}")),
            seq * 10,
            uuid(target)
        ));
    }
    match db.apply_schema_before(backend, 18).await {
        AnyPool::Postgres(pool) => {
            for statement in &statements {
                sqlx::raw_sql(statement).execute(&pool).await.expect("insert");
            }
            pool.close().await;
        }
        AnyPool::Sqlite(pool) => {
            for statement in &statements {
                sqlx::raw_sql(statement).execute(&pool).await.expect("insert");
            }
            pool.close().await;
        }
    }
    let app = spawn_app_on(db, |_| {}).await;
    let (status, page) = app.history("room", &app.token("alice"), "afterSeq=0").await;
    assert_eq!(status, 200, "{page}");
    let keys: Vec<(i64, Option<&serde_json::Value>, Option<&serde_json::Value>)> = page["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|e| (e["seq"].as_i64().expect("seq"), e.get("clientMsgId"), e.get("byAdmin")))
        .collect();
    assert_eq!(
        keys,
        vec![
            (1, Some(&json!("k1")), None),
            (2, None, None),
            (3, Some(&json!("http-mine")), None)
        ],
        "{page}"
    );
    app.stop().await;
}
