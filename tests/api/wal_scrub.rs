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
