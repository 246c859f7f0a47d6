//! Image uploads are not held in memory while they arrive (issue 31 point
//! 1): their bytes are spooled to an anonymous temporary file, as other
//! types stream to storage only. Measured by the process's resident memory
//! (the server runs in the test's process), file store, SQLite (the
//! database plays no part). A test binary of its own, so no other test's
//! allocations share the process while it measures (`cargo test` runs a
//! binary's tests on threads of one process).

use std::time::Duration;

use tokio::io::AsyncWriteExt;

use chatd_testkit::{eventually, resident_bytes, spawn_app_with, Backend, TestApp};

/// Uploads held open at once.
const UPLOADS: usize = 8;
/// Bytes each declares (`max_attachment_bytes` is 25 MiB).
const LEN: usize = 24_000_000;

/// Bytes written so far to the file store's staging files (`…#n`, the
/// objects being written).
fn staged_bytes(app: &TestApp) -> u64 {
    fn walk(dir: &std::path::Path, total: &mut u64) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, total);
            } else if path.to_string_lossy().contains('#') {
                *total += entry.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
    }
    let mut total = 0;
    walk(&app.db.dir.path().join("attachments"), &mut total);
    total
}

/// Found by a hostile test (sixth breaker run): ten 20 MB PNG uploads held
/// one byte short of their end took the server to 283 MiB, against 94 MiB
/// for `application/octet-stream`: an image's bytes were kept in memory
/// for the decode (up to `max_attachment_bytes` each) while they arrived.
/// Here eight 24 MB `image/png` bodies are sent but for their last byte
/// (one shared buffer on the client's side); once the store has all but
/// its last part of each, the process holds well under half of their
/// 192 MB more than before (the store's 5 MiB part buffers and hyper's
/// are what remain).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_uploads_one_byte_short_of_their_end_are_not_held_in_memory() {
    let app = spawn_app_with(Backend::Sqlite, |c| c.max_uploads_in_flight_per_user = UPLOADS).await;
    app.create_channel("room", &["alice"]).await;
    // Not a PNG: it never ends, so it is never decoded.
    let body: Vec<u8> = (0..LEN - 1).map(|i| (i % 251) as u8).collect();
    let names = || {
        let mut names: Vec<_> = std::fs::read_dir(app.db.dir.path())
            .expect("data dir")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        names.sort();
        names
    };
    let files_before = names();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = resident_bytes();
    let mut sockets = Vec::new();
    for _ in 0..UPLOADS {
        let mut socket = app.upload_head("alice", "room", "image/png", LEN).await;
        socket.write_all(&body).await.expect("all but the last byte");
        sockets.push(socket);
    }
    // All but the part each upload's writer still buffers has reached the store.
    let part = 5 * 1024 * 1024;
    let want = (UPLOADS * (LEN - 1 - part)) as u64;
    for _ in 0..3 {
        eventually("the bodies received", || async { staged_bytes(&app) >= want }).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let grew = resident_bytes().saturating_sub(before);
    assert!(
        grew < (UPLOADS * LEN / 2) as u64,
        "{UPLOADS} image uploads of {LEN} bytes held one byte short raised the resident memory by {} MiB",
        grew >> 20
    );
    eprintln!("resident memory grew by {} MiB", grew >> 20);
    // The spool files have no name: nothing to leave behind, however the
    // uploads end (here their clients go away).
    assert_eq!(names(), files_before, "the data directory holds no spool file");
    drop(sockets);
    eventually("the uploads ended", || async {
        app.state
            .attachments
            .uploads
            .in_flight(&chatd::ids::UserId::parse("alice").expect("id"))
            == 0
    })
    .await;
    assert_eq!(names(), files_before);
}
