//! Channel kinds, visibility and roles (protocol.md §13.1): the channel
//! object's and HELLO's new fields, `POST /v1/channels` with `owners` and
//! `visibility`, and the members route (`GET /v1/channels/{channelId}/members`):
//! who may read it, paging in byte order of the user id, each member's role
//! and watermarks, `atSeq`, and bad input.

use serde_json::{json, Value};

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, Backend, TestApp, ADMIN_TOKEN};

on_both_stores!(
    members_page_in_byte_order_with_roles_watermarks_and_at_seq,
    only_members_and_the_admin_read_the_members,
    bad_paging_is_invalid_field_and_changes_nothing,
    a_channel_shows_its_kind_visibility_member_count_and_each_users_role,
    bad_owners_or_visibility_are_invalid_field_and_create_nothing,
    owners_and_moderators_manage_members_as_the_table_says,
);

async fn members(app: &TestApp, channel: &str, token: &str, query: &str) -> (u16, Value) {
    app.request(
        "GET",
        &format!("/v1/channels/{channel}/members?{query}"),
        Some(token),
        None,
    )
    .await
}

fn user_ids(page: &Value) -> Vec<&str> {
    page["members"]
        .as_array()
        .expect("members")
        .iter()
        .map(|m| m["userId"].as_str().expect("userId"))
        .collect()
}

