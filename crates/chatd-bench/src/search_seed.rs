//! The `search` scenario's messages: realistic chat text in several
//! languages (English, German, Russian, Greek, Japanese, Chinese, Korean,
//! and technical tokens such as `e-mail` or `build-42`), generated from a
//! fixed seed, and written straight into the server's database in batches
//! (through the same triggers and indexes as a send: the index is built as
//! the rows arrive).
//!
//! Each message draws a language (English 40 %, German 12 %, Japanese 12 %,
//! Russian 10 %, Chinese 10 %, Korean 6 %, Greek 5 %, technical English
//! 5 %) and 6 to 15 words of it (Japanese and Chinese words are written
//! without spaces, as in those languages); English messages hold `the`
//! 60 % of the time ([`COMMON`]), Japanese ones `東京都` 10 % ([`CJK`]), a
//! technical token ([`HYPHEN`] among them) is added to 5 % of all; and
//! one message in 50,000 holds [`RARE`].

use std::str::FromStr;
use std::time::Duration;

use anyhow::Context;
use sqlx::{Connection, Executor};

/// A word in about a quarter of the messages.
pub const COMMON: &str = "the";
/// A word in one message of 50,000.
pub const RARE: &str = "xenolith";
/// A CJK term of 3 characters (served by the trigram index).
pub const CJK: &str = "東京都";
/// A CJK term of 2 characters (no trigram: a scan on SQLite).
pub const CJK_SHORT: &str = "東京";
/// A term with `-`.
pub const HYPHEN: &str = "e-mail";

const EN: &[&str] = &[
    "meeting", "deploy", "review", "lunch", "tomorrow", "server", "release", "customer", "issue", "please", "check",
    "update", "thanks", "team", "project", "report", "because", "schedule", "design", "budget", "question", "weekend",
    "coffee", "office", "a", "to", "is", "we", "can", "you", "it", "and", "of", "on", "for", "this", "that", "ok",
    "sounds", "good", "later", "today", "fixed", "broken", "merged", "branch", "ticket", "call",
];
const DE: &[&str] = &[
    "der",
    "die",
    "und",
    "Besprechung",
    "morgen",
    "Ärger",
    "Straße",
    "Größe",
    "Übersicht",
    "bitte",
    "danke",
    "Kunde",
    "Fehler",
    "Bericht",
    "wir",
    "ist",
    "nicht",
    "heute",
    "später",
    "gut",
];
const RU: &[&str] = &[
    "привет",
    "встреча",
    "завтра",
    "отчёт",
    "сервер",
    "проект",
    "спасибо",
    "пожалуйста",
    "команда",
    "ошибка",
    "и",
    "в",
    "не",
    "это",
    "сегодня",
    "хорошо",
];
const EL: &[&str] = &[
    "καλημέρα",
    "συνάντηση",
    "αύριο",
    "έργο",
    "ευχαριστώ",
    "ομάδα",
    "διακομιστής",
    "και",
    "το",
    "είναι",
];
const JA: &[&str] = &[
    "明日",
    "会議",
    "大阪",
    "資料",
    "確認",
    "お願いします",
    "ありがとう",
    "予定",
    "サーバー",
    "リリース",
    "です",
    "ました",
    "は",
    "を",
    "に",
    "の",
    "東京駅",
    "今日",
];
const ZH: &[&str] = &[
    "我们",
    "明天",
    "会议",
    "北京",
    "上海",
    "项目",
    "服务器",
    "发布",
    "谢谢",
    "问题",
    "报告",
    "客户",
    "的",
    "了",
    "是",
];
const KO: &[&str] = &[
    "안녕하세요",
    "회의",
    "내일",
    "서울",
    "프로젝트",
    "서버",
    "감사합니다",
    "보고서",
    "오늘",
    "좋아요",
];
const TECH: &[&str] = &[
    HYPHEN,
    "build-42",
    "v1.2.3",
    "ops@example.com",
    "log-in",
    "hotfix-7",
    "api.v2",
    "#deploy",
    "CI/CD",
    "k8s",
];

/// A small deterministic generator (SplitMix64).
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[self.below(words.len())]
    }
}

