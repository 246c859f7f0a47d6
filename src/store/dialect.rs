//! What the store's operations need of a database, so that each operation is
//! written once, as a generic function over [`Dialect`], and runs on
//! PostgreSQL and SQLite alike. Where the two databases differ (row locks,
//! UUID columns, lists of ids as one parameter) the difference is named here
//! or, for a statement's text, written next to the operation as a [`Sql`]
//! pair.
//!
//! sqlx's bounds for a generic database (an executor for `&mut Connection`,
//! every bound value's `Encode` and `Type`, every decoded column's `Decode`)
//! are not implied by `D: Database`, so they would have to be repeated on
//! every function. The traits below state them once, as supertraits and
//! associated-type bounds, which Rust does imply: [`Value`] for what can be
//! bound, [`Column`] for what can be read, [`Executes`] and [`Columns`] for
//! the connection and the row.

use std::fmt;
use std::sync::{Arc, OnceLock};

use sqlx::pool::PoolConnection;
use sqlx::query::Query;
use sqlx::{Database, Executor, Postgres, Row, Sqlite};

use super::channel_of::ChannelOfCache;
use super::error::{CommitSent, StoreError};
use super::replica::{Replica, Source};

/// A query of database `D` with its parameters.
pub(super) type Q<'q, D> = Query<'q, D, <D as Database>::Arguments<'q>>;

/// A value either database can bind as a parameter: `&str`, `String`,
/// `i64`, `bool` and `Option`s of them.
pub trait Value<'q>:
    'q + Send + sqlx::Encode<'q, Postgres> + sqlx::Type<Postgres> + sqlx::Encode<'q, Sqlite> + sqlx::Type<Sqlite>
{
}

impl<'q, T> Value<'q> for T where
    T: 'q + Send + sqlx::Encode<'q, Postgres> + sqlx::Type<Postgres> + sqlx::Encode<'q, Sqlite> + sqlx::Type<Sqlite>
{
}

/// A column either database can decode: `String`, `i64`, `bool` and
/// `Option`s of them.
pub trait Column:
    for<'r> sqlx::Decode<'r, Postgres> + sqlx::Type<Postgres> + for<'r> sqlx::Decode<'r, Sqlite> + sqlx::Type<Sqlite>
{
}

impl<T> Column for T where
    T: for<'r> sqlx::Decode<'r, Postgres>
        + sqlx::Type<Postgres>
        + for<'r> sqlx::Decode<'r, Sqlite>
        + sqlx::Type<Sqlite>
{
}

/// Which database a [`Dialect`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Postgres,
    Sqlite,
}

/// One statement's text on each database. Most statements differ only by
/// PostgreSQL's casts (`$1::uuid`, `message_id::text`: its id columns are
/// `uuid`, SQLite's are text) and its `COLLATE "C"` (byte order whatever the
/// database's collation; SQLite's BINARY default already is):
/// [`Sql::same`] writes those once, and SQLite's text is PostgreSQL's
/// without them. [`Sql::each`] gives both texts where
/// more differs (`FOR UPDATE`, arrays against `json_each`, collations).
/// Statements with no cast at all are plain `&str`. Kept in `static`s, so
/// the derived text is made once per process.
pub struct Sql {
    pg: &'static str,
    sqlite: SqliteText,
}

enum SqliteText {
    Own(&'static str),
    WithoutCasts(OnceLock<String>),
}

impl Sql {
    /// The statement `pg` on PostgreSQL and, on SQLite, `pg` without its
    /// `::uuid` and `::text` casts and its ` COLLATE "C"`.
    pub const fn same(pg: &'static str) -> Self {
        Sql {
            pg,
            sqlite: SqliteText::WithoutCasts(OnceLock::new()),
        }
    }

    /// `pg` on PostgreSQL, `sqlite` on SQLite.
    pub const fn each(pg: &'static str, sqlite: &'static str) -> Self {
        Sql {
            pg,
            sqlite: SqliteText::Own(sqlite),
        }
    }

    fn sqlite(&'static self) -> &'static str {
        match &self.sqlite {
            SqliteText::Own(text) => text,
            SqliteText::WithoutCasts(text) => text.get_or_init(|| {
                self.pg
                    .replace("::uuid", "")
                    .replace("::text", "")
                    .replace(" COLLATE \"C\"", "")
            }),
        }
    }
}

/// A read of several statements from one snapshot. SQLite in WAL mode: the
/// first read fixes it until the transaction ends.
static BEGIN_SNAPSHOT: Sql = Sql::each("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "BEGIN");

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

/// A database the store runs on: PostgreSQL or SQLite.
pub trait Dialect:
    Database<Connection: Executes<Self>, Row: Columns, QueryResult: Affected> + for<'q> ArgumentsFor<'q> + fmt::Debug
{
    /// Which database this is.
    const KIND: Kind;
    /// How a transaction that writes begins: SQLite takes the write lock at
    /// once (`BEGIN IMMEDIATE`), so a reader never has to upgrade.
    const BEGIN_WRITE: &'static str;

    /// Binds `value` (see [`Params::param`]).
    fn bind<'q, T: Value<'q>>(query: Q<'q, Self>, value: T) -> Q<'q, Self>;

    /// Binds a list of ids as one parameter: a `text[]` on PostgreSQL (the
    /// statement casts it as it needs), a JSON array on SQLite (read by
    /// `json_each`).
    fn bind_ids<'q>(query: Q<'q, Self>, ids: &'q [&'q str]) -> Result<Q<'q, Self>, StoreError>;

    /// The text of `sql` on this database.
    fn sql(sql: &'static Sql) -> &'static str {
        match Self::KIND {
            Kind::Postgres => sql.pg,
            Kind::Sqlite => sql.sqlite(),
        }
    }
}

/// `Arguments<'q>` turns into a query's arguments: stated as an
/// associated-type bound so that `D: Dialect` implies it.
pub trait ArgumentsFor<'q>: Database<Arguments<'q>: sqlx::IntoArguments<'q, Self>> {}

impl<'q> ArgumentsFor<'q> for Postgres {}
impl<'q> ArgumentsFor<'q> for Sqlite {}

/// `.param(value)` on a query of any [`Dialect`] (sqlx's own `.bind` needs
/// bounds that a generic database does not carry).
pub trait Params<'q> {
    /// Binds the next `$N`.
    fn param<T: Value<'q>>(self, value: T) -> Self;
}

impl<'q, D: Dialect> Params<'q> for Q<'q, D> {
    fn param<T: Value<'q>>(self, value: T) -> Self {
        D::bind(self, value)
    }
}

