//! Replies and threads (protocol §14): `replyTo` and `threadId` on MSG_SEND
//! and the backend post, checked in the spec's order inside the batch
//! (nothing stored on a refusal, the connection stays open), covered by the
//! idempotency key; previews computed at read time (an edit shows, a
//! deletion erases: the old text is gone from every table); thread
//! summaries on roots after edits, deletes and retries; one thread paged
//! by the history route and SYNC with `threadId`.

use serde_json::{json, Value};

use chatd_testkit::on_both_stores;
use chatd_testkit::{reply, spawn_app, Backend, TestApp, WsClient, ADMIN_TOKEN};

use crate::entries::rows_holding;

on_both_stores!(
    replies_carry_previews_and_roots_their_thread_summary,
    a_deleted_quote_is_erased_from_previews_and_tables,
    bad_references_are_refused_in_the_spec_order_and_store_nothing,
    the_idempotency_key_covers_reply_to_and_thread_id,
    a_thread_is_paged_like_a_channel,
    the_backend_post_takes_replies_and_refuses_bad_references,
);

/// Sends `frame` and returns its MSG_ACK or ERROR, skipping other frames.
async fn answer(client: &mut WsClient, frame: Value) -> Value {
    client.send_json(frame).await;
    loop {
        let got = client.recv().await;
        if got["type"] == "MSG_ACK" || got["type"] == "ERROR" {
            return got;
        }
    }
}

async fn acked(client: &mut WsClient, frame: Value) -> Value {
    let got = answer(client, frame.clone()).await;
    assert_eq!(got["type"], "MSG_ACK", "{frame} answered {got}");
    got
}

/// Every entry of `channel` as `user` reads it.
async fn read_as(app: &TestApp, channel: &str, user: &str) -> Vec<Value> {
    let (status, body) = app.history(channel, &app.token(user), "afterSeq=0&limit=500").await;
    assert_eq!(status, 200, "{body}");
    body["messages"].as_array().expect("messages").clone()
}

fn by_id<'a>(entries: &'a [Value], id: &Value) -> &'a Value {
    entries.iter().find(|e| e["messageId"] == *id).expect("in the read")
}

/// A page of `root`'s thread by the history route.
async fn thread_page(app: &TestApp, user: &str, root: &Value, query: &str) -> (u16, Value) {
    let root = root.as_str().expect("id");
    app.history("room", &app.token(user), &format!("threadId={root}&{query}"))
        .await
}

