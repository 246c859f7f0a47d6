//! The store on one database, [`SqlStore`]: its pools, its bound on every
//! call, the message→channel cache, the SQLite WAL scrub and the optional
//! standby, with what every operation starts from (a write transaction, a
//! snapshot, one that may be the standby's through [`fresh_read`], a commit
//! that marks itself sent).
//!
//! It stands above what it holds: [`super::dialect`] (what an operation needs
//! of a database), [`super::replica`] (reads from a standby) and
//! [`super::wal_scrub`] (the checkpoint after an erasing write) each know
//! nothing of it. The operations themselves are `impl<D: Dialect>
//! SqlStore<D>` blocks in the file of what they store ([`super`] lists them).

use std::fmt;
use std::sync::Arc;

use sqlx::pool::PoolConnection;
use sqlx::{Database, Postgres, Sqlite};

use super::channel_of::ChannelOfCache;
use super::dialect::{Dialect, Executes, Sql};
use super::error::{CommitSent, StoreError};
use super::indexer_signal::SearchIndexer;
use super::replica::{Replica, Source};
use super::wal_scrub::WalScrub;

/// The store on one database: its pools, its bound on every call and the
/// message→channel cache. Each operation is an `impl<D: Dialect>` block in
/// the file of what it stores ([`super`] lists them).
pub struct SqlStore<D: Database> {
    /// Pool for transactions that write (one connection on SQLite: one
    /// writer at a time, queued here rather than `SQLITE_BUSY`).
    pub(super) write_pool: sqlx::Pool<D>,
    /// Pool for reads (the same pool on PostgreSQL).
    pub(super) read_pool: sqlx::Pool<D>,
    /// The bound on every call (`db_timeout_ms`), applied by [`super::Store`].
    pub(super) timeout: std::time::Duration,
    /// Where the messages this node read or stored live ([`super::Store::channel_of`]).
    pub(super) channel_of_cache: Arc<ChannelOfCache>,
    /// `max_reactions_per_message` (§8): the most distinct emoji a reaction
    /// `add` may bring a message to, and the longest reaction list a read
    /// returns ([`super::Store::with_max_reactions_per_message`]).
    pub(super) max_reactions: usize,
    /// SQLite: the checkpoint retried after an erasing write
    /// ([`super::wal_scrub`]); unused on PostgreSQL.
    pub(super) wal_scrub: Arc<WalScrub>,
    /// The standby that history, `SYNC` and search may read from
    /// (`database_replica_url`; `None`: off, and always on SQLite).
    pub(super) replica: Option<Arc<Replica<D>>>,
    /// SQLite: the indexer that keeps the search index after the send's
    /// commit ([`super::search_indexer`]); unused on PostgreSQL.
    pub(super) search_indexer: Arc<SearchIndexer>,
}

/// The PostgreSQL store: one pool; `FOR UPDATE` on the channel row
/// serialises writers of a channel across connections and nodes.
pub type PgStore = SqlStore<Postgres>;

/// The embedded SQLite store: WAL, `synchronous=FULL`, one writer
/// connection taking `BEGIN IMMEDIATE`, and a pool of readers.
pub type SqliteStore = SqlStore<Sqlite>;

impl<D: Database> Clone for SqlStore<D> {
    fn clone(&self) -> Self {
        Self {
            write_pool: self.write_pool.clone(),
            read_pool: self.read_pool.clone(),
            timeout: self.timeout,
            channel_of_cache: Arc::clone(&self.channel_of_cache),
            max_reactions: self.max_reactions,
            wal_scrub: Arc::clone(&self.wal_scrub),
            replica: self.replica.clone(),
            search_indexer: Arc::clone(&self.search_indexer),
        }
    }
}

impl<D: Database> fmt::Debug for SqlStore<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlStore")
            .field("database", &D::NAME)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// A read of several statements from one snapshot. SQLite in WAL mode: the
