//! The entries of the `history` scenario's channels: which entry stands at
//! each seq, and writing them straight into the server's database in SQL
//! (a million entries through the server's frames would take longer than
//! the measurement).
//!
//! The pattern, for seq `s` (1-based) of a channel of `n` entries:
//! - a *plain* channel holds only messages from the writer;
//! - a *mixed* channel holds messages from the writer, except that every
//!   10th entry (`s % 10 == 0`) is a change of the first message of its
//!   block of ten (`s − 9`): an edit by the writer when `s / 10` is odd, a
//!   reaction 👍 `add` by the reader when it is even. So 10 % of the
//!   entries are changes (5 % edits, 5 % reactions), and the reader holds
//!   every reaction (`me` is true for it).
//!
//! The same pattern is written through the server (MSG_SEND, MSG_EDIT,
//! MSG_REACT) when no database URL is given; the checks of the reads do not
//! depend on how the entries got there.

use std::str::FromStr;
use std::time::Duration;

use anyhow::Context;
use sqlx::{Connection, Executor};

/// Bytes of every message and edit body.
pub const BODY_BYTES: usize = 100;

/// The emoji of the pattern's reactions.
pub const EMOJI: &str = "👍";

/// What stands at one seq.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A message of the writer with this body.
    Message(String),
    /// The writer's edit of the message at `target` (a seq) to this body.
    Edit { target: i64, body: String },
    /// The reader's 👍 `add` on the message at `target`.
    React { target: i64 },
}

/// The body of the message at seq `s`.
pub fn message_body(s: i64) -> String {
    padded(format!("m{s:09} "))
}

/// The body of the edit at seq `s`.
pub fn edit_body(s: i64) -> String {
    padded(format!("e{s:09} "))
}

fn padded(mut head: String) -> String {
    head.extend(std::iter::repeat_n('x', BODY_BYTES.saturating_sub(head.len())));
    head
}

/// The `clientMsgId` of the entry at seq `s` (of the writer, or of the
/// reader for a reaction) of a mixed or plain channel (the two share their
/// writer, so their keys differ).
pub fn key(s: i64, mixed: bool) -> String {
    format!("fill{}-{s:09}", key_tag(mixed))
}

fn key_tag(mixed: bool) -> &'static str {
    if mixed {
        "m"
    } else {
        "p"
    }
}

/// The entry at seq `s` of a `mixed` or plain channel.
pub fn entry(s: i64, mixed: bool) -> Entry {
    if !mixed || s % 10 != 0 {
        Entry::Message(message_body(s))
    } else if (s / 10) % 2 == 1 {
        Entry::Edit {
            target: s - 9,
            body: edit_body(s),
        }
    } else {
        Entry::React { target: s - 9 }
    }
}

/// How the message at seq `s` must read in a channel of `n` entries: its
/// body, whether it is edited, and whether it holds the reader's 👍.
pub fn message_state(s: i64, n: i64, mixed: bool) -> (String, bool, bool) {
    if mixed && s % 10 == 1 && s + 9 <= n {
        match entry(s + 9, true) {
            Entry::Edit { body, .. } => return (body, true, false),
            Entry::React { .. } => return (message_body(s), false, true),
            Entry::Message(_) => {}
        }
    }
    (message_body(s), false, false)
}

/// What [`sql`] writes into.
pub struct Target<'a> {
    /// The channel (created through the admin API, members included).
    pub channel_id: &'a str,
    /// Whether it gets the mixed pattern.
    pub mixed: bool,
    /// 8 hex digits: the first group of every `message_id` of the channel
    /// (the rest is the seq), unique per channel.
    pub id_tag: String,
}