fn seqs(page: &Value) -> Vec<i64> {
    page["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["seq"].as_i64().expect("seq"))
        .collect()
}

async fn replies_carry_previews_and_roots_their_thread_summary(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob", "carol"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let mut carol = app.connect("carol").await;
    // 150 two-byte characters: 300 bytes, cut to 200 at a boundary.
    let long = "é".repeat(150);
    let root = alice.send_and_ack("room", "root", &long).await["messageId"].clone();
    bob.recv_type("MSG_RECV").await;
    carol.recv_type("MSG_RECV").await;

    let quote = acked(&mut bob, reply("q1", "quoting", Some(&root), None)).await;
    let recv = alice.recv_type("MSG_RECV").await;
    assert_eq!(recv["replyTo"], root);
    assert_eq!(
        recv["replyPreview"],
        json!({"senderId": "alice", "body": "é".repeat(100)}),
        "the quoted text cut to 200 bytes, in MSG_RECV"
    );
    assert!(recv.get("threadId").is_none());
    carol.recv_type("MSG_RECV").await;

    let r1 = acked(&mut bob, reply("t1", "first", None, Some(&root))).await;
    let r2 = acked(
        &mut carol,
        reply("t2", "second", Some(&quote["messageId"]), Some(&root)),
    )
    .await;
    let r3 = acked(&mut bob, reply("t3", "third", None, Some(&root))).await;
    let recv = loop {
        let got = alice.recv_type("MSG_RECV").await;
        if got["messageId"] == r2["messageId"] {
            break got;
        }
    };
    assert_eq!(recv["threadId"], root);
    assert_eq!(recv["replyPreview"]["body"], "quoting");

    let entries = read_as(&app, "room", "carol").await;
    let read_root = by_id(&entries, &root);
    assert_eq!(
        read_root["thread"],
        json!({"replyCount": 3, "lastReplyAt": r3["ts"], "lastReplySeq": r3["seq"],
               "participants": ["bob", "carol"]}),
        "replies in order, participants once each"
    );
    assert!(
        by_id(&entries, &r1["messageId"]).get("thread").is_none(),
        "replies are no roots"
    );
    assert!(
        by_id(&entries, &quote["messageId"]).get("thread").is_none(),
        "no replies, no summary"
    );
    assert_eq!(by_id(&entries, &r1["messageId"])["threadId"], root);

    // An edit of the quoted message shows in every later read.
    acked(
        &mut alice,
        json!({"type": "MSG_EDIT", "clientMsgId": "e1", "messageId": root, "body": "edited"}),
    )
    .await;
    let entries = read_as(&app, "room", "bob").await;
    assert_eq!(
        by_id(&entries, &quote["messageId"])["replyPreview"],
        json!({"senderId": "alice", "body": "edited"})
    );
    let read_root = by_id(&entries, &root);
    assert_eq!(read_root["thread"]["replyCount"], 3, "an edit moves no summary");

    // A deleted reply leaves the count; the last reply is still the
    // latest stored (its tombstone stays in the thread).
    acked(
        &mut bob,
        json!({"type": "MSG_DELETE", "clientMsgId": "d3", "messageId": r3["messageId"]}),
    )
    .await;
    acked(
        &mut bob,
        json!({"type": "MSG_DELETE", "clientMsgId": "d1", "messageId": r1["messageId"]}),
    )
    .await;
    let entries = read_as(&app, "room", "carol").await;
    assert_eq!(
        by_id(&entries, &root)["thread"],
        json!({"replyCount": 1, "lastReplyAt": r3["ts"], "lastReplySeq": r3["seq"],
               "participants": ["bob", "carol"]})
    );
    // The same through SYNC.
    carol
        .send_json(json!({"type": "SYNC", "channelId": "room", "latest": true}))
        .await;
    let batch = loop {
        let got = carol.recv().await;
        if got["type"] == "SYNC_BATCH" {
            break got;
        }
    };
    let synced = batch["messages"].as_array().expect("messages");
    assert_eq!(by_id(synced, &root)["thread"]["replyCount"], 1);
    assert_eq!(by_id(synced, &r2["messageId"])["replyPreview"]["body"], "quoting");

    // Ten participants at most, the first ten distinct senders in order.
    let admin = app.admin();
    for n in 0..12 {
        let user = format!("u{n:02}");
        assert_eq!(admin.put_member("room", &user).await, 204);
        let (status, body) = admin
            .request(
                reqwest::Method::POST,
                "/v1/channels/room/messages",
                Some(json!({"senderId": user, "clientMsgId": format!("p{n}"), "body": "hi", "threadId": root})),
            )
            .await;
        assert_eq!(status, 201, "{body}");
    }
    let entries = read_as(&app, "room", "alice").await;
    let thread = &by_id(&entries, &root)["thread"];
    assert_eq!(thread["replyCount"], 13);
    let expected: Vec<String> = ["bob", "carol"]
        .into_iter()
        .map(str::to_owned)
        .chain((0..8).map(|n| format!("u{n:02}")))
        .collect();
    assert_eq!(thread["participants"], json!(expected));
}

async fn a_deleted_quote_is_erased_from_previews_and_tables(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let root = alice.send_and_ack("room", "m1", "SECRET-quoted-5e1c").await["messageId"].clone();
    acked(
        &mut alice,
        json!({"type": "MSG_EDIT", "clientMsgId": "e1", "messageId": root, "body": "SECRET-edit-5e1c"}),
    )
    .await;
    let quote = acked(&mut bob, reply("q1", "KEPT-5e1c", Some(&root), Some(&root))).await;
    let entries = read_as(&app, "room", "bob").await;
    assert_eq!(
        by_id(&entries, &quote["messageId"])["replyPreview"]["body"],
        "SECRET-edit-5e1c"
    );

    acked(
        &mut alice,
        json!({"type": "MSG_DELETE", "clientMsgId": "d1", "messageId": root}),
    )
    .await;
    let left = rows_holding(&app, backend, "SECRET-").await;
    assert!(left.is_empty(), "quoted text left after the delete: {left:?}");
    assert_eq!(
        rows_holding(&app, backend, "KEPT-").await.len(),
        1,
        "the reply keeps its own text"
    );
    let entries = read_as(&app, "room", "bob").await;
    let read = by_id(&entries, &quote["messageId"]);
    assert_eq!(
        read["replyPreview"],
        json!({"senderId": "alice", "body": "", "deleted": true})
    );
    assert!(!serde_json::to_string(&entries).expect("json").contains("SECRET-"));
    // A deleted root's thread is still read, and still summarized.
    assert_eq!(by_id(&entries, &root)["thread"]["replyCount"], 1);
    let (status, page) = thread_page(&app, "bob", &root, "afterSeq=0").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["messages"][0]["messageId"], quote["messageId"]);
    // The webhook-free fan-out read (SYNC) shows the same.
    bob.send_json(json!({"type": "SYNC", "channelId": "room", "afterSeq": 0}))
        .await;
    loop {
        let got = bob.recv().await;
        if got["type"] == "SYNC_BATCH" {
            assert!(!got.to_string().contains("SECRET-"));
            break;
        }
    }
}

