//! JSON numbers in the integer fields of HTTP bodies and queries (ninth
//! hostile run, finding 3): read as frames read them (§5, `chatd::number`).
//! `-0`, `3.0`, `1e3` are those integers and are stored as such; a fraction,
//! a value out of the field's range, or a float past ±2^53 is refused as
//! before, naming the field, with nothing stored changed.

use serde_json::{json, Value};

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, Backend, TestApp, ADMIN_TOKEN};

use crate::mentions::my_room;

on_both_stores!(
    settings_take_an_integral_number_as_that_integer,
    a_channel_patch_takes_integral_numbers_as_those_integers,
    a_mute_takes_an_integral_number_as_that_integer,
    a_token_ttl_takes_an_integral_number_as_that_integer,
    page_queries_take_integral_numbers_as_those_integers,
    a_fraction_whose_double_is_integral_is_refused,
    an_unknown_member_whose_number_hides_a_fraction_is_ignored,
);

/// Asserts a 400 `invalid_field` naming `field`.
fn refused(field: &str, sent: &str, (status, body): (u16, Value)) {
    assert_eq!(
        (status, &body["error"]["code"]),
        (400, &json!("invalid_field")),
        "{sent}: {body}"
    );
    let message = body["error"]["message"].as_str().expect("message");
    assert!(message.starts_with(&format!("{field}: ")), "{sent}: {body}");
}

async fn room(app: &TestApp) {
    app.post_channel(json!({"channelId": "room", "owners": ["olive"], "members": ["alice", "bob"]}))
        .await;
}

