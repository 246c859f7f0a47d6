//! Flags (protocol.md §17): a member flags a message once (a second flag by
//! the same reporter answers the first), the admin lists them with keyset
//! paging, refusals change nothing, and a flagged message that is deleted
//! keeps its flag but no text (guarantee 9).

use serde_json::{json, Value};

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, Backend, TestApp, ADMIN_TOKEN};

use crate::entries::rows_holding;

on_both_stores!(a_member_flags_a_message_once_and_the_admin_pages_them);

async fn flag(app: &TestApp, user: &str, message: &str, body: Value) -> (u16, Value) {
    let token = if user == "admin" {
        ADMIN_TOKEN.to_owned()
    } else {
        app.token(user)
    };
    app.request(
        "POST",
        &format!("/v1/messages/{message}/flags"),
        Some(&token),
        Some(&body.to_string()),
    )
    .await
}

async fn a_member_flags_a_message_once_and_the_admin_pages_them(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut bob = app.connect("bob").await;
    let id = bob.send_and_ack("room", "b1", "FLAGGED-4d2e buy now").await["messageId"]
        .as_str()
        .expect("id")
        .to_owned();

    let (status, first) = flag(&app, "alice", &id, json!({"reason": "spam", "note": "ads"})).await;
    assert_eq!(status, 201, "{first}");
    assert_eq!(
        (
            &first["messageId"],
            &first["channelId"],
            &first["reporterId"],
            &first["reason"],
            &first["note"]
        ),
        (
            &json!(id),
            &json!("room"),
            &json!("alice"),
            &json!("spam"),
            &json!("ads")
        )
    );
    assert!(first["createdAt"].as_i64().expect("createdAt") > 1_600_000_000_000);
    // Again by the same reporter: 200 with the first flag, whatever the body.
    let (status, again) = flag(&app, "alice", &id, json!({"reason": "abuse"})).await;
    assert_eq!((status, &again), (200, &first));
    let (status, by_bob) = flag(&app, "bob", &id, json!({"reason": "other"})).await;
    assert_eq!(status, 201);
    assert!(by_bob.get("note").is_none());

    // Refusals: nothing stored.
    for (user, message, body, expected) in [
        ("eve", id.as_str(), json!({"reason": "spam"}), 403),
        ("admin", id.as_str(), json!({"reason": "spam"}), 403),
        (
            "alice",
            "0190a000-0000-7000-8000-000000000001",
            json!({"reason": "spam"}),
            404,
        ),
        ("alice", "nope", json!({"reason": "spam"}), 404),
        ("carol", id.as_str(), json!({"reason": "rude"}), 400),
        ("carol", id.as_str(), json!({}), 400),
        (
            "carol",
            id.as_str(),
            json!({"reason": "spam", "note": "x".repeat(1001)}),
            400,
        ),
        ("carol", id.as_str(), json!({"reason": "spam", "note": 5}), 400),
        ("carol", id.as_str(), json!({"reason": "spam", "extra": true}), 400),
    ] {
        let (status, body) = flag(&app, user, message, body.clone()).await;
        assert_eq!(status, expected, "{user} {body}");
    }
    // The message's id in any form but the wire's (lower-case, hyphenated;
    // protocol §1): 404 as for any unknown id. Before, the route parsed it
    // leniently and answered alice's flag of it (200).
    for other_form in [id.to_uppercase(), id.replace('-', ""), format!("urn:uuid:{id}")] {
        let (status, body) = flag(&app, "alice", &other_form, json!({"reason": "spam"})).await;
        assert_eq!(status, 404, "{other_form}: {body}");
    }
    // Each bad note is told what is wrong with it (before, a note with
    // U+0000 got the length message).
    for (note, says, not) in [
        (json!("x".repeat(1001)), "at most 1000 bytes", "U+0000"),
        (json!("a\u{0}b"), "must not contain U+0000", "1000"),
        (json!(5), "must be a string", "U+0000"),
    ] {
        let (status, body) = flag(&app, "carol", &id, json!({"reason": "spam", "note": note})).await;
        assert_eq!((status, &body["error"]["field"]), (400, &json!("note")), "{body}");
        let message = body["error"]["message"].as_str().expect("message");
        assert!(message.contains(says) && !message.contains(not), "{note}: {message}");
    }

    // The admin's list: keyset pages in flag order.
    let (status, page) = app.request("GET", "/v1/flags?limit=1", Some(ADMIN_TOKEN), None).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!((&page["flags"][0], &page["hasMore"]), (&first, &json!(true)));
    let after = first["flagId"].as_str().expect("flagId");
    let (_, page) = app
        .request("GET", &format!("/v1/flags?after={after}"), Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(page, json!({"flags": [by_bob], "hasMore": false}));
    assert_eq!(
        app.request("GET", "/v1/flags", Some(&app.token("alice")), None).await.0,
        403
    );
    let (status, _) = app.request("GET", "/v1/flags?after=x", Some(ADMIN_TOKEN), None).await;
    assert_eq!(status, 400);

    // Deleted: the flags stay, the text goes; a deleted message is not flagged.
    bob.send_json(json!({"type": "MSG_DELETE", "clientMsgId": "d1", "messageId": id}))
        .await;
    bob.recv_type("MSG_ACK").await;
    let (_, page) = app.request("GET", "/v1/flags", Some(ADMIN_TOKEN), None).await;
    assert_eq!(page["flags"].as_array().map(Vec::len), Some(2));
    let left = rows_holding(&app, backend, "FLAGGED-4d2e").await;
    assert!(left.is_empty(), "text left: {left:?}");
    assert_eq!(flag(&app, "carol", &id, json!({"reason": "spam"})).await.0, 404);
    app.stop().await;
}