/// A connection that runs queries of `D` (a transaction or a pooled
/// connection derefs to one).
pub trait Executes<D: Database>: Send {
    /// The connection as an executor.
    fn ex(&mut self) -> impl Executor<'_, Database = D>;
}

impl Executes<Postgres> for sqlx::PgConnection {
    fn ex(&mut self) -> impl Executor<'_, Database = Postgres> {
        self
    }
}

impl Executes<Sqlite> for sqlx::SqliteConnection {
    fn ex(&mut self) -> impl Executor<'_, Database = Sqlite> {
        self
    }
}

/// The number of rows a statement of either database changed.
pub trait Affected {
    /// Rows inserted, updated or deleted.
    fn rows_affected(&self) -> u64;
}

impl Affected for sqlx::postgres::PgQueryResult {
    fn rows_affected(&self) -> u64 {
        sqlx::postgres::PgQueryResult::rows_affected(self)
    }
}

impl Affected for sqlx::sqlite::SqliteQueryResult {
    fn rows_affected(&self) -> u64 {
        sqlx::sqlite::SqliteQueryResult::rows_affected(self)
    }
}

/// Reads a column of a row of either database.
pub trait Columns: Row {
    /// Column `index` (0-based) as `T`.
    fn value<T: Column>(&self, index: usize) -> Result<T, sqlx::Error>;
}

impl Columns for sqlx::postgres::PgRow {
    fn value<T: Column>(&self, index: usize) -> Result<T, sqlx::Error> {
        self.try_get(index)
    }
}

impl Columns for sqlx::sqlite::SqliteRow {
    fn value<T: Column>(&self, index: usize) -> Result<T, sqlx::Error> {
        self.try_get(index)
    }
}

impl Dialect for Postgres {
    const KIND: Kind = Kind::Postgres;
    const BEGIN_WRITE: &'static str = "BEGIN";

    fn bind<'q, T: Value<'q>>(query: Q<'q, Self>, value: T) -> Q<'q, Self> {
        query.bind(value)
    }

    fn bind_ids<'q>(query: Q<'q, Self>, ids: &'q [&'q str]) -> Result<Q<'q, Self>, StoreError> {
        Ok(query.bind(ids))
    }
}

impl Dialect for Sqlite {
    const KIND: Kind = Kind::Sqlite;
    const BEGIN_WRITE: &'static str = "BEGIN IMMEDIATE";

    fn bind<'q, T: Value<'q>>(query: Q<'q, Self>, value: T) -> Q<'q, Self> {
        query.bind(value)
    }

    fn bind_ids<'q>(query: Q<'q, Self>, ids: &'q [&'q str]) -> Result<Q<'q, Self>, StoreError> {
        let ids = serde_json::to_string(ids).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        Ok(query.bind(ids))
    }
}

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
    pub(super) wal_scrub: Arc<super::wal_scrub::WalScrub>,
    /// The standby that history, `SYNC` and search may read from
    /// (`database_replica_url`; `None`: off, and always on SQLite).
    pub(super) replica: Option<Arc<Replica<D>>>,
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
}

#[cfg(test)]
mod tests {
    use super::*;

    static SAME: Sql = Sql::same("SELECT message_id::text, target_id::text FROM messages WHERE message_id = $1::uuid");
    static EACH: Sql = Sql::each("SELECT 1 FOR UPDATE", "SELECT 1");
    static ORDERED: Sql =
        Sql::same("SELECT c FROM t WHERE c COLLATE \"C\" > COALESCE($1::text, '') ORDER BY c COLLATE \"C\"");

    #[test]
    fn sqlite_runs_the_postgres_text_without_its_casts() {
        assert_eq!(
            Postgres::sql(&SAME),
            "SELECT message_id::text, target_id::text FROM messages WHERE message_id = $1::uuid"
        );
        assert_eq!(
            Sqlite::sql(&SAME),
            "SELECT message_id, target_id FROM messages WHERE message_id = $1"
        );
        assert_eq!(
            Sqlite::sql(&ORDERED),
            "SELECT c FROM t WHERE c > COALESCE($1, '') ORDER BY c"
        );
        // Made once: the same text each time.
        assert!(std::ptr::eq(Sqlite::sql(&SAME), Sqlite::sql(&SAME)));
    }

    #[test]
    fn each_database_runs_its_own_text() {
        assert_eq!(Postgres::sql(&EACH), "SELECT 1 FOR UPDATE");
        assert_eq!(Sqlite::sql(&EACH), "SELECT 1");
    }
}
