//! Attachments (protocol.md §18.1), what one user's uploads may hold of a
//! node, on both stores and the file store: uploads in progress are bounded
//! per user (`max_uploads_in_flight_per_user`: 429 `rate_limited`, reason
//! `uploads_in_flight`, before the body is read; the slot given back when
//! an upload ends, its client gone included), one body's time is bounded
//! (`upload_timeout_secs`: 408), and image decodes are shared fairly
//! between users (a busy user's queue does not hold up another's image).

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use chatd::ids::UserId;
use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app_with, Backend, TestApp};

use crate::attachments::{count, png, stored_files, upload};
use crate::attachments_uploads::{answer, holder};
use chatd_testkit::eventually;

on_both_stores!(
    a_users_uploads_in_progress_are_bounded_and_their_slots_come_back,
    an_upload_trickling_past_upload_timeout_secs_gets_408_and_leaves_nothing,
    another_users_image_is_decoded_before_a_busy_users_queue_drains,
);

fn user(name: &str) -> UserId {
    UserId::parse(name).expect("user id")
}

/// A PDF-typed body of `len` bytes.
fn pdf(len: usize) -> Vec<u8> {
    vec![b'p'; len]
}

/// How many whole objects (not staging files) are under `files/`.
fn whole_files(app: &TestApp) -> usize {
    stored_files(app)
        .iter()
        .filter(|name| name.starts_with("files") && !name.contains('#'))
        .count()
}

/// With two slow uploads of alice in progress (the bound is 2), a third is
/// refused 429 `rate_limited` (reason `uploads_in_flight`) at once, before
/// any of its body is sent; bob's upload is stored meanwhile; once one
/// slow upload's client goes away, its slot is back and alice's next
/// upload is stored, and so is the other slow one when it ends. Before,
/// nothing bounded them: one member held 4,000 uploads open with a byte
/// every 8 s, until the node ran out of file descriptors.
async fn a_users_uploads_in_progress_are_bounded_and_their_slots_come_back(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.max_uploads_in_flight_per_user = 2).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let alice = user("alice");
    let mut slow = Vec::new();
    for _ in 0..2 {
        let mut socket = app.upload_head("alice", "room", "application/pdf", 1_000).await;
        socket.write_all(b"x").await.expect("a first byte");
        slow.push(socket);
    }
    let uploads = &app.state.attachments.uploads;
    eventually("both slow uploads in progress", || async {
        uploads.in_flight(&alice) == 2
    })
    .await;

    let third = app.upload_head("alice", "room", "application/pdf", 1_000).await;
    let refused = tokio::time::timeout(Duration::from_secs(5), answer(third))
        .await
        .expect("answered without the body");
    assert!(refused.starts_with("HTTP/1.1 429"), "{refused}");
    assert!(refused.contains("\"code\":\"rate_limited\""), "{refused}");
    assert!(refused.contains("\"reason\":\"uploads_in_flight\""), "{refused}");
    assert!(refused.contains("max_uploads_in_flight_per_user (2)"), "{refused}");
    assert!(!refused.contains("retryAfterMs"), "{refused}");
    assert_eq!(uploads.in_flight(&alice), 2, "a refused upload takes no slot");

    let (status, body) = upload(&app, "bob", "room", Some("application/pdf"), pdf(100), None).await;
    assert_eq!(status, 201, "another user's upload: {body}");

    drop(slow.pop());
    eventually("the dropped upload's slot given back", || async {
        uploads.in_flight(&alice) == 1
    })
    .await;
    let (status, body) = upload(&app, "alice", "room", Some("application/pdf"), pdf(100), None).await;
    assert_eq!(status, 201, "alice may upload again: {body}");

    let mut last = slow.pop().expect("the other slow upload");
    last.write_all(&pdf(999)).await.expect("the rest");
    let stored = answer(last).await;
    assert!(stored.starts_with("HTTP/1.1 201"), "{stored}");
    assert_eq!(uploads.in_flight(&alice), 0);
    assert_eq!(count(&app, backend, "SELECT count(*) FROM attachments").await, 3);
}

