//! A channel's moderation settings (protocol.md §17): announcement
//! channels (`postingRole`) and slow mode (`slowModeMs`), set with `PATCH`,
//! shown in the channel object, judged in the commit path.

use std::time::Duration;

use serde_json::{json, Value};

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, Backend, TestApp, ADMIN_TOKEN};

on_both_stores!(
    an_announcement_channel_stores_messages_of_moderators_only,
    slow_mode_spaces_a_members_messages_to_the_millisecond,
    slow_mode_holds_for_pipelined_sends_and_spares_moderators,
    bad_settings_are_refused_and_change_nothing,
    in_an_announcement_channel_a_member_cannot_edit_older_messages,
);

async fn patch(app: &TestApp, token: &str, channel: &str, body: Value) -> (u16, Value) {
    app.request(
        "PATCH",
        &format!("/v1/channels/{channel}"),
        Some(token),
        Some(&body.to_string()),
    )
    .await
}

async fn last_seq(app: &TestApp, channel: &str) -> i64 {
    let (_, body) = app
        .request("GET", &format!("/v1/channels/{channel}"), Some(ADMIN_TOKEN), None)
        .await;
    body["lastSeq"].as_i64().expect("lastSeq")
}

async fn an_announcement_channel_stores_messages_of_moderators_only(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "news", "owners": ["olive"], "members": ["alice", "bob"]}))
        .await;
    let (status, body) = patch(&app, &app.token("olive"), "news", json!({"postingRole": "moderator"})).await;
    assert_eq!((status, &body["postingRole"]), (200, &json!("moderator")), "{body}");
    assert_eq!(body["slowModeMs"], 0);
    let mut olive = app.connect("olive").await;
    let mut alice = app.connect("alice").await;
    // HELLO says who may post, so a client can show it before any refusal.
    let news = &alice.hello["channels"][0];
    assert_eq!(
        (&news["postingRole"], &news["slowModeMs"]),
        (&json!("moderator"), &json!(0)),
        "{news}"
    );
    let post = olive.send_and_ack("news", "n1", "release 1.2").await;
    let id = post["messageId"].as_str().expect("id").to_owned();
    alice.recv_type("MSG_RECV").await;
    alice.send_msg("news", "a1", "me too").await;
    let error = alice.recv_type("ERROR").await;
    assert_eq!(
        (&error["code"], &error["reason"], &error["clientMsgId"]),
        (&json!("forbidden"), &json!("read_only"), &json!("a1")),
        "{error}"
    );
    // Members still react; the backend's post as a member is refused too.
    alice
        .send_json(json!({"type": "MSG_REACT", "clientMsgId": "a2", "messageId": id, "emoji": "tada", "op": "add"}))
        .await;
    assert_eq!(alice.recv_type("MSG_ACK").await["seq"], 2);
    let post = json!({"senderId": "bob", "clientMsgId": "b1", "body": "hi"}).to_string();
    let (status, body) = app
        .request("POST", "/v1/channels/news/messages", Some(ADMIN_TOKEN), Some(&post))
        .await;
    assert_eq!((status, &body["error"]["reason"]), (403, &json!("read_only")), "{body}");
    assert_eq!(last_seq(&app, "news").await, 2);
    // Back to everyone.
    let (status, _) = patch(&app, ADMIN_TOKEN, "news", json!({"postingRole": "member"})).await;
    assert_eq!(status, 200);
    // Every member's live session is told at once (CHANNEL_UPDATED),
    // after the entries stored before it.
    assert_eq!(olive.recv_type("MSG_RECV").await["kind"], "reaction");
    for ws in [&mut alice, &mut olive] {
        assert_eq!(
            ws.recv_type("CHANNEL_UPDATED").await,
            json!({"type": "CHANNEL_UPDATED", "channelId": "news", "name": null, "metadata": null,
                "visibility": "private", "postingRole": "member", "slowModeMs": 0})
        );
    }
    assert_eq!(alice.send_and_ack("news", "a3", "now I may").await["seq"], 3);
    app.stop().await;
}