async fn bad_references_are_refused_in_the_spec_order_and_store_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    app.create_channel("other", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    let root = alice.send_and_ack("room", "m1", "root").await["messageId"].clone();
    let elsewhere = acked(
        &mut alice,
        json!({"type": "MSG_SEND", "channelId": "other", "clientMsgId": "o1", "body": "x"}),
    )
    .await["messageId"]
        .clone();
    let edit = acked(
        &mut alice,
        json!({"type": "MSG_EDIT", "clientMsgId": "e1", "messageId": root, "body": "y"}),
    )
    .await["messageId"]
        .clone();
    let in_thread = acked(&mut alice, reply("t1", "in thread", None, Some(&root))).await["messageId"].clone();
    let gone = alice.send_and_ack("room", "m2", "gone").await["messageId"].clone();
    acked(
        &mut alice,
        json!({"type": "MSG_DELETE", "clientMsgId": "d1", "messageId": gone}),
    )
    .await;
    let unknown = json!("0190a6e2-7b1c-7f00-8000-00000000abcd");
    let before = read_as(&app, "room", "alice").await.len();

    let cases: Vec<(Value, &str, &str)> = vec![
        (reply("k1", "x", Some(&unknown), None), "not_found", "replyTo"),
        (reply("k2", "x", Some(&edit), None), "not_found", "replyTo"),
        (reply("k3", "x", Some(&gone), None), "not_found", "replyTo"),
        (reply("k4", "x", Some(&elsewhere), None), "invalid_field", "replyTo"),
        (reply("k5", "x", None, Some(&unknown)), "not_found", "threadId"),
        (reply("k6", "x", None, Some(&gone)), "not_found", "threadId"),
        (reply("k7", "x", None, Some(&elsewhere)), "invalid_field", "threadId"),
        (reply("k8", "x", None, Some(&in_thread)), "invalid_field", "threadId"),
        // replyTo is checked first.
        (
            reply("k9", "x", Some(&unknown), Some(&in_thread)),
            "not_found",
            "replyTo",
        ),
        // Field types and grammars come before anything stored.
        (reply("k10", "x", Some(&json!(5)), None), "invalid_field", "replyTo"),
        (
            reply("k11", "x", None, Some(&json!("not-a-uuid"))),
            "invalid_field",
            "threadId",
        ),
        (
            reply("k12", "x", None, Some(&json!({"id": 1}))),
            "invalid_field",
            "threadId",
        ),
    ];
    for (frame, code, field) in cases {
        let got = answer(&mut alice, frame.clone()).await;
        assert_eq!(got["type"], "ERROR", "{frame}: {got}");
        assert_eq!(
            (got["code"].as_str(), got["field"].as_str()),
            (Some(code), Some(field)),
            "{frame}: {got}"
        );
        assert_eq!(got["clientMsgId"], frame["clientMsgId"], "{got}");
        assert_eq!(got["retryable"], false);
    }
    // A non-member is refused for its membership before any reference is looked at.
    let mut carol = app.connect("carol").await;
    let got = answer(&mut carol, reply("c1", "x", Some(&unknown), None)).await;
    assert_eq!(got["code"], "forbidden", "{got}");

    let after = read_as(&app, "room", "alice").await;
    assert_eq!(after.len(), before, "nothing stored");
    // The connection stays open; the keys were not used up.
    let ok = acked(&mut alice, reply("k4", "x", Some(&root), None)).await;
    assert_eq!(ok["duplicate"], false);
    assert_eq!(
        ok["seq"].as_i64(),
        after.last().and_then(|m| m["seq"].as_i64()).map(|s| s + 1),
        "gapless"
    );
}

