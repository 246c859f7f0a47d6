//! Mentions and notification settings (protocol §16): `mentions` and
//! `mentionAll` on MSG_SEND and the backend post, checked (nothing stored
//! on a refusal), kept for the users that are members at the commit,
//! covered by the idempotency key, carried by MSG_RECV, history and SYNC;
//! `unreadMentions` exact in HELLO and `/v1/me/channels`; the settings
//! route, its refusals, and `CHANNEL_SETTINGS` on the user's other sessions.

use std::time::Duration;

use serde_json::{json, Value};

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, spawn_app_with, Backend, TestApp, WsClient, ADMIN_TOKEN};

on_both_stores!(
    mentions_are_kept_for_members_and_carried_by_every_read,
    bad_mentions_are_refused_and_store_nothing,
    the_idempotency_key_covers_mentions_and_mention_all,
    unread_mentions_count_exactly_and_clear_when_read,
    a_deleted_message_mentions_no_one,
    unread_mentions_stay_exact_across_deletes_reads_and_joins,
    the_backend_post_takes_mentions_and_refuses_bad_ones,
    settings_are_kept_shown_and_sent_to_the_other_sessions,
    bad_settings_are_refused_and_change_nothing,
);

fn send(key: &str, body: &str, extra: Value) -> Value {
    let mut frame = json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": key, "body": body});
    if let (Some(frame), Value::Object(extra)) = (frame.as_object_mut(), extra) {
        frame.extend(extra);
    }
    frame
}

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

/// A room with owner `olive` and members `alice`, `bob`, `carol`.
async fn room(app: &TestApp) {
    let res = app
        .post_channel(json!({"channelId": "room", "owners": ["olive"], "members": ["alice", "bob", "carol"]}))
        .await;
    assert_eq!(res.status(), 201);
}

async fn read_as(app: &TestApp, user: &str) -> Vec<Value> {
    let (status, body) = app.history("room", &app.token(user), "afterSeq=0&limit=500").await;
    assert_eq!(status, 200, "{body}");
    body["messages"].as_array().expect("messages").clone()
}

/// `user`'s entry of `room` in `GET /v1/me/channels` (also used by `http_numbers`).
pub(crate) async fn my_room(app: &TestApp, user: &str) -> Value {
    let (status, body) = app
        .request("GET", "/v1/me/channels", Some(&app.token(user)), None)
        .await;
    assert_eq!(status, 200, "{body}");
    body["channels"]
        .as_array()
        .expect("channels")
        .iter()
        .find(|c| c["channelId"] == "room")
        .expect("room listed")
        .clone()
}

/// `user`'s entry of `room` in a new session's HELLO.
async fn hello_room(app: &TestApp, user: &str) -> Value {
    let client = app.connect(user).await;
    client.hello["channels"]
        .as_array()
        .expect("channels")
        .iter()
        .find(|c| c["channelId"] == "room")
        .expect("room in HELLO")
        .clone()
}

async fn put_settings(app: &TestApp, user: &str, channel: &str, body: &str) -> (u16, Value) {
    app.request(
        "PUT",
        &format!("/v1/me/channels/{channel}/settings"),
        Some(&app.token(user)),
        Some(body),
    )
    .await
}

