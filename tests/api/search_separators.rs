//! SQLite's search index and deleted text, over an index of several leaf
//! pages and segments: the FTS5 `%_idx` shadow table keeps, for every leaf
//! page, a b-tree separator that is a prefix of the first term on the page
//! (a whole trigram here). `secure-delete` rewrites the page when a
//! deleted text's trigram leaves it, but leaves the separator while the
//! page still holds other terms (found by the ninth hostile run, finding
//! 2); the store repairs the separators in the transaction that takes the
//! text out (`src/store/search_separators.rs`). One test per path that
//! does: a delete, an edit, a user's erasure, the retention sweep and a
//! channel's deletion. Each also checks FTS5's `integrity-check` and that
//! searches answer as before, less what was taken out.

use std::collections::{BTreeSet, HashSet};

use serde_json::json;

use chatd::store::search_separators::first_term;
use chatd_testkit::{spawn_app_with, Backend, TestApp, ADMIN_TOKEN};

use crate::entries::rows_holding;
use crate::search::{acked, found};

/// Messages sent: enough for index segments of several 4 KB leaf pages.
const SENT: usize = 400;

/// The text an edit replaces every second message's with.
const EDITED: &str = "edited";

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

/// How every second message's text leaves the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Taken {
    /// `MSG_DELETE` by its sender.
    Deleted,
    /// `MSG_EDIT` to [`EDITED`].
    Edited,
    /// Sent by bob, whom `DELETE /v1/users/bob` erases.
    Erased,
    /// Sent to a channel of `retentionSecs` 60, swept.
    Expired,
    /// Sent to a channel `DELETE /v1/channels/gone` deletes.
    ChannelDeleted,
}

/// The bodies each query finds for alice, as a set.
async fn answers(app: &TestApp, queries: &[String]) -> Vec<BTreeSet<String>> {
    let mut out = Vec::new();
    for q in queries {
        out.push(found(app, "alice", q).await.into_iter().collect());
    }
    out
}

/// The bodies of `live` that hold each query.
fn expected(live: &[&str], queries: &[String]) -> Vec<BTreeSet<String>> {
    queries
        .iter()
        .map(|q| {
            live.iter()
                .filter(|t| t.contains(q.as_str()))
                .map(|t| (*t).to_owned())
                .collect()
        })
        .collect()
}

