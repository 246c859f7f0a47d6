//! The repair against the SQLite that `libsqlite3-sys` bundles, on a table
//! made as `migrations/sqlite/0015_search.sql` makes `message_search`: these
//! fail if FTS5's leaf format, or what `secure-delete` leaves in
//! `message_search_idx`, changes.

use std::collections::{BTreeMap, BTreeSet};

use sqlx::{Connection, SqliteConnection};

use super::*;

/// `message_search` as the migration creates it.
const TABLE: [&str; 2] = [
    "CREATE VIRTUAL TABLE message_search USING fts5(text, content = '', tokenize = 'trigram case_sensitive 0')",
    "INSERT INTO message_search (message_search, rank) VALUES ('secure-delete', 1)",
];

async fn index() -> SqliteConnection {
    let mut conn = SqliteConnection::connect("sqlite::memory:").await.expect("sqlite");
    for statement in TABLE {
        sqlx::query(statement).execute(&mut conn).await.expect("table");
    }
    conn
}

/// `n` texts of 60 characters of `alphabet` (xorshift64 from `seed`).
fn texts(seed: u64, n: usize, alphabet: &[char]) -> Vec<String> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            (0..60)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize]
                })
                .collect()
        })
        .collect()
}

/// Indexes `texts` as rowids 1.., one transaction each (as sends commit).
async fn insert(conn: &mut SqliteConnection, texts: &[String]) {
    for (i, text) in texts.iter().enumerate() {
        sqlx::query("INSERT INTO message_search (rowid, text) VALUES ($1, $2)")
            .bind(i as i64 + 1)
            .bind(text)
            .execute(&mut *conn)
            .await
            .expect("insert");
    }
}

/// Takes every second text (rowids 2, 4, …) out of the index, as the
/// triggers do, and notes it.
async fn delete_every_second(conn: &mut SqliteConnection, texts: &[String]) -> GoneTexts {
    let mut gone = GoneTexts::new();
    for (i, text) in texts.iter().enumerate().skip(1).step_by(2) {
        sqlx::query("INSERT INTO message_search (message_search, rowid, text) VALUES ('delete', $1, $2)")
            .bind(i as i64 + 1)
            .bind(text)
            .execute(&mut *conn)
            .await
            .expect("delete");
        gone.add_text(text);
    }
    gone
}

/// The separators (`segid`, `term`) that are not a prefix of their page's
/// first term, and how many separators there are.
async fn stale(conn: &mut SqliteConnection) -> (Vec<(i64, Vec<u8>)>, usize) {
    let rows: Vec<(i64, Vec<u8>, i64)> =
        sqlx::query_as("SELECT segid, term, pgno FROM message_search_idx WHERE length(term) > 0")
            .fetch_all(&mut *conn)
            .await
            .expect("idx");
    let mut stale = Vec::new();
    for (segid, term, pgno) in &rows {
        let id = leaf_id(*segid, pgno >> 1).expect("id");
        let page: Option<Vec<u8>> = sqlx::query_scalar(LEAF)
            .bind(id)
            .fetch_optional(&mut *conn)
            .await
            .expect("page");
        // A page an unfinished merge took away: FTS5 reads its separator
        // no more.
        let Some(page) = page else { continue };
        let first = first_term(&page).expect("leaf").expect("a term");
        if !first.starts_with(term) {
            stale.push((*segid, term.clone()));
        }
    }
    (stale, rows.len())
}

/// Every term of the index with the rowids that hold it.
async fn postings(conn: &mut SqliteConnection) -> BTreeMap<String, BTreeSet<i64>> {
    sqlx::query("CREATE VIRTUAL TABLE IF NOT EXISTS temp.terms USING fts5vocab(main, message_search, 'instance')")
        .execute(&mut *conn)
        .await
        .expect("vocab");
    let rows: Vec<(String, i64)> = sqlx::query_as("SELECT term, doc FROM temp.terms")
        .fetch_all(&mut *conn)
        .await
        .expect("terms");
    let mut out: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    for (term, doc) in rows {
        out.entry(term).or_default().insert(doc);
    }
    out
}

