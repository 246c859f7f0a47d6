//! The `directory` scenario's channels: which channel stands at each index
//! `k`, and writing them straight into the server's database (100,000
//! channels through the admin API would be 300,000 calls).
//!
//! Channel `k` (0-based) of a run with prefix `P` is `P-d{k:06}`:
//! - every 10th, `k % 10 == 3`, is a private group of 3 members;
//! - every 10th, `k % 10 == 7`, is a direct channel (kind `direct`,
//!   private, no name) of users `P-p{k:06}` and `P-q{k:06}`, with its
//!   `direct_pair` as the server writes it;
//! - the rest (80 %) are public groups of `k % 7 + 1` members.
//!
//! Group members come from a pool of 1,000 users `P-u{j:04}`; the first of
//! each group is its `owner`. Names are `{Word} room {k:06}` with `Word`
//! one of [`WORDS`] by `k % 4`, except at `k % 10_000` 4321 (public) and
//! 4323 (private), named `Zebra room {k:06}`: a `q` of `zebra` matches 10
//! public channels in 100,000 (and must not show the 10 private ones), a
//! `q` of `bravo` 14,990 (19 % of the public ones).
//!
//! The rows are built here and inserted in chunks (PostgreSQL: `UNNEST` of
//! arrays; SQLite: `json_each` of one JSON array), so the pattern has one
//! definition, which the scenario's checks read too.

use std::str::FromStr;
use std::time::Duration;

use anyhow::Context;
use sqlx::{Connection, Executor};

/// The words of the channel names, by `k % 4`.
pub const WORDS: [&str; 4] = ["Alpha", "Bravo", "Charlie", "Delta"];

/// The word of the rare names.
pub const RARE: &str = "Zebra";

/// Users in the pool the group channels' members come from.
const POOL: u32 = 1_000;

/// Rows per insert statement.
const CHUNK: usize = 10_000;

/// A seeded channel's kind and visibility.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A public group: listed by the directory.
    Public,
    /// A private group: never listed.
    Private,
    /// A direct channel: never listed.
    Direct,
}

/// The kind of channel `k`.
pub fn kind(k: u32) -> Kind {
    match k % 10 {
        3 => Kind::Private,
        7 => Kind::Direct,
        _ => Kind::Public,
    }
}

/// The id of channel `k` of the run with `prefix`.
pub fn channel_id(prefix: &str, k: u32) -> String {
    format!("{prefix}-d{k:06}")
}

/// The name of channel `k` (`None` for a direct channel).
pub fn name(k: u32) -> Option<String> {
    match kind(k) {
        Kind::Direct => None,
        _ if matches!(k % 10_000, 4321 | 4323) => Some(format!("{RARE} room {k:06}")),
        _ => Some(format!("{} room {k:06}", WORDS[(k % 4) as usize])),
    }
}

/// The members of channel `k` with their roles, in insertion order.
pub fn members(prefix: &str, k: u32) -> Vec<(String, &'static str)> {
    let count = match kind(k) {
        Kind::Direct => {
            return vec![
                (format!("{prefix}-p{k:06}"), "member"),
                (format!("{prefix}-q{k:06}"), "member"),
            ]
        }
        Kind::Private => 3,
        Kind::Public => k % 7 + 1,
    };
    (0..count)
        .map(|i| {
            let user = format!("{prefix}-u{:04}", (k.wrapping_mul(7) + i) % POOL);
            (user, if i == 0 { "owner" } else { "member" })
        })
        .collect()
}

/// A user of the pool (`j < 1000`).
pub fn pool_user(prefix: &str, j: u32) -> String {
    format!("{prefix}-u{:04}", j % POOL)
}

/// The `direct_pair` of channel `k`, as the server writes it: the two
/// user ids in byte order, a space between them.
fn direct_pair(prefix: &str, k: u32) -> Option<String> {
    (kind(k) == Kind::Direct).then(|| format!("{prefix}-p{k:06} {prefix}-q{k:06}"))
}

/// Channels with the values of their rows: id, kind, visibility, name,
/// direct pair.
type ChannelRow = (String, &'static str, &'static str, Option<String>, Option<String>);

fn channel_row(prefix: &str, k: u32) -> ChannelRow {
    let (kind, visibility) = match kind(k) {
        Kind::Public => ("group", "public"),
        Kind::Private => ("group", "private"),
        Kind::Direct => ("direct", "private"),
    };
    (channel_id(prefix, k), kind, visibility, name(k), direct_pair(prefix, k))
}

const PG_CHANNELS: &str = "INSERT INTO channels (channel_id, created_at, kind, visibility, name, direct_pair) \
     SELECT c, $2, k, v, n, p FROM UNNEST($1::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS t(c, k, v, n, p)";
const PG_MEMBERS: &str = "INSERT INTO members (channel_id, user_id, joined_at, joined_seq, role) \
     SELECT c, u, $3, 0, r FROM UNNEST($1::text[], $2::text[], $4::text[]) AS t(c, u, r)";
const SQLITE_CHANNELS: &str = "INSERT INTO channels (channel_id, created_at, kind, visibility, name, direct_pair) \
     SELECT json_extract(value, '$[0]'), $2, json_extract(value, '$[1]'), json_extract(value, '$[2]'), \
     json_extract(value, '$[3]'), json_extract(value, '$[4]') FROM json_each($1)";
