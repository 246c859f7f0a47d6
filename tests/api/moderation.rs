//! Mute and ban (protocol.md §17) as membership changes in the channel's
//! commit order (§13.3): the `MEMBER` frames, every refusal with its code
//! and `reason` (the connection stays open, nothing is stored), a mute that
//! ends by itself, bans listed and lifted, and sends racing a mute judged by
//! its `afterSeq`.

use std::time::Duration;

use serde_json::{json, Value};

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, Backend, TestApp, WsClient, ADMIN_TOKEN};

on_both_stores!(
    a_muted_member_is_refused_with_retry_after_and_still_reads,
    a_mute_ends_by_itself_and_an_unmute_is_announced,
    only_moderators_mute_and_a_moderator_only_members,
    a_ban_removes_the_member_and_keeps_it_out_until_lifted,
    bans_are_listed_for_moderators_and_the_admin,
    sends_racing_a_mute_are_judged_by_its_after_seq,
);

const QUIET: Duration = Duration::from_millis(300);

fn now_ms() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_millis(),
    )
    .expect("ms")
}

async fn as_user(app: &TestApp, method: &str, path: &str, user: &str, body: Option<&str>) -> (u16, Value) {
    app.request(method, path, Some(&app.token(user)), body).await
}

/// Mutes `user` in `room` until `until` (`None`: unmutes) with `by`'s token.
async fn mute(app: &TestApp, by: &str, user: &str, until: Option<i64>) -> (u16, Value) {
    let body = json!({ "mutedUntil": until }).to_string();
    let token = if by == "admin" {
        ADMIN_TOKEN.to_owned()
    } else {
        app.token(by)
    };
    app.request(
        "PUT",
        &format!("/v1/channels/room/members/{user}"),
        Some(&token),
        Some(&body),
    )
    .await
}

/// The next ERROR, which must be `code` with `reason`.
async fn refused(client: &mut WsClient, code: &str, reason: &str) -> Value {
    let error = client.recv_type("ERROR").await;
    assert_eq!(
        (&error["code"], &error["reason"]),
        (&json!(code), &json!(reason)),
        "{error}"
    );
    assert_eq!(error["retryable"], code == "rate_limited", "{error}");
    error
}

