//! Attachments (protocol.md §15), what one user may leave unsent, on both
//! stores: the bytes of a user's uploads no message claimed are bounded by
//! `max_unclaimed_upload_bytes` (429 `rate_limited` past it, at once when
//! `Content-Length` says so, exactly when the row is stored even for two
//! uploads finishing together; nothing of a refused upload kept), a send
//! frees what it claims, and an upload no message claimed is removed after
//! its channel's retention when that is shorter than
//! `attachment_orphan_ttl_secs`.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app_with, Backend, TestApp, ADMIN_TOKEN};

use crate::attachments::{count, id_of, send_with, stored_files, upload};
use crate::attachments_uploads::{answer, upload_across};
use chatd_testkit::eventually;

on_both_stores!(
    an_upload_past_the_unclaimed_bound_gets_429_and_leaves_nothing,
    a_send_frees_the_bound_and_a_delete_frees_nothing_more,
    two_uploads_finishing_together_cannot_both_pass_the_bound,
    a_content_length_past_what_is_left_is_refused_before_the_body,
    a_chunked_body_is_cut_off_past_what_is_left,
    unsent_uploads_go_after_their_channels_retention_when_shorter,
);

/// The bound of these tests' servers (`max_unclaimed_upload_bytes`).
const BOUND: u64 = 25_000;

/// A PDF-typed body of `len` bytes.
fn pdf(len: usize) -> Vec<u8> {
    vec![b'p'; len]
}

async fn rows(app: &TestApp, backend: Backend) -> i64 {
    count(app, backend, "SELECT count(*) FROM attachments").await
}

fn assert_rate_limited(answer: &str) {
    assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
    assert!(answer.contains("\"code\":\"rate_limited\""), "{answer}");
    assert!(answer.contains("max_unclaimed_upload_bytes (25000 bytes)"), "{answer}");
}

/// An upload that passes the bound only when it ends (it began with room
/// left; another upload was stored meanwhile) is refused 429
/// `rate_limited`, naming the bound, and leaves no row and no bytes; the
/// other upload stays. Before, there was no bound: both were stored.
async fn an_upload_past_the_unclaimed_bound_gets_429_and_leaves_nothing(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.max_unclaimed_upload_bytes = BOUND).await;
    app.create_channel("room", &["alice"]).await;
    app.create_channel("other", &["alice"]).await;
    let answer = upload_across(&app, || async {
        // 20,000 bytes are arriving into `room`; these 10,000 fit alone.
        let (status, up) = upload(&app, "alice", "other", Some("application/pdf"), pdf(10_000), None).await;
        assert_eq!(status, 201, "{up}");
    })
    .await;
    assert_rate_limited(&answer);
    assert!(answer.contains("hold 10000 bytes and this one is 20000"), "{answer}");
    assert_eq!(rows(&app, backend).await, 1, "the first upload's row only");
    eventually("only the first upload's bytes are stored", || async {
        stored_files(&app).len() == 1 && count(&app, backend, "SELECT count(*) FROM attachment_removals").await == 0
    })
    .await;
}

/// Sending uploads frees their bytes from the bound (the next upload is
/// stored); deleting the message frees nothing more (its rows are gone,
/// they no longer counted). Before, there was no bound to free.
async fn a_send_frees_the_bound_and_a_delete_frees_nothing_more(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.max_unclaimed_upload_bytes = BOUND).await;
    app.create_channel("room", &["alice"]).await;
    let up = |len: usize| upload(&app, "alice", "room", Some("application/pdf"), pdf(len), None);
    let (s1, first) = up(10_000).await;
    let (s2, second) = up(10_000).await;
    assert_eq!((s1, s2), (201, 201));
    let (status, refused) = up(10_000).await;
    assert_eq!(
        (status, &refused["error"]["code"]),
        (429, &json!("rate_limited")),
        "{refused}"
    );
    assert_eq!(rows(&app, backend).await, 2);

    let mut alice = app.connect("alice").await;
    let ack = send_with(
        &mut alice,
        "room",
        "k1",
        "two files",
        &[&id_of(&first), &id_of(&second)],
    )
    .await;
    assert_eq!(ack["type"], "MSG_ACK", "{ack}");
    let (status, third) = up(20_000).await;
    assert_eq!(status, 201, "the send freed 20,000 bytes: {third}");
    let (status, refused) = up(10_000).await;
    assert_eq!(status, 429, "{refused}");

    let message = ack["messageId"].as_str().expect("id").to_owned();
    let (status, body) = app
        .request(
            "DELETE",
            &format!("/v1/channels/room/messages/{message}"),
            Some(ADMIN_TOKEN),
            None,
        )
        .await;
    assert_eq!(status, 204, "{body}");
    let (status, refused) = up(10_000).await;
    assert_eq!(status, 429, "a delete frees nothing more: {refused}");
    let (status, fits) = up(5_000).await;
    assert_eq!(status, 201, "{fits}");
}

