//! Membership changes announced in the channel's commit order (protocol.md
//! §13.3): `CHANNEL_ADDED` before anything else of a channel, `MEMBER` to
//! the members and the user concerned with `afterSeq` and `actorId`,
//! `CHANNEL_REMOVED` with `reason` and nothing of the channel after it, and
//! nothing at all for a change that changes nothing.

use std::time::Duration;

use serde_json::{json, Value};

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, Backend, TestApp, ADMIN_TOKEN};

on_both_stores!(
    a_join_sends_channel_added_then_member_to_everyone,
    a_leave_and_a_removal_end_with_channel_removed_and_nothing_after,
    a_role_change_is_a_member_frame_and_a_no_op_sends_nothing,
    a_ban_that_is_not_true_or_false_is_refused,
    a_former_member_gets_no_receipts_of_the_channel,
    a_new_channel_or_direct_channel_is_added_and_a_deleted_one_removed,
    sends_racing_a_join_and_a_removal_are_on_the_right_side_of_after_seq,
);

async fn user_request(app: &TestApp, method: &str, path: &str, user: &str, body: Option<&str>) -> (u16, Value) {
    app.request(method, path, Some(&app.token(user)), body).await
}

const QUIET: Duration = Duration::from_millis(300);

async fn a_join_sends_channel_added_then_member_to_everyone(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "room", "owners": ["olive"], "members": ["alice"]}))
        .await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    alice.send_and_ack("room", "k1", "before bob").await;

    // The admin adds bob: bob's first frame of the channel is CHANNEL_ADDED.
    assert_eq!(app.put_member("room", "bob").await.as_u16(), 204);
    let added = bob.recv_type("CHANNEL_ADDED").await;
    let channel = &added["channel"];
    assert_eq!(channel["channelId"], "room");
    assert_eq!(
        (channel["lastSeq"].as_i64(), channel["role"].as_str()),
        (Some(1), Some("member"))
    );
    assert_eq!(
        (channel["kind"].as_str(), channel["memberCount"].as_i64()),
        (Some("group"), Some(3))
    );
    let member = bob.recv_type("MEMBER").await;
    let expected = json!({"type": "MEMBER", "channelId": "room", "userId": "bob", "op": "join",
        "role": "member", "afterSeq": 1, "ts": member["ts"]});
    assert_eq!(member, expected, "no actorId for the admin token");
    assert!(member["ts"].as_i64().expect("ts") > 1_600_000_000_000);
    assert_eq!(alice.recv_type("MEMBER").await, expected);

    // Then the channel's messages, from seq 2.
    alice.send_and_ack("room", "k2", "after bob").await;
    let recv = bob.recv_type("MSG_RECV").await;
    assert_eq!(
        (recv["seq"].as_i64(), recv["body"].as_str()),
        (Some(2), Some("after bob"))
    );

    // A join of a public channel by the user itself carries its own actorId.
    app.post_channel(json!({"channelId": "lobby", "visibility": "public", "members": ["alice"]}))
        .await;
    alice.recv_type("CHANNEL_ADDED").await;
    let (status, _) = user_request(&app, "PUT", "/v1/me/channels/lobby", "bob", None).await;
    assert_eq!(status, 204);
    assert_eq!(bob.recv_type("CHANNEL_ADDED").await["channel"]["channelId"], "lobby");
    let joined = bob.recv_type("MEMBER").await;
    assert_eq!((&joined["op"], &joined["actorId"]), (&json!("join"), &json!("bob")));
    assert_eq!(alice.recv_type("MEMBER").await["userId"], "bob");
    // An owner's add names the owner.
    let (status, _) = user_request(&app, "PUT", "/v1/channels/room/members/carol", "olive", None).await;
    assert_eq!(status, 204);
    let by_owner = alice.recv_type("MEMBER").await;
    assert_eq!(
        (&by_owner["userId"], &by_owner["actorId"]),
        (&json!("carol"), &json!("olive"))
    );
    app.stop().await;
}

