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
use std::future::Future;
use std::sync::OnceLock;

use sqlx::query::Query;
use sqlx::{Database, Executor, Postgres, Row, Sqlite};

use super::error::StoreError;
use super::search_separators::{self, GoneTexts, Repaired};

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

    /// After the last statement of a transaction that took the texts
    /// `gone` out of the search index, before its commit: SQLite sets every
    /// separator of the FTS5 index that still holds a fragment of them to
    /// its page's first term ([`search_separators`]); PostgreSQL does
    /// nothing (its trigram index keeps no separators of its own).
    fn repair_search_separators<'c>(
        conn: &'c mut Self::Connection,
        gone: &'c GoneTexts,
    ) -> impl Future<Output = Result<Repaired, StoreError>> + Send + 'c;

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

    fn repair_search_separators<'c>(
        _conn: &'c mut Self::Connection,
        _gone: &'c GoneTexts,
    ) -> impl Future<Output = Result<Repaired, StoreError>> + Send + 'c {
        std::future::ready(Ok(Repaired::default()))
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

    async fn repair_search_separators<'c>(
        conn: &'c mut Self::Connection,
        gone: &'c GoneTexts,
    ) -> Result<Repaired, StoreError> {
        Ok(search_separators::repair(conn, gone).await?)
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
