//! Writing the log: a batch of entries stored in one transaction, each
//! decided by [`super::entry_rules`] against the state its channel's earlier
//! entries left, and applied to its target (an edit's text, a delete's
//! erasure, a reaction's holders and counts). Here: the [`Store`] methods
//! that write a batch, and SQLite's batch. The per-row path (`per_row.rs`)
//! is every SQLite batch, and the PostgreSQL batches the set-based path
//! (`pg_batch/`) hands back; `effects.rs` is what a stored entry does to
//! its target.

mod effects;
mod per_row;

use sqlx::Sqlite;

use super::batch_types::{BatchOutcome, EntryOutcome, NewEntry, OfflineMembers};
use super::entry_types::EntryKind;
use super::error::{CommitSent, StoreError};
use super::handle::{dispatch_write, Store};
use super::sql_store::SqlStore;

pub(super) use effects::THREAD_REPLY_DELETED;

impl Store {
    /// Stores a batch of sends in one transaction with one durable commit,
    /// within the store's timeout. See [`Store::write_batch_by`].
    ///
    /// # Errors
    /// As [`Store::write_batch_by`].
    pub async fn write_batch(&self, sends: &[NewEntry], now: i64) -> Result<BatchOutcome, StoreError> {
        self.write_batch_by(sends, now, self.deadline()).await
    }

    /// Stores a batch of sends in one transaction with one durable commit,
    /// giving up at `deadline`. Channels are locked in id order, so concurrent
    /// batches cannot deadlock on channel rows. Returns after the commit.
    ///
    /// # Errors
    /// Any error fails the whole batch. [`StoreError::Retry`] when it lost a
    /// deadlock and may be run again; [`StoreError::Unavailable`] or
    /// [`StoreError::TimedOut`] when it failed before its `COMMIT` was sent
    /// (nothing stored); [`StoreError::InDoubt`] when the connection failed or
    /// the deadline passed while the `COMMIT` was in flight (stored or not:
    /// a retry with the same keys finds out).
    pub async fn write_batch_by(
        &self,
        sends: &[NewEntry],
        now: i64,
        deadline: tokio::time::Instant,
    ) -> Result<BatchOutcome, StoreError> {
        self.write_batch_with(sends, now, deadline, None).await
    }

    /// As [`Store::write_batch_by`]; with `offline` (webhooks on), every new
    /// entry is stored with its `offlineMembers` ([`OfflineMembers`], asked
    /// once per channel of the batch under the channel's lock).
    ///
    /// # Errors
    /// As [`Store::write_batch_by`].
    pub async fn write_batch_with(
        &self,
        sends: &[NewEntry],
        now: i64,
        deadline: tokio::time::Instant,
        offline: Option<&dyn OfflineMembers>,
    ) -> Result<BatchOutcome, StoreError> {
        let outcome = dispatch_write!(self, deadline, write_batch(sends, now, offline))?;
        let cache = self.channel_of_cache();
        for stored in &outcome.outcomes {
            if let EntryOutcome::Stored(message) = stored {
                if message.kind == EntryKind::Message {
                    cache.remember(message.message_id, &message.channel_id);
                }
            }
        }
        Ok(outcome)
    }
}

impl Store {
    /// Test hook: stores a batch on PostgreSQL through one given path,
    /// `set_based` (the set-based path: `Ok(None)` when it falls back,
    /// nothing written) or the per-row path (always `Some`), so tests can
    /// check that both decide alike. `Ok(None)` on SQLite. Not for use
    /// outside tests: no deadline applies.
    ///
    /// # Errors
    /// As [`Store::write_batch_by`].
    #[doc(hidden)]
    pub async fn write_batch_on_path(
        &self,
        sends: &[NewEntry],
        now: i64,
        set_based: bool,
    ) -> Result<Option<BatchOutcome>, StoreError> {
        let sent = CommitSent::default();
        match self {
            Store::Postgres(s) if set_based => s.write_batch_sets(sends, now, None, &sent).await,
            Store::Postgres(s) => s.write_batch_rows(sends, now, None, &sent).await.map(Some),
            Store::Sqlite(_) => Ok(None),
        }
    }
}

impl SqlStore<Sqlite> {
    /// Stores a batch in one transaction with one durable commit. SQLite runs
    /// in-process, so a statement per send costs no round trip: the
    /// per-row path is the whole implementation.
    pub(super) async fn write_batch(
        &self,
        sends: &[NewEntry],
        now: i64,
        offline: Option<&dyn OfflineMembers>,
        sent: &CommitSent,
    ) -> Result<BatchOutcome, StoreError> {
        let batch = self.write_batch_rows(sends, now, offline, sent).await?;
        let deleted = batch
            .outcomes
            .iter()
            .any(|o| matches!(o, EntryOutcome::Stored(e) if e.kind == EntryKind::Delete));
        if deleted {
            // The erased text out of the -wal file too (guarantee 9), without
            // waiting for a reader's snapshot (`store::wal_scrub`).
            self.scrub_wal().await;
        }
        Ok(batch)
    }
}
