//! Direct channels (protocol.md §13.2): `PUT /v1/me/direct/{userId}`, one
//! channel per pair from either side, made once under racing calls, and
//! `dm_policy`.

use serde_json::{json, Value};

use chatd::config::DmPolicy;
use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, spawn_app_with, Backend, TestApp, ADMIN_TOKEN};

on_both_stores!(
    a_pair_has_one_direct_channel_from_either_side,
    racing_calls_from_both_sides_make_one_channel,
    dm_policy_refuses_with_its_reason,
    bad_direct_calls_are_refused,
);

async fn direct(app: &TestApp, from: &str, to: &str) -> (u16, Value) {
    app.request("PUT", &format!("/v1/me/direct/{to}"), Some(&app.token(from)), None)
        .await
}

async fn a_pair_has_one_direct_channel_from_either_side(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut bob = app.connect("bob").await;
    let (status, made) = direct(&app, "alice", "bob").await;
    assert_eq!(status, 201, "{made}");
    assert_eq!(
        (
            &made["kind"],
            &made["visibility"],
            &made["members"],
            &made["memberCount"]
        ),
        (&json!("direct"), &json!("private"), &json!(["alice", "bob"]), &json!(2))
    );
    let id = made["channelId"].as_str().expect("id").to_owned();
    let (status, again) = direct(&app, "bob", "alice").await;
    assert_eq!(
        (status, &again["channelId"]),
        (200, &json!(id)),
        "the same channel from the other side"
    );
    let (status, again) = direct(&app, "alice", "bob").await;
    assert_eq!((status, &again["channelId"]), (200, &json!(id)));

    // bob's open session was told, once; it gets its messages; both may send.
    let added = bob.recv_type("CHANNEL_ADDED").await;
    assert_eq!(
        (&added["channel"]["channelId"], &added["channel"]["kind"]),
        (&json!(id), &json!("direct"))
    );
    let mut alice = app.connect("alice").await;
    alice.send_and_ack(&id, "a1", "hi bob").await;
    assert_eq!(bob.recv_type("MSG_RECV").await["body"], "hi bob");
    bob.send_and_ack(&id, "b1", "hi alice").await;
    let hello = app.connect("bob").await.hello;
    assert_eq!(hello["channels"][0]["kind"], "direct");

    // No one joins, leaves or is added; it is never listed.
    let (status, _) = app
        .request(
            "DELETE",
            &format!("/v1/me/channels/{id}"),
            Some(&app.token("alice")),
            None,
        )
        .await;
    assert_eq!(status, 403, "a direct channel cannot be left");
    // A stranger "leaving" it gets what an unknown channel gets (204), so
    // it learns nothing of the channel (found by a hostile test: 403 told
    // it that a direct channel of that id exists).
    for id in [id.as_str(), "no-such-channel"] {
        let (status, _) = app
            .request(
                "DELETE",
                &format!("/v1/me/channels/{id}"),
                Some(&app.token("carol")),
                None,
            )
            .await;
        assert_eq!(status, 204, "{id}");
    }
    let (status, _) = app
        .request("PUT", &format!("/v1/me/channels/{id}"), Some(&app.token("carol")), None)
        .await;
    assert_eq!(status, 403);
    let (status, body) = app
        .request(
            "PUT",
            &format!("/v1/channels/{id}/members/carol"),
            Some(ADMIN_TOKEN),
            None,
        )
        .await;
    assert_eq!((status, &body["error"]["code"]), (403, &json!("forbidden")), "{body}");
    let (_, members) = app
        .request("GET", &format!("/v1/channels/{id}/members"), Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(members["members"].as_array().expect("members").len(), 2);
    let (_, listed) = app
        .request("GET", "/v1/directory", Some(&app.token("carol")), None)
        .await;
    assert_eq!(listed["channels"], json!([]));

    // A user's own direct channel: the caller alone.
    let (status, own) = direct(&app, "alice", "alice").await;
    assert_eq!((status, &own["members"]), (201, &json!(["alice"])), "{own}");
    assert_ne!(own["channelId"], json!(id));
    app.stop().await;
}

async fn racing_calls_from_both_sides_make_one_channel(backend: Backend) {
    let app = spawn_app(backend).await;
    let calls = (0..10).map(|n| {
        let (from, to) = if n % 2 == 0 { ("alice", "bob") } else { ("bob", "alice") };
        direct(&app, from, to)
    });
    let answers = futures_util::future::join_all(calls).await;
    let created = answers.iter().filter(|(status, _)| *status == 201).count();
    assert_eq!(created, 1, "{answers:?}");
    assert!(
        answers.iter().all(|(status, _)| *status == 201 || *status == 200),
        "{answers:?}"
    );
    let ids: std::collections::BTreeSet<&str> = answers
        .iter()
        .map(|(_, body)| body["channelId"].as_str().expect("id"))
        .collect();
    assert_eq!(ids.len(), 1, "one channel: {ids:?}");
    let (_, mine) = app
        .request("GET", "/v1/me/channels", Some(&app.token("alice")), None)
        .await;
    assert_eq!(mine["channels"].as_array().expect("channels").len(), 1);
    app.stop().await;
}

async fn dm_policy_refuses_with_its_reason(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.dm_policy = DmPolicy::Off).await;
    let (status, body) = direct(&app, "alice", "bob").await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        (&body["error"]["code"], &body["error"]["reason"]),
        (&json!("forbidden"), &json!("dm_policy"))
    );
    let (_, mine) = app
        .request("GET", "/v1/me/channels", Some(&app.token("alice")), None)
        .await;
    assert_eq!(mine["channels"], json!([]), "nothing made");
    app.stop().await;

    let app = spawn_app_with(backend, |c| c.dm_policy = DmPolicy::SharedChannel).await;
    let (status, body) = direct(&app, "alice", "bob").await;
    assert_eq!(
        (status, &body["error"]["reason"]),
        (403, &json!("dm_policy")),
        "no shared group yet"
    );
    app.create_channel("team", &["alice", "bob"]).await;
    let (status, body) = direct(&app, "alice", "bob").await;
    assert_eq!(status, 201, "they share a group now: {body}");
    let (status, _) = direct(&app, "alice", "alice").await;
    assert_eq!(status, 201, "one's own");
    app.stop().await;
}

async fn bad_direct_calls_are_refused(backend: Backend) {
    let app = spawn_app(backend).await;
    let (status, body) = direct(&app, "alice", "bad%20id").await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (400, &json!("invalid_field")),
        "{body}"
    );
    let (status, _) = app.request("PUT", "/v1/me/direct/bob", Some(ADMIN_TOKEN), None).await;
    assert_eq!(status, 403, "the admin token is no user");
    let (status, _) = app.request("PUT", "/v1/me/direct/bob", None, None).await;
    assert_eq!(status, 401);
    app.stop().await;
}
