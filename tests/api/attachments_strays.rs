//! Objects in attachment storage that no row names (protocol.md §15,
//! guarantee 14): what a crash between writing an upload's bytes and its
//! row leaves behind. `chatd::attachments::strays::sweep_strays` removes
//! them once older than the grace period, keeps every object a row names
//! (a sent image's file and thumbnail, an upload not sent yet) and every key
//! not of chatd's shape; with the file store and with S3, on both stores.
//! The sweep is called with a `now` of the test's choosing, so no test waits
//! a day.

use std::time::Duration;

use chatd::attachments::strays::{sweep_strays, STRAY_GRACE};
use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, Backend, TestApp};

use crate::attachments::{id_of, png, send_with, upload};
use crate::attachments_storage::{s3_app, s3_endpoint};

on_both_stores!(
    objects_no_row_names_go_after_the_grace_and_named_ones_stay,
    objects_no_row_names_go_from_s3_too,
);

/// Whether `key` is in the server's attachment storage.
async fn in_storage(app: &TestApp, key: &str) -> bool {
    app.state.attachments.storage.exists(key).await.expect("storage")
}

/// Stores a sent image and an upload not sent yet in `room` (alice's), and
/// four objects as a crash or another application would leave them; checks
/// what each sweep removes.
async fn check_the_sweep(app: &TestApp) {
    app.create_channel("room", &["alice"]).await;
    let (status, sent) = upload(app, "alice", "room", Some("image/png"), png(64, 48), None).await;
    assert_eq!(status, 201, "{sent}");
    let sent = id_of(&sent);
    let mut alice = app.connect("alice").await;
    let ack = send_with(&mut alice, "room", "k1", "", &[&sent]).await;
    assert_eq!(ack["type"], "MSG_ACK", "{ack}");
    let (status, unsent) = upload(app, "alice", "room", Some("image/png"), png(8, 8), None).await;
    assert_eq!(status, 201, "{unsent}");
    let unsent = id_of(&unsent);

    let storage = &app.state.attachments.storage;
    let stray_file = format!("files/{}", uuid::Uuid::now_v7());
    let stray_thumbnail = format!("thumbnails/{}", uuid::Uuid::now_v7());
    let foreign = ["notes/readme.txt".to_owned(), "files/not-an-id".to_owned()];
    for key in [&stray_file, &stray_thumbnail, &foreign[0], &foreign[1]] {
        storage.put(key, b"left behind".to_vec()).await.expect("put");
    }
    let named = [
        format!("files/{sent}"),
        format!("thumbnails/{sent}"),
        format!("files/{unsent}"),
        format!("thumbnails/{unsent}"),
    ];
    let store = &app.state.store;
    let now = chatd::attachments::now_ms();

    // Young: nothing goes, whatever rows name.
    assert_eq!(sweep_strays(storage, store, STRAY_GRACE, now).await.expect("sweep"), 0);
    assert!(in_storage(app, &stray_file).await && in_storage(app, &stray_thumbnail).await);

    // Past the grace: the two strays go, the rest stays.
    let later = now + 1_000;
    assert_eq!(
        sweep_strays(storage, store, Duration::ZERO, later)
            .await
            .expect("sweep"),
        2
    );
    assert!(!in_storage(app, &stray_file).await, "{stray_file}");
    assert!(!in_storage(app, &stray_thumbnail).await, "{stray_thumbnail}");
    for key in named.iter().chain(&foreign) {
        assert!(in_storage(app, key).await, "{key} must stay");
    }
    // Idempotent.
    assert_eq!(
        sweep_strays(storage, store, Duration::ZERO, later)
            .await
            .expect("sweep"),
        0
    );
}

async fn objects_no_row_names_go_after_the_grace_and_named_ones_stay(backend: Backend) {
    let app = spawn_app(backend).await;
    check_the_sweep(&app).await;
}

async fn objects_no_row_names_go_from_s3_too(backend: Backend) {
    let Some(endpoint) = s3_endpoint() else {
        eprintln!("CHATD_TEST_S3_ENDPOINT unset: the S3 test is skipped");
        return;
    };
    let (app, _) = s3_app(backend, &endpoint).await;
    check_the_sweep(&app).await;
}
