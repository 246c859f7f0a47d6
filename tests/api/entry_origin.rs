//! How an entry was made (protocol.md §12, common rules of version 1.2):
//! entries created through an HTTP route carry no `clientMsgId`, and those
//! made with the admin token also carry `"byAdmin": true`, in the MSG_RECV
//! a connected member gets, in SYNC and on the history route. A frame's
//! entry keeps its `clientMsgId` and has no `byAdmin`. The backend post's
//! key still makes its retries idempotent.

use serde_json::{json, Value};

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, Backend, TestApp, WsClient, ADMIN_TOKEN};

on_both_stores!(entries_made_through_http_show_no_key_and_by_admin_for_the_admin_token);

/// What an entry shows of how it was made: its `clientMsgId` and `byAdmin`
/// (`None` when absent from the JSON).
fn origin(entry: &Value) -> (Option<&Value>, Option<&Value>) {
    (entry.get("clientMsgId"), entry.get("byAdmin"))
}

/// The next MSG_RECV `client` gets, checked to be the entry at `seq`.
async fn next_entry(client: &mut WsClient, seq: i64) -> Value {
    let entry = client.recv_type("MSG_RECV").await;
    assert_eq!(entry["seq"], seq, "{entry}");
    entry
}

/// Every entry of room as the history route and as SYNC return them.
async fn reads(app: &TestApp, reader: &mut WsClient) -> [Vec<Value>; 2] {
    let (status, history) = app.history("room", &app.token("bob"), "afterSeq=0").await;
    assert_eq!(status, 200, "{history}");
    reader
        .send_json(json!({"type": "SYNC", "channelId": "room", "afterSeq": 0}))
        .await;
    let batch = reader.recv_type("SYNC_BATCH").await;
    [history, batch].map(|page| page["messages"].as_array().expect("messages").clone())
}

async fn entries_made_through_http_show_no_key_and_by_admin_for_the_admin_token(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "room", "owners": ["olive"], "members": ["mo", "alice", "bob"]}))
        .await;
    let (status, _) = app
        .request(
            "PUT",
            "/v1/channels/room/members/mo",
            Some(ADMIN_TOKEN),
            Some(r#"{"role": "moderator"}"#),
        )
        .await;
    assert_eq!(status, 204);
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let key = |k: &str| Some(json!(k));
    let admin = Some(json!(true));

    // seq 1: a frame keeps its key and has no byAdmin.
    let frame = alice.send_and_ack("room", "w1", "from a frame").await;
    assert_eq!(origin(&next_entry(&mut bob, 1).await), (key("w1").as_ref(), None));

    // seq 2: the backend post (admin token): byAdmin, no key. Its answer, the
    // MSG_ACK, still names the caller's key.
    let post = json!({"senderId": "alice", "clientMsgId": "b1", "body": "from the backend"});
    let (status, ack) = app
        .request(
            "POST",
            "/v1/channels/room/messages",
            Some(ADMIN_TOKEN),
            Some(&post.to_string()),
        )
        .await;
    assert_eq!(
        (status, &ack["clientMsgId"], &ack["seq"]),
        (201, &json!("b1"), &json!(2)),
        "{ack}"
    );
    // Every live session gets it, the sender's own included.
    for client in [&mut bob, &mut alice] {
        let posted = next_entry(client, 2).await;
        assert_eq!(origin(&posted), (None, admin.as_ref()), "{posted}");
        assert_eq!(posted["senderId"], "alice");
    }
    // Its key is still stored: a retry, by the route or by a frame of the
    // sender, is a duplicate, and nothing more is stored.
    let (status, again) = app
        .request(
            "POST",
            "/v1/channels/room/messages",
            Some(ADMIN_TOKEN),
            Some(&post.to_string()),
        )
        .await;
    assert_eq!(
        (status, &again["duplicate"], &again["seq"]),
        (200, &json!(true), &json!(2)),
        "{again}"
    );
    let retried = alice.send_and_ack("room", "b1", "from the backend").await;
    assert_eq!(
        (&retried["duplicate"], &retried["seq"]),
        (&json!(true), &json!(2)),
        "{retried}"
    );

    // seq 3: a moderator's delete route (a user token): no key, no byAdmin.
    let (status, body) = app
        .request(
            "DELETE",
            &format!(
                "/v1/channels/room/messages/{}",
                frame["messageId"].as_str().expect("id")
            ),
            Some(&app.token("mo")),
            None,
        )
        .await;
    assert_eq!(status, 204, "{body}");
    for client in [&mut bob, &mut alice] {
        let deleted = next_entry(client, 3).await;
        assert_eq!(
            (&deleted["kind"], &deleted["senderId"]),
            (&json!("delete"), &json!("mo"))
        );
        assert_eq!(origin(&deleted), (None, None), "{deleted}");
    }

    // seq 4: the admin token's delete route: byAdmin, no key.
    let (status, body) = app
        .request(
            "DELETE",
            &format!("/v1/channels/room/messages/{}", ack["messageId"].as_str().expect("id")),
            Some(ADMIN_TOKEN),
            None,
        )
        .await;
    assert_eq!(status, 204, "{body}");
    for client in [&mut bob, &mut alice] {
        let deleted = next_entry(client, 4).await;
        assert_eq!(
            (&deleted["kind"], &deleted["senderId"]),
            (&json!("delete"), &json!("alice"))
        );
        assert_eq!(origin(&deleted), (None, admin.as_ref()), "{deleted}");
    }

    // seq 5: a moderator's MSG_DELETE frame keeps its key.
    let third = alice.send_and_ack("room", "w2", "another").await;
    next_entry(&mut bob, 5).await;
    let mut mo = app.connect("mo").await;
    mo.send_json(json!({"type": "MSG_DELETE", "clientMsgId": "d1", "messageId": third["messageId"]}))
        .await;
    assert_eq!(mo.recv_type("MSG_ACK").await["seq"], 6);
    assert_eq!(origin(&next_entry(&mut bob, 6).await), (key("d1").as_ref(), None));

    // The reads show the same.
    let expected = [
        (key("w1"), None),
        (None, admin.clone()),
        (None, None),
        (None, admin.clone()),
        (key("w2"), None),
        (key("d1"), None),
    ];
    for (read, entries) in ["history", "SYNC"].into_iter().zip(reads(&app, &mut bob).await) {
        let seqs: Vec<i64> = entries.iter().map(|e| e["seq"].as_i64().expect("seq")).collect();
        assert_eq!(seqs, vec![1, 2, 3, 4, 5, 6], "{read}");
        for (entry, (key, by_admin)) in entries.iter().zip(&expected) {
            assert_eq!(origin(entry), (key.as_ref(), by_admin.as_ref()), "{read}: {entry}");
        }
    }
    app.stop().await;
}