async fn last_seq(app: &TestApp, channel: &str) -> i64 {
    let (status, body) = app
        .request("GET", &format!("/v1/channels/{channel}"), Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(status, 200, "{body}");
    body["lastSeq"].as_i64().expect("lastSeq")
}

async fn a_muted_member_is_refused_with_retry_after_and_still_reads(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "room", "owners": ["olive"], "members": ["alice", "bob"]}))
        .await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let first = alice.send_and_ack("room", "k1", "before").await;
    let first_id = first["messageId"].as_str().expect("id").to_owned();
    bob.recv_type("MSG_RECV").await;

    let until = now_ms() + 60_000;
    let (status, body) = mute(&app, "olive", "alice", Some(until)).await;
    assert_eq!(status, 204, "{body}");
    let expected = json!({"type": "MEMBER", "channelId": "room", "userId": "alice", "op": "mute",
        "mutedUntil": until, "actorId": "olive", "afterSeq": 1});
    for client in [&mut alice, &mut bob] {
        let mut frame = client.recv_type("MEMBER").await;
        assert!(frame["ts"].as_i64().expect("ts") > 0);
        frame.as_object_mut().expect("object").remove("ts");
        assert_eq!(frame, expected);
    }

    // MSG_SEND, MSG_EDIT, MSG_REACT and TYPING: forbidden, muted, with the
    // time left; each echoes what a refusal echoes.
    alice.send_msg("room", "k2", "while muted").await;
    let error = refused(&mut alice, "forbidden", "muted").await;
    let left = error["retryAfterMs"].as_i64().expect("retryAfterMs");
    assert!((1..=60_000).contains(&left), "{error}");
    assert_eq!(
        (&error["clientMsgId"], &error["channelId"]),
        (&json!("k2"), &json!("room"))
    );
    alice
        .send_json(json!({"type": "MSG_EDIT", "clientMsgId": "k3", "messageId": first_id, "body": "edited"}))
        .await;
    let error = refused(&mut alice, "forbidden", "muted").await;
    assert_eq!(error["messageId"], json!(first_id));
    alice
        .send_json(json!({"type": "MSG_REACT", "clientMsgId": "k4", "messageId": first_id, "emoji": "x", "op": "add"}))
        .await;
    refused(&mut alice, "forbidden", "muted").await;
    alice
        .send_json(json!({"type": "TYPING", "channelId": "room", "state": "start"}))
        .await;
    let error = refused(&mut alice, "forbidden", "muted").await;
    assert!(error["retryAfterMs"].as_i64().expect("retryAfterMs") > 0);
    // The backend's post as the muted member: 403, muted.
    let post = json!({"senderId": "alice", "clientMsgId": "k5", "body": "by the backend"}).to_string();
    let (status, body) = app
        .request("POST", "/v1/channels/room/messages", Some(ADMIN_TOKEN), Some(&post))
        .await;
    assert_eq!((status, &body["error"]["reason"]), (403, &json!("muted")), "{body}");
    assert!(body["error"]["retryAfterMs"].as_i64().expect("retryAfterMs") > 0);

    // A retry of a stored key is still its ACK; reading, receipts and
    // deleting its own message still work; nothing was stored.
    alice.send_msg("room", "k1", "before").await;
    assert_eq!(alice.recv_type("MSG_ACK").await["duplicate"], true);
    alice
        .send_json(json!({"type": "MSG_READ", "messageId": first_id}))
        .await;
    assert_eq!(alice.recv_type("RECEIPT").await["kind"], "read");
    alice
        .send_json(json!({"type": "SYNC", "channelId": "room", "afterSeq": 0}))
        .await;
    let batch = alice.recv_type("SYNC_BATCH").await;
    assert_eq!(batch["messages"].as_array().map(Vec::len), Some(1), "{batch}");
    assert_eq!(last_seq(&app, "room").await, 1, "nothing stored while muted");
    let (_, page) = as_user(&app, "GET", "/v1/channels/room/members", "bob", None).await;
    let row = page["members"]
        .as_array()
        .expect("members")
        .iter()
        .find(|m| m["userId"] == "alice")
        .cloned()
        .expect("alice");
    assert_eq!(row["mutedUntil"], json!(until), "{page}");
    alice
        .send_json(json!({"type": "MSG_DELETE", "clientMsgId": "k6", "messageId": first_id}))
        .await;
    let ack = alice.recv_type("MSG_ACK").await;
    assert_eq!(ack["seq"], 2, "a muted member may still delete its own message");
    app.stop().await;
}

