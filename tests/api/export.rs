//! A user's export (protocol.md §19, `GET /v1/users/{userId}/export`), on
//! both stores: NDJSON lines of every kind with their shapes, an end line
//! counting the lines before it, signed attachment URLs that fetch the
//! bytes without a token, an unknown user's empty export, the admin token
//! only, one snapshot across pages while the body streams, and no export
//! of a user being erased (refused, or cut short when it began first).

use std::time::Duration;

use serde_json::{json, Value};

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, spawn_app_with, Backend, TestApp, WsClient, ADMIN_TOKEN};

use crate::attachments::{get, id_of, png, upload};

on_both_stores!(
    an_export_holds_every_line_of_the_user_and_nothing_of_others,
    an_unknown_user_exports_only_the_end_line,
    an_export_is_one_snapshot_across_its_pages,
    the_rust_client_reads_an_export_as_typed_lines,
    an_export_streaming_when_its_user_is_erased_is_cut_short,
    an_export_while_an_erasure_is_in_progress_is_refused,
);

/// `GET /v1/users/{user}/export` with `token`: status, content type, lines.
async fn export(app: &TestApp, user: &str, token: &str) -> (u16, String, Vec<Value>) {
    let res = app
        .http
        .get(app.url(&format!("/v1/users/{user}/export")))
        .bearer_auth(token)
        .send()
        .await
        .expect("http");
    let status = res.status().as_u16();
    let kind = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let text = res.text().await.expect("body");
    let lines = if status == 200 {
        text.lines()
            .map(|line| serde_json::from_str(line).expect("each line is one JSON object"))
            .collect()
    } else {
        vec![serde_json::from_str(&text).unwrap_or(Value::Null)]
    };
    (status, kind, lines)
}

/// Reads frames until the MSG_ACK (or ERROR) of `key`.
async fn answer_of(ws: &mut WsClient, key: &str) -> Value {
    loop {
        let frame = ws.recv().await;
        if (frame["type"] == "MSG_ACK" || frame["type"] == "ERROR") && frame["clientMsgId"] == key {
            return frame;
        }
    }
}

/// Lines of `kind`.
fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