async fn mentions_are_kept_for_members_and_carried_by_every_read(backend: Backend) {
    let app = spawn_app(backend).await;
    room(&app).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let mut olive = app.connect("olive").await;
    // `dave` is no member: dropped; repeats count once; the order is by id.
    let ack = acked(
        &mut alice,
        send(
            "m1",
            "hi @bob @dave",
            json!({"mentions": ["bob", "dave", "carol", "bob"]}),
        ),
    )
    .await;
    let recv = bob.recv_type("MSG_RECV").await;
    assert_eq!(recv["messageId"], ack["messageId"]);
    assert_eq!(recv["mentions"], json!(["bob", "carol"]), "members only: {recv}");
    assert!(recv.get("mentionAll").is_none(), "{recv}");
    olive.recv_type("MSG_RECV").await;

    acked(&mut olive, send("all", "@channel", json!({"mentionAll": true}))).await;
    let recv = bob.recv_type("MSG_RECV").await;
    assert_eq!(recv["mentionAll"], true);
    assert!(recv.get("mentions").is_none(), "{recv}");
    alice.recv_type("MSG_RECV").await;

    acked(&mut alice, send("plain", "no one", json!({}))).await;
    let recv = bob.recv_type("MSG_RECV").await;
    assert!(
        recv.get("mentions").is_none() && recv.get("mentionAll").is_none(),
        "{recv}"
    );

    // History and SYNC carry the same.
    let entries = read_as(&app, "carol").await;
    assert_eq!(entries[0]["mentions"], json!(["bob", "carol"]));
    assert_eq!(entries[1]["mentionAll"], true);
    assert!(entries[2].get("mentions").is_none());
    bob.send_json(json!({"type": "SYNC", "channelId": "room", "afterSeq": 0}))
        .await;
    let batch = bob.recv_type("SYNC_BATCH").await;
    assert_eq!(batch["messages"][0]["mentions"], json!(["bob", "carol"]));
    assert_eq!(batch["messages"][1]["mentionAll"], true);

    // A user added later is not mentioned by the earlier message: the
    // members are those at the commit.
    assert_eq!(app.put_member("room", "dave").await, 204);
    let entries = read_as(&app, "dave").await;
    assert_eq!(entries[0]["mentions"], json!(["bob", "carol"]));
    app.stop().await;
}

async fn bad_mentions_are_refused_and_store_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    room(&app).await;
    let mut alice = app.connect("alice").await;
    let many: Vec<String> = (0..51).map(|i| format!("u{i}")).collect();
    for (key, extra, code, field) in [
        ("k1", json!({"mentions": many}), "invalid_field", Some("mentions")),
        ("k2", json!({"mentions": "bob"}), "invalid_field", Some("mentions")),
        ("k3", json!({"mentions": [7]}), "invalid_field", Some("mentions")),
        (
            "k4",
            json!({"mentions": ["not an id"]}),
            "invalid_field",
            Some("mentions"),
        ),
        ("k5", json!({"mentionAll": "yes"}), "invalid_field", Some("mentionAll")),
        ("k6", json!({"mentionAll": true}), "forbidden", None),
    ] {
        let got = answer(&mut alice, send(key, "x", extra.clone())).await;
        assert_eq!(got["type"], "ERROR", "{extra}: {got}");
        assert_eq!(got["code"], code, "{extra}: {got}");
        assert_eq!(got["clientMsgId"], key, "{got}");
        if let Some(field) = field {
            assert_eq!(got["field"], field, "{got}");
        }
    }
    // Exactly max_mentions distinct users (repeats not counted) is fine.
    let fifty: Vec<String> = (0..50).map(|i| format!("u{i}")).chain(["u0".into()]).collect();
    let ack = acked(&mut alice, send("ok", "fifty", json!({"mentions": fifty}))).await;
    assert_eq!(ack["seq"], 1, "no refusal used a seq");
    let entries = read_as(&app, "bob").await;
    assert_eq!(entries.len(), 1, "nothing stored by the refusals: {entries:?}");
    assert!(entries[0].get("mentions").is_none(), "none of them are members");
    // A refused key is free: the same key sent right is stored.
    acked(&mut alice, send("k6", "fine", json!({}))).await;
    app.stop().await;

    // max_mentions is a setting.
    let app = spawn_app_with(backend, |c| c.max_mentions = 2).await;
    room(&app).await;
    let mut alice = app.connect("alice").await;
    let got = answer(
        &mut alice,
        send("k", "x", json!({"mentions": ["bob", "carol", "olive"]})),
    )
    .await;
    assert_eq!(got["code"], "invalid_field", "{got}");
    acked(&mut alice, send("k", "x", json!({"mentions": ["bob", "carol"]}))).await;
    app.stop().await;
}