async fn a_mute_ends_by_itself_and_an_unmute_is_announced(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "room", "members": ["alice", "bob"]}))
        .await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let until = now_ms() + 1_500;
    assert_eq!(mute(&app, "admin", "alice", Some(until)).await.0, 204);
    let frame = bob.recv_type("MEMBER").await;
    assert_eq!((&frame["op"], &frame["mutedUntil"]), (&json!("mute"), &json!(until)));
    assert!(frame.get("actorId").is_none(), "the admin token: no actorId");
    alice.recv_type("MEMBER").await;
    alice.send_msg("room", "k1", "too soon").await;
    let error = refused(&mut alice, "forbidden", "muted").await;
    let left = error["retryAfterMs"].as_i64().expect("retryAfterMs");
    assert!((1..=1_500).contains(&left), "{error}");
    // No action: once the time is past, alice sends again.
    tokio::time::sleep(Duration::from_millis(u64::try_from(left).expect("ms") + 50)).await;
    assert_eq!(alice.send_and_ack("room", "k1", "now").await["seq"], 1);
    bob.recv_type("MSG_RECV").await;
    // Muting again to the same time, or unmuting one not muted, announces nothing.
    let later = now_ms() + 60_000;
    assert_eq!(mute(&app, "admin", "alice", Some(later)).await.0, 204);
    assert_eq!(bob.recv_type("MEMBER").await["mutedUntil"], json!(later));
    assert_eq!(mute(&app, "admin", "alice", Some(later)).await.0, 204);
    bob.expect_silence(QUIET).await;
    // An unmute is a MEMBER mute with mutedUntil null.
    assert_eq!(mute(&app, "admin", "alice", None).await.0, 204);
    let frame = bob.recv_type("MEMBER").await;
    assert_eq!(
        (&frame["op"], frame.get("mutedUntil"), &frame["afterSeq"]),
        (&json!("mute"), Some(&Value::Null), &json!(1))
    );
    assert_eq!(mute(&app, "admin", "alice", None).await.0, 204);
    bob.expect_silence(QUIET).await;
    assert_eq!(alice.recv_type("MEMBER").await["mutedUntil"], json!(later));
    assert_eq!(alice.recv_type("MEMBER").await["mutedUntil"], Value::Null);
    assert_eq!(alice.send_and_ack("room", "k2", "unmuted").await["seq"], 2);
    // Leaving and joining again does not lift a mute.
    app.post_channel(json!({"channelId": "lobby", "visibility": "public", "members": ["alice"]}))
        .await;
    let body = json!({ "mutedUntil": now_ms() + 60_000 }).to_string();
    let (status, _) = app
        .request(
            "PUT",
            "/v1/channels/lobby/members/alice",
            Some(ADMIN_TOKEN),
            Some(&body),
        )
        .await;
    assert_eq!(status, 204);
    assert_eq!(
        as_user(&app, "DELETE", "/v1/me/channels/lobby", "alice", None).await.0,
        204
    );
    assert_eq!(
        as_user(&app, "PUT", "/v1/me/channels/lobby", "alice", None).await.0,
        204
    );
    let mut again = app.connect("alice").await;
    again.send_msg("lobby", "k3", "rejoined").await;
    refused(&mut again, "forbidden", "muted").await;
    app.stop().await;
}

async fn only_moderators_mute_and_a_moderator_only_members(backend: Backend) {
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
    let mut bob = app.connect("bob").await;
    let until = now_ms() + 60_000;
    // A member may not mute; a moderator may not mute a moderator or an owner.
    for (by, user) in [("alice", "bob"), ("mo", "olive"), ("eve", "bob")] {
        let (status, body) = mute(&app, by, user, Some(until)).await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (403, &json!("forbidden")),
            "{by} {user}: {body}"
        );
    }
    bob.expect_silence(QUIET).await;
    // A moderator mutes a member; an owner mutes a moderator.
    assert_eq!(mute(&app, "mo", "bob", Some(until)).await.0, 204);
    assert_eq!(bob.recv_type("MEMBER").await["actorId"], "mo");
    assert_eq!(mute(&app, "olive", "mo", Some(until)).await.0, 204);
    assert_eq!(bob.recv_type("MEMBER").await["userId"], "mo");
    // Not in a direct channel.
    let (status, body) = as_user(&app, "PUT", "/v1/me/direct/bob", "alice", None).await;
    assert_eq!(status, 201, "{body}");
    let direct = body["channelId"].as_str().expect("id").to_owned();
    let mute_body = json!({ "mutedUntil": until }).to_string();
    let (status, _) = app
        .request(
            "PUT",
            &format!("/v1/channels/{direct}/members/bob"),
            Some(ADMIN_TOKEN),
            Some(&mute_body),
        )
        .await;
    assert_eq!(status, 403);
    app.stop().await;
}