async fn an_export_holds_every_line_of_the_user_and_nothing_of_others(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    app.create_channel("side", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;

    let image = png(8, 6);
    let img = id_of(
        &upload(&app, "alice", "room", Some("image/png"), image.clone(), Some("pic.png"))
            .await
            .1,
    );
    alice
        .send_json(json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "a1",
            "body": "first words", "attachments": [img]}))
        .await;
    let first = answer_of(&mut alice, "a1").await;
    assert_eq!(first["type"], "MSG_ACK", "{first}");
    let first_id = first["messageId"].as_str().expect("id").to_owned();
    alice
        .send_json(
            json!({"type": "MSG_EDIT", "clientMsgId": "e1", "messageId": first_id, "body": "first words, edited"}),
        )
        .await;
    assert_eq!(answer_of(&mut alice, "e1").await["type"], "MSG_ACK");
    bob.send_msg("room", "b1", "bob's own words").await;
    let bobs = answer_of(&mut bob, "b1").await;
    let bobs_id = bobs["messageId"].as_str().expect("id").to_owned();
    alice
        .send_json(json!({"type": "MSG_REACT", "clientMsgId": "r1", "messageId": bobs_id, "emoji": "👍", "op": "add"}))
        .await;
    assert_eq!(answer_of(&mut alice, "r1").await["type"], "MSG_ACK");
    bob.send_json(json!({"type": "MSG_REACT", "clientMsgId": "r2", "messageId": first_id, "emoji": "🎉", "op": "add"}))
        .await;
    assert_eq!(answer_of(&mut bob, "r2").await["type"], "MSG_ACK");
    alice.send_msg("side", "a2", "in the side channel").await;
    assert_eq!(answer_of(&mut alice, "a2").await["type"], "MSG_ACK");

    let (status, kind, lines) = export(&app, "alice", ADMIN_TOKEN).await;
    assert_eq!(status, 200, "{lines:?}");
    assert_eq!(kind, "application/x-ndjson");
    let end = lines.last().expect("an end line");
    assert_eq!(end, &json!({"type": "end", "count": lines.len() - 1}), "{lines:?}");
    assert_eq!(of_type(&lines, "end").len(), 1);

    // Messages: alice's two, render-ready, with their channels; none of bob's.
    let messages = of_type(&lines, "message");
    assert_eq!(messages.len(), 2, "{messages:?}");
    let first_line = messages
        .iter()
        .find(|m| m["messageId"] == first_id.as_str())
        .expect("the first message");
    assert_eq!(first_line["channelId"], "room");
    assert_eq!(first_line["senderId"], "alice");
    assert_eq!(first_line["kind"], "message");
    assert_eq!(first_line["body"], "first words, edited", "its current text");
    assert!(first_line["editedAt"].is_i64());
    assert_eq!(
        first_line["reactions"],
        json!([{"emoji": "🎉", "count": 1, "me": false}])
    );
    assert_eq!(first_line["attachments"][0]["attachmentId"], img.as_str());
    assert!(messages
        .iter()
        .any(|m| m["channelId"] == "side" && m["body"] == "in the side channel"));
    assert!(
        !lines.iter().any(|l| l.to_string().contains("bob's own words")),
        "another user's text is not in the export"
    );

    // Memberships, in byte order of the channel.
    let memberships = of_type(&lines, "membership");
    assert_eq!(memberships.len(), 2, "{memberships:?}");
    for (line, channel) in memberships.iter().zip(["room", "side"]) {
        assert_eq!(line["channelId"], channel);
        assert_eq!(line["role"], "member");
        assert!(line["joinedAt"].as_i64().is_some_and(|t| t > 0), "{line}");
        assert_eq!(line.as_object().expect("object").len(), 4, "{line}");
    }

    // Reactions the user holds: the one on bob's message.
    let reactions = of_type(&lines, "reaction");
    assert_eq!(
        reactions,
        vec![&json!({"type": "reaction", "channelId": "room", "messageId": bobs_id, "emoji": "👍"})]
    );

    // Uploads, with a signed URL that works without a token.
    let attachments = of_type(&lines, "attachment");
    assert_eq!(attachments.len(), 1, "{attachments:?}");
    let a = attachments[0];
    assert_eq!(a["attachmentId"], img.as_str());
    assert_eq!(a["channelId"], "room");
    assert_eq!(a["messageId"], first_id.as_str());
    assert_eq!(a["contentType"], "image/png");
    assert_eq!(a["size"], image.len());
    assert_eq!(a["filename"], "pic.png");
    assert_eq!((&a["width"], &a["height"]), (&json!(8), &json!(6)));
    assert!(a["sha256"].as_str().is_some_and(|h| h.len() == 64));
    assert!(a["createdAt"].is_i64());
    let url = a["url"].as_str().expect("url");
    let (status, _, bytes) = get(&app, url, None, None).await;
    assert_eq!(status, 200, "the signed url serves the bytes");
    assert_eq!(bytes, image);
    let thumb = a["thumbnailUrl"].as_str().expect("an image has a thumbnail");
    assert_eq!(get(&app, thumb, None, None).await.0, 200);
    // Altered, it is refused.
    assert_eq!(get(&app, &url.replace("sig=", "sig=0"), None, None).await.0, 404);

    // Bob's export has his message and his reaction, not alice's.
    let (_, _, bobs_lines) = export(&app, "bob", ADMIN_TOKEN).await;
    assert_eq!(of_type(&bobs_lines, "message").len(), 1);
    assert_eq!(of_type(&bobs_lines, "reaction")[0]["emoji"], "🎉");
    assert!(of_type(&bobs_lines, "attachment").is_empty());

    // Admin only; a bad id is refused.
    let (status, _, body) = export(&app, "alice", &app.token("alice")).await;
    assert_eq!(status, 403, "{body:?}");
    let (status, _, body) = export(&app, "alice", "not-a-token").await;
    assert_eq!(status, 401, "{body:?}");
    let (status, _, body) = export(&app, &"x".repeat(300), ADMIN_TOKEN).await;
    assert_eq!(status, 400, "{body:?}");
    assert_eq!(body[0]["error"]["code"], "invalid_field");
}

