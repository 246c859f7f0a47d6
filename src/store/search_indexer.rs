//! SQLite: the search index (`message_search`) maintained after the send's
//! commit, not in it (issue 34; `migrations/sqlite/0025_search_after_commit.sql`).
//!
//! FTS5's work per trigram inside every send batch, on the one writer, cost
//! sends about 40 %. Now a send batch stores its rows and commits; then
//! the indexer's task indexes the rows above the watermark
//! (`search_indexed.upto`), in write transactions of its own of at most
//! [`CHUNK`] rowids, each raising the watermark over what it indexed:
//!
//! - it reads each row's current text (`COALESCE(edited_body, body)`) and
//!   skips deleted rows and other kinds, in its own write transaction
//!   (`BEGIN IMMEDIATE`, after every earlier write's commit): a text
//!   deleted or edited away before the indexer reached it never enters the
//!   index (guarantee 14);
//! - the watermark is stored with what it covers: after a crash, the task
//!   catches up at start;
//! - meanwhile a search reads the rows above the watermark from `messages`
//!   (`search.rs`), so a message is found once ACKed.
//!
//! The task wakes when a batch has committed
//! ([`super::indexer_signal::SearchIndexer::wake`]), at
//! most once per [`PACE`], and every [`TICK`] in case rows came another
//! way (a bulk import). Nothing of
//! this runs on PostgreSQL, whose GIN index is kept in the transaction.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use sqlx::Sqlite;

use super::dialect::{Columns, Executes};
use super::error::{CommitSent, StoreError};
use super::handle::Store;
use super::sql_store::SqlStore;

/// The most rowids one indexing transaction covers (the writer is held
/// for about 60 µs per message of chat text: 0.3 s at most).
pub const CHUNK: i64 = 5_000;

/// How often the task looks for rows no batch woke it for.
pub const TICK: Duration = Duration::from_secs(1);

/// The least time between the task's rounds of indexing: under load each
/// round then indexes the sends of this long (about 400 at 4,000 sends/s)
/// in one transaction, which costs the writer less per message than one
/// round per send batch (FTS5's work per commit, the commit's sync), and
/// the search's scan of the rows not indexed yet stays that short.
pub const PACE: Duration = Duration::from_millis(100);

/// The watermark: every row up to it is indexed as the triggers index.
pub(super) const WATERMARK: &str = "SELECT upto FROM search_indexed";
/// The highest rowid of `messages`.
const TOP: &str = "SELECT COALESCE(MAX(rowid), 0) FROM messages";
/// Indexes the rows in `($1, $2]` that the index holds: messages not
/// deleted, with their current text.
const INDEX_ROWS: &str = "INSERT INTO message_search (rowid, text) \
     SELECT rowid, COALESCE(edited_body, body) FROM messages \
     WHERE rowid > $1 AND rowid <= $2 AND kind = 'message' AND NOT deleted";
/// Raises the watermark to `$1`.
const SET_WATERMARK: &str = "UPDATE search_indexed SET upto = $1";

impl Store {
    /// Test hook: while `held`, the SQLite indexer indexes nothing (sends
    /// are then found by the search's scan of the rows above the
    /// watermark). Nothing on PostgreSQL.
    pub fn hold_search_indexer(&self, held: bool) {
        if let Store::Sqlite(s) = self {
            s.search_indexer.held.store(held, Ordering::SeqCst);
            s.search_indexer.wake();
        }
    }

    /// Indexes every row above the watermark now, whether the indexer is
    /// held or not: on SQLite, returns once the index covers every stored
    /// message. Nothing on PostgreSQL.
    ///
    /// # Errors
    /// The store's error.
    pub async fn catch_up_search_index(&self) -> Result<(), StoreError> {
        if let Store::Sqlite(s) = self {
            while s.index_some(false).await? {}
        }
        Ok(())
    }
}

impl SqlStore<Sqlite> {
    /// Starts the indexer's task (once per store): it catches up at once,
    /// then indexes after each wake-up or [`TICK`]. Ends when the pools
    /// are closed.
    pub(super) fn start_search_indexer(&self) {
        if self.search_indexer.started.swap(true, Ordering::SeqCst) {
            return;
        }
        let store = self.clone();
        tokio::spawn(async move {
            let indexer = Arc::clone(&store.search_indexer);
            loop {
                if store.write_pool.is_closed() {
                    return;
                }
                if !indexer.held.load(Ordering::SeqCst) {
                    if let Err(error) = store.catch_up().await {
                        if store.write_pool.is_closed() {
                            return;
                        }
                        tracing::warn!(%error, "search index: indexing after commit failed; retrying");
                    }
                }
                tokio::time::sleep(PACE).await;
                let _ = tokio::time::timeout(TICK, indexer.wake.notified()).await;
            }
        });
    }

    /// Indexes until caught up, unless held meanwhile.
    async fn catch_up(&self) -> Result<(), StoreError> {
        while self.index_some(true).await? {}
        Ok(())
    }

    /// One transaction: indexes up to [`CHUNK`] rowids above the
    /// watermark and raises it over them. `true` when it indexed some.
    /// With `heeding_hold`, nothing while held, as seen under the write
    /// lock: a send committed after [`Store::hold_search_indexer`] is not
    /// indexed until the hold ends.
    async fn index_some(&self, heeding_hold: bool) -> Result<bool, StoreError> {
        let held = || heeding_hold && self.search_indexer.held.load(Ordering::SeqCst);
        if held() {
            return Ok(false);
        }
        // A read first: nothing to do is the common case of a wake-up.
        {
            let mut reader = self.reader().await?;
            let upto: i64 = sqlx::query::<Sqlite>(WATERMARK)
                .fetch_one(reader.ex())
                .await?
                .value(0)?;
            let top: i64 = sqlx::query::<Sqlite>(TOP).fetch_one(reader.ex()).await?.value(0)?;
            if top <= upto {
                return Ok(false);
            }
        }
        let mut tx = self.begin_write().await?;
        if held() {
            tx.rollback().await?;
            return Ok(false);
        }
        let upto: i64 = sqlx::query::<Sqlite>(WATERMARK).fetch_one(tx.ex()).await?.value(0)?;
        let top: i64 = sqlx::query::<Sqlite>(TOP).fetch_one(tx.ex()).await?.value(0)?;
        if top <= upto {
            tx.rollback().await?;
            return Ok(false);
        }
        let high = top.min(upto.saturating_add(CHUNK));
        sqlx::query::<Sqlite>(INDEX_ROWS)
            .bind(upto)
            .bind(high)
            .execute(tx.ex())
            .await?;
        sqlx::query::<Sqlite>(SET_WATERMARK).bind(high).execute(tx.ex()).await?;
        Self::commit(tx, &CommitSent::default()).await?;
        Ok(true)
    }
}