/// The text of message `i` (0-based) of the scenario.
pub fn message_text(rng: &mut Rng, i: i64) -> String {
    let roll = rng.below(100);
    let (words, spaced, lang) = match roll {
        0..=39 => (EN, true, "en"),
        40..=51 => (DE, true, "de"),
        52..=63 => (JA, false, "ja"),
        64..=73 => (RU, true, "ru"),
        74..=83 => (ZH, false, "zh"),
        84..=89 => (KO, true, "ko"),
        90..=94 => (EL, true, "el"),
        _ => (TECH, true, "tech"),
    };
    let n = 6 + rng.below(10);
    let mut parts: Vec<&str> = (0..n).map(|_| rng.pick(words)).collect();
    if lang == "en" && rng.below(100) < 60 {
        let at = rng.below(parts.len());
        parts.insert(at, COMMON);
    }
    if lang == "ja" && rng.below(100) < 10 {
        let at = rng.below(parts.len());
        parts.insert(at, CJK);
    }
    if lang == "tech" {
        parts.insert(0, "the");
    }
    if rng.below(100) < 5 {
        let token = rng.pick(TECH);
        parts.push(token);
    }
    if i % 50_000 == 7 {
        parts.push(RARE);
    }
    let mut text = parts.join(if spaced { " " } else { "" });
    if !spaced {
        text.push('。');
    }
    text
}

/// A send's body for `--text-bodies`: `head` (the send time), then chat
/// text of [`message_text`] drawn from `seed`, words joined by spaces until
/// the body holds at least `bytes` bytes, cut to at most `bytes` on a
/// character boundary (never shorter than `head`).
pub fn text_body(mut head: String, seed: u64, bytes: usize) -> String {
    let mut rng = Rng::new(seed);
    let mut i = 1;
    while head.len() < bytes {
        head.push_str(&message_text(&mut rng, i));
        head.push(' ');
        i += 1;
    }
    let mut end = bytes.max(head.find('.').map_or(0, |dot| dot + 1));
    while !head.is_char_boundary(end) {
        end -= 1;
    }
    head.truncate(end);
    head
}

/// One seeded row.
struct Row {
    id: String,
    channel: String,
    seq: i64,
    key: String,
    body: String,
    ts: i64,
}

