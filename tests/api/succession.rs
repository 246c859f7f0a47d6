//! Ownership succession (docs/protocol.md §13.1): a group channel whose last
//! owner leaves, is removed, banned, erased or demoted makes the moderator
//! who joined earliest its owner, else the member who joined earliest, in
//! the same commit, announced by a `MEMBER` `role` frame without `actorId`
//! right after the change's own frame, at the same `afterSeq`. Another
//! owner left, no member left, or a channel that never had an owner: no
//! successor.

use std::time::Duration;

use serde_json::{json, Value};

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, Backend, TestApp, WsClient, ADMIN_TOKEN};

on_both_stores!(
    the_last_owner_leaving_makes_the_earliest_moderator_owner,
    without_a_moderator_the_earliest_member_succeeds_a_demoted_last_owner,
    another_owner_left_or_no_owner_ever_means_no_successor,
    an_erased_or_banned_last_owner_has_a_successor,
);

const QUIET: Duration = Duration::from_millis(300);

async fn user_request(app: &TestApp, method: &str, path: &str, user: &str, body: Option<&str>) -> (u16, Value) {
    app.request(method, path, Some(&app.token(user)), body).await
}

/// The channel's members and roles from the members route, in id order.
async fn roles(app: &TestApp, channel: &str) -> Vec<(String, String)> {
    let (status, page) = app
        .request(
            "GET",
            &format!("/v1/channels/{channel}/members"),
            Some(ADMIN_TOKEN),
            None,
        )
        .await;
    assert_eq!(status, 200, "{page}");
    page["members"]
        .as_array()
        .expect("members")
        .iter()
        .map(|m| {
            (
                m["userId"].as_str().expect("id").to_owned(),
                m["role"].as_str().expect("role").to_owned(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(u, r)| ((*u).to_owned(), (*r).to_owned())).collect()
}

/// The next frame, a `MEMBER`, without its `ts`.
async fn member_frame(ws: &mut WsClient) -> Value {
    let mut frame = ws.recv_type("MEMBER").await;
    frame.as_object_mut().expect("object").remove("ts").expect("ts");
    frame
}

async fn the_last_owner_leaving_makes_the_earliest_moderator_owner(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "room", "owners": ["olive"], "members": ["alice"]}))
        .await;
    // bob and carol join later; carol, then bob, are made moderators: bob
    // joined first, so bob is next in line, not carol nor alice.
    for user in ["bob", "carol"] {
        assert_eq!(app.put_member("room", user).await.as_u16(), 204);
    }
    for user in ["carol", "bob"] {
        let (status, body) = user_request(
            &app,
            "PUT",
            &format!("/v1/channels/room/members/{user}"),
            "olive",
            Some(r#"{"role": "moderator"}"#),
        )
        .await;
        assert_eq!(status, 204, "{body}");
    }
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    alice.send_and_ack("room", "k1", "hello").await;
    bob.recv_type("MSG_RECV").await;

    let (status, _) = user_request(&app, "DELETE", "/v1/me/channels/room", "olive", None).await;
    assert_eq!(status, 204);
    for ws in [&mut alice, &mut bob] {
        assert_eq!(
            member_frame(ws).await,
            json!({"type": "MEMBER", "channelId": "room", "userId": "olive", "op": "leave",
                "actorId": "olive", "afterSeq": 1})
        );
        assert_eq!(
            member_frame(ws).await,
            json!({"type": "MEMBER", "channelId": "room", "userId": "bob", "op": "role",
                "role": "owner", "afterSeq": 1}),
            "made owner by the server: no actorId"
        );
    }
    assert_eq!(
        roles(&app, "room").await,
        pairs(&[("alice", "member"), ("bob", "owner"), ("carol", "moderator")])
    );
    // The new owner has an owner's powers: it renames the channel.
    let (status, body) = user_request(&app, "PATCH", "/v1/channels/room", "bob", Some(r#"{"name": "bob's"}"#)).await;
    assert_eq!(status, 200, "{body}");
    app.stop().await;
}

async fn without_a_moderator_the_earliest_member_succeeds_a_demoted_last_owner(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "room", "owners": ["olive"], "members": ["zed"]}))
        .await;
    assert_eq!(app.put_member("room", "alice").await.as_u16(), 204);
    let mut zed = app.connect("zed").await;
    // The only owner makes itself a member: zed (who joined before alice,
    // although after it in byte order) becomes owner.
    let (status, body) = user_request(
        &app,
        "PUT",
        "/v1/channels/room/members/olive",
        "olive",
        Some(r#"{"role": "member"}"#),
    )
    .await;
    assert_eq!(status, 204, "{body}");
    let demoted = member_frame(&mut zed).await;
    assert_eq!(
        (&demoted["userId"], &demoted["op"], &demoted["role"]),
        (&json!("olive"), &json!("role"), &json!("member"))
    );
    assert_eq!(
        member_frame(&mut zed).await,
        json!({"type": "MEMBER", "channelId": "room", "userId": "zed", "op": "role",
            "role": "owner", "afterSeq": 0})
    );
    assert_eq!(
        roles(&app, "room").await,
        pairs(&[("alice", "member"), ("olive", "member"), ("zed", "owner")])
    );
    app.stop().await;
}

async fn another_owner_left_or_no_owner_ever_means_no_successor(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "two", "owners": ["olive", "oscar"], "members": ["alice"]}))
        .await;
    app.post_channel(json!({"channelId": "none", "members": ["alice", "bob"]}))
        .await;
    app.post_channel(json!({"channelId": "alone", "owners": ["olive"]}))
        .await;
    let mut alice = app.connect("alice").await;

    // Another owner remains: the leave is the only frame.
    let (status, _) = user_request(&app, "DELETE", "/v1/me/channels/two", "olive", None).await;
    assert_eq!(status, 204);
    assert_eq!(member_frame(&mut alice).await["userId"], "olive");
    alice.expect_silence(QUIET).await;
    assert_eq!(
        roles(&app, "two").await,
        pairs(&[("alice", "member"), ("oscar", "owner")])
    );

    // A channel that never had an owner gets none when a member goes.
    assert_eq!(app.delete_member("none", "bob").await.as_u16(), 204);
    assert_eq!(member_frame(&mut alice).await["userId"], "bob");
    alice.expect_silence(QUIET).await;
    assert_eq!(roles(&app, "none").await, pairs(&[("alice", "member")]));

    // The last owner of a channel with nobody else leaves it empty.
    let (status, _) = user_request(&app, "DELETE", "/v1/me/channels/alone", "olive", None).await;
    assert_eq!(status, 204);
    assert_eq!(roles(&app, "alone").await, pairs(&[]));
    app.stop().await;
}