/// A body that never stalls for `handshake_timeout_ms` but is not all
/// there `upload_timeout_secs` after the request started gets 408 naming
/// that setting, and leaves nothing. Before, a byte every few hundred ms
/// kept an upload open for as long as its client liked.
async fn an_upload_trickling_past_upload_timeout_secs_gets_408_and_leaves_nothing(backend: Backend) {
    let app = spawn_app_with(backend, |c| {
        c.handshake_timeout_ms = 800;
        c.upload_timeout_secs = 1;
    })
    .await;
    app.create_channel("room", &["alice"]).await;
    let mut socket = app.upload_head("alice", "room", "application/pdf", 100).await;
    let started = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    // A byte every 200 ms (20 s for the whole body) until the server answers.
    while started.elapsed() < Duration::from_secs(10) {
        match tokio::time::timeout(Duration::from_millis(200), socket.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => break,
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
            Err(_) if got.is_empty() => {
                let _ = socket.write_all(b"x").await;
            }
            Err(_) => {}
        }
    }
    let answer = String::from_utf8_lossy(&got);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("upload_timeout_secs"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    eventually("nothing left behind", || async {
        stored_files(&app).is_empty() && count(&app, backend, "SELECT count(*) FROM attachments").await == 0
    })
    .await;
    assert_eq!(app.state.attachments.uploads.in_flight(&user("alice")), 0);
}

/// Alice's images of the largest size allowed (each takes the whole decode
/// budget) and then bob's 1×1 PNG all wait for the budget (held by the
/// test); once it is free, bob's is answered after at most two of alice's,
/// not after all of them. Before, decodes were served first come, first
/// served: bob's waited for every one of alice's (35.6 s behind 16
/// 49-megapixel PNGs in the hostile test).
async fn another_users_image_is_decoded_before_a_busy_users_queue_drains(backend: Backend) {
    const SIDE: u32 = 2_000;
    const ALICES: usize = 5;
    let app = spawn_app_with(backend, |c| {
        c.max_image_pixels = u64::from(SIDE * SIDE);
        c.max_uploads_in_flight_per_user = ALICES;
    })
    .await;
    app.create_channel("room", &["alice", "bob"]).await;
    let held = app
        .state
        .attachments
        .decode_permit(&holder(), u64::MAX)
        .await
        .expect("budget");
    let big = png(SIDE, SIDE);
    let mut sockets = Vec::new();
    for _ in 0..ALICES {
        let mut socket = app.upload_head("alice", "room", "image/png", big.len()).await;
        socket.write_all(&big).await.expect("body");
        sockets.push(("alice", socket));
    }
    eventually("alice's images received", || async { whole_files(&app) == ALICES }).await;
    // Their decodes queue for the budget right after the bytes are stored.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let small = png(1, 1);
    let mut socket = app.upload_head("bob", "room", "image/png", small.len()).await;
    socket.write_all(&small).await.expect("body");
    sockets.push(("bob", socket));
    eventually("bob's image received", || async { whole_files(&app) == ALICES + 1 }).await;
    tokio::time::sleep(Duration::from_millis(300)).await;

    let (done, mut answers) = tokio::sync::mpsc::unbounded_channel();
    for (name, socket) in sockets {
        let done = done.clone();
        tokio::spawn(async move {
            let text = answer(socket).await;
            let _ = done.send((name, text));
        });
    }
    drop(done);
    drop(held);
    let mut order = Vec::new();
    while let Some((name, text)) = answers.recv().await {
        assert!(text.starts_with("HTTP/1.1 201"), "{name}: {text}");
        order.push(name);
    }
    assert_eq!(order.len(), ALICES + 1);
    let before_bob = order.iter().position(|name| *name == "bob").expect("bob answered");
    assert!(
        before_bob <= 2,
        "bob's 1×1 PNG was answered after {before_bob} of alice's {ALICES} images: {order:?}"
    );
}