async fn the_idempotency_key_covers_mentions_and_mention_all(backend: Backend) {
    let app = spawn_app(backend).await;
    room(&app).await;
    let mut alice = app.connect("alice").await;
    let mut olive = app.connect("olive").await;
    let first = acked(&mut alice, send("k1", "hi", json!({"mentions": ["bob", "dave"]}))).await;
    // The same set (another order, a repeat, the non-member included) is a retry.
    let again = acked(
        &mut alice,
        send("k1", "hi", json!({"mentions": ["dave", "bob", "bob"]})),
    )
    .await;
    assert_eq!(again["duplicate"], true);
    assert_eq!(again["messageId"], first["messageId"]);
    // A frame that fails its checks is answered by its stored key too: a
    // conflict when its mentions are not the stored ones.
    let many: Vec<String> = (0..51).map(|i| format!("u{i}")).collect();
    for changed in [
        json!({"mentions": ["bob"]}),
        json!({"mentions": ["bob", "dave", "carol"]}),
        json!({}),
        json!({"mentions": many}),
        json!({"mentions": ["bob", "dave", 7]}),
        json!({"mentions": ["bob", "dave"], "mentionAll": "yes"}),
    ] {
        let got = answer(&mut alice, send("k1", "hi", changed.clone())).await;
        assert_eq!(got["code"], "idempotency_conflict", "{changed}: {got}");
    }
    let all = acked(&mut olive, send("o1", "all", json!({"mentionAll": true}))).await;
    let got = answer(&mut olive, send("o1", "all", json!({}))).await;
    assert_eq!(got["code"], "idempotency_conflict", "{got}");
    let again = acked(&mut olive, send("o1", "all", json!({"mentionAll": true}))).await;
    assert_eq!(again["duplicate"], true);
    assert_eq!(again["seq"], all["seq"]);
    let got = answer(&mut olive, send("o2", "plain", json!({}))).await;
    assert_eq!(got["seq"], 3, "no seq used by the conflicts");
    assert_eq!(read_as(&app, "bob").await.len(), 3);
    app.stop().await;
}

async fn unread_mentions_count_exactly_and_clear_when_read(backend: Backend) {
    let app = spawn_app(backend).await;
    room(&app).await;
    let mut alice = app.connect("alice").await;
    let mut olive = app.connect("olive").await;
    let mut bob = app.connect("bob").await;
    // 1: a mention of bob; 2: a mention of all; 3: both (counted once);
    // 4: no mention; 5: bob mentions himself (his own: not counted);
    // 6: an edit and 7: a reaction of the first (other kinds: not counted).
    let m1 = acked(&mut alice, send("a1", "@bob", json!({"mentions": ["bob"]}))).await;
    acked(&mut olive, send("o1", "@all", json!({"mentionAll": true}))).await;
    let m3 = acked(
        &mut olive,
        send("o2", "@bob @all", json!({"mentions": ["bob"], "mentionAll": true})),
    )
    .await;
    acked(&mut alice, send("a2", "chatter", json!({}))).await;
    acked(&mut bob, send("b1", "me", json!({"mentions": ["bob"]}))).await;
    acked(
        &mut alice,
        json!({"type": "MSG_EDIT", "clientMsgId": "e1", "messageId": m1["messageId"], "body": "@bob!"}),
    )
    .await;
    acked(
        &mut alice,
        json!({"type": "MSG_REACT", "clientMsgId": "r1", "messageId": m1["messageId"], "emoji": "👍", "op": "add"}),
    )
    .await;
    let listed = my_room(&app, "bob").await;
    assert_eq!(listed["unread"], 4, "{listed}");
    assert_eq!(listed["unreadMentions"], 3, "{listed}");
    assert_eq!(hello_room(&app, "bob").await["unreadMentions"], 3);
    // Others' counts: carol is mentioned by all only; olive by no one but
    // her own mentions of all do not count; alice is not mentioned.
    assert_eq!(my_room(&app, "carol").await["unreadMentions"], 2);
    assert_eq!(my_room(&app, "olive").await["unreadMentions"], 0);
    assert_eq!(my_room(&app, "alice").await["unreadMentions"], 2);

    // Reading past the first mention leaves two; past the last, none.
    bob.send_json(json!({"type": "MSG_READ", "messageId": m1["messageId"]}))
        .await;
    wait_for(&app, "bob", |c| c["unreadMentions"] == 2).await;
    bob.send_json(json!({"type": "MSG_READ", "messageId": m3["messageId"]}))
        .await;
    wait_for(&app, "bob", |c| c["unreadMentions"] == 0).await;
    assert_eq!(hello_room(&app, "bob").await["unreadMentions"], 0);
    assert_eq!(
        my_room(&app, "bob").await["unread"],
        1,
        "the plain message is still unread"
    );
    app.stop().await;
}