/// The rowids `MATCH` finds for each of `queries` (each a phrase).
async fn searches(conn: &mut SqliteConnection, queries: &[String]) -> Vec<BTreeSet<i64>> {
    let mut out = Vec::new();
    for q in queries {
        let phrase = format!("\"{}\"", q.replace('"', "\"\""));
        let rows: Vec<i64> = sqlx::query_scalar("SELECT rowid FROM message_search WHERE message_search MATCH $1")
            .bind(phrase)
            .fetch_all(&mut *conn)
            .await
            .expect("match");
        out.push(rows.into_iter().collect());
    }
    out
}

async fn integrity_check(conn: &mut SqliteConnection) {
    sqlx::query("INSERT INTO message_search (message_search, rank) VALUES ('integrity-check', 0)")
        .execute(&mut *conn)
        .await
        .expect("FTS5 integrity-check");
}

const LOWER: &[char] = &[
    'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r', 's', 't', 'u', 'v', 'w',
    'x', 'y', 'z',
];

/// Upper case ASCII, accented Latin, Greek (with `ς` and `µ`, which fold to
/// `σ` and `μ`), Cyrillic, the Kelvin sign and a CJK character: what the
/// tokenizer folds, and what it keeps.
const MIXED: &[char] = &[
    'A', 'B', 'c', 'D', 'Ä', 'é', 'Ö', 'ß', 'Σ', 'ς', 'σ', 'µ', 'Μ', 'Ж', 'ж', 'K', '東', 'ſ', 'İ', 'ǅ',
];

/// What the unrepaired index keeps (so that the repair has something to
/// do: if FTS5 stops keeping stale separators, this fails and the module
/// can go), and what the repair leaves: no stale separator, the same
/// terms, the same answers, FTS5's integrity-check passing.
async fn repairs(alphabet: &[char], seed: u64) {
    let texts = texts(seed, 400, alphabet);
    let mut conn = index().await;
    insert(&mut conn, &texts).await;

    // Without the repair.
    sqlx::query("BEGIN").execute(&mut conn).await.expect("begin");
    delete_every_second(&mut conn, &texts).await;
    sqlx::query(FLUSH).execute(&mut conn).await.expect("flush");
    let (before, pages) = stale(&mut conn).await;
    assert!(pages >= 10, "only {pages} leaf pages");
    assert!(
        !before.is_empty(),
        "FTS5 left no stale separator of {pages}: has secure-delete changed?"
    );
    sqlx::query("ROLLBACK").execute(&mut conn).await.expect("rollback");

    // With it, as a deleting transaction runs it.
    sqlx::query("BEGIN").execute(&mut conn).await.expect("begin");
    let gone = delete_every_second(&mut conn, &texts).await;
    sqlx::query(FLUSH).execute(&mut conn).await.expect("flush");
    let terms = postings(&mut conn).await;
    let queries: Vec<String> = terms
        .keys()
        .cloned()
        .chain(texts.iter().map(|t| t.chars().take(12).collect()))
        .collect();
    let answers = searches(&mut conn, &queries).await;
    let done = repair(&mut conn, &gone).await.expect("repair");
    assert!(done.fixed >= before.len(), "{done:?} for {} stale", before.len());
    sqlx::query("COMMIT").execute(&mut conn).await.expect("commit");

    let (after, _) = stale(&mut conn).await;
    assert!(after.is_empty(), "stale separators left: {after:?}");
    assert_eq!(postings(&mut conn).await, terms, "the terms");
    assert_eq!(searches(&mut conn, &queries).await, answers, "the answers");
    integrity_check(&mut conn).await;
    // Every kept text is still found, no deleted text is.
    for (i, text) in texts.iter().enumerate() {
        let found = searches(&mut conn, std::slice::from_ref(text)).await.remove(0);
        assert_eq!(found.contains(&(i as i64 + 1)), i % 2 == 0, "text {i}");
    }
}