async fn a_leave_and_a_removal_end_with_channel_removed_and_nothing_after(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "room", "owners": ["olive"], "members": ["alice", "bob", "carol"]}))
        .await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let mut carol = app.connect("carol").await;
    alice.send_and_ack("room", "k1", "hello").await;
    bob.recv_type("MSG_RECV").await;
    carol.recv_type("MSG_RECV").await;

    // bob leaves by itself.
    let (status, _) = user_request(&app, "DELETE", "/v1/me/channels/room", "bob", None).await;
    assert_eq!(status, 204);
    let expected = json!({"type": "MEMBER", "channelId": "room", "userId": "bob", "op": "leave",
        "actorId": "bob", "afterSeq": 1});
    for ws in [&mut bob, &mut alice, &mut carol] {
        let mut member = ws.recv_type("MEMBER").await;
        member.as_object_mut().expect("object").remove("ts").expect("ts");
        assert_eq!(member, expected);
    }
    assert_eq!(
        bob.recv_type("CHANNEL_REMOVED").await,
        json!({"type": "CHANNEL_REMOVED", "channelId": "room", "reason": "left"})
    );
    // carol is removed by the owner.
    let (status, _) = user_request(&app, "DELETE", "/v1/channels/room/members/carol", "olive", None).await;
    assert_eq!(status, 204);
    let member = carol.recv_type("MEMBER").await;
    assert_eq!((&member["op"], &member["actorId"]), (&json!("leave"), &json!("olive")));
    assert_eq!(carol.recv_type("CHANNEL_REMOVED").await["reason"], "removed");
    assert_eq!(alice.recv_type("MEMBER").await["userId"], "carol");

    // Nothing of the channel reaches them after it.
    alice.send_and_ack("room", "k2", "after they left").await;
    bob.expect_silence(QUIET).await;
    carol.expect_silence(QUIET).await;
    // Leaving again, or removing a non-member: 204 and nothing announced.
    let (status, _) = user_request(&app, "DELETE", "/v1/me/channels/room", "bob", None).await;
    assert_eq!(status, 204);
    assert_eq!(app.delete_member("room", "carol").await.as_u16(), 204);
    alice.expect_silence(QUIET).await;
    bob.expect_silence(QUIET).await;
    app.stop().await;
}