async fn members_page_in_byte_order_with_roles_watermarks_and_at_seq(backend: Backend) {
    let app = spawn_app(backend).await;
    // Byte order puts upper case first, whatever the database's collation.
    app.create_channel("room", &["bob", "alice", "Zed", "carol"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    alice.send_and_ack("room", "k1", "one").await;
    let ack = alice.send_and_ack("room", "k2", "two").await;
    bob.recv_type("MSG_RECV").await;
    bob.recv_type("MSG_RECV").await;
    bob.send_json(json!({"type": "MSG_READ", "messageId": ack["messageId"]}))
        .await;
    alice.recv_type("RECEIPT").await;

    let token = app.token("alice");
    let (status, first) = members(&app, "room", &token, "limit=2").await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(user_ids(&first), ["Zed", "alice"]);
    assert_eq!(first["hasMore"], true);
    assert_eq!(first["atSeq"], 2);
    let (status, rest) = members(&app, "room", &token, "after=alice&limit=2").await;
    assert_eq!(status, 200, "{rest}");
    assert_eq!(user_ids(&rest), ["bob", "carol"]);
    assert_eq!(rest["hasMore"], false);
    let bob_row = &rest["members"][0];
    assert_eq!(bob_row["role"], "member");
    assert_eq!((&bob_row["deliveredSeq"], &bob_row["readSeq"]), (&json!(2), &json!(2)));
    assert!(bob_row["joinedAt"].as_i64().expect("joinedAt") > 1_600_000_000_000);
    assert_eq!(rest["members"][1]["readSeq"], 0);

    // The default page holds them all; a member added later is in it.
    assert_eq!(app.put_member("room", "dave").await.as_u16(), 204);
    let (_, all) = members(&app, "room", &token, "").await;
    assert_eq!(user_ids(&all), ["Zed", "alice", "bob", "carol", "dave"]);
    assert_eq!(all["hasMore"], false);
    // A removed one is not.
    assert_eq!(app.delete_member("room", "carol").await.as_u16(), 204);
    let (_, all) = members(&app, "room", ADMIN_TOKEN, "").await;
    assert_eq!(user_ids(&all), ["Zed", "alice", "bob", "dave"]);
    app.stop().await;
}

async fn only_members_and_the_admin_read_the_members(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let (status, body) = members(&app, "room", &app.token("eve"), "").await;
    assert_eq!((status, &body["error"]["code"]), (403, &json!("forbidden")), "{body}");
    // An unknown channel answers a user exactly as a channel it is not in.
    let (status, unknown) = members(&app, "nowhere", &app.token("eve"), "").await;
    assert_eq!((status, &unknown), (403, &body));
    let (status, body) = members(&app, "nowhere", ADMIN_TOKEN, "").await;
    assert_eq!((status, &body["error"]["code"]), (404, &json!("not_found")), "{body}");
    let (status, body) = members(&app, "room", ADMIN_TOKEN, "").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(user_ids(&body), ["alice"]);
    // A browser's token in the query works like the header.
    let path = format!("/v1/channels/room/members?access_token={}", app.token("alice"));
    let (status, body) = app.request("GET", &path, None, None).await;
    assert_eq!(status, 200, "{body}");
    let (status, _) = app.request("GET", "/v1/channels/room/members", None, None).await;
    assert_eq!(status, 401);
    let (status, _) = members(&app, "room", "not-a-token", "").await;
    assert_eq!(status, 401);
    app.stop().await;
}

async fn bad_paging_is_invalid_field_and_changes_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let token = app.token("alice");
    for (query, field) in [
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("limit=ten", "limit"),
        ("limit=-1", "limit"),
        ("limit=1&limit=2", "limit"),
        ("after=", "after"),
        ("after=a%20b", "after"),
        ("after=a&after=b", "after"),
    ] {
        let (status, body) = members(&app, "room", &token, query).await;
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(body["error"]["code"], "invalid_field", "{query}");
        let message = body["error"]["message"].as_str().expect("message");
        assert!(message.starts_with(&format!("{field}: ")), "{query}: {body}");
    }
    let (status, body) = members(&app, "bad%20id", &token, "").await;
    assert_eq!(status, 400, "{body}");
    // Nothing changed.
    let (_, all) = members(&app, "room", &token, "").await;
    assert_eq!(user_ids(&all), ["alice", "bob"]);
    app.stop().await;
}

async fn a_channel_shows_its_kind_visibility_member_count_and_each_users_role(backend: Backend) {
    let app = spawn_app(backend).await;
    let res = app
        .post_channel(json!({"channelId": "town", "members": ["bob", "alice"], "owners": ["alice", "carol"], "visibility": "public"}))
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let created: Value = res.json().await.expect("json");
    assert_eq!(
        (
            &created["kind"],
            &created["visibility"],
            &created["memberCount"],
            &created["members"]
        ),
        (
            &json!("group"),
            &json!("public"),
            &json!(3),
            &json!(["alice", "bob", "carol"])
        )
    );
    // A channel made the version 1 way is a private group of members.
    app.create_channel("room", &["alice"]).await;
    let (status, room) = app.request("GET", "/v1/channels/room", Some(ADMIN_TOKEN), None).await;
    assert_eq!(status, 200);
    assert_eq!(
        (&room["kind"], &room["visibility"], &room["memberCount"]),
        (&json!("group"), &json!("private"), &json!(1))
    );

    // Owners are owners (an id in both lists too), members are members.
    let (_, page) = members(&app, "town", ADMIN_TOKEN, "").await;
    let roles: Vec<(&str, &str)> = page["members"]
        .as_array()
        .expect("members")
        .iter()
        .map(|m| (m["userId"].as_str().expect("id"), m["role"].as_str().expect("role")))
        .collect();
    assert_eq!(roles, [("alice", "owner"), ("bob", "member"), ("carol", "owner")]);

    // HELLO and /v1/me/channels carry the same fields and the user's role.
    let alice = app.connect("alice").await;
    let channels = alice.hello["channels"].as_array().expect("channels");
    let town = channels.iter().find(|c| c["channelId"] == "town").expect("town");
    assert_eq!(
        (&town["kind"], &town["visibility"], &town["memberCount"], &town["role"]),
        (&json!("group"), &json!("public"), &json!(3), &json!("owner"))
    );
    let room = channels.iter().find(|c| c["channelId"] == "room").expect("room");
    assert_eq!(
        (&room["kind"], &room["visibility"], &room["memberCount"], &room["role"]),
        (&json!("group"), &json!("private"), &json!(1), &json!("member"))
    );
    let (status, mine) = app
        .request("GET", "/v1/me/channels", Some(&app.token("bob")), None)
        .await;
    assert_eq!(status, 200, "{mine}");
    assert_eq!(mine["channels"][0]["role"], "member");
    assert_eq!(mine["channels"][0]["memberCount"], 3);
    app.stop().await;
}

async fn bad_owners_or_visibility_are_invalid_field_and_create_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    for (body, field) in [
        (json!({"channelId": "c", "visibility": "secret"}), "visibility"),
        (json!({"channelId": "c", "visibility": "Public"}), "visibility"),
        (json!({"channelId": "c", "owners": ["bad id"]}), "owners"),
        (json!({"channelId": "c", "owners": [""]}), "owners"),
    ] {
        let res = app.post_channel(body.clone()).await;
        assert_eq!(res.status().as_u16(), 400, "{body}");
        let error: Value = res.json().await.expect("json");
        assert_eq!(error["error"]["code"], "invalid_field", "{body}");
        let message = error["error"]["message"].as_str().expect("message");
        assert!(message.starts_with(&format!("{field}: ")), "{body}: {error}");
    }
    for body in [
        json!({"channelId": "c", "owners": "alice"}),
        json!({"channelId": "c", "visibility": 1}),
    ] {
        let res = app.post_channel(body.clone()).await;
        assert_eq!(res.status().as_u16(), 400, "{body}");
    }
    let (status, _) = app.request("GET", "/v1/channels/c", Some(ADMIN_TOKEN), None).await;
    assert_eq!(status, 404, "nothing was created");
    app.stop().await;
}

