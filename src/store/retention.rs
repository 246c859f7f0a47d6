//! Retention (protocol.md §19): `message` entries older than their
//! channel's retention (`retentionSecs`, else the server's `retention_secs`)
//! are erased as by a delete — text, edits' text, mentions, reactions,
//! attachments (rows here, objects queued for the attachment sweeper) and,
//! through the database's own index maintenance, the search index rows —
//! but **without a new entry**: the row stays, with `deleted` and
//! `expired` set, so every channel's seqs stay gapless. Reply previews are
//! read from the quoted row, so they follow.
//!
//! A channel is swept in bounded batches, each one transaction under the
//! channel's row lock (the lock every write of the channel takes, so a batch
//! never races a send, an edit or a delete of the same messages). The
//! channel's `retention_swept_seq` remembers how far the sweep has looked:
//! `ts` never decreases as `seq` grows, so every entry at or below it is
//! older than any later cutoff too, and the next batch reads only the
//! entries after it, in `seq` order, stopping at the first one that is not
//! yet expired: a batch reads at most [`MAX_SWEEP_BATCH`] rows whatever the
//! channel's length. The task that runs the sweep, channel after channel,
//! is `crate::retention`.

use super::dialect::{Columns, Dialect, Executes, Params, Sql};
use super::entry_row::parse_uuid;
use super::error::{CommitSent, StoreError};
use super::handle::{dispatch, dispatch_write, Store};
use super::log_write::THREAD_REPLY_DELETED;
use super::search_separators::GoneTexts;
use super::sql_store::SqlStore;
use crate::ids::ChannelId;

/// Most entries one sweep batch (one transaction) reads and erases: it
/// holds the channel's lock, so sends to that channel wait for it.
pub const MAX_SWEEP_BATCH: u32 = 200;

/// The largest retention, seconds (100 years): `retention_secs` and a
/// channel's `retentionSecs` are 0 (forever) to this (the migration's
/// `CHECK` says the same).
pub const MAX_RETENTION_SECS: i64 = crate::config::MAX_RETENTION_SECS as i64;

/// Up to `$3` channels after `$2` (byte order) with a retention in force
/// (their own, else the server's `$1`) and entries the sweep has not looked
/// at.
static CHANNELS_TO_SWEEP: Sql = Sql::same(
    "SELECT channel_id FROM channels WHERE COALESCE(retention_secs, $1) > 0 \
     AND retention_swept_seq < last_seq AND channel_id COLLATE \"C\" > $2 \
     ORDER BY channel_id COLLATE \"C\" LIMIT $3",
);
/// Locks channel `$1`'s row; its swept seq and its retention in force
/// (its own, else `$2`), seconds.
static LOCK_FOR_SWEEP: Sql = Sql::each(
    "SELECT retention_swept_seq, COALESCE(retention_secs, $2) FROM channels WHERE channel_id = $1 FOR UPDATE",
    "SELECT retention_swept_seq, COALESCE(retention_secs, $2) FROM channels WHERE channel_id = $1",
);
/// The next `$3` entries of channel `$1` after seq `$2`, in `seq` order.
static ENTRIES_TO_JUDGE: Sql = Sql::same(
    "SELECT message_id::text, seq, ts, kind, deleted, thread_id::text FROM messages \
     WHERE channel_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
);
/// Message `$1` was erased by the sweep, not by a delete entry.
static MARK_EXPIRED: Sql = Sql::same("UPDATE messages SET expired = TRUE WHERE message_id = $1::uuid");
/// The sweep has looked at every entry of channel `$1` up to seq `$2`.
const SET_SWEPT: &str = "UPDATE channels SET retention_swept_seq = $2 WHERE channel_id = $1";

/// What one sweep batch did in a channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SweepBatch {
    /// `message` entries erased (live before, `deleted` and `expired` now).
    pub erased: u64,
    /// Whether the batch stopped at its bound with expired entries perhaps
    /// left: run another.
    pub more: bool,
}

impl Store {
    /// Up to `limit` channels after `after` (byte order) that have a
    /// retention in force (their `retentionSecs`, else `global_secs`; 0 is
    /// forever) and entries the sweep has not looked at yet.
    ///
    /// # Errors
    /// The database's ([`StoreError`]).
    pub async fn channels_to_sweep(
        &self,
        global_secs: i64,
        after: Option<&ChannelId>,
        limit: u32,
    ) -> Result<Vec<ChannelId>, StoreError> {
        self.read(async { dispatch!(self.channels_to_sweep(global_secs, after, limit)) })
            .await
    }

