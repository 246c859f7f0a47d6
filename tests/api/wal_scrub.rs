//! SQLite: a delete while a reader holds an old snapshot (an export
//! streaming) is answered at once, and its text leaves the `-wal` file soon
//! after that reader is done, without another delete (`store::wal_scrub`,
//! guarantee 9). Found by a hostile run (breaker 7): the checkpoint after
//! the delete waited the 5 s busy timeout holding the one writer, and the
//! text stayed in `chatd.db-wal` until the next delete made with no reader.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sqlx::Connection;

use chatd_testkit::{spawn_app, Backend};

/// Whether the database files hold `needle`.
fn files_hold(dir: &std::path::Path, needle: &[u8]) -> Vec<String> {
    let db = dir.join("chatd.db");
    [db.clone(), db.with_extension("db-wal")]
        .into_iter()
        .filter(|path| std::fs::read(path).is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle)))
        .map(|path| path.display().to_string())
        .collect()
}

/// The next MSG_ACK or ERROR, skipping other frames.
async fn answer_of(ws: &mut chatd_testkit::WsClient) -> Value {
    loop {
        let frame = ws.recv().await;
        if frame["type"] == "MSG_ACK" || frame["type"] == "ERROR" {
            return frame;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_behind_an_open_reader_is_answered_and_its_text_leaves_the_wal_after_it() {
    let app = spawn_app(Backend::Sqlite).await;
    app.create_channel("room", &["alice", "bob"]).await;
    app.create_channel("other", &["bob"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let ack = alice.send_and_ack("room", "k1", "SECRET-wal-4c1e").await;
    let id: Value = ack["messageId"].clone();
    bob.recv_type("MSG_RECV").await;

    // A reader with a snapshot from before the delete, as an export holds.
    let mut reader = sqlx::SqliteConnection::connect(&app.db.url).await.expect("reader");
    sqlx::query("BEGIN").execute(&mut reader).await.expect("begin");
    let seen: i64 = sqlx::query_scalar("SELECT count(*) FROM messages")
        .fetch_one(&mut reader)
        .await
        .expect("read");
    assert!(seen >= 1);

    alice
        .send_json(json!({"type": "MSG_DELETE", "clientMsgId": "d1", "messageId": id}))
        .await;
    let answer = answer_of(&mut alice).await;
    assert_eq!(
        answer["type"], "MSG_ACK",
        "the delete is answered, not refused: {answer}"
    );
    // Another user's write is not refused behind the blocked checkpoint.
    bob.send_msg("other", "b1", "meanwhile").await;
    let answer = answer_of(&mut bob).await;
    assert_eq!(answer["type"], "MSG_ACK", "{answer}");

    sqlx::query("COMMIT").execute(&mut reader).await.expect("commit");
    reader.close().await.expect("close");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = files_hold(app.db.dir.path(), b"SECRET-wal-4c1e");
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the deleted text is still in {left:?} 10 s after the reader ended"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    app.stop().await;
}

/// Found by a hostile run (breaker 8): a process killed while a reader held
/// the delete's checkpoint back left the deleted text in `chatd.db-wal` and
/// the older page in `chatd.db`, and a restart did not checkpoint, so the
/// text stayed through hundreds of later sends. Opening the store now
/// truncates the WAL. The crash is the files copied while the reader holds
/// them (what a `kill -9` leaves on disk).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_text_left_in_the_wal_by_a_crash_is_gone_once_the_store_opens_again() {
    let app = spawn_app(Backend::Sqlite).await;
    app.create_channel("room", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    let ack = alice.send_and_ack("room", "k1", "SECRET-crash-9d2f").await;
    let mut reader = sqlx::SqliteConnection::connect(&app.db.url).await.expect("reader");
    sqlx::query("BEGIN").execute(&mut reader).await.expect("begin");
    let _: i64 = sqlx::query_scalar("SELECT count(*) FROM messages")
        .fetch_one(&mut reader)
        .await
        .expect("read");
    alice
        .send_json(json!({"type": "MSG_DELETE", "clientMsgId": "d1", "messageId": ack["messageId"]}))
        .await;
    assert_eq!(answer_of(&mut alice).await["type"], "MSG_ACK");

    let crashed = tempfile::tempdir().expect("dir");
    for name in ["chatd.db", "chatd.db-wal"] {
        std::fs::copy(app.db.dir.path().join(name), crashed.path().join(name)).expect("copy");
    }
    assert!(
        !files_hold(crashed.path(), b"SECRET-crash-9d2f").is_empty(),
        "the crash image holds the deleted text (else this test shows nothing)"
    );
    sqlx::query("COMMIT").execute(&mut reader).await.expect("commit");
    app.stop().await;

    let url = format!("sqlite://{}", crashed.path().join("chatd.db").display());
    let store = chatd::store::Store::connect(&chatd::store::StoreOptions {
        url,
        max_connections: 2,
        timeout: Duration::from_secs(5),
    })
    .await
    .expect("open the crashed database");
    let left = files_hold(crashed.path(), b"SECRET-crash-9d2f");
    assert!(
        left.is_empty(),
        "the deleted text is still in {left:?} after the store opened"
    );
    drop(store);
}