#[tokio::test]
async fn the_repair_leaves_no_stale_separator_and_the_same_answers() {
    repairs(LOWER, 0x9e37_79b9_7f4a_7c15).await;
}

#[tokio::test]
async fn the_repair_finds_separators_of_case_folded_and_non_ascii_text() {
    repairs(MIXED, 0x2545_f491_4f6c_dd1d).await;
}

/// An index left stale (by deletes before the repair existed) is repaired
/// whole by [`repair_all`].
#[tokio::test]
async fn repair_all_repairs_an_index_left_stale() {
    let texts = texts(7, 400, LOWER);
    let mut conn = index().await;
    insert(&mut conn, &texts).await;
    delete_every_second(&mut conn, &texts).await;
    let (before, _) = stale(&mut conn).await;
    assert!(!before.is_empty());
    sqlx::query("BEGIN").execute(&mut conn).await.expect("begin");
    let done = repair_all(&mut conn).await.expect("repair");
    sqlx::query("COMMIT").execute(&mut conn).await.expect("commit");
    assert_eq!(done.fixed, before.len(), "{done:?}");
    assert!(stale(&mut conn).await.0.is_empty());
    integrity_check(&mut conn).await;
}

#[tokio::test]
async fn nothing_noted_nothing_done() {
    let mut conn = index().await;
    assert_eq!(
        repair(&mut conn, &GoneTexts::new()).await.expect("repair"),
        Repaired::default()
    );
}

#[test]
fn a_text_makes_every_prefix_of_its_folded_trigrams() {
    let mut gone = GoneTexts::new();
    gone.add_text("AbcD");
    for want in ["0a", "0ab", "0abc", "0b", "0bc", "0bcd"] {
        assert!(gone.prefixes.contains(want.as_bytes()), "{want}");
    }
    assert!(!gone.prefixes.contains(b"0".as_slice()));
    assert!(!gone.prefixes.contains(b"0A".as_slice()));
    assert_eq!(gone.candidates(), 6);
    // Non-ASCII: the character and its case forms.
    let mut gone = GoneTexts::new();
    gone.add_text("ΣΑς");
    for want in ["0σας", "0ΣΑς", "0σασ", "0σ"] {
        assert!(gone.prefixes.contains(want.as_bytes()), "{want}");
    }
    // FTS5 indexes U+FFFE as U+FFFD (its UTF-8 reader), which no case
    // form gives.
    let mut odd = GoneTexts::new();
    odd.add_text("ab\u{fffe}");
    assert!(odd.prefixes.contains("0ab\u{fffd}".as_bytes()));
    // A 2-byte character cut in the middle is a candidate too.
    assert!(gone.prefixes.contains(&"0σ".as_bytes()[..2]));
    let mut short = GoneTexts::new();
    short.add_text("ab");
    assert!(short.is_empty());
}

#[test]
fn a_leaf_reads_as_fts5_writes_it() {
    // Header: first rowid at 4, szLeaf 12; rowid varint; term "0ab" at 5
    // (length 3); page index: 5.
    let page = [0, 4, 0, 12, 1, 3, b'0', b'a', b'b', 0, 0, 0, 5];
    assert_eq!(first_term(&page), Ok(Some(b"0ab".as_slice())));
    // No page index: no term.
    assert_eq!(first_term(&[0, 4, 0, 6, 1, 0]), Ok(None));
    assert_eq!(first_term(&[0, 4]), Err(LeafError::Short));
    // The term offset outside the leaf, the term past it.
    assert_eq!(first_term(&[0, 4, 0, 6, 1, 0, 9]), Err(LeafError::Offset(9)));
    assert_eq!(first_term(&[0, 4, 0, 7, 1, 9, b'0', 5]), Err(LeafError::Truncated));
    // A varint past the end.
    assert_eq!(first_term(&[0, 4, 0, 4, 0x81]), Err(LeafError::Truncated));
    assert_eq!(leaf_id(3, 5), Some((3 << 37) | 5));
    assert_eq!(leaf_id(-1, 5), None);
    assert_eq!(leaf_id(1, 1 << 31), None);
}