/// Two uploads of one user that each fit alone, and together do not,
/// finishing at the same moment: one is stored, the other refused 429,
/// nothing of it kept. Ten users do it at once (each upload's last byte
/// sent together), so the inserts run side by side: on PostgreSQL, without
/// the per-uploader lock, both statements of a pair read the sum from
/// before either and both were stored.
async fn two_uploads_finishing_together_cannot_both_pass_the_bound(backend: Backend) {
    const USERS: usize = 10;
    let app = spawn_app_with(backend, |c| c.max_unclaimed_upload_bytes = BOUND).await;
    let users: Vec<String> = (0..USERS).map(|i| format!("u{i}")).collect();
    let names: Vec<&str> = users.iter().map(String::as_str).collect();
    app.create_channel("room", &names).await;
    let body = pdf(15_000);
    let mut sockets = Vec::new();
    for user in &users {
        for _ in 0..2 {
            let mut socket = app.upload_head(user, "room", "application/pdf", body.len()).await;
            socket.write_all(&body[1..]).await.expect("all but the last byte");
            sockets.push((user.clone(), socket));
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let last = &body[..1];
    let answers = futures_util::future::join_all(sockets.into_iter().map(|(user, mut socket)| async move {
        socket.write_all(last).await.expect("the last byte");
        (user, answer(socket).await)
    }))
    .await;
    for user in &users {
        let mine: Vec<&String> = answers.iter().filter(|(u, _)| u == user).map(|(_, a)| a).collect();
        let stored = mine.iter().filter(|a| a.starts_with("HTTP/1.1 201")).count();
        assert_eq!(stored, 1, "{user}: exactly one stored: {mine:#?}");
        let refused = mine.iter().find(|a| !a.starts_with("HTTP/1.1 201")).expect("refused");
        assert_rate_limited(refused);
    }
    assert_eq!(rows(&app, backend).await, USERS as i64);
    eventually("only the stored uploads' bytes are left", || async {
        stored_files(&app).len() == USERS
    })
    .await;
}

/// An upload whose `Content-Length` is more than the bound leaves is
/// refused 429 before any of its body is sent (the answer comes without
/// it), and nothing is written. Before, the server waited for the body.
async fn a_content_length_past_what_is_left_is_refused_before_the_body(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.max_unclaimed_upload_bytes = BOUND).await;
    app.create_channel("room", &["alice"]).await;
    let (status, up) = upload(&app, "alice", "room", Some("application/pdf"), pdf(20_000), None).await;
    assert_eq!(status, 201, "{up}");
    let socket = app.upload_head("alice", "room", "application/pdf", 10_000).await;
    let answer = tokio::time::timeout(Duration::from_secs(5), answer(socket))
        .await
        .expect("answered without the body");
    assert_rate_limited(&answer);
    assert!(answer.contains("hold 20000 bytes and this one is 10000"), "{answer}");
    assert_eq!(rows(&app, backend).await, 1);
    assert_eq!(stored_files(&app).len(), 1, "{:?}", stored_files(&app));
}

/// A body without `Content-Length` (chunked) is refused 429 as soon as it
/// passes what the bound left when it began ("at least" that many bytes),
/// not after all of it, and nothing of it is kept.
async fn a_chunked_body_is_cut_off_past_what_is_left(backend: Backend) {
    use tokio::io::AsyncReadExt;
    let app = spawn_app_with(backend, |c| c.max_unclaimed_upload_bytes = BOUND).await;
    app.create_channel("room", &["alice"]).await;
    let (status, up) = upload(&app, "alice", "room", Some("application/pdf"), pdf(20_000), None).await;
    assert_eq!(status, 201, "{up}");
    let mut socket = tokio::net::TcpStream::connect(app.addr).await.expect("connect");
    let head = format!(
        "POST /v1/channels/room/attachments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/pdf\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        app.token("alice")
    );
    socket.write_all(head.as_bytes()).await.expect("head");
    // 4 KiB chunks: the second passes the 5,000 bytes left; the server
    // answers without waiting for the rest (which is never sent).
    let chunk = format!("1000\r\n{}\r\n", "a".repeat(4096));
    for _ in 0..2 {
        socket.write_all(chunk.as_bytes()).await.expect("chunk");
    }
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), socket.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert_rate_limited(&answer);
    assert!(
        answer.contains("hold 20000 bytes and this one is at least "),
        "{answer}"
    );
    assert_eq!(rows(&app, backend).await, 1);
    eventually("only the first upload's bytes are stored", || async {
        stored_files(&app).len() == 1
    })
    .await;
}

