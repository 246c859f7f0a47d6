//! SQLite's search index is kept after each send's commit, by the store's
//! indexer, up to a stored watermark (issue 34; `src/store/search_indexer.rs`,
//! `migrations/sqlite/0025_search_after_commit.sql`): a message is found
//! once ACKed while the indexer has not reached it, the same way as after;
//! a text deleted, edited away or erased before the indexer reached it
//! never enters the index (guarantee 14); a stop before the indexer ran
//! loses nothing; a rowid SQLite reuses below the watermark is indexed by
//! its insert. PostgreSQL keeps its index in the send's transaction (the
//! hold does nothing there): the same answers are checked on both stores.

use std::time::Duration;

use serde_json::json;

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, Backend, TestApp, ADMIN_TOKEN};

use crate::entries::rows_holding;
use crate::search::{acked, encode, found, index_holds};

on_both_stores!(
    a_message_is_found_at_its_ack_while_the_indexer_is_held,
    a_text_taken_out_before_the_indexer_reached_it_never_enters_the_index,
    capitals_fts5_does_not_fold_are_found_the_same_before_and_after_indexing,
);

/// Whether every trigram of `needle` (lower-cased) is a term of SQLite's
/// index now, without letting the indexer catch up first.
pub(crate) async fn vocab_holds_now(app: &TestApp, needle: &str) -> bool {
    use sqlx::Connection;
    let mut conn = sqlx::SqliteConnection::connect(&app.db.url).await.expect("sqlite");
    sqlx::query("CREATE VIRTUAL TABLE temp.now_terms USING fts5vocab(main, message_search, 'row')")
        .execute(&mut conn)
        .await
        .expect("vocab");
    let chars: Vec<char> = needle.to_lowercase().chars().collect();
    let mut all = true;
    for window in chars.windows(3) {
        let trigram: String = window.iter().collect();
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM temp.now_terms WHERE term = $1")
            .bind(&trigram)
            .fetch_one(&mut conn)
            .await
            .expect("term");
        all &= n > 0;
    }
    all
}

/// One scalar of the SQLite database.
async fn sqlite_scalar(app: &TestApp, sql: &str) -> i64 {
    use sqlx::Connection;
    let mut conn = sqlx::SqliteConnection::connect(&app.db.url).await.expect("sqlite");
    sqlx::query_scalar(sql).fetch_one(&mut conn).await.expect("scalar")
}

/// The queries of `terms_are_found_in_any_script_and_case` and a few more,
/// over [`BODIES`].
const QUERIES: &[&str] = &[
    "ärger",
    "GROSS",
    "ΟΔΌ",
    "αθηνών",
    "привет",
    "東京タワー",
    "東京",
    "서울",
    "build-42.rc",
    "ld-4",
    "build-43",
    "OPS@EXAMPLE.COM",
    "OK",
    "0%",
    "f_s",
    "release out",
    "release mir",
    "東京 行き",
    "tower 東京",
    "qzpitem",
    "QZPITEM 3",
];

use crate::search::SCRIPT_BODIES as BODIES;

async fn answers(app: &TestApp) -> Vec<Vec<String>> {
    let mut all = Vec::new();
    for q in QUERIES {
        all.push(found(app, "bob", q).await);
    }
    all
}