/// A member's message sent before the channel became an announcement
/// channel cannot be edited there either: `MSG_EDIT` gets what the
/// member's `MSG_SEND` gets (`forbidden`, `read_only`) and stores nothing;
/// a moderator still edits, and the member still deletes its own message.
/// Before, the member's edit was stored.
async fn in_an_announcement_channel_a_member_cannot_edit_older_messages(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "news", "owners": ["olive"], "members": ["alice"]}))
        .await;
    let mut olive = app.connect("olive").await;
    let mut alice = app.connect("alice").await;
    let mine = alice.send_and_ack("news", "a1", "before").await;
    let mine = mine["messageId"].as_str().expect("id").to_owned();
    olive.recv_type("MSG_RECV").await;
    let theirs = olive.send_and_ack("news", "o1", "release").await;
    let theirs = theirs["messageId"].as_str().expect("id").to_owned();
    alice.recv_type("MSG_RECV").await;
    let (status, body) = patch(&app, &app.token("olive"), "news", json!({"postingRole": "moderator"})).await;
    assert_eq!(status, 200, "{body}");
    for ws in [&mut alice, &mut olive] {
        ws.recv_type("CHANNEL_UPDATED").await;
    }
    alice
        .send_json(json!({"type": "MSG_EDIT", "clientMsgId": "a2", "messageId": mine, "body": "after"}))
        .await;
    let error = alice.recv_type("ERROR").await;
    assert_eq!(
        (&error["code"], &error["reason"], &error["clientMsgId"]),
        (&json!("forbidden"), &json!("read_only"), &json!("a2")),
        "{error}"
    );
    assert_eq!(last_seq(&app, "news").await, 2);
    olive
        .send_json(json!({"type": "MSG_EDIT", "clientMsgId": "o2", "messageId": theirs, "body": "release 1.2"}))
        .await;
    assert_eq!(olive.recv_type("MSG_ACK").await["seq"], 3);
    assert_eq!(alice.recv_type("MSG_RECV").await["kind"], "edit");
    alice
        .send_json(json!({"type": "MSG_DELETE", "clientMsgId": "a3", "messageId": mine}))
        .await;
    assert_eq!(alice.recv_type("MSG_ACK").await["seq"], 4);
    app.stop().await;
}

async fn slow_mode_spaces_a_members_messages_to_the_millisecond(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "room", "owners": ["olive"], "members": ["alice"]}))
        .await;
    let (status, body) = patch(&app, &app.token("olive"), "room", json!({"slowModeMs": 1500})).await;
    assert_eq!((status, &body["slowModeMs"]), (200, &json!(1500)), "{body}");
    let mut alice = app.connect("alice").await;
    let first = alice.send_and_ack("room", "k1", "first").await;
    let stored_at = first["ts"].as_i64().expect("ts");
    alice.send_msg("room", "k2", "second").await;
    let error = alice.recv_type("ERROR").await;
    assert_eq!(
        (&error["code"], &error["reason"], &error["retryable"]),
        (&json!("rate_limited"), &json!("slow_mode"), &json!(true)),
        "{error}"
    );
    let wait = error["retryAfterMs"].as_i64().expect("retryAfterMs");
    assert!((1..=1500).contains(&wait), "{error}");
    // A retry of the stored key is its ACK, not a refusal.
    alice.send_msg("room", "k1", "first").await;
    let retry = alice.recv_type("MSG_ACK").await;
    assert_eq!((&retry["duplicate"], &retry["seq"]), (&json!(true), &json!(1)));
    // Edits and reactions are not messages: not slowed.
    let id = first["messageId"].as_str().expect("id");
    alice
        .send_json(json!({"type": "MSG_EDIT", "clientMsgId": "e1", "messageId": id, "body": "first!"}))
        .await;
    assert_eq!(alice.recv_type("MSG_ACK").await["seq"], 2);
    // Exactly when retryAfterMs says: the next message is stored then.
    tokio::time::sleep(Duration::from_millis(u64::try_from(wait).expect("ms"))).await;
    let second = alice.send_and_ack("room", "k2", "second").await;
    assert!(second["ts"].as_i64().expect("ts") >= stored_at + 1500, "{second}");
    // Off again: no wait.
    assert_eq!(patch(&app, ADMIN_TOKEN, "room", json!({"slowModeMs": 0})).await.0, 200);
    assert_eq!(alice.recv_type("CHANNEL_UPDATED").await["slowModeMs"], 0);
    alice.send_and_ack("room", "k3", "third").await;
    alice.send_and_ack("room", "k4", "fourth").await;
    app.stop().await;
}

