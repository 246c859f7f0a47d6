//! Blocks (protocol.md §17): the `/v1/me/blocks` routes, a direct channel
//! refused either way, the blocked user's entries in an existing direct
//! channel refused (`forbidden`, `blocked`; nothing stored, the connection
//! open), group channels untouched, the blocker shown offline to the
//! blocked user, and the blocker never put into the blocked user's new
//! channel nor added to one by them.

use serde_json::{json, Value};

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, spawn_app_with, Backend, TestApp, ADMIN_TOKEN};

on_both_stores!(
    blocks_are_kept_listed_and_dropped,
    a_block_refuses_the_direct_channel_and_the_blocked_users_sends,
    a_blocker_is_shown_offline_to_the_blocked_user,
    a_block_hides_the_blocker_from_an_open_presence_subscription,
    a_blocked_user_cannot_pull_the_blocker_into_a_channel,
);

async fn as_user(app: &TestApp, method: &str, path: &str, user: &str) -> (u16, Value) {
    app.request(method, path, Some(&app.token(user)), None).await
}

async fn blocks_are_kept_listed_and_dropped(backend: Backend) {
    let app = spawn_app(backend).await;
    for _ in 0..2 {
        assert_eq!(as_user(&app, "PUT", "/v1/me/blocks/zed", "alice").await.0, 204);
    }
    assert_eq!(as_user(&app, "PUT", "/v1/me/blocks/bob", "alice").await.0, 204);
    let (status, body) = as_user(&app, "GET", "/v1/me/blocks", "alice").await;
    assert_eq!((status, body), (200, json!({"blocks": ["bob", "zed"]})));
    let (_, body) = as_user(&app, "GET", "/v1/me/blocks", "bob").await;
    assert_eq!(body, json!({"blocks": []}), "blocks are the blocker's own");
    // Oneself, a bad id, the admin token.
    let (status, body) = as_user(&app, "PUT", "/v1/me/blocks/alice", "alice").await;
    assert_eq!((status, &body["error"]["code"]), (400, &json!("invalid_field")));
    let (status, _) = as_user(&app, "PUT", "/v1/me/blocks/x*y", "alice").await;
    assert_eq!(status, 400);
    let (status, _) = app.request("GET", "/v1/me/blocks", Some(ADMIN_TOKEN), None).await;
    assert_eq!(status, 403);
    for _ in 0..2 {
        assert_eq!(as_user(&app, "DELETE", "/v1/me/blocks/zed", "alice").await.0, 204);
    }
    let (_, body) = as_user(&app, "GET", "/v1/me/blocks", "alice").await;
    assert_eq!(body, json!({"blocks": ["bob"]}));
    app.stop().await;
}

async fn a_block_refuses_the_direct_channel_and_the_blocked_users_sends(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let (status, direct) = as_user(&app, "PUT", "/v1/me/direct/bob", "alice").await;
    assert_eq!(status, 201);
    let dm = direct["channelId"].as_str().expect("id").to_owned();
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    alice.send_and_ack(&dm, "k1", "hi bob").await;
    bob.recv_type("MSG_RECV").await;

    assert_eq!(as_user(&app, "PUT", "/v1/me/blocks/alice", "bob").await.0, 204);
    // The blocked user's message, edit and reaction in the direct channel.
    alice.send_msg(&dm, "k2", "hello?").await;
    let error = alice.recv_type("ERROR").await;
    assert_eq!(
        (&error["code"], &error["reason"], &error["clientMsgId"]),
        (&json!("forbidden"), &json!("blocked"), &json!("k2")),
        "{error}"
    );
    let mine = bob.send_and_ack(&dm, "b1", "no").await["messageId"].clone();
    assert_eq!(
        alice.recv_type("MSG_RECV").await["body"],
        "no",
        "the blocker still sends"
    );
    alice
        .send_json(json!({"type": "MSG_REACT", "clientMsgId": "k3", "messageId": mine, "emoji": "x", "op": "add"}))
        .await;
    assert_eq!(alice.recv_type("ERROR").await["reason"], "blocked");
    let (_, history) = app.history(&dm, ADMIN_TOKEN, "afterSeq=0").await;
    assert_eq!(history["messages"].as_array().map(Vec::len), Some(2), "nothing stored");
    // A group channel is untouched: stored and delivered.
    alice.send_and_ack("room", "k4", "in the group").await;
    assert_eq!(bob.recv_type("MSG_RECV").await["body"], "in the group");
    // The direct channel is refused either way while the block holds.
    for (user, other) in [("alice", "bob"), ("bob", "alice")] {
        let (status, body) = as_user(&app, "PUT", &format!("/v1/me/direct/{other}"), user).await;
        assert_eq!(
            (status, &body["error"]["reason"]),
            (403, &json!("blocked")),
            "{user}: {body}"
        );
    }
    // Lifted: alice sends again, and the direct channel opens.
    assert_eq!(as_user(&app, "DELETE", "/v1/me/blocks/alice", "bob").await.0, 204);
    alice.send_and_ack(&dm, "k5", "thanks").await;
    assert_eq!(as_user(&app, "PUT", "/v1/me/direct/bob", "alice").await.0, 200);
    app.stop().await;
}

