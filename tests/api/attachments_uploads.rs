//! Attachments (protocol.md §15), uploads over real, slow or abandoned
//! connections, on both stores: an upload is bounded by the time between
//! its bytes, not by its length; one that stalls, or whose client goes
//! away, or that ends before it is stored, leaves nothing in storage; image decodes wait
//! for the decode budget (`max_image_pixels` in flight) instead of each
//! taking its memory at once; an upload whose channel is deleted or whose
//! user is erased while it arrives is refused and removed.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app_with, Backend, TestApp, ADMIN_TOKEN};

use crate::attachments::{count, id_of, png, stored_files, upload};
use chatd_testkit::eventually;

on_both_stores!(
    an_upload_slower_than_the_request_deadline_is_stored,
    an_upload_that_stalls_gets_408_and_leaves_nothing,
    image_decodes_wait_for_the_decode_budget,
    an_upload_ended_before_it_is_stored_leaves_nothing,
    an_upload_whose_client_goes_away_is_expired_like_any_unsent_one,
    a_slow_steady_reader_downloads_the_whole_file,
    an_upload_finishing_after_its_channel_is_deleted_is_refused_and_removed,
    an_upload_finishing_after_its_user_is_erased_is_refused_and_removed,
    an_upload_finishing_while_its_user_is_being_erased_is_refused,
);

/// The request deadline of these tests' servers (`handshake_timeout_ms`).
const DEADLINE_MS: u64 = 800;

/// The whole answer on `socket`, as text.
pub(crate) async fn answer(mut socket: TcpStream) -> String {
    let mut bytes = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), socket.read_to_end(&mut bytes)).await;
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The user whose decode permit a test holds to keep the budget busy.
pub(crate) fn holder() -> chatd::ids::UserId {
    chatd::ids::UserId::parse("holder").expect("user id")
}

/// Whether a whole object is in the file store (not only the staging file
/// of one being written, named `…#n` by `object_store`).
fn stored(app: &TestApp) -> bool {
    stored_files(app)
        .iter()
        .any(|name| name.starts_with("files") && !name.contains('#'))
}

async fn nothing_left(app: &TestApp, backend: Backend) -> bool {
    stored_files(app).is_empty() && count(app, backend, "SELECT count(*) FROM attachments").await == 0
}

/// A body that takes three times the request deadline to arrive, but never
/// stops for as long as the deadline, is stored (before, every request was
/// cut off at `handshake_timeout_ms` as a whole: a 25 MiB upload needed
/// 2.5 MB/s).
async fn an_upload_slower_than_the_request_deadline_is_stored(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.handshake_timeout_ms = DEADLINE_MS).await;
    app.create_channel("room", &["alice"]).await;
    let parts = 12;
    let part = vec![b'x'; 1000];
    let mut socket = app
        .upload_head("alice", "room", "application/pdf", parts * part.len())
        .await;
    for _ in 0..parts {
        tokio::time::sleep(Duration::from_millis(DEADLINE_MS / 4)).await;
        socket.write_all(&part).await.expect("part");
    }
    let answer = answer(socket).await;
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    assert!(answer.contains("\"size\":12000"), "{answer}");
    assert_eq!(count(&app, backend, "SELECT count(*) FROM attachments").await, 1);
}

/// A body that stops arriving for longer than `handshake_timeout_ms` gets
/// 408, and what it wrote is removed.
async fn an_upload_that_stalls_gets_408_and_leaves_nothing(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.handshake_timeout_ms = DEADLINE_MS).await;
    app.create_channel("room", &["alice"]).await;
    let mut socket = app.upload_head("alice", "room", "application/pdf", 100_000).await;
    socket.write_all(&[b'x'; 10_000]).await.expect("part");
    let answer = answer(socket).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("handshake_timeout_ms"), "{answer}");
    eventually("nothing left behind", || nothing_left(&app, backend)).await;
}

/// While the whole decode budget is held, an image upload is received and
/// stored but not decoded, so it is not answered; once the budget is free
/// it is.
async fn image_decodes_wait_for_the_decode_budget(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.max_image_pixels = 1_000_000).await;
    app.create_channel("room", &["alice"]).await;
    let held = app
        .state
        .attachments
        .decode_permit(&holder(), u64::MAX)
        .await
        .expect("budget");
    let image = png(64, 64);
    let mut socket = app.upload_head("alice", "room", "image/png", image.len()).await;
    socket.write_all(&image).await.expect("body");
    eventually("the bytes stored", || async { stored(&app) }).await;
    let mut early = [0u8; 1];
    let waited = tokio::time::timeout(Duration::from_millis(500), socket.read(&mut early)).await;
    assert!(waited.is_err(), "answered while the decode budget was held");
    drop(held);
    let answer = answer(socket).await;
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    assert!(answer.contains("\"width\":64"), "{answer}");
}