async fn a_message_is_found_at_its_ack_while_the_indexer_is_held(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    for i in 0..5 {
        alice
            .send_and_ack("room", &format!("o{i}"), &format!("Qzpitem old {i}"))
            .await;
    }
    app.state.store.catch_up_search_index().await.expect("indexed");
    app.state.store.hold_search_indexer(true);
    for (i, body) in BODIES.iter().enumerate() {
        alice.send_and_ack("room", &format!("m{i}"), body).await;
    }
    let mut held_ids = Vec::new();
    for i in 0..5 {
        let ack = alice
            .send_and_ack("room", &format!("n{i}"), &format!("Qzpitem new {i}"))
            .await;
        held_ids.push(ack["messageId"].clone());
    }
    if backend == Backend::Sqlite {
        // The test is of the rows the indexer has not reached.
        assert!(!vocab_holds_now(&app, "ärger war").await, "the indexer is held");
        assert!(vocab_holds_now(&app, "qzpitem old").await);
    }
    let one = |i: usize| vec![BODIES[i].to_owned()];
    assert_eq!(found(&app, "bob", "ärger").await, one(0), "found at its ACK");
    assert_eq!(found(&app, "bob", "αθηνών").await, one(1), "Greek folded");
    assert_eq!(found(&app, "bob", "東京タワー").await, one(3));
    assert_eq!(found(&app, "bob", "OPS@EXAMPLE.COM").await, one(6));
    assert_eq!(found(&app, "bob", "GROSS").await, Vec::<String>::new());

    // Pages across the watermark: newest first, each once, the held rows
    // (read from `messages`) then the indexed ones.
    let mut seen = Vec::new();
    let mut before: Option<String> = None;
    for _ in 0..10 {
        let mut path = "/v1/me/search?q=QZPITEM&limit=3".to_owned();
        if let Some(cursor) = &before {
            path.push_str(&format!("&before={}", encode(cursor)));
        }
        let (status, body) = app.request("GET", &path, Some(&app.token("bob")), None).await;
        assert_eq!(status, 200, "{body}");
        let results = body["results"].as_array().expect("results");
        seen.extend(results.iter().map(|m| m["body"].as_str().expect("body").to_owned()));
        match body.get("next") {
            Some(next) => before = Some(next.as_str().expect("cursor").to_owned()),
            None => break,
        }
    }
    let want: Vec<String> = (0..5)
        .rev()
        .map(|i| format!("Qzpitem new {i}"))
        .chain((0..5).rev().map(|i| format!("Qzpitem old {i}")))
        .collect();
    assert_eq!(seen, want, "pages across the watermark");

    // An edit and a delete of held rows: the current text only.
    acked(
        &mut alice,
        json!({"type": "MSG_EDIT", "clientMsgId": "e1", "messageId": held_ids[1], "body": "Qzpitem edited"}),
    )
    .await;
    acked(
        &mut alice,
        json!({"type": "MSG_DELETE", "clientMsgId": "d2", "messageId": held_ids[2]}),
    )
    .await;
    assert_eq!(found(&app, "bob", "qzpitem new 1").await, Vec::<String>::new());
    assert_eq!(found(&app, "bob", "qzpitem new 2").await, Vec::<String>::new());
    assert_eq!(found(&app, "bob", "qzpitem edit").await, vec!["Qzpitem edited"]);

    // The same answers from the rows read as text and from the index.
    let held = answers(&app).await;
    app.state.store.hold_search_indexer(false);
    app.state.store.catch_up_search_index().await.expect("indexed");
    if backend == Backend::Sqlite {
        assert!(vocab_holds_now(&app, "ärger war").await, "indexed once released");
    }
    let indexed = answers(&app).await;
    for ((q, a), b) in QUERIES.iter().zip(&held).zip(&indexed) {
        assert_eq!(a, b, "{q}: before and after the indexer");
    }
}

/// Texts with capitals that Unicode lower-cases and SQLite's FTS5 (whose
/// case table is of Unicode 6.1) does not fold, and two it does (Greek,
/// Deseret), for [`capitals_fts5_does_not_fold_are_found_the_same_before_and_after_indexing`].
const CAPITALS: &[&str] = &[
    "İzmir'e gidiyoruz",
    "ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ",
    "ᲡᲐᲥᲐᲠᲗᲕᲔᲚᲝ დედაქალაქი",
    "ԨԪԬԮ letters",
    "ꞪꞫꞬ latin",
    "𐒰𐒱𐒲 osage",
    "ΣΊΣΥΦΟΣ myth",
    "𐐀𐐁𐐂 deseret",
];

