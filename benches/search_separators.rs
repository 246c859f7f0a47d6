//! The cost of the search index's separator repair
//! (`src/store/search_separators.rs`) per delete, on SQLite as chatd runs
//! it (WAL, `synchronous=FULL`, `secure_delete=ON`, `message_search` as
//! `migrations/sqlite/0015_search.sql` makes it).
//!
//! Fills the index with `SEPARATORS_BENCH_MESSAGES` (default 100,000)
//! chat-like texts, 1,000 per commit, then times deleting transactions with
//! and without the repair, alternately (so that both see the same index as
//! it grows older): single deletes, and batches of 64 (an erasure's or a
//! busy channel's batch). Each transaction is `BEGIN IMMEDIATE`, the
//! `'delete'` commands, with the repair (what it notes, the flush, the
//! separators) or not, and the durable `COMMIT` (which flushes anyway).
//! Reading the text before it is erased (one primary-key lookup) is not in
//! it. FTS5's `integrity-check` runs after the fill and after each kind of
//! delete, and its outcome is printed (with the bundled SQLite 3.46.0 it
//! fails after the random deletes whether the repair runs or not:
//! `SEPARATORS_BENCH_REPAIR=0` runs no repair; docs/known-issues.md). Run
//! with `cargo bench --bench search_separators`.

use std::time::{Duration, Instant};

use chatd::store::search_separators::{repair, GoneTexts};
use sqlx::{Connection, SqliteConnection};

const WORDS: &[&str] = &[
    "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "chat", "server", "message", "hello", "world",
    "deploy", "release", "test", "build", "tomorrow", "meeting", "lunch", "review", "merge", "ticket", "thanks",
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn text(rng: &mut Rng) -> String {
    let mut words: Vec<String> = (0..12).map(|_| WORDS[rng.below(WORDS.len())].to_owned()).collect();
    words.push((0..8).map(|_| char::from(b'a' + rng.below(26) as u8)).collect());
    words.join(" ")
}

async fn exec(conn: &mut SqliteConnection, sql: &str) {
    sqlx::query(sql).execute(&mut *conn).await.expect(sql);
}

fn summary(name: &str, times: &mut [Duration]) {
    if times.is_empty() {
        return;
    }
    times.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    println!(
        "{name:<34} n={:<4} median {:>7.2} ms  p90 {:>7.2} ms  max {:>7.2} ms",
        times.len(),
        ms(at(0.5)),
        ms(at(0.9)),
        ms(at(1.0))
    );
}

/// One deleting transaction of `rowids` (their texts taken from `texts`),
/// with the repair or not: its time, and the repair's alone.
async fn delete(
    conn: &mut SqliteConnection,
    texts: &mut [Option<String>],
    rowids: &[usize],
    with_repair: bool,
) -> (Duration, Duration) {
    let start = Instant::now();
    exec(conn, "BEGIN IMMEDIATE").await;
    let mut gone = GoneTexts::new();
    for &rowid in rowids {
        let Some(text) = texts[rowid].take() else { continue };
        sqlx::query("INSERT INTO message_search (message_search, rowid, text) VALUES ('delete', $1, $2)")
            .bind(rowid as i64)
            .bind(&text)
            .execute(&mut *conn)
            .await
            .expect("delete");
        if with_repair {
            gone.add_text(&text);
        }
    }
    let repair_start = Instant::now();
    if with_repair {
        repair(conn, &gone).await.expect("repair");
    }
    let repair_time = repair_start.elapsed();
    exec(conn, "COMMIT").await;
    (start.elapsed(), repair_time)
}

async fn run() {
    let messages: usize = std::env::var("SEPARATORS_BENCH_MESSAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("bench.db").display());
    let mut conn = SqliteConnection::connect(&url).await.expect("sqlite");
    for sql in [
        "PRAGMA journal_mode = WAL",
        "PRAGMA synchronous = FULL",
        "PRAGMA secure_delete = ON",
        "CREATE VIRTUAL TABLE message_search USING fts5(text, content = '', tokenize = 'trigram case_sensitive 0')",
        "INSERT INTO message_search (message_search, rank) VALUES ('secure-delete', 1)",
    ] {
        exec(&mut conn, sql).await;
    }
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut texts: Vec<Option<String>> = vec![None];
    let fill = Instant::now();
    for batch in 0..messages.div_ceil(1_000) {
        exec(&mut conn, "BEGIN").await;
        for _ in 0..1_000.min(messages - batch * 1_000) {
            let body = text(&mut rng);
            sqlx::query("INSERT INTO message_search (rowid, text) VALUES ($1, $2)")
                .bind(texts.len() as i64)
                .bind(&body)
                .execute(&mut conn)
                .await
                .expect("insert");
            texts.push(Some(body));
        }
        exec(&mut conn, "COMMIT").await;
    }
    let (rows, segments): (i64, i64) = sqlx::query_as("SELECT count(*), count(DISTINCT segid) FROM message_search_idx")
        .fetch_one(&mut conn)
        .await
        .expect("idx");
    println!(
        "{messages} messages indexed in {:.1} s: {rows} rows of message_search_idx, {segments} segments",
        fill.elapsed().as_secs_f64()
    );

    let repairs = std::env::var("SEPARATORS_BENCH_REPAIR").map_or(true, |v| v != "0");
    integrity_check(&mut conn, "after the fill").await;
    for (size, rounds) in [(1usize, 200usize), (64, 20)] {
        let (mut plain, mut repaired, mut repair_only) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..rounds * 2 {
            let rowids: Vec<usize> = (0..size).map(|_| 1 + rng.below(messages)).collect();
            let with_repair = repairs && round % 2 == 1;
            let (total, repair_time) = delete(&mut conn, &mut texts, &rowids, with_repair).await;
            if with_repair {
                repaired.push(total);
                repair_only.push(repair_time);
            } else {
                plain.push(total);
            }
        }
        println!("deletes of {size} text(s) per transaction:");
        summary("  without the repair (whole tx)", &mut plain);
        summary("  with the repair (whole tx)", &mut repaired);
        summary("  the repair alone (flush included)", &mut repair_only);
        integrity_check(&mut conn, &format!("after the deletes of {size}")).await;
    }
}

async fn integrity_check(conn: &mut SqliteConnection, when: &str) {
    let checked = sqlx::query("INSERT INTO message_search (message_search, rank) VALUES ('integrity-check', 0)")
        .execute(&mut *conn)
        .await;
    println!("integrity-check {when}: {checked:?}");
}

fn main() {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(run());
}
