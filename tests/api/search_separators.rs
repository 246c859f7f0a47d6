//! SQLite's search index and deleted text, over an index of several leaf
//! pages and segments: the FTS5 `%_idx` shadow table keeps, for every leaf
//! page, a b-tree separator that is a prefix of the first term on the page
//! (a whole trigram here). `secure-delete` rewrites the page when a
//! deleted text's trigram leaves it, but the separator stays while the page
//! still holds other terms (found by the ninth hostile run, finding 2), so
//! 3-character fragments of deleted text stay in the index's live rows.

use std::collections::HashSet;

use serde_json::json;

use chatd_testkit::{spawn_app, Backend};

use crate::entries::rows_holding;
use crate::search::acked;

/// Messages sent: enough for index segments of several 4 KB leaf pages.
const SENT: usize = 400;

/// A fixed sequence of lower-case ASCII texts of 60 letters (xorshift64), so
/// that nearly every trigram belongs to one text only and every leaf page's
/// first term is some text's own.
fn texts() -> Vec<String> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..SENT)
        .map(|_| {
            (0..60)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    char::from(b'a' + (state % 26) as u8)
                })
                .collect()
        })
        .collect()
}

fn trigrams(text: &str) -> HashSet<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.windows(3).map(|w| w.iter().collect()).collect()
}

/// Every second message deleted: none of the trigrams only they held is left
/// in the index's terms, its pages (`_data`), its b-tree separators (`_idx`),
/// and no deleted text in the database or WAL file.
#[tokio::test]
#[ignore = "known issue (docs/known-issues.md, ninth hostile run): FTS5 secure-delete leaves \
            trigrams of deleted text in message_search_idx separators; no fix yet"]
async fn sqlite_deleted_text_leaves_no_separator_in_a_multi_page_index() {
    let app = spawn_app(Backend::Sqlite).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    let texts = texts();
    let mut ids = Vec::new();
    for (i, body) in texts.iter().enumerate() {
        let ack = alice.send_and_ack("room", &format!("m{i}"), body).await;
        ids.push(ack["messageId"].clone());
    }
    for (i, id) in ids.iter().enumerate().filter(|(i, _)| i % 2 == 1) {
        acked(
            &mut alice,
            json!({"type": "MSG_DELETE", "clientMsgId": format!("d{i}"), "messageId": id}),
        )
        .await;
    }
    let kept: HashSet<String> = texts.iter().step_by(2).flat_map(|t| trigrams(t)).collect();
    let gone: HashSet<String> = texts
        .iter()
        .skip(1)
        .step_by(2)
        .flat_map(|t| trigrams(t))
        .filter(|g| !kept.contains(g))
        .collect();
    assert!(gone.len() > 2_000, "{} trigrams only deleted texts held", gone.len());

    use sqlx::Connection;
    let mut conn = sqlx::SqliteConnection::connect(&app.db.url).await.expect("sqlite");
    let pages: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM message_search_idx")
        .fetch_one(&mut conn)
        .await
        .expect("idx");
    assert!(pages >= 10, "only {pages} leaf pages: too small an index to test");
    let separators: Vec<Vec<u8>> = sqlx::query_scalar("SELECT term FROM message_search_idx WHERE term IS NOT NULL")
        .fetch_all(&mut conn)
        .await
        .expect("idx");
    let blobs: Vec<Vec<u8>> = sqlx::query_scalar("SELECT block FROM message_search_data")
        .fetch_all(&mut conn)
        .await
        .expect("data");
    let mut in_separators: Vec<&str> = gone
        .iter()
        .filter(|g| separators.iter().any(|s| s.windows(3).any(|w| w == g.as_bytes())))
        .map(String::as_str)
        .collect();
    in_separators.sort_unstable();
    // The pages are prefix-compressed and hold binary varints, so a
    // trigram's 3 bytes may appear there by chance: the terms are read by
    // fts5vocab, and the pages are searched for whole deleted texts.
    sqlx::query("CREATE VIRTUAL TABLE temp.separator_terms USING fts5vocab(main, message_search, 'row')")
        .execute(&mut conn)
        .await
        .expect("vocab");
    let terms: Vec<String> = sqlx::query_scalar("SELECT term FROM temp.separator_terms")
        .fetch_all(&mut conn)
        .await
        .expect("terms");
    let still_terms: Vec<&String> = terms.iter().filter(|t| gone.contains(*t)).collect();
    assert!(still_terms.is_empty(), "still terms: {still_terms:?}");
    for text in texts.iter().skip(1).step_by(2) {
        assert!(
            !blobs
                .iter()
                .any(|b| b.windows(text.len()).any(|w| w == text.as_bytes())),
            "a deleted text in message_search_data"
        );
    }
    // The deleted texts themselves: in no table, and not in the files.
    for text in texts.iter().skip(1).step_by(2).take(20) {
        assert!(rows_holding(&app, Backend::Sqlite, text).await.is_empty());
    }
    let db = app.db.dir.path().join("chatd.db");
    for path in [db.clone(), db.with_extension("db-wal")] {
        if let Ok(bytes) = std::fs::read(&path) {
            for text in texts.iter().skip(1).step_by(2) {
                let hit = bytes.windows(text.len()).any(|w| w == text.as_bytes());
                assert!(!hit, "{} holds a deleted text", path.display());
            }
        }
    }
    // Last: what the ninth hostile run found (finding 2).
    assert!(
        in_separators.is_empty(),
        "{} of {pages} separators of message_search_idx hold a trigram only deleted texts held: {in_separators:?}",
        in_separators.len()
    );
}