/// (term, index of the text it finds in [`CAPITALS`] on PostgreSQL, and on
/// SQLite): each text's first word in Unicode lower case, in its own case,
/// and short terms (matched without the index on SQLite).
const CAPITAL_TERMS: &[(&str, Option<usize>, Option<usize>)] = &[
    ("izmir", Some(0), None),
    ("İzmir", Some(0), Some(0)),
    ("iz", Some(0), None),
    ("İz", Some(0), Some(0)),
    ("ꮳꮃꭹ", Some(1), None),
    ("ᏣᎳᎩ", Some(1), Some(1)),
    ("ꮳꮃ", Some(1), None),
    ("საქართველო", Some(2), None),
    ("ᲡᲐᲥᲐᲠᲗᲕᲔᲚᲝ", Some(2), Some(2)),
    ("ԩԫԭԯ", Some(3), None),
    ("ԨԪԬԮ", Some(3), Some(3)),
    ("ԩԫ", Some(3), None),
    ("ɦɜɡ", Some(4), None),
    ("ꞪꞫꞬ", Some(4), Some(4)),
    ("𐓘𐓙𐓚", Some(5), None),
    ("𐒰𐒱𐒲", Some(5), Some(5)),
    ("σίσυφοσ", Some(6), Some(6)),
    ("ΣΊΣ", Some(6), Some(6)),
    ("σί", Some(6), Some(6)),
    ("𐐨𐐩𐐪", Some(7), Some(7)),
];

/// Found by the twelfth hostile run: on SQLite `izmir` found "İzmir'e
/// gidiyoruz" at its ACK (the rows the indexer has not reached were matched
/// with Rust's lower case) and no longer once indexed (FTS5 does not fold
/// `İ`). Now those rows, and short terms, fold as FTS5 does: the answers are
/// the same before and after the indexer reaches a text. PostgreSQL folds
/// every one of these capitals (`lower()`); SQLite does not, as documented
/// (protocol.md §18).
async fn capitals_fts5_does_not_fold_are_found_the_same_before_and_after_indexing(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    app.state.store.hold_search_indexer(true);
    for (i, body) in CAPITALS.iter().enumerate() {
        alice.send_and_ack("room", &format!("c{i}"), body).await;
    }
    if backend == Backend::Sqlite {
        assert!(!vocab_holds_now(&app, "myth").await, "the indexer is held");
    }
    let mut held = Vec::new();
    for (term, _, _) in CAPITAL_TERMS {
        held.push(found(&app, "bob", term).await);
    }
    app.state.store.hold_search_indexer(false);
    app.state.store.catch_up_search_index().await.expect("indexed");
    if backend == Backend::Sqlite {
        assert!(vocab_holds_now(&app, "myth").await, "indexed once released");
    }
    for ((term, on_postgres, on_sqlite), before) in CAPITAL_TERMS.iter().zip(&held) {
        let after = found(&app, "bob", term).await;
        assert_eq!(before, &after, "{term}: before and after the indexer");
        let want = match backend {
            Backend::Postgres => on_postgres,
            Backend::Sqlite => on_sqlite,
        };
        let want: Vec<String> = want.iter().map(|i| CAPITALS[*i].to_owned()).collect();
        assert_eq!(after, want, "{term}");
    }
}

async fn a_text_taken_out_before_the_indexer_reached_it_never_enters_the_index(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob", "carol"]).await;
    app.create_channel("gone", &["alice", "carol"]).await;
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    alice.send_and_ack("room", "k0", "Qzrkept Bystander").await;
    app.state.store.catch_up_search_index().await.expect("indexed");
    app.state.store.hold_search_indexer(true);
    let deleted = alice.send_and_ack("room", "m1", "Qzrgone Marmalade").await["messageId"].clone();
    let edited = alice.send_and_ack("room", "m2", "Qzrorig Harpsichord").await["messageId"].clone();
    acked(
        &mut bob,
        json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "b1", "body": "Qzrbob Trombonist"}),
    )
    .await;
    acked(
        &mut alice,
        json!({"type": "MSG_SEND", "channelId": "gone", "clientMsgId": "g1", "body": "Qzrchan Ocarinaist"}),
    )
    .await;
    assert_eq!(found(&app, "carol", "marmalade").await, vec!["Qzrgone Marmalade"]);
    assert_eq!(found(&app, "carol", "trombonist").await, vec!["Qzrbob Trombonist"]);
    assert_eq!(found(&app, "carol", "ocarinaist").await, vec!["Qzrchan Ocarinaist"]);

    acked(
        &mut alice,
        json!({"type": "MSG_DELETE", "clientMsgId": "d1", "messageId": deleted}),
    )
    .await;
    acked(
        &mut alice,
        json!({"type": "MSG_EDIT", "clientMsgId": "e2", "messageId": edited, "body": "Qzrnew Bassoonist"}),
    )
    .await;
    drop(bob);
    let (status, body) = app.request("DELETE", "/v1/users/bob", Some(ADMIN_TOKEN), None).await;
    assert_eq!(status, 204, "{body}");
    let (status, body) = app
        .request("DELETE", "/v1/channels/gone", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(status, 204, "{body}");

    app.state.store.hold_search_indexer(false);
    for gone in ["marmalade", "harpsichord", "trombonist", "ocarinaist"] {
        assert!(!index_holds(&app, backend, gone).await, "{gone} entered the index");
        assert_eq!(found(&app, "carol", gone).await, Vec::<String>::new(), "{gone}");
    }
    assert!(index_holds(&app, backend, "bassoonist").await, "the current text");
    assert!(index_holds(&app, backend, "bystander").await);
    assert_eq!(found(&app, "carol", "bassoonist").await, vec!["Qzrnew Bassoonist"]);
    for gone in ["Marmalade", "Trombonist", "Ocarinaist"] {
        let rows = rows_holding(&app, backend, gone).await;
        assert!(rows.is_empty(), "{gone} still stored: {rows:?}");
    }
}