/// The orphan sweep at a chosen `now`: an unsent upload goes after its
/// channel's `retentionSecs`, else the server's `retention_secs`, when
/// shorter than `attachment_orphan_ttl_secs`; a channel kept forever
/// (`retentionSecs` 0) keeps it for the orphan TTL. Bytes go too. Before,
/// every unsent upload stayed the whole orphan TTL (24 h), past the
/// channel's retention.
async fn unsent_uploads_go_after_their_channels_retention_when_shorter(backend: Backend) {
    let app = spawn_app_with(backend, |c| {
        c.retention_secs = 120;
        c.retention_sweep_secs = 86_400;
        c.attachment_orphan_ttl_secs = 86_400;
    })
    .await;
    for (channel, retention) in [("short", json!(60)), ("global", Value::Null), ("forever", json!(0))] {
        app.create_channel(channel, &["alice"]).await;
        if !retention.is_null() {
            let (status, body) = app
                .request(
                    "PATCH",
                    &format!("/v1/channels/{channel}"),
                    Some(ADMIN_TOKEN),
                    Some(&json!({"retentionSecs": retention}).to_string()),
                )
                .await;
            assert_eq!(status, 200, "{body}");
        }
        let (status, up) = upload(&app, "alice", channel, Some("application/pdf"), pdf(100), None).await;
        assert_eq!(status, 201, "{up}");
    }
    let left = || async {
        let mut left = Vec::new();
        for channel in ["short", "global", "forever"] {
            let sql = format!("SELECT count(*) FROM attachments WHERE channel_id = '{channel}'");
            if count(&app, backend, &sql).await == 1 {
                left.push(channel);
            }
        }
        left
    };
    let store = &app.state.store;
    let now = chatd::attachments::now_ms();
    let ttl_ms = 86_400_000;
    let expire = |at: i64| store.expire_orphan_attachments(at - ttl_ms, at, 120);
    assert_eq!(expire(now + 30_000).await.expect("sweep"), 0);
    assert_eq!(expire(now + 61_000).await.expect("sweep"), 1);
    assert_eq!(left().await, ["global", "forever"]);
    assert_eq!(expire(now + 121_000).await.expect("sweep"), 1);
    assert_eq!(left().await, ["forever"]);
    eventually("the expired uploads' bytes removed", || async {
        stored_files(&app).len() == 1
    })
    .await;
    assert_eq!(expire(now + ttl_ms + 1_000).await.expect("sweep"), 1);
    assert!(left().await.is_empty());
    eventually("every byte removed", || async { stored_files(&app).is_empty() }).await;
}