/// Writes `n` entries of the pattern into each of `targets` in the server's
/// database at `url` (`postgres://…` or `sqlite://path`, the server's own
/// file; the server may be running), as chatd would have stored them:
/// message rows with their current state (`edited_body`, `edited_at`),
/// change rows with `target_id`, `emoji`, `op`, the `reactions` and
/// `reaction_counts` rows, and the channel's `last_seq`/`last_ts`. One
/// `INSERT … SELECT` per table and channel over a generated series; then
/// `ANALYZE`. Returns the seconds it took.
///
/// # Errors
/// The database's, when a statement fails (a channel that already holds
/// entries fails on its keys).
pub async fn sql(url: &str, targets: &[Target<'_>], n: i64, writer: &str, reader: &str) -> anyhow::Result<f64> {
    let started = std::time::Instant::now();
    let base_ts = chatd_client::chatd_proto::ids::now_ms();
    let pad = "x".repeat(BODY_BYTES - 11);
    // The same statements in the same order on both stores, each with its
    // dialect's SQL (a macro: the two transactions are of different types).
    macro_rules! insert_targets {
        ($tx:ident, $messages:expr, $reactions:expr, $counts:expr) => {
            for t in targets {
                sqlx::query($messages)
                    .bind(t.channel_id)
                    .bind(&t.id_tag)
                    .bind(n)
                    .bind(writer)
                    .bind(reader)
                    .bind(base_ts)
                    .bind(t.mixed)
                    .bind(&pad)
                    .bind(EMOJI)
                    .bind(key_tag(t.mixed))
                    .execute(&mut *$tx)
                    .await
                    .with_context(|| format!("insert the entries of {}", t.channel_id))?;
                if t.mixed {
                    for statement in [$reactions, $counts] {
                        sqlx::query(statement)
                            .bind(&t.id_tag)
                            .bind(n)
                            .bind(reader)
                            .bind(EMOJI)
                            .execute(&mut *$tx)
                            .await?;
                    }
                }
                sqlx::query(SET_LAST)
                    .bind(t.channel_id)
                    .bind(n)
                    .bind(base_ts + n)
                    .execute(&mut *$tx)
                    .await?;
            }
        };
    }
    if url.starts_with("postgres") {
        let mut db = sqlx::PgConnection::connect(url)
            .await
            .context("connect to PostgreSQL")?;
        let mut tx = db.begin().await?;
        insert_targets!(tx, PG_MESSAGES, PG_REACTIONS, PG_REACTION_COUNTS);
        tx.commit().await?;
        db.execute("ANALYZE messages").await?;
        db.execute("ANALYZE reactions").await?;
        db.execute("ANALYZE reaction_counts").await?;
    } else {
        let options = sqlx::sqlite::SqliteConnectOptions::from_str(url)?
            .busy_timeout(Duration::from_secs(60))
            .pragma("cache_size", "-262144");
        let mut db = sqlx::SqliteConnection::connect_with(&options)
            .await
            .context("open the SQLite database")?;
        let mut tx = db.begin().await?;
        insert_targets!(tx, SQLITE_MESSAGES, SQLITE_REACTIONS, SQLITE_REACTION_COUNTS);
        tx.commit().await?;
        db.execute("ANALYZE").await?;
    }
    Ok(started.elapsed().as_secs_f64())
}

/// Sets a seeded channel's `last_seq` ($2) and `last_ts` ($3).
const SET_LAST: &str = "UPDATE channels SET last_seq = $2, last_ts = $3 WHERE channel_id = $1";

// Parameters of the message statements: $1 channel, $2 id tag, $3 n,
// $4 writer, $5 reader, $6 base ts (entry s has ts base + s), $7 mixed,
// $8 the body's padding, $9 the emoji, $10 the keys' tag (`key`). Change entries are the seqs
// s % 10 = 0 of a mixed channel: edits when s / 10 is odd, reactions when
// even; the message at s − 9 carries the edit's text as its current state.

const PG_MESSAGES: &str = "INSERT INTO messages (message_id, channel_id, seq, sender_id, client_msg_id, body, ts, \
     kind, target_id, emoji, op, edited_body, edited_at) \
     SELECT ($2 || '-0000-7000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, $1, g, \
     CASE WHEN $7 AND g % 10 = 0 AND (g / 10) % 2 = 0 THEN $5 ELSE $4 END, \
     'fill' || $10 || '-' || lpad(g::text, 9, '0'), \
     CASE WHEN NOT ($7 AND g % 10 = 0) THEN 'm' || lpad(g::text, 9, '0') || ' ' || $8 \
          WHEN (g / 10) % 2 = 1 THEN 'e' || lpad(g::text, 9, '0') || ' ' || $8 ELSE '' END, \
     $6 + g, \
     CASE WHEN NOT ($7 AND g % 10 = 0) THEN 'message' WHEN (g / 10) % 2 = 1 THEN 'edit' ELSE 'reaction' END, \
     CASE WHEN $7 AND g % 10 = 0 THEN ($2 || '-0000-7000-8000-' || lpad(to_hex(g - 9), 12, '0'))::uuid END, \
     CASE WHEN $7 AND g % 10 = 0 AND (g / 10) % 2 = 0 THEN $9 END, \
     CASE WHEN $7 AND g % 10 = 0 AND (g / 10) % 2 = 0 THEN 'add' END, \
     CASE WHEN $7 AND g % 10 = 1 AND g + 9 <= $3 AND ((g + 9) / 10) % 2 = 1 \
          THEN 'e' || lpad((g + 9)::text, 9, '0') || ' ' || $8 END, \
     CASE WHEN $7 AND g % 10 = 1 AND g + 9 <= $3 AND ((g + 9) / 10) % 2 = 1 THEN $6 + g + 9 END \
     FROM generate_series(1::bigint, $3::bigint) AS g";

// Reactions: $1 id tag, $2 n, $3 reader, $4 emoji; the reaction entries
// are s = 20, 40, …, on the messages s − 9.
const PG_REACTIONS: &str = "INSERT INTO reactions (message_id, emoji, user_id) \
     SELECT ($1 || '-0000-7000-8000-' || lpad(to_hex(g - 9), 12, '0'))::uuid, $4, $3 \
     FROM generate_series(20::bigint, $2::bigint, 20) AS g";
const PG_REACTION_COUNTS: &str = "INSERT INTO reaction_counts (message_id, emoji, count, first_seq) \
     SELECT ($1 || '-0000-7000-8000-' || lpad(to_hex(g - 9), 12, '0'))::uuid, $4, 1, g \
     FROM generate_series(20::bigint, $2::bigint, 20) AS g WHERE $3::text IS NOT NULL";

const SQLITE_MESSAGES: &str = "WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < $3) \
     INSERT INTO messages (message_id, channel_id, seq, sender_id, client_msg_id, body, ts, \
     kind, target_id, emoji, op, edited_body, edited_at) \
     SELECT $2 || printf('-0000-7000-8000-%012x', g), $1, g, \
     CASE WHEN $7 AND g % 10 = 0 AND (g / 10) % 2 = 0 THEN $5 ELSE $4 END, \
     printf('fill%s-%09d', $10, g), \
     CASE WHEN NOT ($7 AND g % 10 = 0) THEN printf('m%09d ', g) || $8 \
          WHEN (g / 10) % 2 = 1 THEN printf('e%09d ', g) || $8 ELSE '' END, \
     $6 + g, \
     CASE WHEN NOT ($7 AND g % 10 = 0) THEN 'message' WHEN (g / 10) % 2 = 1 THEN 'edit' ELSE 'reaction' END, \
     CASE WHEN $7 AND g % 10 = 0 THEN $2 || printf('-0000-7000-8000-%012x', g - 9) END, \
     CASE WHEN $7 AND g % 10 = 0 AND (g / 10) % 2 = 0 THEN $9 END, \
     CASE WHEN $7 AND g % 10 = 0 AND (g / 10) % 2 = 0 THEN 'add' END, \
     CASE WHEN $7 AND g % 10 = 1 AND g + 9 <= $3 AND ((g + 9) / 10) % 2 = 1 THEN printf('e%09d ', g + 9) || $8 END, \
     CASE WHEN $7 AND g % 10 = 1 AND g + 9 <= $3 AND ((g + 9) / 10) % 2 = 1 THEN $6 + g + 9 END \
     FROM s WHERE true";
const SQLITE_REACTIONS: &str = "WITH RECURSIVE s(g) AS (SELECT 20 UNION ALL SELECT g + 20 FROM s WHERE g + 20 <= $2) \
     INSERT INTO reactions (message_id, emoji, user_id) \
     SELECT $1 || printf('-0000-7000-8000-%012x', g - 9), $4, $3 FROM s WHERE g <= $2";
const SQLITE_REACTION_COUNTS: &str =
    "WITH RECURSIVE s(g) AS (SELECT 20 UNION ALL SELECT g + 20 FROM s WHERE g + 20 <= $2) \
     INSERT INTO reaction_counts (message_id, emoji, count, first_seq) \
     SELECT $1 || printf('-0000-7000-8000-%012x', g - 9), $4, 1, g FROM s WHERE g <= $2 AND $3 IS NOT NULL";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_entry_in_ten_is_a_change_alternating_edits_and_reactions() {
        let n = 1000;
        let kinds: Vec<Entry> = (1..=n).map(|s| entry(s, true)).collect();
        let edits = kinds.iter().filter(|e| matches!(e, Entry::Edit { .. })).count();
        let reacts = kinds.iter().filter(|e| matches!(e, Entry::React { .. })).count();
        assert_eq!((edits, reacts), (50, 50));
        assert_eq!(
            entry(10, true),
            Entry::Edit {
                target: 1,
                body: edit_body(10)
            }
        );
        assert_eq!(entry(20, true), Entry::React { target: 11 });
        assert!((1..=n).all(|s| matches!(entry(s, false), Entry::Message(_))));
        assert_eq!(message_state(1, n, true), (edit_body(10), true, false));
        assert_eq!(message_state(11, n, true), (message_body(11), false, true));
        assert_eq!(message_state(2, n, true), (message_body(2), false, false));
        // The last block's first message is unchanged when its change is past the end.
        assert_eq!(message_state(991, 995, true), (message_body(991), false, false));
        assert_eq!(message_body(7).len(), BODY_BYTES);
        assert_eq!(edit_body(7).len(), BODY_BYTES);
    }
}