async fn the_idempotency_key_covers_reply_to_and_thread_id(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let a = alice.send_and_ack("room", "m1", "a").await["messageId"].clone();
    let b = alice.send_and_ack("room", "m2", "b").await["messageId"].clone();
    let first = acked(&mut alice, reply("k", "hi", Some(&a), Some(&b))).await;
    let again = acked(&mut alice, reply("k", "hi", Some(&a), Some(&b))).await;
    assert_eq!(
        (again["duplicate"].as_bool(), &again["seq"]),
        (Some(true), &first["seq"])
    );
    for (frame, why) in [
        (reply("k", "hi", Some(&b), Some(&b)), "another replyTo"),
        (reply("k", "hi", None, Some(&b)), "no replyTo"),
        (reply("k", "hi", Some(&a), Some(&a)), "another threadId"),
        (reply("k", "hi", Some(&a), None), "no threadId"),
        (
            reply("k", "hi", Some(&a), Some(&json!("bad"))),
            "a threadId that fails its checks",
        ),
    ] {
        let got = answer(&mut alice, frame).await;
        assert_eq!(got["code"], "idempotency_conflict", "{why}: {got}");
    }
    // A plain send's key used again with a reference conflicts too.
    let got = answer(&mut alice, reply("m1", "a", Some(&b), None)).await;
    assert_eq!(got["code"], "idempotency_conflict", "{got}");
    // Retries move no summary; after the root is deleted a retry is still
    // answered by its key (the key decides first).
    acked(
        &mut alice,
        json!({"type": "MSG_DELETE", "clientMsgId": "d", "messageId": b}),
    )
    .await;
    let late = acked(&mut alice, reply("k", "hi", Some(&a), Some(&b))).await;
    assert_eq!((late["duplicate"].as_bool(), &late["seq"]), (Some(true), &first["seq"]));
    let entries = read_as(&app, "room", "bob").await;
    assert_eq!(by_id(&entries, &b)["thread"]["replyCount"], 1);
    assert_eq!(
        entries.len(),
        4,
        "two roots, the reply and the delete: no conflict stored anything"
    );
}

async fn a_thread_is_paged_like_a_channel(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    app.create_channel("other", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    let root = alice.send_and_ack("room", "root", "root").await["messageId"].clone();
    let mut replies = Vec::new();
    for n in 0..7 {
        alice.send_and_ack("room", &format!("c{n}"), "channel").await;
        let ack = acked(
            &mut alice,
            reply(&format!("t{n}"), &format!("reply {n}"), None, Some(&root)),
        )
        .await;
        replies.push(ack["seq"].as_i64().expect("seq"));
    }
    // An edit of a reply is an entry of the channel, not of the thread.
    let last = acked(&mut alice, reply("t7", "last", None, Some(&root))).await;
    replies.push(last["seq"].as_i64().expect("seq"));
    acked(
        &mut alice,
        json!({"type": "MSG_EDIT", "clientMsgId": "e", "messageId": last["messageId"], "body": "LAST"}),
    )
    .await;

    let (status, page) = thread_page(&app, "bob", &root, "afterSeq=0&limit=3").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(seqs(&page), replies[..3]);
    assert_eq!((page["hasMore"].as_bool(), &page["threadId"]), (Some(true), &root));
    let (_, page) = thread_page(&app, "bob", &root, &format!("afterSeq={}&limit=5", replies[2])).await;
    assert_eq!(seqs(&page), replies[3..]);
    assert_eq!(page["hasMore"], false);
    assert_eq!(page["messages"][4]["body"], "LAST", "render-ready");
    let (_, page) = thread_page(&app, "bob", &root, "latest=true&limit=3").await;
    assert_eq!(seqs(&page), replies[5..]);
    assert_eq!(page["hasMore"], true);
    let (_, page) = thread_page(&app, "bob", &root, &format!("beforeSeq={}&limit=10", replies[5])).await;
    assert_eq!(seqs(&page), replies[..5]);
    assert_eq!(page["hasMore"], false);

    // SYNC with threadId, forward and latest.
    let sync = |extra: Value| {
        let mut frame = json!({"type": "SYNC", "channelId": "room", "threadId": root, "limit": 4});
        for (k, v) in extra.as_object().expect("object") {
            frame[k] = v.clone();
        }
        frame
    };
    let mut bob = app.connect("bob").await;
    bob.send_json(sync(json!({"afterSeq": 0}))).await;
    let batch = bob.recv_type("SYNC_BATCH").await;
    assert_eq!(
        (seqs(&batch), &batch["threadId"], batch["hasMore"].as_bool()),
        (replies[..4].to_vec(), &root, Some(true))
    );
    bob.send_json(sync(json!({"latest": true}))).await;
    let batch = bob.recv_type("SYNC_BATCH").await;
    assert_eq!(seqs(&batch), replies[4..]);

    // A thread that is not one of this channel's.
    let elsewhere = acked(
        &mut alice,
        json!({"type": "MSG_SEND", "channelId": "other", "clientMsgId": "o", "body": "x"}),
    )
    .await["messageId"]
        .clone();
    let reply_id = last["messageId"].clone();
    for (id, status, code) in [
        (json!("0190a6e2-7b1c-7f00-8000-00000000abcd"), 404, "not_found"),
        (reply_id.clone(), 400, "invalid_field"),
        (elsewhere.clone(), 400, "invalid_field"),
    ] {
        let (got, body) = thread_page(&app, "alice", &id, "afterSeq=0").await;
        assert_eq!(
            (got, body["error"]["code"].as_str()),
            (status, Some(code)),
            "{id}: {body}"
        );
        bob.send_json(json!({"type": "SYNC", "channelId": "room", "threadId": id, "afterSeq": 0}))
            .await;
        let error = bob.recv_type("ERROR").await;
        assert_eq!(
            (error["code"].as_str(), error["field"].as_str()),
            (Some(code), Some("threadId")),
            "{error}"
        );
    }
    let (status, body) = app.history("room", &app.token("bob"), "threadId=nope").await;
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("invalid_field")));
    // Members only.
    let (status, _) = thread_page(&app, "carol", &root, "afterSeq=0").await;
    assert_eq!(status, 403);
    let (status, _) = app
        .history("room", ADMIN_TOKEN, &format!("threadId={}", root.as_str().expect("id")))
        .await;
    assert_eq!(status, 200, "the admin reads a thread too");
}