/// 400 messages, every second taken out of the index as `taken` says; then
/// none of the trigrams only they held is left in the index's terms, its
/// pages (`_data`) or its b-tree separators (`_idx`), every separator is a
/// prefix of its page's first term, FTS5's `integrity-check` passes,
/// searches find what they found before less the texts taken out, and (but
/// for an edit, whose entry keeps the text it replaced) no text taken out is
/// in the database or WAL file.
async fn leaves_no_separator(taken: Taken) {
    let app = spawn_app_with(Backend::Sqlite, |c| c.retention_sweep_secs = 86_400).await;
    app.create_channel("room", &["alice", "bob"]).await;
    app.create_channel("gone", &["alice", "bob"]).await;
    if taken == Taken::Expired {
        let (status, body) = app
            .request(
                "PATCH",
                "/v1/channels/gone",
                Some(ADMIN_TOKEN),
                Some(&json!({"retentionSecs": 60}).to_string()),
            )
            .await;
        assert_eq!(status, 200, "{body}");
    }
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let texts = texts();
    let mut ids = Vec::new();
    let mut last_ts = 0;
    for (i, body) in texts.iter().enumerate() {
        let second = i % 2 == 1;
        let (client, channel) = match taken {
            Taken::Erased if second => (&mut bob, "room"),
            Taken::Expired | Taken::ChannelDeleted if second => (&mut alice, "gone"),
            _ => (&mut alice, "room"),
        };
        // Each client also gets the other's messages: `acked` skips them.
        let ack = acked(
            client,
            json!({"type": "MSG_SEND", "channelId": channel, "clientMsgId": format!("m{i}"), "body": body}),
        )
        .await;
        last_ts = ack["ts"].as_i64().expect("ts");
        ids.push(ack["messageId"].clone());
        // In the index before any text is taken out (the separators under
        // test are the index's), one indexing transaction per send, as
        // when the send's own transaction indexed it: a segment of one
        // text each (a bulk-indexed segment meets SQLite 3.46's FTS5
        // `integrity-check` failure after deletes, docs/known-issues.md).
        app.state.store.catch_up_search_index().await.expect("indexed");
    }
    // Queries: a trigram and a longer substring of every 10th text, kept
    // or taken out.
    let queries: Vec<String> = texts
        .iter()
        .step_by(10)
        .flat_map(|t| [t[20..23].to_owned(), t[30..40].to_owned()])
        .collect();
    let all: Vec<&str> = texts.iter().map(String::as_str).collect();
    let before = answers(&app, &queries).await;
    assert_eq!(before, expected(&all, &queries), "searches before");

    match taken {
        Taken::Deleted | Taken::Edited => {
            for (i, id) in ids.iter().enumerate().filter(|(i, _)| i % 2 == 1) {
                let frame = if taken == Taken::Deleted {
                    json!({"type": "MSG_DELETE", "clientMsgId": format!("d{i}"), "messageId": id})
                } else {
                    json!({"type": "MSG_EDIT", "clientMsgId": format!("e{i}"), "messageId": id, "body": EDITED})
                };
                acked(&mut alice, frame).await;
            }
        }
        Taken::Erased => {
            let (status, body) = app.request("DELETE", "/v1/users/bob", Some(ADMIN_TOKEN), None).await;
            assert_eq!(status, 204, "{body}");
        }
        Taken::Expired => {
            let report = chatd::retention::sweep(&app.state.store, 0, last_ts + 61_000)
                .await
                .expect("sweep");
            assert_eq!(report.erased, (SENT / 2) as u64, "{report:?}");
        }
        Taken::ChannelDeleted => {
            let (status, body) = app
                .request("DELETE", "/v1/channels/gone", Some(ADMIN_TOKEN), None)
                .await;
            assert_eq!(status, 204, "{body}");
        }
    }

    let mut live: Vec<&str> = texts.iter().step_by(2).map(String::as_str).collect();
    if taken == Taken::Edited {
        live.push(EDITED);
    }
    let kept: HashSet<String> = live.iter().flat_map(|t| trigrams(t)).collect();
    let gone: HashSet<String> = texts
        .iter()
        .skip(1)
        .step_by(2)
        .flat_map(|t| trigrams(t))
        .filter(|g| !kept.contains(g))
        .collect();
    assert!(gone.len() > 2_000, "{} trigrams only deleted texts held", gone.len());

    // Searches: what they found before, less the texts taken out (an
    // edited message is found by its new text, which no query holds).
    let after = answers(&app, &queries).await;
    let less: Vec<BTreeSet<String>> = before
        .iter()
        .map(|found| found.iter().filter(|b| live.contains(&b.as_str())).cloned().collect())
        .collect();
    assert_eq!(after, less, "searches after");
    assert_eq!(after, expected(&live, &queries));

    use sqlx::Connection;
    let mut conn = sqlx::SqliteConnection::connect(&app.db.url).await.expect("sqlite");
    let rows: Vec<(i64, Vec<u8>, i64)> = sqlx::query_as("SELECT segid, term, pgno FROM message_search_idx")
        .fetch_all(&mut conn)
        .await
        .expect("idx");
    let pages = rows.len();
    assert!(pages >= 10, "only {pages} leaf pages: too small an index to test");
    let separators: Vec<&Vec<u8>> = rows.iter().map(|(_, term, _)| term).collect();
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
    // Every separator a prefix of its page's first term (a live term):
    // what the repair keeps, and what holds no text taken out.
    let mut not_prefix = Vec::new();
    for (segid, term, pgno) in rows.iter().filter(|(_, term, _)| !term.is_empty()) {
        let page: Vec<u8> = sqlx::query_scalar("SELECT block FROM message_search_data WHERE id = $1")
            .bind((segid << 37) | (pgno >> 1))
            .fetch_one(&mut conn)
            .await
            .expect("leaf");
        let first = first_term(&page).expect("a leaf FTS5 wrote").expect("a term");
        if !first.starts_with(term) {
            not_prefix.push(String::from_utf8_lossy(term).into_owned());
        }
    }
    sqlx::query("INSERT INTO message_search (message_search, rank) VALUES ('integrity-check', 0)")
        .execute(&mut conn)
        .await
        .expect("FTS5 integrity-check");
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
    if taken != Taken::Edited {
        // The texts themselves: in no table, and not in the files.
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
    }
    // Last: what the ninth hostile run found (finding 2).
    assert!(
        in_separators.is_empty() && not_prefix.is_empty(),
        "{} of {pages} separators of message_search_idx hold a trigram only deleted texts held: \
         {in_separators:?}; not a prefix of their page's first term: {not_prefix:?}",
        in_separators.len()
    );
}

#[tokio::test]
async fn sqlite_deleted_text_leaves_no_separator_in_a_multi_page_index() {
    leaves_no_separator(Taken::Deleted).await;
}

#[tokio::test]
async fn sqlite_edited_away_text_leaves_no_separator_in_a_multi_page_index() {
    leaves_no_separator(Taken::Edited).await;
}

#[tokio::test]
async fn sqlite_erased_users_text_leaves_no_separator_in_a_multi_page_index() {
    leaves_no_separator(Taken::Erased).await;
}

#[tokio::test]
async fn sqlite_expired_text_leaves_no_separator_in_a_multi_page_index() {
    leaves_no_separator(Taken::Expired).await;
}

#[tokio::test]
async fn sqlite_deleted_channels_text_leaves_no_separator_in_a_multi_page_index() {
    leaves_no_separator(Taken::ChannelDeleted).await;
}