/// first read fixes it until the transaction ends.
static BEGIN_SNAPSHOT: Sql = Sql::each("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "BEGIN");

impl<D: Dialect> SqlStore<D> {
    /// A transaction that writes.
    pub(super) async fn begin_write(&self) -> Result<sqlx::Transaction<'static, D>, StoreError> {
        Ok(self.write_pool.begin_with(D::BEGIN_WRITE).await?)
    }

    /// A read-only transaction whose statements all see one snapshot.
    pub(super) async fn begin_snapshot(&self) -> Result<sqlx::Transaction<'static, D>, StoreError> {
        Ok(self.read_pool.begin_with(D::sql(&BEGIN_SNAPSHOT)).await?)
    }

    /// As [`Self::begin_snapshot`], for a read that may go to the standby
    /// (`database_replica_url`): there once it has replayed everything the
    /// primary had committed when the read began, else on the primary
    /// ([`super::replica`]); `true` with it when on the standby. Without a
    /// standby, exactly [`Self::begin_snapshot`]: no query added. Used
    /// through [`fresh_read`].
    pub(super) async fn begin_fresh_snapshot(&self) -> Result<(sqlx::Transaction<'static, D>, bool), StoreError> {
        let Some(replica) = &self.replica else {
            return Ok((self.begin_snapshot().await?, false));
        };
        if replica.choose(&self.read_pool).await? == Source::Standby {
            match replica.pool.begin_with(D::sql(&BEGIN_SNAPSHOT)).await {
                Ok(tx) => return Ok((tx, true)),
                Err(error) => replica.failed(&error),
            }
        }
        Ok((self.begin_snapshot().await?, false))
    }

    /// A read on the standby failed (`error`): reads skip it for a while.
    pub(super) fn standby_failed(&self, error: &StoreError) {
        if let Some(replica) = &self.replica {
            replica.failed(error);
        }
    }

    /// A connection for reads.
    pub(super) async fn reader(&self) -> Result<PoolConnection<D>, StoreError> {
        Ok(self.read_pool.acquire().await?)
    }

    /// Commits, marking `sent` first: from here on a failure leaves the
    /// outcome unknown ([`StoreError::InDoubt`]) unless the server
    /// reported that it rolled back.
    pub(super) async fn commit(tx: sqlx::Transaction<'static, D>, sent: &CommitSent) -> Result<(), StoreError> {
        sent.set();
        tx.commit().await.map_err(StoreError::after_commit_sent)
    }

    /// Closes every pooled connection.
    pub(super) async fn close(&self) {
        self.write_pool.close().await;
        self.read_pool.close().await;
        if let Some(replica) = &self.replica {
            replica.pool.close().await;
        }
    }

    /// Runs `SELECT 1`.
    pub(super) async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query::<D>("SELECT 1").execute(self.reader().await?.ex()).await?;
        Ok(())
    }

    /// After a committed write that erased text: truncates SQLite's WAL now
    /// if no reader holds an old snapshot, else leaves it to a task that
    /// tries again until it can ([`WalScrub::request`]). Never waits for a
    /// reader. Nothing on PostgreSQL.
    pub(super) async fn scrub_wal(&self) {
        self.wal_scrub.request(&self.write_pool, self.timeout).await;
    }
}

/// Runs a read in one snapshot that may be the standby's
/// ([`SqlStore::begin_fresh_snapshot`]): `$body`, a future using `$tx` (the
/// snapshot's `&mut` connection), then the snapshot's commit. A read that
/// failed on the standby (a connection lost, a query cancelled for a
/// recovery conflict) runs once more on the primary, and the standby is
/// skipped for a while. Evaluates to the read's `Result<_, StoreError>`.
macro_rules! fresh_read {
    ($store:expr, |$tx:ident| $body:expr) => {{
        let (mut snapshot, on_standby) = $store.begin_fresh_snapshot().await?;
        let first = {
            let $tx: &mut _ = &mut *snapshot;
            $body.await
        };
        let first = match first {
            Ok(value) => match snapshot.commit().await {
                Ok(()) => Ok(value),
                Err(error) => Err($crate::store::StoreError::from(error)),
            },
            Err(error) => Err(error),
        };
        match first {
            Ok(value) => {
                if on_standby {
                    $crate::telemetry::db_replica_read();
                }
                Ok(value)
            }
            Err(error) if on_standby => {
                $store.standby_failed(&error);
                let mut snapshot = $store.begin_snapshot().await?;
                let value = {
                    let $tx: &mut _ = &mut *snapshot;
                    $body.await
                }?;
                snapshot.commit().await?;
                Ok(value)
            }
            Err(error) => Err(error),
        }
    }};
}
pub(super) use fresh_read;