async fn the_backend_post_takes_replies_and_refuses_bad_references(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    app.create_channel("other", &["alice"]).await;
    let admin = app.admin();
    let post = |channel: &str, body: Value| {
        let admin = admin.clone();
        let path = format!("/v1/channels/{channel}/messages");
        async move { admin.request(reqwest::Method::POST, &path, Some(body)).await }
    };
    let (status, root) = post("room", json!({"senderId": "alice", "clientMsgId": "r", "body": "root"})).await;
    assert_eq!(status, 201, "{root}");
    let (_, elsewhere) = post("other", json!({"senderId": "alice", "clientMsgId": "o", "body": "x"})).await;
    let mut bob = app.connect("bob").await;
    let body = json!({"senderId": "bob", "clientMsgId": "q", "body": "yes", "replyTo": root["messageId"], "threadId": root["messageId"]});
    let (status, ack) = post("room", body.clone()).await;
    assert_eq!(status, 201, "{ack}");
    let recv = loop {
        let got = bob.recv_type("MSG_RECV").await;
        if got["messageId"] == ack["messageId"] {
            break got;
        }
    };
    assert_eq!(
        (&recv["replyTo"], &recv["threadId"]),
        (&root["messageId"], &root["messageId"])
    );
    assert_eq!(recv["replyPreview"], json!({"senderId": "alice", "body": "root"}));
    let (status, again) = post("room", body.clone()).await;
    assert_eq!((status, again["duplicate"].as_bool()), (200, Some(true)));
    let mut changed = body.clone();
    changed["threadId"] = Value::Null;
    let (status, conflict) = post("room", changed).await;
    assert_eq!(
        (status, conflict["error"]["code"].as_str()),
        (409, Some("idempotency_conflict"))
    );

    for (body, status, code) in [
        (
            json!({"senderId": "bob", "clientMsgId": "b1", "body": "x", "replyTo": elsewhere["messageId"]}),
            400,
            "invalid_field",
        ),
        (
            json!({"senderId": "bob", "clientMsgId": "b2", "body": "x", "threadId": "0190a6e2-7b1c-7f00-8000-00000000abcd"}),
            404,
            "not_found",
        ),
        (
            json!({"senderId": "bob", "clientMsgId": "b3", "body": "x", "replyTo": 7}),
            400,
            "invalid_field",
        ),
        (
            json!({"senderId": "bob", "clientMsgId": "b4", "body": "x", "threadId": ack["messageId"]}),
            400,
            "invalid_field",
        ),
    ] {
        let (got, answer) = post("room", body.clone()).await;
        assert_eq!(
            (got, answer["error"]["code"].as_str()),
            (status, Some(code)),
            "{body}: {answer}"
        );
    }
    let entries = read_as(&app, "room", "alice").await;
    assert_eq!(entries.len(), 2, "nothing stored by the refusals");
    assert_eq!(by_id(&entries, &root["messageId"])["thread"]["replyCount"], 1);
}