/// Polls `user`'s `/v1/me/channels` entry of `room` until `done` holds
/// (a MSG_READ is answered by nothing, so the test waits for its effect).
async fn wait_for(app: &TestApp, user: &str, done: impl Fn(&Value) -> bool) {
    let started = std::time::Instant::now();
    loop {
        let entry = my_room(app, user).await;
        if done(&entry) {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "never reached: {entry}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn a_deleted_message_mentions_no_one(backend: Backend) {
    let app = spawn_app(backend).await;
    room(&app).await;
    let mut alice = app.connect("alice").await;
    let mut olive = app.connect("olive").await;
    let m1 = acked(&mut alice, send("a1", "@bob", json!({"mentions": ["bob"]}))).await;
    let m2 = acked(&mut olive, send("o1", "@all", json!({"mentionAll": true}))).await;
    assert_eq!(my_room(&app, "bob").await["unreadMentions"], 2);
    acked(
        &mut alice,
        json!({"type": "MSG_DELETE", "clientMsgId": "d1", "messageId": m1["messageId"]}),
    )
    .await;
    // A moderator deletes the mention of all.
    acked(
        &mut olive,
        json!({"type": "MSG_DELETE", "clientMsgId": "d2", "messageId": m2["messageId"]}),
    )
    .await;
    let listed = my_room(&app, "bob").await;
    assert_eq!(
        (listed["unread"].as_i64(), listed["unreadMentions"].as_i64()),
        (Some(0), Some(0)),
        "{listed}"
    );
    let entries = read_as(&app, "bob").await;
    for deleted in &entries[..2] {
        assert_eq!(deleted["deleted"], true);
        assert!(
            deleted.get("mentions").is_none() && deleted.get("mentionAll").is_none(),
            "{deleted}"
        );
    }
    // A retry of the deleted message is still a retry.
    let again = acked(&mut alice, send("a1", "@bob", json!({"mentions": ["bob"]}))).await;
    assert_eq!(again["duplicate"], true);
    app.stop().await;
}

/// `unreadMentions` probes the counts only above a member's and a
/// channel's newest mention (`members.mention_seq`,
/// `channels.mention_all_seq`); those marks only move up, so this walks
/// the cases where a mark is left behind the log: a deleted newest
/// mention, a watermark past the last mention but below the mark, a user
/// mentioned before it joined, and a user that left and came back.
async fn unread_mentions_stay_exact_across_deletes_reads_and_joins(backend: Backend) {
    let app = spawn_app(backend).await;
    room(&app).await;
    let mut alice = app.connect("alice").await;
    let mut olive = app.connect("olive").await;
    let mut bob = app.connect("bob").await;
    let counts = |entry: Value| (entry["unread"].as_i64(), entry["unreadMentions"].as_i64());

    // bob's newest mention (seq 2) is deleted: the older one still counts.
    let m1 = acked(&mut alice, send("a1", "@bob", json!({"mentions": ["bob"]}))).await;
    let m2 = acked(&mut alice, send("a2", "@bob again", json!({"mentions": ["bob"]}))).await;
    acked(
        &mut alice,
        json!({"type": "MSG_DELETE", "clientMsgId": "d2", "messageId": m2["messageId"]}),
    )
    .await;
    assert_eq!(counts(my_room(&app, "bob").await), (Some(1), Some(1)));
    assert_eq!(hello_room(&app, "bob").await["unreadMentions"], 1);
    // Read past the first; the mark (seq 2) is still above the watermark.
    bob.send_json(json!({"type": "MSG_READ", "messageId": m1["messageId"]}))
        .await;
    wait_for(&app, "bob", |c| c["readSeq"] == m1["seq"]).await;
    acked(&mut alice, send("a3", "chatter", json!({}))).await;
    assert_eq!(counts(my_room(&app, "bob").await), (Some(1), Some(0)));
    assert_eq!(hello_room(&app, "bob").await["unreadMentions"], 0);

    // A mention of all, counted for everyone but its sender, then deleted.
    let all = acked(&mut olive, send("o1", "@all", json!({"mentionAll": true}))).await;
    assert_eq!(my_room(&app, "bob").await["unreadMentions"], 1);
    assert_eq!(my_room(&app, "carol").await["unreadMentions"], 1);
    assert_eq!(my_room(&app, "olive").await["unreadMentions"], 0);
    acked(
        &mut olive,
        json!({"type": "MSG_DELETE", "clientMsgId": "d3", "messageId": all["messageId"]}),
    )
    .await;
    assert_eq!(my_room(&app, "bob").await["unreadMentions"], 0);
    assert_eq!(my_room(&app, "carol").await["unreadMentions"], 0);
    assert_eq!(hello_room(&app, "carol").await["unreadMentions"], 0);
    // Another one after carol read everything, then carol reads past it.
    let all2 = acked(&mut olive, send("o2", "@all again", json!({"mentionAll": true}))).await;
    assert_eq!(my_room(&app, "carol").await["unreadMentions"], 1);
    let mut carol = app.connect("carol").await;
    carol
        .send_json(json!({"type": "MSG_READ", "messageId": all2["messageId"]}))
        .await;
    wait_for(&app, "carol", |c| c["unreadMentions"] == 0).await;
    acked(&mut alice, send("a4", "more chatter", json!({}))).await;
    assert_eq!(counts(my_room(&app, "carol").await), (Some(1), Some(0)));

    // dave is mentioned before he is a member (dropped), then added: only
    // the standing mention of all counts (he has read nothing); mentioned
    // as a member: one more, in the list and in HELLO.
    acked(&mut alice, send("a5", "@dave", json!({"mentions": ["dave"]}))).await;
    assert_eq!(app.put_member("room", "dave").await, 204);
    assert_eq!(hello_room(&app, "dave").await["unreadMentions"], 1);
    assert_eq!(my_room(&app, "dave").await["unreadMentions"], 1);
    acked(&mut alice, send("a6", "@dave hi", json!({"mentions": ["dave"]}))).await;
    assert_eq!(my_room(&app, "dave").await["unreadMentions"], 2);
    assert_eq!(hello_room(&app, "dave").await["unreadMentions"], 2);

    // bob leaves with mentions unread (this one and the second of all)
    // and comes back: the count is the one he left with (his watermark
    // and the mentions are still there).
    acked(&mut alice, send("a7", "@bob back?", json!({"mentions": ["bob"]}))).await;
    let before = my_room(&app, "bob").await;
    assert_eq!(before["unreadMentions"], 2, "{before}");
    assert_eq!(app.delete_member("room", "bob").await, 204);
    assert_eq!(app.put_member("room", "bob").await, 204);
    let after = my_room(&app, "bob").await;
    assert_eq!(counts(after.clone()), counts(before), "{after}");
    assert_eq!(hello_room(&app, "bob").await["unreadMentions"], 2);
    app.stop().await;
}

async fn the_backend_post_takes_mentions_and_refuses_bad_ones(backend: Backend) {
    let app = spawn_app(backend).await;
    room(&app).await;
    let mut bob = app.connect("bob").await;
    let post = |body: Value| {
        let app = &app;
        async move {
            app.request(
                "POST",
                "/v1/channels/room/messages",
                Some(ADMIN_TOKEN),
                Some(&body.to_string()),
            )
            .await
        }
    };
    let (status, ack) = post(json!({"senderId": "alice", "clientMsgId": "p1", "body": "hi",
                                    "mentions": ["bob", "zed"]}))
    .await;
    assert_eq!(status, 201, "{ack}");
    let recv = bob.recv_type("MSG_RECV").await;
    assert_eq!(recv["mentions"], json!(["bob"]));
    let (status, again) = post(json!({"senderId": "alice", "clientMsgId": "p1", "body": "hi",
                                      "mentions": ["zed", "bob"]}))
    .await;
    assert_eq!((status, again["duplicate"].clone()), (200, json!(true)), "{again}");
    let (status, body) = post(json!({"senderId": "alice", "clientMsgId": "p1", "body": "hi"})).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (409, json!("idempotency_conflict"))
    );

    let many: Vec<String> = (0..51).map(|i| format!("u{i}")).collect();
    for (body, status, code) in [
        (
            json!({"senderId": "alice", "clientMsgId": "p2", "body": "x", "mentions": many}),
            400,
            "invalid_field",
        ),
        (
            json!({"senderId": "alice", "clientMsgId": "p3", "body": "x", "mentions": "bob"}),
            400,
            "invalid_field",
        ),
        (
            json!({"senderId": "alice", "clientMsgId": "p4", "body": "x", "mentionAll": 1}),
            400,
            "invalid_field",
        ),
        (
            json!({"senderId": "alice", "clientMsgId": "p5", "body": "x", "mentionAll": true}),
            403,
            "forbidden",
        ),
    ] {
        let (got, answer) = post(body.clone()).await;
        assert_eq!(
            (got, answer["error"]["code"].as_str()),
            (status, Some(code)),
            "{body}: {answer}"
        );
    }
    let (status, _) = post(json!({"senderId": "olive", "clientMsgId": "p6", "body": "x", "mentionAll": true})).await;
    assert_eq!(status, 201);
    let entries = read_as(&app, "bob").await;
    assert_eq!(entries.len(), 2, "the refusals stored nothing");
    assert_eq!(entries[1]["mentionAll"], true);
    app.stop().await;
}

async fn settings_are_kept_shown_and_sent_to_the_other_sessions(backend: Backend) {
    let app = spawn_app(backend).await;
    room(&app).await;
    let mut phone = app.connect("bob").await;
    let mut other = app.connect("alice").await;
    let before = my_room(&app, "bob").await;
    assert_eq!(before["notify"], "all", "the default: {before}");
    assert_eq!(before["snoozeUntil"], Value::Null);

    let (status, body) = put_settings(&app, "bob", "room", r#"{"notify": "mentions"}"#).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"channelId": "room", "notify": "mentions", "snoozeUntil": null})
    );
    let frame = phone.recv_type("CHANNEL_SETTINGS").await;
    assert_eq!(
        frame,
        json!({"type": "CHANNEL_SETTINGS", "channelId": "room", "notify": "mentions", "snoozeUntil": null})
    );
    other.expect_silence(Duration::from_millis(200)).await;

    // A field left out keeps its value; null ends the snooze.
    let (_, body) = put_settings(&app, "bob", "room", r#"{"snoozeUntil": 4102444800000}"#).await;
    assert_eq!(body["notify"], "mentions");
    assert_eq!(body["snoozeUntil"], 4_102_444_800_000_i64);
    assert_eq!(
        phone.recv_type("CHANNEL_SETTINGS").await["snoozeUntil"],
        4_102_444_800_000_i64
    );
    let listed = my_room(&app, "bob").await;
    assert_eq!(
        (listed["notify"].clone(), listed["snoozeUntil"].clone()),
        (json!("mentions"), json!(4_102_444_800_000_i64))
    );
    let hello = hello_room(&app, "bob").await;
    assert_eq!(
        (hello["notify"].clone(), hello["snoozeUntil"].clone()),
        (json!("mentions"), json!(4_102_444_800_000_i64))
    );
    assert_eq!(my_room(&app, "alice").await["notify"], "all", "per user");

    let (_, body) = put_settings(&app, "bob", "room", r#"{"notify": "none", "snoozeUntil": null}"#).await;
    assert_eq!(
        body,
        json!({"channelId": "room", "notify": "none", "snoozeUntil": null})
    );
    // Leaving and coming back keeps them.
    assert_eq!(app.delete_member("room", "bob").await, 204);
    assert_eq!(app.put_member("room", "bob").await, 204);
    assert_eq!(my_room(&app, "bob").await["notify"], "none");
    app.stop().await;
}

async fn bad_settings_are_refused_and_change_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    room(&app).await;
    let app = &app;
    put_settings(app, "bob", "room", r#"{"notify": "mentions", "snoozeUntil": 5}"#).await;
    let mut phone = app.connect("bob").await;
    for (body, field) in [
        (r#"{"notify": "loud"}"#, "notify"),
        (r#"{"notify": 1}"#, "notify"),
        (r#"{"notify": null}"#, "notify"),
        (r#"{"snoozeUntil": "soon"}"#, "snoozeUntil"),
        (r#"{"snoozeUntil": -1}"#, "snoozeUntil"),
        (r#"{"snoozeUntil": 1.5}"#, "snoozeUntil"),
        (r#"{"notify": "all", "snoozeUntil": 9007199254740992}"#, "snoozeUntil"),
        // Unknown fields are refused like PATCH /v1/channels/{id}'s, also
        // beside a good change (which is then not made either).
        (r#"{"extra": 1}"#, "extra"),
        (r#"{"notify": "none", "snoozeUntil": null, "snooze": 7}"#, "snooze"),
    ] {
        let (status, answer) = put_settings(app, "bob", "room", body).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(answer["error"]["code"], "invalid_field", "{body}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with(field), "names {field}: {answer}");
    }
    let (status, answer) = put_settings(app, "bob", "room", "[1]").await;
    assert_eq!(
        (status, answer["error"]["code"].as_str()),
        (400, Some("bad_request")),
        "{answer}"
    );
    // Not a member, an unknown channel: 403, as for every member route.
    let (status, answer) = put_settings(app, "dave", "room", r#"{"notify": "none"}"#).await;
    assert_eq!(
        (status, answer["error"]["code"].as_str()),
        (403, Some("forbidden")),
        "{answer}"
    );
    let (status, _) = put_settings(app, "bob", "nowhere", r#"{"notify": "none"}"#).await;
    assert_eq!(status, 403);
    let (status, _) = app
        .request(
            "PUT",
            "/v1/me/channels/room/settings",
            Some(ADMIN_TOKEN),
            Some(r#"{"notify": "none"}"#),
        )
        .await;
    assert_eq!(status, 403, "the admin token is no user");
    let listed = my_room(app, "bob").await;
    assert_eq!(
        (listed["notify"].clone(), listed["snoozeUntil"].clone()),
        (json!("mentions"), json!(5)),
        "unchanged"
    );
    phone.expect_silence(Duration::from_millis(200)).await;
    // dave joins later: the refused call left nothing behind.
    assert_eq!(app.put_member("room", "dave").await, 204);
    assert_eq!(my_room(app, "dave").await["notify"], "all");
}