/// An upload ended after its bytes are stored but before its row is (here:
/// the server shuts down while the upload's decode waits for the budget,
/// and the drain period ends the connection, dropping the upload): the
/// bytes are removed, as if it had been refused. Before, they stayed in
/// storage with no row, where the orphan sweep (which reads rows) never
/// found them; the breaker's whole-request deadline dropped uploads the
/// same way.
async fn an_upload_ended_before_it_is_stored_leaves_nothing(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.max_image_pixels = 1_000_000).await;
    app.create_channel("room", &["alice"]).await;
    let held = app
        .state
        .attachments
        .decode_permit(&holder(), u64::MAX)
        .await
        .expect("budget");
    let image = png(64, 64);
    let mut socket = app.upload_head("alice", "room", "image/png", image.len()).await;
    socket.write_all(&image).await.expect("body");
    eventually("the bytes stored", || async { stored(&app) }).await;
    app.shutdown.cancel();
    let answer = answer(socket).await;
    assert!(!answer.contains("201"), "stored while the budget was held: {answer}");
    eventually("the stored bytes removed", || async { stored_files(&app).is_empty() }).await;
    drop(held);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(stored_files(&app).is_empty(), "{:?}", stored_files(&app));
    assert_eq!(count(&app, backend, "SELECT count(*) FROM attachments").await, 0);
}

/// A client that goes away after sending its whole body does not end the
/// upload (the server reads a closed socket as a half-close, RFC 9112
/// §9.6): it is stored as an upload no message claims, and removed, bytes
/// and row, after `attachment_orphan_ttl_secs`.
async fn an_upload_whose_client_goes_away_is_expired_like_any_unsent_one(backend: Backend) {
    let app = spawn_app_with(backend, |c| {
        c.max_image_pixels = 1_000_000;
        c.attachment_orphan_ttl_secs = 1;
    })
    .await;
    app.create_channel("room", &["alice"]).await;
    let held = app
        .state
        .attachments
        .decode_permit(&holder(), u64::MAX)
        .await
        .expect("budget");
    let image = png(64, 64);
    let mut socket = app.upload_head("alice", "room", "image/png", image.len()).await;
    socket.write_all(&image).await.expect("body");
    eventually("the bytes stored", || async { stored(&app) }).await;
    drop(socket);
    drop(held);
    eventually("bytes and row expired", || nothing_left(&app, backend)).await;
}

/// Starts an upload of 20,000 bytes into `room` as alice and sends half
/// of it (seen in the file store, or given 500 ms with S3); `meanwhile`
/// runs; then the rest is sent. Returns the answer.
pub(crate) async fn upload_across<F, Fut>(app: &TestApp, meanwhile: F) -> String
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let part = vec![b'x'; 10_000];
    let mut socket = app
        .upload_head("alice", "room", "application/pdf", 2 * part.len())
        .await;
    socket.write_all(&part).await.expect("first half");
    if app.state.config.attachments_store == chatd::config::AttachmentsStore::S3 {
        tokio::time::sleep(Duration::from_millis(500)).await;
    } else {
        eventually("the first half received", || async { !stored_files(app).is_empty() }).await;
    }
    meanwhile().await;
    socket.write_all(&part).await.expect("second half");
    answer(socket).await
}

/// An upload whose channel is deleted while its body arrives is refused
/// when it ends (403 `forbidden`, as for an unknown channel), stores no
/// row, and its bytes are removed. Before, membership and the channel were
/// checked only when the request started: the row was stored (201) for a
/// channel that no longer existed, and the bytes stayed until the orphan
/// sweep.
async fn an_upload_finishing_after_its_channel_is_deleted_is_refused_and_removed(backend: Backend) {
    let app = spawn_app_with(backend, |_| {}).await;
    app.create_channel("room", &["alice"]).await;
    let answer = upload_across(&app, || async {
        let (status, body) = app
            .request("DELETE", "/v1/channels/room", Some(ADMIN_TOKEN), None)
            .await;
        assert!((200..300).contains(&status), "delete: {status} {body}");
    })
    .await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    assert!(answer.contains("\"code\":\"forbidden\""), "{answer}");
    assert_eq!(count(&app, backend, "SELECT count(*) FROM attachments").await, 0);
    eventually("the stored bytes removed", || nothing_left(&app, backend)).await;
}