const SQLITE_MEMBERS: &str = "INSERT INTO members (channel_id, user_id, joined_at, joined_seq, role) \
     SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), $2, 0, json_extract(value, '$[2]') \
     FROM json_each($1)";

/// Writes channels `0..n` of the run with `prefix`, with their members,
/// into the server's database at `url` (`postgres://…`, or `sqlite://path`,
/// the server's own file; the server may be running), in one transaction,
/// as the server would have stored them (`created_at` now, `last_seq` 0).
/// PostgreSQL: then `ANALYZE channels, members`, which autovacuum would do
/// on its own after so many rows; SQLite: no `ANALYZE` (the server never
/// runs it, so a deployment has no statistics). Returns the member rows.
///
/// # Errors
/// The database's, when a statement fails (an id or pair already taken).
pub async fn sql(url: &str, prefix: &str, n: u32) -> anyhow::Result<usize> {
    let now = chatd_client::chatd_proto::ids::now_ms();
    let channels: Vec<ChannelRow> = (0..n).map(|k| channel_row(prefix, k)).collect();
    let members: Vec<(String, String, &str)> = (0..n)
        .flat_map(|k| {
            let id = channel_id(prefix, k);
            members(prefix, k)
                .into_iter()
                .map(move |(user, role)| (id.clone(), user, role))
        })
        .collect();
    if url.starts_with("postgres") {
        let mut db = sqlx::PgConnection::connect(url)
            .await
            .context("connect to PostgreSQL")?;
        let mut tx = db.begin().await?;
        for chunk in channels.chunks(CHUNK) {
            let column = |f: fn(&ChannelRow) -> Option<String>| chunk.iter().map(f).collect::<Vec<_>>();
            sqlx::query(PG_CHANNELS)
                .bind(column(|r| Some(r.0.clone())))
                .bind(now)
                .bind(column(|r| Some(r.1.to_owned())))
                .bind(column(|r| Some(r.2.to_owned())))
                .bind(column(|r| r.3.clone()))
                .bind(column(|r| r.4.clone()))
                .execute(&mut *tx)
                .await
                .context("insert the channels")?;
        }
        for chunk in members.chunks(CHUNK) {
            sqlx::query(PG_MEMBERS)
                .bind(chunk.iter().map(|m| m.0.clone()).collect::<Vec<_>>())
                .bind(chunk.iter().map(|m| m.1.clone()).collect::<Vec<_>>())
                .bind(now)
                .bind(chunk.iter().map(|m| m.2.to_owned()).collect::<Vec<_>>())
                .execute(&mut *tx)
                .await
                .context("insert the members")?;
        }
        tx.commit().await?;
        db.execute("ANALYZE channels").await?;
        db.execute("ANALYZE members").await?;
    } else {
        let options = sqlx::sqlite::SqliteConnectOptions::from_str(url)?.busy_timeout(Duration::from_secs(60));
        let mut db = sqlx::SqliteConnection::connect_with(&options)
            .await
            .context("open the SQLite database")?;
        let mut tx = db.begin().await?;
        for chunk in channels.chunks(CHUNK) {
            let rows: Vec<serde_json::Value> = chunk
                .iter()
                .map(|r| serde_json::json!([r.0, r.1, r.2, r.3, r.4]))
                .collect();
            sqlx::query(SQLITE_CHANNELS)
                .bind(serde_json::Value::Array(rows).to_string())
                .bind(now)
                .execute(&mut *tx)
                .await
                .context("insert the channels")?;
        }
        for chunk in members.chunks(CHUNK) {
            let rows: Vec<serde_json::Value> = chunk.iter().map(|m| serde_json::json!([m.0, m.1, m.2])).collect();
            sqlx::query(SQLITE_MEMBERS)
                .bind(serde_json::Value::Array(rows).to_string())
                .bind(now)
                .execute(&mut *tx)
                .await
                .context("insert the members")?;
        }
        tx.commit().await?;
    }
    Ok(members.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn most_channels_are_public_and_the_rare_word_is_rare() {
        let n = 100_000;
        let public = (0..n).filter(|&k| kind(k) == Kind::Public).count();
        let direct = (0..n).filter(|&k| kind(k) == Kind::Direct).count();
        assert_eq!((public, direct), (80_000, 10_000));
        let zebra_public = (0..n)
            .filter(|&k| kind(k) == Kind::Public && name(k).is_some_and(|s| s.contains(RARE)))
            .count();
        let zebra_private = (0..n)
            .filter(|&k| kind(k) == Kind::Private && name(k).is_some_and(|s| s.contains(RARE)))
            .count();
        assert_eq!((zebra_public, zebra_private), (10, 10));
    }

    #[test]
    fn members_are_distinct_and_the_first_owns_a_group() {
        for k in [0, 1, 6, 13, 17, 99_999] {
            let m = members("P", k);
            let mut users: Vec<&String> = m.iter().map(|(u, _)| u).collect();
            users.sort();
            users.dedup();
            assert_eq!(users.len(), m.len(), "channel {k}");
            let owner = m.first().map(|(_, r)| *r);
            assert_eq!(owner == Some("owner"), kind(k) != Kind::Direct, "channel {k}");
        }
        assert_eq!(members("P", 6).len(), 7);
        assert_eq!(direct_pair("P", 7).as_deref(), Some("P-p000007 P-q000007"));
        assert_eq!(name(7), None);
        assert_eq!(name(4321).as_deref(), Some("Zebra room 004321"));
        assert_eq!(name(5).as_deref(), Some("Bravo room 000005"));
    }
}