async fn a_blocker_is_shown_offline_to_the_blocked_user(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let _bob = app.connect("bob").await;
    let subscribe = json!({"type": "PRESENCE_SUB", "userIds": ["bob"]});
    alice.send_json(subscribe.clone()).await;
    let presence = alice.recv_type("PRESENCE").await;
    assert_eq!(
        (&presence["userId"], &presence["status"]),
        (&json!("bob"), &json!("online"))
    );
    assert_eq!(as_user(&app, "PUT", "/v1/me/blocks/alice", "bob").await.0, 204);
    alice.send_json(subscribe).await;
    let presence = alice.recv_type("PRESENCE").await;
    assert_eq!(
        presence,
        json!({"type": "PRESENCE", "userId": "bob", "status": "offline"}),
        "no lastSeenAt"
    );
    // bob still sees alice.
    let mut bob = app.connect("bob").await;
    bob.send_json(json!({"type": "PRESENCE_SUB", "userIds": ["alice"]}))
        .await;
    assert_eq!(bob.recv_type("PRESENCE").await["status"], "online");
    app.stop().await;
}

/// A block made while the blocked user's presence subscription is open
/// applies at once: the blocked user gets the blocker `offline` (no
/// `lastSeenAt`) without subscribing again, and no later change of the
/// blocker's presence. Before, only the next PRESENCE_SUB judged it.
async fn a_block_hides_the_blocker_from_an_open_presence_subscription(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.presence_grace_ms = 100).await;
    app.create_channel("room", &["alice", "bob", "carol"]).await;
    let mut alice = app.connect("alice").await;
    let bob = app.connect("bob").await;
    alice
        .send_json(json!({"type": "PRESENCE_SUB", "userIds": ["bob", "carol"]}))
        .await;
    for (user, status) in [("bob", "online"), ("carol", "offline")] {
        let presence = alice.recv_type("PRESENCE").await;
        assert_eq!(
            (&presence["userId"], &presence["status"]),
            (&json!(user), &json!(status))
        );
    }
    assert_eq!(as_user(&app, "PUT", "/v1/me/blocks/alice", "bob").await.0, 204);
    let presence = alice.recv_type("PRESENCE").await;
    assert_eq!(
        presence,
        json!({"type": "PRESENCE", "userId": "bob", "status": "offline"}),
        "at once, no lastSeenAt"
    );
    // bob going offline (past the grace) tells alice nothing; carol, who
    // does not block her, is still watched.
    drop(bob);
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    let carol = app.connect("carol").await;
    let presence = alice.recv_type("PRESENCE").await;
    assert_eq!(
        (&presence["userId"], &presence["status"]),
        (&json!("carol"), &json!("online")),
        "{presence}"
    );
    drop(carol);
    app.stop().await;
}

/// Found by a hostile test: with the direct channel refused, the blocked
/// user made a channel of their own with the blocker in `members` (or
/// added the blocker to one they own) and wrote to them there.
async fn a_blocked_user_cannot_pull_the_blocker_into_a_channel(backend: Backend) {
    let app = spawn_app(backend).await;
    assert_eq!(as_user(&app, "PUT", "/v1/me/blocks/stalker", "victim").await.0, 204);
    let stalker = app.token("stalker");
    let create = |id: &'static str, members: Value| {
        let (app, stalker) = (&app, stalker.clone());
        async move {
            let body = json!({"channelId": id, "members": members}).to_string();
            app.request("POST", "/v1/me/channels", Some(&stalker), Some(&body))
                .await
        }
    };
    let (status, body) = create("trap", json!(["victim", "friend"])).await;
    assert_eq!((status, &body["error"]["reason"]), (403, &json!("blocked")), "{body}");
    let (status, _) = app.request("GET", "/v1/channels/trap", Some(ADMIN_TOKEN), None).await;
    assert_eq!(status, 404, "nothing created");
    // A channel the stalker owns: the victim is not added by them; others are.
    assert_eq!(create("own", json!(["friend"])).await.0, 201);
    let (status, body) = app
        .request("PUT", "/v1/channels/own/members/victim", Some(&stalker), None)
        .await;
    assert_eq!((status, &body["error"]["reason"]), (403, &json!("blocked")), "{body}");
    assert_eq!(
        app.request("PUT", "/v1/channels/own/members/other", Some(&stalker), None)
            .await
            .0,
        204
    );
    let (_, members) = app
        .request("GET", "/v1/channels/own/members", Some(ADMIN_TOKEN), None)
        .await;
    let ids: Vec<&str> = members["members"]
        .as_array()
        .expect("members")
        .iter()
        .map(|m| m["userId"].as_str().expect("userId"))
        .collect();
    assert_eq!(ids, ["friend", "other", "stalker"]);
    // The admin token still adds anyone; an owner still moderates a member
    // who blocks them (a block is no shield from moderation).
    assert_eq!(
        app.request("PUT", "/v1/channels/own/members/victim", Some(ADMIN_TOKEN), None)
            .await
            .0,
        204
    );
    let until = r#"{"mutedUntil": 4102444800000}"#;
    assert_eq!(
        app.request("PUT", "/v1/channels/own/members/victim", Some(&stalker), Some(until))
            .await
            .0,
        204
    );
    app.stop().await;
}