async fn an_unknown_user_exports_only_the_end_line(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    alice.send_msg("room", "a1", "hello").await;
    answer_of(&mut alice, "a1").await;
    let (status, kind, lines) = export(&app, "nobody", ADMIN_TOKEN).await;
    assert_eq!((status, kind.as_str()), (200, "application/x-ndjson"));
    assert_eq!(lines, vec![json!({"type": "end", "count": 0})]);
}

/// The export reads one snapshot: a message sent and an edit made while
/// the body is being read (the first page read, the rest not yet) are not
/// in it. The pages are large (6 × 500 messages of 4 KB, over 12 MB), so
/// the server cannot have read them all into the socket before the changes.
async fn an_export_is_one_snapshot_across_its_pages(backend: Backend) {
    let app = spawn_app_with(backend, |c| {
        c.rate_limit_per_sec = 100_000;
        c.user_rate_limit_per_sec = 100_000;
    })
    .await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    let total = 3_000;
    let last_id = fill(&mut alice, total).await;

    let mut res = app
        .http
        .get(app.url("/v1/users/alice/export"))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .expect("http");
    assert_eq!(res.status(), 200);
    let mut body = res.chunk().await.expect("read").expect("a first chunk").to_vec();
    // The server fills what the socket holds and waits for the reader.
    tokio::time::sleep(Duration::from_millis(500)).await;
    alice
        .send_json(json!({"type": "MSG_EDIT", "clientMsgId": "e1", "messageId": last_id, "body": "changed meanwhile"}))
        .await;
    assert_eq!(answer_of(&mut alice, "e1").await["type"], "MSG_ACK");
    alice.send_msg("room", "late", "sent meanwhile").await;
    assert_eq!(answer_of(&mut alice, "late").await["type"], "MSG_ACK");
    while let Some(chunk) = res.chunk().await.expect("read") {
        body.extend_from_slice(&chunk);
    }
    let text = String::from_utf8(body).expect("utf-8");
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).expect("json")).collect();
    let messages = of_type(&lines, "message");
    assert_eq!(messages.len(), total, "exactly the messages stored when it began");
    let last = messages.last().expect("messages");
    assert_eq!(last["messageId"], last_id.as_str());
    assert!(
        last["body"]
            .as_str()
            .is_some_and(|b| b.starts_with(&format!("m{} ", total - 1))),
        "the text as it was when the export began"
    );
    assert!(!text.contains("sent meanwhile") && !text.contains("changed meanwhile"));
    assert_eq!(lines.last().expect("end")["count"], lines.len() - 1);
    // The changes themselves were stored.
    let (_, _, now) = export(&app, "alice", ADMIN_TOKEN).await;
    assert_eq!(of_type(&now, "message").len(), total + 1);
}

/// `AdminClient::export_user` (chatd-client, `admin` feature): the lines
/// typed, the end line's count checked; a user token is refused.
async fn the_rust_client_reads_an_export_as_typed_lines(backend: Backend) {
    use chatd_client::admin::{AdminClient, AdminError, ExportLine};
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    alice.send_msg("room", "a1", "typed line").await;
    let ack = answer_of(&mut alice, "a1").await;
    let admin = AdminClient::new(app.url(""), ADMIN_TOKEN);
    let lines = admin.export_user("alice").await.expect("export");
    assert_eq!(lines.len(), 3, "{lines:?}");
    match &lines[0] {
        ExportLine::Message(m) => {
            assert_eq!((m.body.as_str(), m.channel_id.as_str()), ("typed line", "room"));
            assert_eq!(m.message_id.to_string(), ack["messageId"].as_str().expect("id"));
        }
        other => panic!("expected the message, got {other:?}"),
    }
    assert!(matches!(&lines[1], ExportLine::Membership { channel_id, .. } if channel_id == "room"));
    assert_eq!(lines[2], ExportLine::End { count: 2 });
    assert_eq!(
        admin.export_user("nobody").await.expect("export"),
        vec![ExportLine::End { count: 0 }]
    );
    let user = AdminClient::new(app.url(""), app.token("alice"));
    assert!(matches!(
        user.export_user("alice").await,
        Err(AdminError::Status { status: 403, .. })
    ));
}