/// The pages an unfinished incremental merge has taken from its input
/// segments are gone from `message_search_data` while their separators
/// stay: the repair drops those of a deleted text, and the index still
/// checks, answers the same and merges to the end.
#[tokio::test]
async fn separators_of_pages_merged_away_are_dropped() {
    let texts = texts(11, 800, LOWER);
    let mut conn = index().await;
    sqlx::query("INSERT INTO message_search (message_search, rank) VALUES ('automerge', 0)")
        .execute(&mut conn)
        .await
        .expect("automerge");
    // Four segments of 200 texts, then a few pages of their merge.
    for chunk in 0..4 {
        sqlx::query("BEGIN").execute(&mut conn).await.expect("begin");
        for (i, text) in texts.iter().enumerate().skip(chunk * 200).take(200) {
            sqlx::query("INSERT INTO message_search (rowid, text) VALUES ($1, $2)")
                .bind(i as i64 + 1)
                .bind(text)
                .execute(&mut conn)
                .await
                .expect("insert");
        }
        sqlx::query("COMMIT").execute(&mut conn).await.expect("commit");
    }
    sqlx::query("INSERT INTO message_search (message_search, rank) VALUES ('merge', 8)")
        .execute(&mut conn)
        .await
        .expect("merge");
    let orphans = "SELECT count(*) FROM message_search_idx i WHERE length(term) > 0 AND NOT EXISTS \
                   (SELECT 1 FROM message_search_data d WHERE d.id = (i.segid << 37) | (i.pgno >> 1))";
    let before: i64 = sqlx::query_scalar(orphans).fetch_one(&mut conn).await.expect("orphans");
    assert!(before > 0, "no separator of a merged-away page: the merge finished?");

    sqlx::query("BEGIN").execute(&mut conn).await.expect("begin");
    let gone = delete_every_second(&mut conn, &texts).await;
    sqlx::query(FLUSH).execute(&mut conn).await.expect("flush");
    let terms = postings(&mut conn).await;
    let queries: Vec<String> = terms.keys().cloned().collect();
    let answers = searches(&mut conn, &queries).await;
    let done = repair(&mut conn, &gone).await.expect("repair");
    assert!(done.dropped > 0, "{done:?}");
    sqlx::query("COMMIT").execute(&mut conn).await.expect("commit");

    // No separator, of a page or of one merged away, holds a trigram only
    // deleted texts held.
    let kept: BTreeSet<String> = texts
        .iter()
        .step_by(2)
        .flat_map(|t| {
            t.chars()
                .collect::<Vec<_>>()
                .windows(3)
                .map(|w| w.iter().collect())
                .collect::<Vec<String>>()
        })
        .collect();
    let separators: Vec<Vec<u8>> = sqlx::query_scalar("SELECT term FROM message_search_idx")
        .fetch_all(&mut conn)
        .await
        .expect("idx");
    for text in texts.iter().skip(1).step_by(2) {
        let chars: Vec<char> = text.chars().collect();
        for w in chars.windows(3) {
            let g: String = w.iter().collect();
            if !kept.contains(&g) {
                assert!(
                    !separators.iter().any(|s| s.windows(3).any(|x| x == g.as_bytes())),
                    "{g}"
                );
            }
        }
    }
    assert!(stale(&mut conn).await.0.is_empty());
    integrity_check(&mut conn).await;
    assert_eq!(searches(&mut conn, &queries).await, answers);
    // The merge goes on to its end over the repaired index.
    sqlx::query("INSERT INTO message_search (message_search, rank) VALUES ('merge', 100000)")
        .execute(&mut conn)
        .await
        .expect("merge");
    integrity_check(&mut conn).await;
    assert_eq!(searches(&mut conn, &queries).await, answers);
}