async fn a_ban_removes_the_member_and_keeps_it_out_until_lifted(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(
        json!({"channelId": "lobby", "visibility": "public", "owners": ["olive"],
        "members": ["alice", "bob"]}),
    )
    .await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    alice.send_and_ack("lobby", "k1", "hello").await;
    bob.recv_type("MSG_RECV").await;
    let (status, _) = as_user(&app, "DELETE", "/v1/channels/lobby/members/bob?ban=true", "olive", None).await;
    assert_eq!(status, 204);
    let ban = bob.recv_type("MEMBER").await;
    assert_eq!(
        (&ban["op"], &ban["userId"], &ban["actorId"], &ban["afterSeq"]),
        (&json!("ban"), &json!("bob"), &json!("olive"), &json!(1))
    );
    let removed = bob.recv_type("CHANNEL_REMOVED").await;
    assert_eq!(
        removed,
        json!({"type": "CHANNEL_REMOVED", "channelId": "lobby", "reason": "banned"})
    );
    assert_eq!(alice.recv_type("MEMBER").await["op"], "ban");
    alice.send_and_ack("lobby", "k2", "after the ban").await;
    bob.expect_silence(QUIET).await;

    // Rejoining: 403 banned; the session stays open and the channel keeps
    // its two members.
    let (status, body) = as_user(&app, "PUT", "/v1/me/channels/lobby", "bob", None).await;
    assert_eq!(
        (status, &body["error"]["code"], &body["error"]["reason"]),
        (403, &json!("forbidden"), &json!("banned")),
        "{body}"
    );
    bob.send_msg("lobby", "k1", "let me in").await;
    assert_eq!(bob.recv_type("ERROR").await["code"], "forbidden");
    assert_eq!(last_seq(&app, "lobby").await, 2);
    // Banning again changes nothing and sends nothing.
    assert_eq!(
        as_user(&app, "DELETE", "/v1/channels/lobby/members/bob?ban=true", "olive", None)
            .await
            .0,
        204
    );
    alice.expect_silence(QUIET).await;

    // Lifted: bob joins again.
    assert_eq!(
        as_user(&app, "DELETE", "/v1/channels/lobby/bans/bob", "olive", None)
            .await
            .0,
        204
    );
    assert_eq!(
        as_user(&app, "DELETE", "/v1/channels/lobby/bans/bob", "olive", None)
            .await
            .0,
        204
    );
    assert_eq!(as_user(&app, "PUT", "/v1/me/channels/lobby", "bob", None).await.0, 204);
    assert_eq!(bob.recv_type("CHANNEL_ADDED").await["channel"]["channelId"], "lobby");
    assert_eq!(bob.recv_type("MEMBER").await["op"], "join");

    // Banned by the admin token (no actorId), then added back by it: lifted.
    let (status, _) = app
        .request(
            "DELETE",
            "/v1/channels/lobby/members/bob?ban=true",
            Some(ADMIN_TOKEN),
            None,
        )
        .await;
    assert_eq!(status, 204);
    let ban = bob.recv_type("MEMBER").await;
    assert_eq!((&ban["op"], ban.get("actorId")), (&json!("ban"), None));
    assert_eq!(app.put_member("lobby", "bob").await.as_u16(), 204);
    assert_eq!(
        as_user(&app, "DELETE", "/v1/me/channels/lobby", "bob", None).await.0,
        204
    );
    assert_eq!(
        as_user(&app, "PUT", "/v1/me/channels/lobby", "bob", None).await.0,
        204,
        "the add lifted it"
    );

    // A non-member is banned too: its join is refused.
    assert_eq!(
        as_user(
            &app,
            "DELETE",
            "/v1/channels/lobby/members/carol?ban=true",
            "olive",
            None
        )
        .await
        .0,
        204
    );
    let (status, body) = as_user(&app, "PUT", "/v1/me/channels/lobby", "carol", None).await;
    assert_eq!((status, &body["error"]["reason"]), (403, &json!("banned")));
    // A member may not ban; a private channel's refusal stays the plain one.
    let (status, _) = as_user(&app, "DELETE", "/v1/channels/lobby/members/bob?ban=true", "alice", None).await;
    assert_eq!(status, 403);
    app.stop().await;
}