async fn owners_and_moderators_manage_members_as_the_table_says(backend: Backend) {
    let app = spawn_app(backend).await;
    let res = app
        .post_channel(json!({"channelId": "club", "owners": ["olive"], "members": ["mo", "mem", "other"]}))
        .await;
    assert_eq!(res.status().as_u16(), 201);
    let put = |who: String, user: &'static str, body: Option<&'static str>| {
        let app = &app;
        async move {
            app.request("PUT", &format!("/v1/channels/club/members/{user}"), Some(&who), body)
                .await
        }
    };
    let del = |who: String, user: &'static str| {
        let app = &app;
        async move {
            app.request("DELETE", &format!("/v1/channels/club/members/{user}"), Some(&who), None)
                .await
        }
    };
    let role_of = |user: &'static str| {
        let app = &app;
        async move {
            let (_, page) = members(app, "club", ADMIN_TOKEN, "").await;
            page["members"]
                .as_array()
                .expect("members")
                .iter()
                .find(|m| m["userId"] == user)
                .map(|m| m["role"].as_str().expect("role").to_owned())
        }
    };
    let admin = ADMIN_TOKEN.to_owned();
    let (olive, mo, other) = (app.token("olive"), app.token("mo"), app.token("other"));

    assert_eq!(put(admin.clone(), "mo", Some(r#"{"role": "moderator"}"#)).await.0, 204);
    assert_eq!(role_of("mo").await.as_deref(), Some("moderator"));
    // A moderator adds members, as members only.
    assert_eq!(put(mo.clone(), "newbie", None).await.0, 204);
    assert_eq!(role_of("newbie").await.as_deref(), Some("member"));
    assert_eq!(put(mo.clone(), "second", Some(r#"{"role": "member"}"#)).await.0, 204);
    let (status, body) = put(mo.clone(), "third", Some(r#"{"role": "moderator"}"#)).await;
    assert_eq!((status, &body["error"]["code"]), (403, &json!("forbidden")), "{body}");
    assert_eq!(role_of("third").await, None, "nothing added");
    let (status, _) = put(mo.clone(), "mem", Some(r#"{"role": "owner"}"#)).await;
    assert_eq!(status, 403);
    assert_eq!(role_of("mem").await.as_deref(), Some("member"));
    // An existing member added again without a body keeps its role.
    assert_eq!(put(mo.clone(), "olive", None).await.0, 204);
    assert_eq!(role_of("olive").await.as_deref(), Some("owner"));
    // A moderator removes members, not owners.
    assert_eq!(del(mo.clone(), "newbie").await.0, 204);
    assert_eq!(role_of("newbie").await, None);
    assert_eq!(del(mo.clone(), "olive").await.0, 403);
    // A member manages no one.
    assert_eq!(put(other.clone(), "z", None).await.0, 403);
    assert_eq!(del(other.clone(), "mem").await.0, 403);
    // An owner sets roles and removes a moderator.
    assert_eq!(put(olive.clone(), "mem", Some(r#"{"role": "moderator"}"#)).await.0, 204);
    assert_eq!(role_of("mem").await.as_deref(), Some("moderator"));
    assert_eq!(del(olive.clone(), "mem").await.0, 204);
    assert_eq!(role_of("mem").await, None);
    // A user who is not a member: 403, on an unknown channel too (the admin: 404).
    let eve = app.token("eve");
    let (status, _) = app
        .request("PUT", "/v1/channels/club/members/x", Some(&eve), None)
        .await;
    assert_eq!(status, 403);
    let (status, _) = app
        .request("PUT", "/v1/channels/nowhere/members/x", Some(&eve), None)
        .await;
    assert_eq!(status, 403);
    let (status, _) = app
        .request("PUT", "/v1/channels/nowhere/members/x", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(status, 404);
    // Bad bodies.
    for bad in [
        r#"{"role": "boss"}"#,
        r#"{"role": 1}"#,
        r#"{"muted": true}"#,
        r#"{"mutedUntil": "soon"}"#,
        r#"{"mutedUntil": -1}"#,
        r#"{"mutedUntil": 1.5}"#,
        "not json",
    ] {
        let (status, body) = put(admin.clone(), "mo", Some(bad)).await;
        assert_eq!(status, 400, "{bad}: {body}");
    }
    // A field this server does not apply is named, so a client never takes
    // it as done; so is a bad mutedUntil.
    for (bad, field) in [
        (r#"{"muted": true}"#, "muted"),
        (r#"{"mutedUntil": "soon"}"#, "mutedUntil"),
        // A name given twice: which value counts would depend on the parser.
        (r#"{"role": "member", "role": "owner"}"#, "role"),
    ] {
        let (_, body) = put(admin.clone(), "mo", Some(bad)).await;
        assert_eq!(body["error"]["code"], "invalid_field", "{bad}: {body}");
        let message = body["error"]["message"].as_str().expect("message");
        assert!(message.starts_with(&format!("{field}: ")), "{bad}: {body}");
    }
    assert_eq!(
        role_of("mo").await.as_deref(),
        Some("moderator"),
        "bad bodies change nothing"
    );

    // PATCH and DELETE: an owner's, not a moderator's or a member's.
    let patch = r#"{"name": "The club"}"#;
    let (status, _) = app.request("PATCH", "/v1/channels/club", Some(&mo), Some(patch)).await;
    assert_eq!(status, 403);
    let (status, _) = app
        .request("PATCH", "/v1/channels/club", Some(&other), Some(patch))
        .await;
    assert_eq!(status, 403);
    let (status, body) = app
        .request("PATCH", "/v1/channels/club", Some(&olive), Some(patch))
        .await;
    assert_eq!((status, &body["name"]), (200, &json!("The club")), "{body}");
    let (status, _) = app.request("DELETE", "/v1/channels/club", Some(&mo), None).await;
    assert_eq!(status, 403);
    let (status, _) = app.request("DELETE", "/v1/channels/club", Some(&olive), None).await;
    assert_eq!(status, 204);
    let (status, _) = app.request("GET", "/v1/channels/club", Some(ADMIN_TOKEN), None).await;
    assert_eq!(status, 404);
    app.stop().await;
}
