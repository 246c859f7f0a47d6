//! The mirror against the bundled SQLite's FTS5.

use super::*;
use sqlx::Connection;

/// Every Unicode scalar value but NUL (which ends FTS5's tokenizing) that
/// the bundled SQLite's FTS5 `trigram` tokenizer (`case_sensitive 0`)
/// changes, with what it becomes: each one is indexed as a document of
/// itself three times (one trigram), and the index's terms are read back
/// (`fts5vocab`, `instance`).
async fn bundled_fts5_folds() -> Vec<(u32, u32)> {
    let mut conn = sqlx::SqliteConnection::connect("sqlite::memory:")
        .await
        .expect("sqlite");
    for sql in [
        "CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'trigram case_sensitive 0')",
        "CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')",
        "WITH RECURSIVE n(cp) AS (SELECT 1 UNION ALL SELECT cp + 1 FROM n WHERE cp < 1114111) \
         INSERT INTO t (rowid, x) SELECT cp, char(cp, cp, cp) FROM n WHERE cp NOT BETWEEN 55296 AND 57343",
    ] {
        sqlx::query(sql).execute(&mut conn).await.expect(sql);
    }
    let indexed: i64 = sqlx::query_scalar("SELECT count(*) FROM v")
        .fetch_one(&mut conn)
        .await
        .expect("count");
    assert_eq!(indexed, 0x10FFFF - 2048, "one trigram per scalar value");
    let rows: Vec<(i64, String)> =
        sqlx::query_as("SELECT v.doc, v.term FROM v JOIN t ON t.rowid = v.doc WHERE v.term != t.x ORDER BY v.doc")
            .fetch_all(&mut conn)
            .await
            .expect("changed");
    rows.into_iter()
        .map(|(doc, term)| {
            let chars: Vec<char> = term.chars().collect();
            assert!(
                chars.len() == 3 && chars.iter().all(|c| *c == chars[0]),
                "{doc:x}: {term:?}"
            );
            (u32::try_from(doc).expect("codepoint"), u32::from(chars[0]))
        })
        .collect()
}

/// The generated table's text, for a SQLite whose folding changed.
fn table_text(folds: &[(u32, u32)]) -> String {
    let mut text = String::new();
    let non_ascii: Vec<&(u32, u32)> = folds.iter().filter(|(from, _)| *from > 0x7f).collect();
    for line in non_ascii.chunks(6) {
        text.push_str("   ");
        for (from, to) in line {
            text.push_str(&format!(" ('\\u{{{from:x}}}', '\\u{{{to:x}}}'),"));
        }
        text.push('\n');
    }
    text
}

#[tokio::test]
async fn the_mirror_is_what_the_bundled_fts5_does() {
    let bundled = bundled_fts5_folds().await;
    let mirror: Vec<(u32, u32)> = (1..=char::MAX as u32)
        .filter_map(char::from_u32)
        .filter(|c| fts5_fold_char(*c) != *c)
        .map(|c| (u32::from(c), u32::from(fts5_fold_char(c))))
        .collect();
    if bundled != mirror {
        std::fs::write(std::env::temp_dir().join("fts5_folds.txt"), table_text(&bundled)).expect("write");
    }
    assert!(
        bundled == mirror,
        "FTS5_FOLDS differs from the bundled SQLite's FTS5 ({} changes there, {} here); \
         the bundled table was written to {}",
        bundled.len(),
        mirror.len(),
        std::env::temp_dir().join("fts5_folds.txt").display()
    );
}
