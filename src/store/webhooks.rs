//! The webhook feed's state: each channel's cursor (the last seq delivered),
//! the backlog past the cursors, the entries to send with their offline
//! members, and on PostgreSQL the leases that share the channels between
//! nodes.

use sqlx::Postgres;

use super::dialect::{Affected, Columns, Dialect, Executes, Params, Sql};
use super::entry_row::{entry_from_row, message_columns, ENTRY_COLUMNS};
use super::entry_types::{WebhookBacklog, WebhookEntry};
use super::error::{CommitSent, StoreError};
use super::handle::{dispatch, dispatch_write, Store};
use super::sql_store::SqlStore;
use crate::ids::{ChannelId, UserId};

/// Channels whose log goes past their webhook cursor: id, last seq,
/// cursor (0 without a row), and the ts of the first entry after the
/// cursor (the webhook lag in seconds).
const WEBHOOK_BACKLOG: &str = "SELECT c.channel_id, c.last_seq, COALESCE(w.delivered_seq, 0), \
     (SELECT m.ts FROM messages m WHERE m.channel_id = c.channel_id AND m.seq = COALESCE(w.delivered_seq, 0) + 1) \
     FROM channels c LEFT JOIN webhook_cursors w ON w.channel_id = c.channel_id \
     WHERE c.last_seq > COALESCE(w.delivered_seq, 0)";
/// Channel `$1`'s webhook cursor.
const WEBHOOK_CURSOR: &str = "SELECT delivered_seq FROM webhook_cursors WHERE channel_id = $1";
/// The first move of channel `$1`'s cursor, to `$2` at `$3` (ms): a row
/// made meanwhile by someone else wins (no row affected).
const WEBHOOK_CURSOR_FIRST: &str = "INSERT INTO webhook_cursors (channel_id, delivered_seq, updated_at) \
     VALUES ($1, $2, $3) ON CONFLICT (channel_id) DO NOTHING";
/// Moves channel `$1`'s cursor from `$2` to `$3` at `$4` (ms), only
/// when it is still at `$2` (an operator's replay, or another node,
/// moved it otherwise: no row affected).
const WEBHOOK_CURSOR_MOVE: &str =
    "UPDATE webhook_cursors SET delivered_seq = $3, updated_at = $4 WHERE channel_id = $1 AND delivered_seq = $2";
/// Up to `$3` entries of channel `$1` after seq `$2` with their
/// `offline_members` (column 24) and `notify_members` (25, §16), for the
/// webhook feed.
static WEBHOOK_ENTRIES_AFTER: Sql = Sql::same(concat!(
    "SELECT ",
    message_columns!("message_id::text", "target_id::text"),
    ", offline_members, notify_members FROM messages WHERE channel_id = $1 AND seq > $2 ORDER BY seq LIMIT $3"
));
/// Marks the feed started on this database at `$1` (ms) with start `$2`;
/// no row affected when it already was (by this node before, or another).
const FEED_STARTED: &str = "INSERT INTO webhook_feed (id, started_at, start) VALUES (1, $1, $2) \
     ON CONFLICT (id) DO NOTHING";
/// Every channel's cursor at its last seq, at `$1` (ms), for `webhook_start
/// = "now"` (a channel with a cursor already keeps it).
const CURSORS_AT_LAST_SEQ: &str = "INSERT INTO webhook_cursors (channel_id, delivered_seq, updated_at) \
     SELECT channel_id, last_seq, $1 FROM channels WHERE last_seq > 0 \
     ON CONFLICT (channel_id) DO NOTHING";
/// Takes or renews, for owner `$1`, every bucket of `$2` (int4[]) that is
/// free, expired or already its own, until `$3` ms from now on the
/// database's clock (one clock for every node: no skew between them).
/// Returns the buckets the owner holds now.
const TAKE_LEASES: &str = "INSERT INTO webhook_leases (bucket, owner, expires_at) \
     SELECT b, $1, (extract(epoch FROM clock_timestamp()) * 1000)::int8 + $3 FROM UNNEST($2::int4[]) AS b \
     ON CONFLICT (bucket) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at \
     WHERE webhook_leases.owner = excluded.owner \
     OR webhook_leases.expires_at < (extract(epoch FROM clock_timestamp()) * 1000)::int8 \
     RETURNING bucket";
/// Gives back every lease of owner `$1` (a clean shutdown), so another
/// node takes over at once.
const RELEASE_LEASES: &str = "UPDATE webhook_leases SET expires_at = 0 WHERE owner = $1";