/// An upload whose user is erased while its body arrives is refused when
/// it ends, stores no row (nothing of the user left for its export), and
/// its bytes are removed. Before, it was stored (201) after the erasure.
async fn an_upload_finishing_after_its_user_is_erased_is_refused_and_removed(backend: Backend) {
    let app = spawn_app_with(backend, |_| {}).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let answer = upload_across(&app, || async {
        let (status, body) = app.request("DELETE", "/v1/users/alice", Some(ADMIN_TOKEN), None).await;
        assert!((200..300).contains(&status), "erase: {status} {body}");
    })
    .await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    assert!(answer.contains("\"code\":\"forbidden\""), "{answer}");
    assert_eq!(count(&app, backend, "SELECT count(*) FROM attachments").await, 0);
    eventually("the stored bytes removed", || nothing_left(&app, backend)).await;
}

/// An upload that ends while its user's erasure is pending (begun, its
/// memberships not ended yet: here the pending mark written straight into
/// `user_erasures`, as `erasure::start` stores it before anything else) is
/// refused and leaves nothing: the statement that stores the row checks
/// the mark, not only the membership.
async fn an_upload_finishing_while_its_user_is_being_erased_is_refused(backend: Backend) {
    use sqlx::Connection;
    let app = spawn_app_with(backend, |_| {}).await;
    app.create_channel("room", &["alice"]).await;
    let mark = "INSERT INTO user_erasures (user_id, erased_at, started_at, pending) VALUES ('alice', 0, 0, true)";
    let answer = upload_across(&app, || async {
        match backend {
            Backend::Postgres => {
                let mut conn = sqlx::PgConnection::connect(&app.db.url).await.expect("pg");
                sqlx::query(mark).execute(&mut conn).await.expect("mark");
            }
            Backend::Sqlite => {
                let mut conn = sqlx::SqliteConnection::connect(&app.db.url).await.expect("sqlite");
                sqlx::query(mark).execute(&mut conn).await.expect("mark");
            }
        }
    })
    .await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    assert_eq!(
        count(&app, backend, "SELECT count(*) FROM members WHERE user_id = 'alice'").await,
        1
    );
    assert_eq!(count(&app, backend, "SELECT count(*) FROM attachments").await, 0);
    eventually("the stored bytes removed", || nothing_left(&app, backend)).await;
}

/// A client that reads a download slowly but steadily (about 100 KB/s with
/// a small receive buffer, a phone on a poor link) gets the whole file,
/// however long it takes: only a peer that takes nothing for
/// `handshake_timeout_ms` is cut off. Before, the kernel woke the blocked
/// writer only after a third of its (MBs large) send buffer drained, so the
/// reader looked stalled and was reset after the deadline.
async fn a_slow_steady_reader_downloads_the_whole_file(backend: Backend) {
    // The deadline between body bytes: 5 s, so that a loaded CI machine
    // starving this test's own reader for a couple of seconds (cargo test
    // runs the binary's tests on threads of one process) is not taken for
    // a stalled client; the read still takes over twice as long as it.
    let app = spawn_app_with(backend, |c| c.handshake_timeout_ms = 5_000).await;
    app.create_channel("room", &["alice"]).await;
    let file: Vec<u8> = (0..1_200_000u32).map(|i| (i % 251) as u8).collect();
    let (status, up) = upload(&app, "alice", "room", Some("application/pdf"), file.clone(), None).await;
    assert_eq!(status, 201, "{up}");
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(32 * 1024).expect("rcvbuf");
    let mut stream = socket.connect(app.addr).await.expect("connect");
    let head = format!(
        "GET /v1/attachments/{} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
        id_of(&up),
        app.token("alice")
    );
    stream.write_all(head.as_bytes()).await.expect("head");
    let started = std::time::Instant::now();
    let mut got = Vec::new();
    let mut chunk = [0u8; 2048];
    loop {
        match stream.read(&mut chunk).await {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&chunk[..n]),
            Err(error) => panic!("cut off after {:?} and {} bytes: {error}", started.elapsed(), got.len()),
        }
        // 2 KiB every 20 ms: about 100 KB/s.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let body_at = got.windows(4).position(|w| w == b"\r\n\r\n").expect("a head") + 4;
    assert!(
        got.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&got[..body_at])
    );
    assert_eq!(got.len() - body_at, file.len(), "cut off after {:?}", started.elapsed());
    assert!(got[body_at..] == file[..], "the bytes differ");
    assert!(
        started.elapsed() > Duration::from_millis(10_000),
        "read faster than the deadline twice over: {:?}",
        started.elapsed()
    );
}
