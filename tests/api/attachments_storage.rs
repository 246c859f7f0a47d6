//! Attachments (protocol.md §15), the storage side, on both stores: the S3
//! store against a real S3-compatible server (`CHATD_TEST_S3_ENDPOINT`,
//! moto's server mode started by `.ci/run`), the durable removal queue
//! across a restart, and a streamed body cut off at the limit.

use std::time::Duration;

use serde_json::json;

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, spawn_app_with, Backend, TestApp};

use crate::attachments::{count, eventually, get, id_of, png, send_with, stored_files, upload};

on_both_stores!(
    the_s3_store_keeps_serves_and_removes_the_bytes,
    a_removal_queued_before_a_crash_is_done_after_the_restart,
    a_chunked_body_is_cut_off_at_the_limit,
);

/// The S3-compatible server of the test run (`.ci/run` starts moto's
/// server mode there), or `None`: the S3 test is skipped.
fn s3_endpoint() -> Option<String> {
    std::env::var("CHATD_TEST_S3_ENDPOINT").ok().filter(|e| !e.is_empty())
}

/// Whether object `key` is in the server's attachment storage (asked of
/// the S3 server through the same `object_store` client the server uses).
async fn in_storage(app: &TestApp, key: &str) -> bool {
    app.state.attachments.storage.exists(key).await.expect("s3")
}

async fn the_s3_store_keeps_serves_and_removes_the_bytes(backend: Backend) {
    let Some(endpoint) = s3_endpoint() else {
        eprintln!("CHATD_TEST_S3_ENDPOINT unset: the S3 test is skipped");
        return;
    };
    for (name, value) in [("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")] {
        if std::env::var_os(name).is_none() {
            std::env::set_var(name, value);
        }
    }
    let bucket = format!("chatd-test-{}", uuid::Uuid::now_v7().simple());
    let created = reqwest::Client::new()
        .put(format!("{endpoint}/{bucket}"))
        .send()
        .await
        .expect("create bucket");
    assert!(created.status().is_success(), "bucket: {}", created.status());
    let app = spawn_app_with(backend, |c| {
        c.attachments_store = chatd::config::AttachmentsStore::S3;
        c.attachments_s3_bucket = Some(bucket.clone());
        c.attachments_s3_endpoint = Some(endpoint.clone());
        c.attachments_s3_region = Some("us-east-1".into());
    })
    .await;
    app.create_channel("room", &["alice", "bob"]).await;
    let image = png(300, 150);
    let (status, up) = upload(&app, "alice", "room", Some("image/png"), image.clone(), Some("s3.png")).await;
    assert_eq!(status, 201, "{up}");
    let id = id_of(&up);
    assert!(in_storage(&app, &format!("files/{id}")).await);
    assert!(in_storage(&app, &format!("thumbnails/{id}")).await);
    assert!(stored_files(&app).is_empty(), "nothing on disk with s3");
    let (status, _, bytes) = get(&app, &format!("/v1/attachments/{id}"), Some(&app.token("bob")), None).await;
    assert_eq!((status, bytes == image), (200, true));
    let (status, _, part) = get(
        &app,
        &format!("/v1/attachments/{id}"),
        Some(&app.token("bob")),
        Some("bytes=1-3"),
    )
    .await;
    assert_eq!((status, part.as_slice()), (206, &image[1..4]));

    let mut alice = app.connect("alice").await;
    let ack = send_with(&mut alice, "room", "k1", "", &[&id]).await;
    let message = ack["messageId"].as_str().expect("id").to_owned();
    alice
        .send_json(json!({"type": "MSG_DELETE", "clientMsgId": "d1", "messageId": message}))
        .await;
    assert_eq!(alice.recv_type("MSG_ACK").await["clientMsgId"], "d1");
    eventually("the S3 objects are gone and the queue is empty", || async {
        !in_storage(&app, &format!("files/{id}")).await
            && !in_storage(&app, &format!("thumbnails/{id}")).await
            && count(&app, backend, "SELECT count(*) FROM attachment_removals").await == 0
    })
    .await;
}

/// The removal queue is durable: objects whose rows a transaction deleted
/// but that were not removed yet (the server stopped between the commit and
/// the removal) are removed after a restart.
async fn a_removal_queued_before_a_crash_is_done_after_the_restart(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice"]).await;
    let id = id_of(
        &upload(&app, "alice", "room", Some("image/png"), png(12, 12), None)
            .await
            .1,
    );
    assert_eq!(stored_files(&app).len(), 2);
    // Stop the removal task (the server is shutting down), then commit what
    // a delete commits: the rows gone, the keys queued.
    app.shutdown.cancel();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let statements = [
        format!("INSERT INTO attachment_removals (storage_key, queued_at) SELECT storage_key, 1 FROM attachments WHERE attachment_id = '{id}'"),
        format!("INSERT INTO attachment_removals (storage_key, queued_at) SELECT thumbnail_key, 1 FROM attachments WHERE attachment_id = '{id}'"),
        format!("DELETE FROM attachments WHERE attachment_id = '{id}'"),
    ];
    {
        use sqlx::Connection;
        match backend {
            Backend::Postgres => {
                let mut conn = sqlx::PgConnection::connect(&app.db.url).await.expect("pg");
                for sql in &statements {
                    sqlx::query(sql).execute(&mut conn).await.expect("sql");
                }
            }
            Backend::Sqlite => {
                let mut conn = sqlx::SqliteConnection::connect(&app.db.url).await.expect("sqlite");
                for sql in &statements {
                    sqlx::query(sql).execute(&mut conn).await.expect("sql");
                }
            }
        }
    }
    assert_eq!(
        count(&app, backend, "SELECT count(*) FROM attachment_removals").await,
        2
    );
    assert_eq!(stored_files(&app).len(), 2, "not removed while stopped");
    let app = app.restart(|_| {}).await;
    eventually("the queued objects are removed after the restart", || async {
        stored_files(&app).is_empty() && count(&app, backend, "SELECT count(*) FROM attachment_removals").await == 0
    })
    .await;
}

/// A body without `Content-Length` (chunked) is counted as it arrives: 413
/// once it passes `max_attachment_bytes`, and nothing is left behind.
async fn a_chunked_body_is_cut_off_at_the_limit(backend: Backend) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = spawn_app_with(backend, |c| c.max_attachment_bytes = 10_000).await;
    app.create_channel("room", &["alice"]).await;
    let mut socket = tokio::net::TcpStream::connect(app.addr).await.expect("connect");
    let head = format!(
        "POST /v1/channels/room/attachments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/pdf\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        app.token("alice")
    );
    socket.write_all(head.as_bytes()).await.expect("head");
    // 4 KiB chunks, far past the limit; the server may answer and close
    // before all of them are written.
    let chunk = format!("1000\r\n{}\r\n", "a".repeat(4096));
    for _ in 0..8 {
        if socket.write_all(chunk.as_bytes()).await.is_err() {
            break;
        }
    }
    let _ = socket.write_all(b"0\r\n\r\n").await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), socket.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("body_too_large"), "{answer}");
    eventually("nothing left behind", || async {
        stored_files(&app).is_empty() && count(&app, backend, "SELECT count(*) FROM attachments").await == 0
    })
    .await;
}