async fn a_role_change_is_a_member_frame_and_a_no_op_sends_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "room", "owners": ["olive"], "members": ["alice"]}))
        .await;
    let mut alice = app.connect("alice").await;
    let (status, body) = user_request(
        &app,
        "PUT",
        "/v1/channels/room/members/alice",
        "olive",
        Some(r#"{"role": "moderator"}"#),
    )
    .await;
    assert_eq!(status, 204, "{body}");
    let member = alice.recv_type("MEMBER").await;
    assert_eq!(
        (&member["op"], &member["role"], &member["actorId"], &member["afterSeq"]),
        (&json!("role"), &json!("moderator"), &json!("olive"), &json!(0))
    );
    // The same role again, or an add without a body: nothing changes.
    let (status, _) = user_request(
        &app,
        "PUT",
        "/v1/channels/room/members/alice",
        "olive",
        Some(r#"{"role": "moderator"}"#),
    )
    .await;
    assert_eq!(status, 204);
    assert_eq!(app.put_member("room", "alice").await.as_u16(), 204);
    alice.expect_silence(QUIET).await;
    // A refused change announces nothing either.
    let (status, _) = user_request(
        &app,
        "PUT",
        "/v1/channels/room/members/olive",
        "alice",
        Some(r#"{"role": "member"}"#),
    )
    .await;
    assert_eq!(status, 403);
    alice.expect_silence(QUIET).await;
    app.stop().await;
}

async fn a_new_channel_or_direct_channel_is_added_and_a_deleted_one_removed(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    app.post_channel(json!({"channelId": "room", "owners": ["alice"], "members": ["bob"]}))
        .await;
    let mine = alice.recv_type("CHANNEL_ADDED").await;
    assert_eq!(
        (&mine["channel"]["role"], &mine["channel"]["memberCount"]),
        (&json!("owner"), &json!(2))
    );
    let theirs = bob.recv_type("CHANNEL_ADDED").await;
    assert_eq!(
        (&theirs["channel"]["role"], &theirs["channel"]["lastSeq"]),
        (&json!("member"), &json!(0))
    );
    // A user's own channel.
    let (status, _) = user_request(
        &app,
        "POST",
        "/v1/me/channels",
        "bob",
        Some(r#"{"channelId": "bobs", "members": ["alice"]}"#),
    )
    .await;
    assert_eq!(status, 201);
    assert_eq!(bob.recv_type("CHANNEL_ADDED").await["channel"]["role"], "owner");
    assert_eq!(alice.recv_type("CHANNEL_ADDED").await["channel"]["channelId"], "bobs");
    // A direct channel: both sides, once.
    let (status, dm) = user_request(&app, "PUT", "/v1/me/direct/bob", "alice", None).await;
    assert_eq!(status, 201);
    let dm_id = dm["channelId"].clone();
    for ws in [&mut alice, &mut bob] {
        let added = ws.recv_type("CHANNEL_ADDED").await;
        assert_eq!(
            (&added["channel"]["channelId"], &added["channel"]["kind"]),
            (&dm_id, &json!("direct"))
        );
    }
    let (status, _) = user_request(&app, "PUT", "/v1/me/direct/alice", "bob", None).await;
    assert_eq!(status, 200);
    alice.expect_silence(QUIET).await;
    // Deleted: CHANNEL_REMOVED with reason deleted, no MEMBER frames.
    let (status, _) = app
        .request("DELETE", "/v1/channels/room", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(status, 204);
    for ws in [&mut alice, &mut bob] {
        assert_eq!(
            ws.recv_type("CHANNEL_REMOVED").await,
            json!({"type": "CHANNEL_REMOVED", "channelId": "room", "reason": "deleted"})
        );
    }
    app.stop().await;
}

/// Guarantee 12 as a member sees it: with sends racing a join and a
/// removal, the joiner gets exactly the entries above the join's `afterSeq`,
/// after its CHANNEL_ADDED; the removed member exactly those up to the
/// removal's `afterSeq`, before its MEMBER and CHANNEL_REMOVED.
async fn sends_racing_a_join_and_a_removal_are_on_the_right_side_of_after_seq(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    const SENDS: usize = 60;
    // One send at a time (each waits for its ACK, skipping alice's MEMBER
    // frames), so the changes land between sends.
    let sender = async {
        for n in 0..SENDS {
            alice.send_msg("room", &format!("k{n}"), "x").await;
            while alice.recv().await["type"] != "MSG_ACK" {}
        }
    };
    let changes = async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert_eq!(app.put_member("room", "bob").await.as_u16(), 204);
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(app.delete_member("room", "bob").await.as_u16(), 204);
    };
    tokio::join!(sender, changes);

    let added = bob.recv_type("CHANNEL_ADDED").await;
    let join_at = added["channel"]["lastSeq"].as_i64().expect("lastSeq");
    let join = bob.recv_type("MEMBER").await;
    assert_eq!(
        (&join["op"], join["afterSeq"].as_i64()),
        (&json!("join"), Some(join_at))
    );
    let mut seqs = Vec::new();
    let leave_at = loop {
        let frame = bob.recv().await;
        match frame["type"].as_str() {
            Some("MSG_RECV") => seqs.push(frame["seq"].as_i64().expect("seq")),
            Some("MEMBER") => {
                assert_eq!(frame["op"], "leave", "{frame}");
                break frame["afterSeq"].as_i64().expect("afterSeq");
            }
            _ => panic!("unexpected frame {frame}"),
        }
    };
    assert_eq!(bob.recv_type("CHANNEL_REMOVED").await["reason"], "removed");
    let expected: Vec<i64> = (join_at + 1..=leave_at).collect();
    assert_eq!(seqs, expected, "joined after {join_at}, left after {leave_at}");
    bob.expect_silence(QUIET).await;
    app.stop().await;
}

/// `ban` is `true` or `false`: anything else is refused with
/// `invalid_field` naming `ban`, and nothing happens (a client must never
/// take a plain removal for a ban, or the other way round). A ban itself:
/// `tests/api/moderation.rs`.
async fn a_ban_that_is_not_true_or_false_is_refused(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "room", "members": ["alice", "bob"]}))
        .await;
    let mut bob = app.connect("bob").await;
    for query in ["ban=yes", "ban=1", "ban", "ban=true&ban=true"] {
        let (status, body) = app
            .request(
                "DELETE",
                &format!("/v1/channels/room/members/bob?{query}"),
                Some(ADMIN_TOKEN),
                None,
            )
            .await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (400, &json!("invalid_field")),
            "{query}: {body}"
        );
        assert!(
            body["error"]["message"].as_str().expect("message").starts_with("ban: "),
            "{body}"
        );
    }
    bob.expect_silence(QUIET).await;
    let (_, page) = app
        .request("GET", "/v1/channels/room/members", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(
        page["members"].as_array().map(Vec::len),
        Some(2),
        "bob is still a member"
    );
    // ban=false is a plain removal.
    let (status, _) = app
        .request(
            "DELETE",
            "/v1/channels/room/members/bob?ban=false",
            Some(ADMIN_TOKEN),
            None,
        )
        .await;
    assert_eq!(status, 204);
    assert_eq!(bob.recv_type("MEMBER").await["op"], "leave");
    assert_eq!(bob.recv_type("CHANNEL_REMOVED").await["reason"], "removed");
    app.stop().await;
}

/// "Nothing more of that channel" covers receipts: a sender who left does
/// not learn who reads its messages afterwards (found by a hostile test:
/// RECEIPT frames kept reaching it).
async fn a_former_member_gets_no_receipts_of_the_channel(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "room", "members": ["alice", "bob"]}))
        .await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let ack = bob.send_and_ack("room", "b1", "read me").await;
    alice.recv_type("MSG_RECV").await;
    let (status, _) = user_request(&app, "DELETE", "/v1/me/channels/room", "bob", None).await;
    assert_eq!(status, 204);
    assert_eq!(bob.recv_type("MEMBER").await["op"], "leave");
    assert_eq!(bob.recv_type("CHANNEL_REMOVED").await["reason"], "left");
    assert_eq!(alice.recv_type("MEMBER").await["userId"], "bob");
    alice
        .send_json(json!({"type": "MSG_READ", "messageId": ack["messageId"]}))
        .await;
    bob.expect_silence(QUIET).await;
    // The watermark moved all the same (alice's own read).
    let (_, page) = app
        .request("GET", "/v1/channels/room/members", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(page["members"][0]["readSeq"], 1, "{page}");
    app.stop().await;
}