async fn slow_mode_holds_for_pipelined_sends_and_spares_moderators(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "room", "owners": ["olive"], "members": ["alice", "bob"]}))
        .await;
    assert_eq!(
        patch(&app, ADMIN_TOKEN, "room", json!({"slowModeMs": 60000})).await.0,
        200
    );
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    // Ten sends in flight at once, on two connections of one member: one stored.
    let mut alice2 = app.connect("alice").await;
    for n in 0..5 {
        alice.send_msg("room", &format!("a{n}"), "x").await;
        alice2.send_msg("room", &format!("b{n}"), "x").await;
    }
    let mut stored = 0;
    let mut slowed = 0;
    for client in [&mut alice, &mut alice2] {
        let mut answered = 0;
        while answered < 5 {
            let frame = client.recv().await;
            match frame["type"].as_str() {
                Some("MSG_ACK") => stored += 1,
                Some("ERROR") => {
                    assert_eq!(frame["reason"], "slow_mode", "{frame}");
                    let wait = frame["retryAfterMs"].as_i64().expect("retryAfterMs");
                    assert!((1..=60_000).contains(&wait), "{frame}");
                    slowed += 1;
                }
                _ => continue,
            }
            answered += 1;
        }
    }
    assert_eq!((stored, slowed), (1, 9));
    // Another member is not slowed by alice; a moderator not at all.
    assert_eq!(bob.recv_type("MSG_RECV").await["senderId"], "alice");
    bob.send_and_ack("room", "c1", "y").await;
    let mut olive = app.connect("olive").await;
    for n in 0..3 {
        olive.send_and_ack("room", &format!("o{n}"), "z").await;
    }
    assert_eq!(last_seq(&app, "room").await, 5);
    app.stop().await;
}

async fn bad_settings_are_refused_and_change_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "room", "owners": ["olive"], "members": ["mo", "alice"]}))
        .await;
    for (bad, field) in [
        (json!({"postingRole": "owner"}), "postingRole"),
        (json!({"postingRole": "everyone"}), "postingRole"),
        (json!({"postingRole": null}), "postingRole"),
        (json!({"slowModeMs": -1}), "slowModeMs"),
        (json!({"slowModeMs": 3_600_001}), "slowModeMs"),
        (json!({"slowModeMs": 1.5}), "slowModeMs"),
        (json!({"slowModeMs": "1000"}), "slowModeMs"),
        (json!({"slowModeMs": 1000, "postingRole": "boss"}), "postingRole"),
    ] {
        let (status, body) = patch(&app, ADMIN_TOKEN, "room", bad.clone()).await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (400, &json!("invalid_field")),
            "{bad}: {body}"
        );
        let message = body["error"]["message"].as_str().expect("message");
        assert!(message.starts_with(&format!("{field}: ")), "{bad}: {body}");
    }
    let (_, channel) = app.request("GET", "/v1/channels/room", Some(ADMIN_TOKEN), None).await;
    assert_eq!(
        (&channel["postingRole"], &channel["slowModeMs"]),
        (&json!("member"), &json!(0)),
        "{channel}"
    );
    // The largest slow mode is taken; only an owner (or the admin) patches.
    assert_eq!(
        patch(&app, ADMIN_TOKEN, "room", json!({"slowModeMs": 3_600_000}))
            .await
            .0,
        200
    );
    assert_eq!(
        patch(&app, &app.token("alice"), "room", json!({"slowModeMs": 0}))
            .await
            .0,
        403
    );
    // A direct channel has neither.
    let (_, direct) = app
        .request("PUT", "/v1/me/direct/bob", Some(&app.token("alice")), None)
        .await;
    let id = direct["channelId"].as_str().expect("id");
    assert_eq!(direct["postingRole"], "member", "{direct}");
    let (status, _) = patch(&app, ADMIN_TOKEN, id, json!({"slowModeMs": 1000})).await;
    assert_eq!(status, 403);
    let (status, _) = patch(&app, ADMIN_TOKEN, id, json!({"postingRole": "moderator"})).await;
    assert_eq!(status, 403);
    app.stop().await;
}