impl Store {
    /// Channels whose log goes past their webhook cursor, with the cursor
    /// (one read over every channel: the webhook feed polls it).
    pub async fn webhook_backlog(&self) -> Result<Vec<WebhookBacklog>, StoreError> {
        self.read(async { dispatch!(self.webhook_backlog()) }).await
    }

    /// The feed's first start on this database (`webhook_start`), at `now`
    /// (ms): when no feed has started here yet, marks it started and, with
    /// `from_now`, puts every channel's cursor at its last seq in the same
    /// transaction, so only entries stored from then on are sent (without:
    /// every channel's whole log is). Returns true when this call was the
    /// first start; false when a feed had started here before (its cursors
    /// say where each channel is, whatever `from_now` says now). Several
    /// nodes starting at once: one of them does it.
    pub async fn start_webhook_feed(&self, from_now: bool, now: i64) -> Result<bool, StoreError> {
        dispatch_write!(self, self.deadline(), start_webhook_feed(from_now, now))
    }

    /// Channel `channel_id`'s webhook cursor: the last seq delivered (0: none).
    pub async fn webhook_cursor(&self, channel_id: &ChannelId) -> Result<i64, StoreError> {
        self.read(async { dispatch!(self.webhook_cursor(channel_id)) }).await
    }

    /// Up to `limit` entries of `channel_id` with `seq > after_seq`, in seq
    /// order, each with its `offlineMembers`.
    pub async fn webhook_entries_after(
        &self,
        channel_id: &ChannelId,
        after_seq: i64,
        limit: u32,
    ) -> Result<Vec<WebhookEntry>, StoreError> {
        self.read(async { dispatch!(self.webhook_entries_after(channel_id, after_seq, limit)) })
            .await
    }

    /// Moves `channel_id`'s webhook cursor from `from` to `to` (`now` ms),
    /// only when it is still at `from`. Returns whether it moved: false when
    /// an operator (a replay) or another node moved it meanwhile; the caller
    /// reads it again.
    ///
    /// # Errors
    /// [`StoreError::InDoubt`] when the connection failed after the
    /// statement was sent (it may have moved; the entries are then sent again).
    pub async fn move_webhook_cursor(
        &self,
        channel_id: &ChannelId,
        from: i64,
        to: i64,
        now: i64,
    ) -> Result<bool, StoreError> {
        dispatch_write!(self, self.deadline(), move_webhook_cursor(channel_id, from, to, now))
    }

    /// PostgreSQL: takes or renews, for `owner`, every one of `buckets` that
    /// is free, expired or its own already, for `ttl_ms` on the database's
    /// clock; returns those it holds now. SQLite (one node): every bucket,
    /// without a database call.
    pub async fn take_webhook_leases(&self, owner: &str, buckets: &[i32], ttl_ms: i64) -> Result<Vec<i32>, StoreError> {
        match self {
            Store::Postgres(s) => self.read(s.take_webhook_leases(owner, buckets, ttl_ms)).await,
            Store::Sqlite(_) => Ok(buckets.to_vec()),
        }
    }