/// Writes `n` messages of `writer` into `channels` (round robin: message `i`
/// is seq `i / C + 1` of channel `i mod C`), in batches of `batch`, each
/// committed, then sets each channel's `last_seq`/`last_ts` and runs
/// `ANALYZE`. Ids are UUIDv7 of increasing ms ending now, keys
/// `{key_prefix}-{i}`. Returns the seconds it took.
///
/// # Errors
/// The database's.
pub async fn seed(
    url: &str,
    channels: &[String],
    n: i64,
    writer: &str,
    key_prefix: &str,
    batch: i64,
) -> anyhow::Result<f64> {
    let started = std::time::Instant::now();
    let now = chatd_client::chatd_proto::ids::now_ms();
    let first_ms = now - n - 1000;
    let c = channels.len() as i64;
    let mut rng = Rng::new(0x005E_A2C4);
    let make = |rng: &mut Rng, i: i64| -> Row {
        let ms = first_ms + i;
        let random = rng.next().to_be_bytes();
        let more = rng.next().to_be_bytes();
        let mut bytes = [0u8; 10];
        bytes[..8].copy_from_slice(&random);
        bytes[8..].copy_from_slice(&more[..2]);
        let id = uuid::Builder::from_unix_timestamp_millis(ms as u64, &bytes).into_uuid();
        Row {
            id: id.hyphenated().to_string(),
            channel: channels[(i % c) as usize].clone(),
            seq: i / c + 1,
            key: format!("{key_prefix}-{i}"),
            body: message_text(rng, i),
            ts: ms,
        }
    };
    if url.starts_with("postgres") {
        let mut db = sqlx::PgConnection::connect(url)
            .await
            .context("connect to PostgreSQL")?;
        let mut i = 0;
        while i < n {
            let rows: Vec<Row> = (i..(i + batch).min(n)).map(|j| make(&mut rng, j)).collect();
            i += rows.len() as i64;
            sqlx::query(
                "INSERT INTO messages (message_id, channel_id, seq, sender_id, client_msg_id, body, ts) \
                 SELECT u.id::uuid, u.channel, u.seq, $4, u.key, u.body, u.ts \
                 FROM UNNEST($1::text[], $2::text[], $3::bigint[], $5::text[], $6::text[], $7::bigint[]) \
                 AS u(id, channel, seq, key, body, ts)",
            )
            .bind(rows.iter().map(|r| r.id.clone()).collect::<Vec<_>>())
            .bind(rows.iter().map(|r| r.channel.clone()).collect::<Vec<_>>())
            .bind(rows.iter().map(|r| r.seq).collect::<Vec<_>>())
            .bind(writer)
            .bind(rows.iter().map(|r| r.key.clone()).collect::<Vec<_>>())
            .bind(rows.iter().map(|r| r.body.clone()).collect::<Vec<_>>())
            .bind(rows.iter().map(|r| r.ts).collect::<Vec<_>>())
            .execute(&mut db)
            .await
            .context("insert a batch")?;
        }
        for (channel, last_seq, last_ts) in lasts(channels, n, first_ms) {
            sqlx::query(SET_LAST)
                .bind(channel)
                .bind(last_seq)
                .bind(last_ts)
                .execute(&mut db)
                .await?;
        }
        db.execute("ANALYZE messages").await?;
    } else {
        let options = sqlx::sqlite::SqliteConnectOptions::from_str(url)?
            .busy_timeout(Duration::from_secs(60))
            .pragma("cache_size", "-262144");
        let mut db = sqlx::SqliteConnection::connect_with(&options)
            .await
            .context("open the SQLite database")?;
        let mut i = 0;
        while i < n {
            let rows: Vec<serde_json::Value> = (i..(i + batch).min(n))
                .map(|j| {
                    let r = make(&mut rng, j);
                    serde_json::json!([r.id, r.channel, r.seq, r.key, r.body, r.ts])
                })
                .collect();
            i += rows.len() as i64;
            // The server indexes new rows after their commit, above its
            // watermark (migration 0025); the seeding indexes its own in
            // its transaction, as the triggers did before, so that the
            // server starts the measurement caught up.
            let mut tx = db.begin().await?;
            sqlx::query(
                "INSERT INTO messages (message_id, channel_id, seq, sender_id, client_msg_id, body, ts) \
                 SELECT value ->> 0, value ->> 1, value ->> 2, $2, value ->> 3, value ->> 4, value ->> 5 \
                 FROM json_each($1)",
            )
            .bind(serde_json::Value::Array(rows).to_string())
            .bind(writer)
            .execute(&mut *tx)
            .await
            .context("insert a batch")?;
            tx.execute(
                "INSERT INTO message_search (rowid, text) \
                 SELECT rowid, COALESCE(edited_body, body) FROM messages \
                 WHERE rowid > (SELECT upto FROM search_indexed) AND kind = 'message' AND NOT deleted",
            )
            .await
            .context("index a batch")?;
            tx.execute("UPDATE search_indexed SET upto = (SELECT COALESCE(MAX(rowid), 0) FROM messages)")
                .await?;
            tx.commit().await?;
        }
        // A bulk-filled index is merged before load (docs/known-issues.md).
        db.execute("INSERT INTO message_search (message_search) VALUES ('optimize')")
            .await
            .context("merge the index")?;
        for (channel, last_seq, last_ts) in lasts(channels, n, first_ms) {
            sqlx::query(SET_LAST)
                .bind(channel)
                .bind(last_seq)
                .bind(last_ts)
                .execute(&mut db)
                .await?;
        }
        db.execute("ANALYZE").await?;
    }
    Ok(started.elapsed().as_secs_f64())
}

/// Each channel's `last_seq` and `last_ts` after [`seed`]: messages
/// `k`, `k + C`, … of channel `k`.
fn lasts(channels: &[String], n: i64, first_ms: i64) -> Vec<(&str, i64, i64)> {
    let c = channels.len() as i64;
    channels
        .iter()
        .enumerate()
        .map(|(k, channel)| {
            let k = k as i64;
            let count = (n - k + c - 1) / c;
            (channel.as_str(), count, first_ms + k + (count - 1) * c)
        })
        .collect()
}

const SET_LAST: &str = "UPDATE channels SET last_seq = $2, last_ts = $3 WHERE channel_id = $1";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_bodies_keep_the_head_and_the_size() {
        for seed in 0..200 {
            let body = text_body(format!("{seed:016x}."), seed, 100);
            assert!(body.starts_with(&format!("{seed:016x}.")));
            assert!(body.len() <= 100 && body.len() > 90, "{} bytes", body.len());
        }
    }

    #[test]
    fn the_terms_occur_about_as_often_as_documented() {
        let mut rng = Rng::new(1);
        let n = 100_000;
        let texts: Vec<String> = (0..n).map(|i| message_text(&mut rng, i)).collect();
        let share = |term: &str| texts.iter().filter(|t| t.contains(term)).count() as f64 / n as f64;
        assert!((0.2..0.4).contains(&share("the ")), "{}", share("the "));
        assert!((0.005..0.03).contains(&share(CJK)), "{}", share(CJK));
        assert!((0.01..0.06).contains(&share(HYPHEN)), "{}", share(HYPHEN));
        assert_eq!(texts.iter().filter(|t| t.contains(RARE)).count(), 2);
        assert!(share(CJK_SHORT) > share(CJK));
    }
}