async fn settings_take_an_integral_number_as_that_integer(backend: Backend) {
    let app = spawn_app(backend).await;
    room(&app).await;
    let put = |body: &'static str| {
        let app = &app;
        async move {
            app.request(
                "PUT",
                "/v1/me/channels/room/settings",
                Some(&app.token("bob")),
                Some(body),
            )
            .await
        }
    };
    for (body, stored) in [
        (r#"{"snoozeUntil": 1e3}"#, 1000_i64),
        (r#"{"snoozeUntil": -0}"#, 0),
        (r#"{"snoozeUntil": 4102444800000.0}"#, 4_102_444_800_000),
    ] {
        let (status, answer) = put(body).await;
        assert_eq!(
            (status, &answer["snoozeUntil"]),
            (200, &json!(stored)),
            "{body}: {answer}"
        );
        assert_eq!(my_room(&app, "bob").await["snoozeUntil"], json!(stored), "{body}");
    }
    for body in [
        r#"{"snoozeUntil": 1.5}"#,
        r#"{"snoozeUntil": -1e0}"#,
        r#"{"snoozeUntil": 1e16}"#,
        r#"{"snoozeUntil": 9007199254740992.0}"#,
    ] {
        refused("snoozeUntil", body, put(body).await);
    }
    assert_eq!(my_room(&app, "bob").await["snoozeUntil"], json!(4_102_444_800_000_i64));
    app.stop().await;
}

async fn a_channel_patch_takes_integral_numbers_as_those_integers(backend: Backend) {
    let app = spawn_app(backend).await;
    room(&app).await;
    let patch = |body: &'static str| {
        let app = &app;
        async move {
            app.request("PATCH", "/v1/channels/room", Some(ADMIN_TOKEN), Some(body))
                .await
        }
    };
    let channel = || {
        let app = &app;
        async move { app.request("GET", "/v1/channels/room", Some(ADMIN_TOKEN), None).await.1 }
    };
    for (body, field, stored) in [
        (r#"{"slowModeMs": 1e3}"#, "slowModeMs", 1000_i64),
        (r#"{"slowModeMs": -0}"#, "slowModeMs", 0),
        (r#"{"slowModeMs": 2.5e3}"#, "slowModeMs", 2500),
        (r#"{"retentionSecs": 6e1}"#, "retentionSecs", 60),
        (r#"{"retentionSecs": 120.0}"#, "retentionSecs", 120),
    ] {
        let (status, answer) = patch(body).await;
        assert_eq!((status, &answer[field]), (200, &json!(stored)), "{body}: {answer}");
        assert_eq!(channel().await[field], json!(stored), "{body}");
    }
    for (body, field) in [
        (r#"{"slowModeMs": 1.5}"#, "slowModeMs"),
        (r#"{"slowModeMs": 3.600001e6}"#, "slowModeMs"),
        (r#"{"slowModeMs": -1e0}"#, "slowModeMs"),
        (r#"{"slowModeMs": 1e300}"#, "slowModeMs"),
        (r#"{"retentionSecs": 60.5}"#, "retentionSecs"),
        (r#"{"retentionSecs": 3.155760001e9}"#, "retentionSecs"),
        (r#"{"retentionSecs": 1e16}"#, "retentionSecs"),
        (r#"{"slowModeMs": 1e3, "retentionSecs": 0.5}"#, "retentionSecs"),
    ] {
        refused(field, body, patch(body).await);
    }
    let after = channel().await;
    assert_eq!(
        (&after["slowModeMs"], &after["retentionSecs"]),
        (&json!(2500), &json!(120)),
        "the refusals changed nothing: {after}"
    );
    app.stop().await;
}

async fn a_mute_takes_an_integral_number_as_that_integer(backend: Backend) {
    let app = spawn_app(backend).await;
    room(&app).await;
    let put = |body: &'static str| {
        let app = &app;
        async move {
            app.request("PUT", "/v1/channels/room/members/bob", Some(ADMIN_TOKEN), Some(body))
                .await
        }
    };
    let muted_until = || {
        let app = &app;
        async move {
            let (status, body) = app
                .request("GET", "/v1/channels/room/members", Some(ADMIN_TOKEN), None)
                .await;
            assert_eq!(status, 200, "{body}");
            body["members"]
                .as_array()
                .expect("members")
                .iter()
                .find(|m| m["userId"] == "bob")
                .expect("bob")["mutedUntil"]
                .clone()
        }
    };
    let (status, body) = put(r#"{"mutedUntil": 4.1e12}"#).await;
    assert_eq!(status, 204, "{body}");
    assert_eq!(muted_until().await, json!(4_100_000_000_000_i64));
    for body in [
        r#"{"mutedUntil": 4.1e12, "role": "moderator", "x": 1}"#,
        r#"{"mutedUntil": 4100000000000.5}"#,
        r#"{"mutedUntil": -1e0}"#,
        r#"{"mutedUntil": 1e16}"#,
    ] {
        let field = if body.contains("\"x\"") { "x" } else { "mutedUntil" };
        refused(field, body, put(body).await);
    }
    assert_eq!(muted_until().await, json!(4_100_000_000_000_i64), "unchanged");
    // `-0` is 0: a time already past, which unmutes.
    assert_eq!(put(r#"{"mutedUntil": -0}"#).await.0, 204);
    assert_eq!(muted_until().await, Value::Null);
    app.stop().await;
}

async fn a_token_ttl_takes_an_integral_number_as_that_integer(backend: Backend) {
    let app = spawn_app(backend).await;
    let mint = |body: &'static str| {
        let app = &app;
        async move { app.request("POST", "/v1/tokens", Some(ADMIN_TOKEN), Some(body)).await }
    };
    let (status, plain) = mint(r#"{"userId": "alice", "ttlSeconds": 3600}"#).await;
    assert_eq!(status, 201, "{plain}");
    let (status, float) = mint(r#"{"userId": "alice", "ttlSeconds": 3.6e3}"#).await;
    assert_eq!(status, 201, "{float}");
    let (a, b) = (
        plain["expiresAt"].as_i64().expect("expiresAt"),
        float["expiresAt"].as_i64().expect("expiresAt"),
    );
    // Minted within a few seconds of each other (ms or s, either way well
    // under the 2600 s that 1e3 against 3600 would make).
    assert!((b - a).abs() <= 5_000, "{plain} {float}");
    let token = float["token"].as_str().expect("token");
    let (status, body) = app.request("GET", "/v1/me/channels", Some(token), None).await;
    assert_eq!(status, 200, "the minted token works: {body}");
    // Out of range: `invalid_field` naming it, as for an integer.
    for body in [
        r#"{"userId": "alice", "ttlSeconds": 3.15360001e8}"#,
        r#"{"userId": "alice", "ttlSeconds": -0}"#,
    ] {
        refused("ttlSeconds", body, mint(body).await);
    }
    // Not an integer: 400 as before (the body is not the documented shape).
    for body in [
        r#"{"userId": "alice", "ttlSeconds": 1.5}"#,
        r#"{"userId": "alice", "ttlSeconds": -1e0}"#,
        r#"{"userId": "alice", "ttlSeconds": 1e300}"#,
    ] {
        let (status, answer) = mint(body).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert!(answer.get("token").is_none(), "{body}: {answer}");
    }
    app.stop().await;
}

async fn page_queries_take_integral_numbers_as_those_integers(backend: Backend) {
    let app = spawn_app(backend).await;
    room(&app).await;
    for key in ["k1", "k2", "k3"] {
        let body = json!({"senderId": "alice", "clientMsgId": key, "body": key}).to_string();
        let (status, answer) = app
            .request("POST", "/v1/channels/room/messages", Some(ADMIN_TOKEN), Some(&body))
            .await;
        assert_eq!(status, 201, "{answer}");
    }
    let get = |path: String| {
        let app = &app;
        async move { app.request("GET", &path, Some(ADMIN_TOKEN), None).await }
    };
    let (status, page) = get("/v1/channels/room/messages?afterSeq=1e0&limit=1.0e0".into()).await;
    assert_eq!(status, 200, "{page}");
    let seqs: Vec<Value> = page["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["seq"].clone())
        .collect();
    let (_, all) = get("/v1/channels/room/messages?afterSeq=0".into()).await;
    let first = all["messages"][0]["seq"].as_i64().expect("seq");
    assert_eq!(seqs.len(), 1, "{page}");
    assert!(
        seqs[0].as_i64().expect("seq") > 1 && seqs[0].as_i64() >= Some(first),
        "{page}"
    );
    let (status, page) = get("/v1/channels/room/messages?afterSeq=-0&beforeSeq=1e1".into()).await;
    assert_eq!(status, 200, "{page}");
    let (status, list) = get("/v1/channels?limit=1e0".into()).await;
    assert_eq!(
        (status, list["channels"].as_array().map(Vec::len)),
        (200, Some(1)),
        "{list}"
    );
    for (query, field) in [
        ("/v1/channels/room/messages?afterSeq=1.5", "afterSeq"),
        ("/v1/channels/room/messages?afterSeq=1e16", "afterSeq"),
        ("/v1/channels/room/messages?beforeSeq=0.5", "beforeSeq"),
        ("/v1/channels/room/messages?limit=5e2.0", "limit"),
        ("/v1/channels/room/messages?limit=5.01e2", "limit"),
        ("/v1/channels?limit=1.5", "limit"),
        ("/v1/channels?limit=5.01e2", "limit"),
        ("/v1/channels?limit=inf", "limit"),
    ] {
        refused(field, query, get(query.into()).await);
    }
    app.stop().await;
}

/// Tenth hostile run, finding 3: a fraction whose nearest double is an
/// integer (`0.99999999999999999` is 1.0, `1e-400` is 0.0) is still a
/// fraction, in a body and in a query; nothing is stored.
async fn a_fraction_whose_double_is_integral_is_refused(backend: Backend) {
    let app = spawn_app(backend).await;
    room(&app).await;
    let bob = app.token("bob");
    for (method, path, token, body, field) in [
        (
            "PUT",
            "/v1/me/channels/room/settings",
            bob.as_str(),
            r#"{"snoozeUntil": 0.99999999999999999}"#,
            "snoozeUntil",
        ),
        (
            "PUT",
            "/v1/me/channels/room/settings",
            bob.as_str(),
            r#"{"snoozeUntil": 1e-400}"#,
            "snoozeUntil",
        ),
        (
            "PATCH",
            "/v1/channels/room",
            ADMIN_TOKEN,
            r#"{"slowModeMs": 999.99999999999999999}"#,
            "slowModeMs",
        ),
        (
            "PATCH",
            "/v1/channels/room",
            ADMIN_TOKEN,
            r#"{"retentionSecs": 1e-400}"#,
            "retentionSecs",
        ),
        (
            "PUT",
            "/v1/channels/room/members/bob",
            ADMIN_TOKEN,
            r#"{"mutedUntil": 4100000000000.00000001}"#,
            "mutedUntil",
        ),
        (
            "POST",
            "/v1/tokens",
            ADMIN_TOKEN,
            r#"{"userId": "alice", "ttlSeconds": 3599.99999999999999999}"#,
            "ttlSeconds",
        ),
    ] {
        refused(field, body, app.request(method, path, Some(token), Some(body)).await);
    }
    assert_eq!(my_room(&app, "bob").await["snoozeUntil"], Value::Null, "nothing stored");
    let (status, channel) = app.request("GET", "/v1/channels/room", Some(ADMIN_TOKEN), None).await;
    assert_eq!(status, 200, "{channel}");
    assert_ne!(channel["slowModeMs"], json!(1000), "{channel}");
    assert_ne!(channel["retentionSecs"], json!(0), "{channel}");
    for (query, field) in [
        ("/v1/channels/room/messages?afterSeq=0.99999999999999999", "afterSeq"),
        ("/v1/channels/room/messages?afterSeq=1e-400", "afterSeq"),
        ("/v1/channels/room/messages?limit=2.9999999999999999", "limit"),
        ("/v1/channels?limit=2.9999999999999999", "limit"),
    ] {
        refused(field, query, app.request("GET", query, Some(ADMIN_TOKEN), None).await);
    }
    app.stop().await;
}

/// Eleventh hostile run: the backend post ignores members it does not read
/// (src/http/messages.rs, "a backend that sends a field of a later version
/// is not refused"), also when their number hides a fraction; a member it
/// reads as an integer is still refused (`ttlSeconds`, above).
async fn an_unknown_member_whose_number_hides_a_fraction_is_ignored(backend: Backend) {
    let app = spawn_app(backend).await;
    room(&app).await;
    for (key, body) in [
        (
            "k1",
            r#"{"senderId": "alice", "clientMsgId": "k1", "body": "one", "traceId": 1e-400}"#,
        ),
        (
            "k2",
            r#"{"senderId": "alice", "clientMsgId": "k2", "body": "two", "clientTs": 1796662687199.0001}"#,
        ),
        (
            "k3",
            r#"{"senderId": "alice", "clientMsgId": "k3", "body": "three", "score": 0.99999999999999999}"#,
        ),
    ] {
        let (status, answer) = app
            .request("POST", "/v1/channels/room/messages", Some(ADMIN_TOKEN), Some(body))
            .await;
        assert_eq!((status, &answer["clientMsgId"]), (201, &json!(key)), "{body}: {answer}");
    }
    refused(
        "ttlSeconds",
        "ttlSeconds beside an unknown member",
        app.request(
            "POST",
            "/v1/tokens",
            Some(ADMIN_TOKEN),
            Some(r#"{"userId": "alice", "traceId": 1e-400, "ttlSeconds": 0.99999999999999999}"#),
        )
        .await,
    );
    app.stop().await;
}