/// A server stopped after a send's commit and before the indexer reached
/// it: the next start indexes it (the watermark is stored), and a search
/// finds it meanwhile.
#[tokio::test]
async fn sqlite_a_stop_before_indexing_loses_nothing() {
    let app = spawn_app(Backend::Sqlite).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    alice.send_and_ack("room", "m0", "Qzsfirst Indexed").await;
    app.state.store.catch_up_search_index().await.expect("indexed");
    app.state.store.hold_search_indexer(true);
    alice.send_and_ack("room", "m1", "Qzscrash Survivor").await;
    drop(alice);
    assert!(!vocab_holds_now(&app, "qzscrash survivor").await, "held");
    let app = app.restart(|_| {}).await;
    let mut indexed = false;
    for _ in 0..200 {
        if vocab_holds_now(&app, "qzscrash survivor").await {
            indexed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(indexed, "indexed by the indexer at start");
    let behind = sqlite_scalar(
        &app,
        "SELECT (SELECT MAX(rowid) FROM messages) - (SELECT upto FROM search_indexed)",
    )
    .await;
    assert_eq!(behind, 0, "the watermark covers every row");
    assert_eq!(found(&app, "bob", "survivor").await, vec!["Qzscrash Survivor"]);
}

/// SQLite reuses the highest rowids once the newest rows are deleted (a
/// channel's deletion): a message stored under the watermark is indexed by
/// its insert, else neither the indexer nor the search's scan of the rows
/// above the watermark would ever see it.
#[tokio::test]
async fn sqlite_a_message_under_the_watermark_is_indexed_by_its_insert() {
    let app = spawn_app(Backend::Sqlite).await;
    app.create_channel("room", &["alice", "bob"]).await;
    app.create_channel("gone", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    alice.send_and_ack("room", "m0", "Qztfirst Message").await;
    for i in 0..5 {
        alice.send_and_ack("gone", &format!("g{i}"), "Qztgone text").await;
    }
    app.state.store.catch_up_search_index().await.expect("indexed");
    let (status, body) = app
        .request("DELETE", "/v1/channels/gone", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(status, 204, "{body}");
    app.state.store.hold_search_indexer(true);
    acked(
        &mut alice,
        json!({"type": "MSG_SEND", "channelId": "room", "clientMsgId": "m1", "body": "Qztreused Kaleidoscope"}),
    )
    .await;
    let rowid = sqlite_scalar(&app, "SELECT rowid FROM messages WHERE body = 'Qztreused Kaleidoscope'").await;
    let upto = sqlite_scalar(&app, "SELECT upto FROM search_indexed").await;
    assert!(rowid <= upto, "the test needs a reused rowid: {rowid} above {upto}");
    assert!(vocab_holds_now(&app, "kaleidoscope").await, "indexed by its insert");
    assert_eq!(found(&app, "bob", "kaleidoscope").await, vec!["Qztreused Kaleidoscope"]);
}