    /// One bounded batch of the sweep in `channel_id` (one transaction
    /// under its lock): erases the live `message` entries whose `ts` is
    /// before `now_ms` less the channel's retention (its `retentionSecs`,
    /// else `global_secs`), at most [`MAX_SWEEP_BATCH`] entries read. An
    /// unknown channel or one kept forever erases nothing.
    ///
    /// # Errors
    /// The database's ([`StoreError`]); nothing of a failed batch is kept.
    pub async fn sweep_channel_batch(
        &self,
        channel_id: &ChannelId,
        global_secs: i64,
        now_ms: i64,
    ) -> Result<SweepBatch, StoreError> {
        let batch = dispatch_write!(
            self,
            self.deadline(),
            sweep_channel_batch(channel_id, global_secs, now_ms, MAX_SWEEP_BATCH)
        )?;
        if batch.erased > 0 {
            if let Store::Sqlite(s) = self {
                // As after a delete: the erased text leaves the -wal file too.
                s.scrub_wal().await;
            }
        }
        Ok(batch)
    }
}

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn channels_to_sweep(
        &self,
        global_secs: i64,
        after: Option<&ChannelId>,
        limit: u32,
    ) -> Result<Vec<ChannelId>, StoreError> {
        let mut conn = self.reader().await?;
        let rows = sqlx::query::<D>(D::sql(&CHANNELS_TO_SWEEP))
            .param(global_secs)
            .param(after.map_or("", ChannelId::as_str))
            .param(i64::from(limit))
            .fetch_all(conn.ex())
            .await?;
        rows.iter()
            .map(|row| Ok(ChannelId::from_trusted(row.value(0)?)))
            .collect()
    }

    pub(super) async fn sweep_channel_batch(
        &self,
        channel_id: &ChannelId,
        global_secs: i64,
        now_ms: i64,
        max: u32,
        sent: &CommitSent,
    ) -> Result<SweepBatch, StoreError> {
        let mut tx = self.begin_write().await?;
        let Some(row) = sqlx::query::<D>(D::sql(&LOCK_FOR_SWEEP))
            .param(channel_id.as_str())
            .param(global_secs)
            .fetch_optional(tx.ex())
            .await?
        else {
            return Ok(SweepBatch::default());
        };
        let swept: i64 = row.value(0)?;
        let retention_secs: i64 = row.value(1)?;
        if retention_secs <= 0 {
            return Ok(SweepBatch::default());
        }
        let cutoff = now_ms.saturating_sub(retention_secs.saturating_mul(1000));
        let rows = sqlx::query::<D>(D::sql(&ENTRIES_TO_JUDGE))
            .param(channel_id.as_str())
            .param(swept)
            .param(i64::from(max))
            .fetch_all(tx.ex())
            .await?;
        let mut batch = SweepBatch::default();
        // The texts the sweep takes out of the search index (SQLite; `search_separators`).
        let mut gone = GoneTexts::new();
        let mut last_judged = swept;
        let mut reached_unexpired = false;
        for row in &rows {
            let ts: i64 = row.value(2)?;
            if ts >= cutoff {
                reached_unexpired = true;
                break;
            }
            last_judged = row.value(1)?;
            let kind: String = row.value(3)?;
            let deleted: bool = row.value(4)?;
            if kind != "message" || deleted {
                continue;
            }
            let id = super::entry_row::id_text(parse_uuid(row.value(0)?)?);
            // As a delete's effects (log_write/effects.rs, `Change::Delete`), with no entry.
            Self::erase_message_content_in(&mut *tx, &id, now_ms, &mut gone).await?;
            sqlx::query::<D>(D::sql(&MARK_EXPIRED))
                .param(&id)
                .execute(tx.ex())
                .await?;
            if let Some(root) = row.value::<Option<String>>(5)? {
                sqlx::query::<D>(D::sql(&THREAD_REPLY_DELETED))
                    .param(super::entry_row::id_text(parse_uuid(root)?))
                    .execute(tx.ex())
                    .await?;
            }
            batch.erased += 1;
        }
        batch.more = !reached_unexpired && rows.len() == max as usize;
        if last_judged > swept {
            sqlx::query::<D>(SET_SWEPT)
                .param(channel_id.as_str())
                .param(last_judged)
                .execute(tx.ex())
                .await?;
            D::repair_search_separators(&mut tx, &gone).await?;
            Self::commit(tx, sent).await?;
        }
        Ok(batch)
    }
}
