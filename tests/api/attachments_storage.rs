//! Attachments (protocol.md §15), the storage side, on both stores: the S3
//! store against a real S3-compatible server (`CHATD_TEST_S3_ENDPOINT`,
//! moto's server mode started by `.ci/run`), the durable removal queue
//! across a restart, a streamed body cut off at the limit, and an upload
//! refused when it ends (its channel gone, or past the bound on unclaimed
//! bytes) leaving nothing in the bucket.

use std::time::Duration;

use serde_json::json;

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, spawn_app_with, Backend, TestApp, ADMIN_TOKEN};

use crate::attachments::{count, get, id_of, png, send_with, stored_files, upload};
use chatd_testkit::eventually;

on_both_stores!(
    the_s3_store_keeps_serves_and_removes_the_bytes,
    a_removal_queued_before_a_crash_is_done_after_the_restart,
    a_chunked_body_is_cut_off_at_the_limit,
    an_upload_refused_at_its_end_leaves_nothing_in_s3,
    an_upload_past_the_unclaimed_bound_leaves_nothing_in_s3,
);

/// The S3-compatible server of the test run (`.ci/run` starts moto's
/// server mode there), or `None`: the S3 test is skipped.
pub(crate) fn s3_endpoint() -> Option<String> {
    std::env::var("CHATD_TEST_S3_ENDPOINT").ok().filter(|e| !e.is_empty())
}

/// Whether object `key` is in the server's attachment storage (asked of
/// the S3 server through the same `object_store` client the server uses).
async fn in_storage(app: &TestApp, key: &str) -> bool {
    app.state.attachments.storage.exists(key).await.expect("s3")
}

/// A server storing attachments in a new bucket of the S3 server at
/// `endpoint`, and the bucket's URL.
pub(crate) async fn s3_app(backend: Backend, endpoint: &str) -> (TestApp, String) {
    s3_app_with(backend, endpoint, |_| {}).await
}

/// [`s3_app`] with `also` applied to its configuration.
async fn s3_app_with(
    backend: Backend,
    endpoint: &str,
    also: impl FnOnce(&mut chatd::config::Config),
) -> (TestApp, String) {
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
        c.attachments_s3_endpoint = Some(endpoint.to_owned());
        c.attachments_s3_region = Some("us-east-1".into());
        also(c);
    })
    .await;
    (app, format!("{endpoint}/{bucket}"))
}

async fn the_s3_store_keeps_serves_and_removes_the_bytes(backend: Backend) {
    let Some(endpoint) = s3_endpoint() else {
        eprintln!("CHATD_TEST_S3_ENDPOINT unset: the S3 test is skipped");
        return;
    };
    let (app, _) = s3_app(backend, &endpoint).await;
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

/// An upload whose channel is deleted while its body arrives, refused when
/// it ends (403), leaves no object in the S3 bucket (listed with
/// `ListObjectsV2`: only another, kept upload's), no row and nothing
/// queued. Before, it was stored.
async fn an_upload_refused_at_its_end_leaves_nothing_in_s3(backend: Backend) {
    let Some(endpoint) = s3_endpoint() else {
        eprintln!("CHATD_TEST_S3_ENDPOINT unset: the S3 test is skipped");
        return;
    };
    let (app, bucket) = s3_app(backend, &endpoint).await;
    app.create_channel("room", &["alice"]).await;
    app.create_channel("kept", &["alice"]).await;
    let listed = || async {
        reqwest::get(format!("{bucket}?list-type=2"))
            .await
            .expect("list")
            .text()
            .await
            .expect("listing")
    };
    // An upload that is kept, so the listing is seen to show objects.
    let (status, up) = upload(&app, "alice", "kept", Some("application/pdf"), b"%PDF-1".to_vec(), None).await;
    assert_eq!(status, 201, "{up}");
    let kept = format!("<Key>files/{}</Key>", id_of(&up));
    assert!(listed().await.contains(&kept), "{}", listed().await);
    let answer = crate::attachments_uploads::upload_across(&app, || async {
        let (status, body) = app
            .request("DELETE", "/v1/channels/room", Some(ADMIN_TOKEN), None)
            .await;
        assert!((200..300).contains(&status), "delete: {status} {body}");
    })
    .await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    assert_eq!(
        count(&app, backend, "SELECT count(*) FROM attachments").await,
        1,
        "the kept upload's row only"
    );
    eventually("only the kept object is in the bucket", || async {
        let listing = listed().await;
        listing.contains(&kept) && listing.matches("<Key>").count() == 1
    })
    .await;
    assert_eq!(
        count(&app, backend, "SELECT count(*) FROM attachment_removals").await,
        0
    );
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

/// An upload refused 429 when it ends (it began with room under
/// `max_unclaimed_upload_bytes`; another upload was stored meanwhile), its
/// object already written to the bucket, leaves no object (listed), no row
/// and nothing queued. Before, there was no bound: it was stored.
async fn an_upload_past_the_unclaimed_bound_leaves_nothing_in_s3(backend: Backend) {
    let Some(endpoint) = s3_endpoint() else {
        eprintln!("CHATD_TEST_S3_ENDPOINT unset: the S3 test is skipped");
        return;
    };
    let (app, bucket) = s3_app_with(backend, &endpoint, |c| c.max_unclaimed_upload_bytes = 25_000).await;
    app.create_channel("room", &["alice"]).await;
    app.create_channel("kept", &["alice"]).await;
    let listed = || async {
        reqwest::get(format!("{bucket}?list-type=2"))
            .await
            .expect("list")
            .text()
            .await
            .expect("listing")
    };
    let kept = std::sync::Mutex::new(String::new());
    let answer = crate::attachments_uploads::upload_across(&app, || async {
        let (status, up) = upload(&app, "alice", "kept", Some("application/pdf"), vec![b'k'; 10_000], None).await;
        assert_eq!(status, 201, "{up}");
        *kept.lock().expect("kept") = format!("<Key>files/{}</Key>", id_of(&up));
    })
    .await;
    let kept = kept.into_inner().expect("kept");
    assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
    assert!(answer.contains("\"code\":\"rate_limited\""), "{answer}");
    assert_eq!(
        count(&app, backend, "SELECT count(*) FROM attachments").await,
        1,
        "the kept upload's row only"
    );
    eventually("only the kept object is in the bucket", || async {
        let listing = listed().await;
        listing.contains(&kept) && listing.matches("<Key>").count() == 1
    })
    .await;
    assert_eq!(
        count(&app, backend, "SELECT count(*) FROM attachment_removals").await,
        0
    );
}