async fn bans_are_listed_for_moderators_and_the_admin(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "room", "owners": ["olive"], "members": ["alice", "b1", "b2", "b3"]}))
        .await;
    for user in ["b2", "b1"] {
        let (status, _) = as_user(
            &app,
            "DELETE",
            &format!("/v1/channels/room/members/{user}?ban=true"),
            "olive",
            None,
        )
        .await;
        assert_eq!(status, 204);
    }
    let (status, _) = app
        .request(
            "DELETE",
            "/v1/channels/room/members/b3?ban=true",
            Some(ADMIN_TOKEN),
            None,
        )
        .await;
    assert_eq!(status, 204);
    let (status, page) = as_user(&app, "GET", "/v1/channels/room/bans?limit=2", "olive", None).await;
    assert_eq!(status, 200, "{page}");
    let bans = page["bans"].as_array().expect("bans");
    let users: Vec<&str> = bans.iter().map(|b| b["userId"].as_str().expect("user")).collect();
    assert_eq!((users, &page["hasMore"]), (vec!["b1", "b2"], &json!(true)));
    assert_eq!(bans[0]["actorId"], "olive");
    assert!(bans[0]["bannedAt"].as_i64().expect("bannedAt") > 1_600_000_000_000);
    let (_, page) = app
        .request("GET", "/v1/channels/room/bans?after=b2", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(page["bans"][0]["userId"], "b3", "{page}");
    assert!(page["bans"][0].get("actorId").is_none(), "banned by the admin token");
    assert_eq!(page["hasMore"], false);
    // A member, a stranger, a bad limit; an unknown channel.
    assert_eq!(
        as_user(&app, "GET", "/v1/channels/room/bans", "alice", None).await.0,
        403
    );
    assert_eq!(as_user(&app, "GET", "/v1/channels/room/bans", "eve", None).await.0, 403);
    assert_eq!(
        as_user(&app, "GET", "/v1/channels/nowhere/bans", "eve", None).await.0,
        403
    );
    let (status, body) = as_user(&app, "GET", "/v1/channels/room/bans?limit=0", "olive", None).await;
    assert_eq!((status, &body["error"]["code"]), (400, &json!("invalid_field")));
    let (status, _) = app
        .request("GET", "/v1/channels/nowhere/bans", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(status, 404);
    assert_eq!(
        as_user(&app, "DELETE", "/v1/channels/room/bans/b1", "alice", None)
            .await
            .0,
        403
    );
    let (_, page) = app
        .request("GET", "/v1/channels/room/bans", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(page["bans"].as_array().map(Vec::len), Some(3), "a member lifts nothing");
    app.stop().await;
}

/// Guarantee 12: every send with a seq above the mute's `afterSeq` was
/// judged muted, every one at or below it was stored, and every refused
/// one stored nothing.
async fn sends_racing_a_mute_are_judged_by_its_after_seq(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "room", "members": ["alice", "bob"]}))
        .await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    const SENDS: usize = 80;
    // Pipelined: every send in flight while the mute lands.
    let sender = async {
        for n in 0..SENDS {
            alice.send_msg("room", &format!("k{n}"), "x").await;
        }
        let mut acked = Vec::new();
        let mut muted = 0;
        while acked.len() + muted < SENDS {
            let frame = alice.recv().await;
            match frame["type"].as_str() {
                Some("MSG_ACK") => acked.push(frame["seq"].as_i64().expect("seq")),
                Some("ERROR") => {
                    assert_eq!(frame["reason"], "muted", "{frame}");
                    muted += 1;
                }
                _ => {}
            }
        }
        (acked, muted)
    };
    let changes = async {
        tokio::time::sleep(Duration::from_millis(3)).await;
        assert_eq!(mute(&app, "admin", "alice", Some(now_ms() + 60_000)).await.0, 204);
    };
    let ((acked, muted), ()) = tokio::join!(sender, changes);
    let frame = loop {
        let frame = bob.recv().await;
        if frame["type"] == "MEMBER" {
            break frame;
        }
    };
    let after = frame["afterSeq"].as_i64().expect("afterSeq");
    let expected: Vec<i64> = (1..=after).collect();
    assert_eq!(acked, expected, "stored exactly up to the mute's afterSeq");
    assert_eq!(usize::try_from(after).expect("n") + muted, SENDS);
    assert_eq!(last_seq(&app, "room").await, after, "nothing stored after it");
    app.stop().await;
}