    /// PostgreSQL: gives back `owner`'s leases (clean shutdown) so another
    /// node takes them at once. SQLite: nothing.
    pub async fn release_webhook_leases(&self, owner: &str) -> Result<(), StoreError> {
        match self {
            Store::Postgres(s) => self.read(s.release_webhook_leases(owner)).await,
            Store::Sqlite(_) => Ok(()),
        }
    }
}

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn webhook_backlog(&self) -> Result<Vec<WebhookBacklog>, StoreError> {
        let rows = sqlx::query::<D>(WEBHOOK_BACKLOG)
            .fetch_all(self.reader().await?.ex())
            .await?;
        rows.iter()
            .map(|row| {
                Ok(WebhookBacklog {
                    channel_id: ChannelId::from_trusted(row.value(0)?),
                    last_seq: row.value(1)?,
                    delivered_seq: row.value(2)?,
                    first_ts: row.value(3)?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)
    }

    pub(super) async fn start_webhook_feed(
        &self,
        from_now: bool,
        now: i64,
        sent: &CommitSent,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin_write().await?;
        let first = sqlx::query::<D>(FEED_STARTED)
            .param(now)
            .param(if from_now { "now" } else { "beginning" })
            .execute(tx.ex())
            .await?
            .rows_affected()
            > 0;
        if first && from_now {
            sqlx::query::<D>(CURSORS_AT_LAST_SEQ)
                .param(now)
                .execute(tx.ex())
                .await?;
        }
        Self::commit(tx, sent).await?;
        Ok(first)
    }

    pub(super) async fn webhook_cursor(&self, channel_id: &ChannelId) -> Result<i64, StoreError> {
        let row = sqlx::query::<D>(WEBHOOK_CURSOR)
            .param(channel_id.as_str())
            .fetch_optional(self.reader().await?.ex())
            .await?;
        Ok(row.map(|row| row.value(0)).transpose()?.unwrap_or(0))
    }

    pub(super) async fn webhook_entries_after(
        &self,
        channel_id: &ChannelId,
        after_seq: i64,
        limit: u32,
    ) -> Result<Vec<WebhookEntry>, StoreError> {
        let mut conn = self.reader().await?;
        let rows = sqlx::query::<D>(D::sql(&WEBHOOK_ENTRIES_AFTER))
            .param(channel_id.as_str())
            .param(after_seq)
            .param(i64::from(limit))
            .fetch_all(conn.ex())
            .await?;
        let mut entries: Vec<WebhookEntry> = rows
            .iter()
            .map(|row| {
                let entry = entry_from_row(row)?;
                let users = |column: usize, name: &str| -> Result<Vec<UserId>, StoreError> {
                    let text: Option<String> = row.value(column)?;
                    Ok(match text {
                        None => Vec::new(),
                        Some(text) => serde_json::from_str::<Vec<String>>(&text)
                            .map_err(|_| StoreError::Corrupt(format!("{name} of {}", entry.message_id)))?
                            .into_iter()
                            .map(UserId::from_trusted)
                            .collect(),
                    })
                };
                // The two columns after the entry's (their count, checked
                // against the column list, not a number that a new entry
                // column would shift: 24 and 25 read by_admin and via_http
                // after migration 0018, and no webhook went out).
                let offline_members = users(ENTRY_COLUMNS, "offline_members")?;
                let notify = users(ENTRY_COLUMNS + 1, "notify_members")?;
                Ok(WebhookEntry {
                    entry,
                    offline_members,
                    notify,
                })
            })
            .collect::<Result<_, StoreError>>()?;
        // Render-ready like MSG_RECV (§14): each reply with its preview as
        // the quoted message is when the body is made.
        Self::attach_previews(&mut *conn, entries.iter_mut().map(|e| &mut e.entry)).await?;
        // §15: a message's attachments, with URLs signed when the body is made.
        Self::attach_attachments(&mut *conn, entries.iter_mut().map(|e| &mut e.entry)).await?;
        Ok(entries)
    }

    pub(super) async fn move_webhook_cursor(
        &self,
        channel_id: &ChannelId,
        from: i64,
        to: i64,
        now: i64,
        sent: &CommitSent,
    ) -> Result<bool, StoreError> {
        let mut conn = self.write_pool.acquire().await?;
        // One autocommit statement: its commit is "sent" with it.
        sent.set();
        if from == 0 {
            let inserted = sqlx::query::<D>(WEBHOOK_CURSOR_FIRST)
                .param(channel_id.as_str())
                .param(to)
                .param(now)
                .execute(conn.ex())
                .await
                .map_err(StoreError::after_commit_sent)?
                .rows_affected();
            if inserted > 0 {
                return Ok(true);
            }
        }
        let updated = sqlx::query::<D>(WEBHOOK_CURSOR_MOVE)
            .param(channel_id.as_str())
            .param(from)
            .param(to)
            .param(now)
            .execute(conn.ex())
            .await
            .map_err(StoreError::after_commit_sent)?
            .rows_affected();
        Ok(updated > 0)
    }
}

impl SqlStore<Postgres> {
    /// See [`Store::take_webhook_leases`].
    pub(super) async fn take_webhook_leases(
        &self,
        owner: &str,
        buckets: &[i32],
        ttl_ms: i64,
    ) -> Result<Vec<i32>, StoreError> {
        Ok(sqlx::query_scalar::<_, i32>(TAKE_LEASES)
            .bind(owner)
            .bind(buckets)
            .bind(ttl_ms)
            .fetch_all(&self.write_pool)
            .await?)
    }

    /// See [`Store::release_webhook_leases`].
    pub(super) async fn release_webhook_leases(&self, owner: &str) -> Result<(), StoreError> {
        sqlx::query(RELEASE_LEASES)
            .bind(owner)
            .execute(&self.write_pool)
            .await?;
        Ok(())
    }
}