async fn an_erased_or_banned_last_owner_has_a_successor(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "erased", "owners": ["olive"], "members": ["alice"]}))
        .await;
    app.post_channel(json!({"channelId": "banned", "owners": ["oscar"], "members": ["alice"]}))
        .await;
    let mut alice = app.connect("alice").await;

    let (status, body) = app.request("DELETE", "/v1/users/olive", Some(ADMIN_TOKEN), None).await;
    assert_eq!(status, 204, "{body}");
    assert_eq!(member_frame(&mut alice).await["op"], "leave");
    assert_eq!(
        member_frame(&mut alice).await,
        json!({"type": "MEMBER", "channelId": "erased", "userId": "alice", "op": "role",
            "role": "owner", "afterSeq": 0})
    );
    assert_eq!(roles(&app, "erased").await, pairs(&[("alice", "owner")]));

    let (status, body) = app
        .request(
            "DELETE",
            "/v1/channels/banned/members/oscar?ban=true",
            Some(ADMIN_TOKEN),
            None,
        )
        .await;
    assert_eq!(status, 204, "{body}");
    assert_eq!(member_frame(&mut alice).await["op"], "ban");
    assert_eq!(
        member_frame(&mut alice).await,
        json!({"type": "MEMBER", "channelId": "banned", "userId": "alice", "op": "role",
            "role": "owner", "afterSeq": 0})
    );
    assert_eq!(roles(&app, "banned").await, pairs(&[("alice", "owner")]));
    app.stop().await;
}