/// Stores `total` messages of 4 KB by alice in "room" (`m{i} xxx…`, keys
/// `k{i}`): over 12 MB for 3,000, more than the socket holds, so an export
/// of them streams for a while. Returns the last one's messageId.
async fn fill(alice: &mut WsClient, total: usize) -> String {
    let filler = "x".repeat(4_000);
    let mut last_id = String::new();
    for chunk in (0..total).collect::<Vec<_>>().chunks(200) {
        for i in chunk {
            alice
                .send_msg("room", &format!("k{i}"), &format!("m{i} {filler}"))
                .await;
        }
        for i in chunk {
            let ack = answer_of(alice, &format!("k{i}")).await;
            assert_eq!(ack["type"], "MSG_ACK", "{ack}");
            last_id = ack["messageId"].as_str().expect("id").to_owned();
        }
    }
    last_id
}

/// Erased means erased (guarantee 14): an export of alice streaming when
/// her erasure begins ends there, without its end line, instead of sending
/// the rest of its snapshot (it sent all 3,000 messages before).
async fn an_export_streaming_when_its_user_is_erased_is_cut_short(backend: Backend) {
    let app = spawn_app_with(backend, |c| {
        c.rate_limit_per_sec = 100_000;
        c.user_rate_limit_per_sec = 100_000;
    })
    .await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    let total = 3_000;
    fill(&mut alice, total).await;

    let mut res = app
        .http
        .get(app.url("/v1/users/alice/export"))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .expect("http");
    assert_eq!(res.status(), 200);
    let mut body = res.chunk().await.expect("read").expect("a first chunk").to_vec();
    // The server fills what the socket holds and waits for the reader.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let erase = app
        .http
        .delete(app.url("/v1/users/alice"))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .expect("http");
    assert!(matches!(erase.status().as_u16(), 202 | 204), "{}", erase.status());
    let cut = loop {
        match res.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) => break false,
            Err(_) => break true,
        }
    };
    let text = String::from_utf8_lossy(&body);
    let complete: Vec<Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert!(cut, "the body ends with an error, not as a complete export");
    assert!(of_type(&complete, "end").is_empty(), "no end line");
    let sent = of_type(&complete, "message").len();
    assert!(sent < total, "{sent} of {total} messages sent: the export was not cut");
    // Once the erasure is done, an export of alice holds nothing of hers.
    let done = tokio::time::timeout(Duration::from_secs(120), async {
        loop {
            let (status, _, lines) = export(&app, "alice", ADMIN_TOKEN).await;
            if status == 200 {
                break lines;
            }
            assert_eq!(status, 409, "{lines:?}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await
    .expect("the erasure ends");
    assert!(
        of_type(&done, "message")
            .iter()
            .all(|m| m["deleted"] == true && m["body"] == ""),
        "nothing of alice's text is exported after her erasure"
    );
}

/// An export asked for while an erasure of its user is pending (begun, as
/// a stopped server leaves it) is refused with 409 `conflict`; another
/// user's is not.
async fn an_export_while_an_erasure_is_in_progress_is_refused(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let alice = chatd::ids::UserId::parse("alice").expect("a user id");
    app.state
        .store
        .begin_erasure(&alice, chatd::ids::now_ms())
        .await
        .expect("a pending erasure");
    let (status, _, lines) = export(&app, "alice", ADMIN_TOKEN).await;
    assert_eq!(status, 409, "{lines:?}");
    assert_eq!(lines[0]["error"]["code"], "conflict");
    let (status, _, lines) = export(&app, "bob", ADMIN_TOKEN).await;
    assert_eq!(status, 200);
    assert!(lines.last().is_some_and(|l| l["type"] == "end"));
}
