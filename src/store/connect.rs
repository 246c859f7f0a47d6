//! Opening the database a URL names, with the pools, timeouts and file
//! modes the store relies on, and migrating its schema.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use super::channel_of::{ChannelOfCache, CAPACITY};
use super::error::StoreError;
use super::handle::Store;
use super::pg_hosts::PgHosts;
use super::replica::Replica;
use super::sql_store::SqlStore;
use crate::config::DEFAULT_MAX_REACTIONS_PER_MESSAGE;

/// Migrations of the PostgreSQL schema, embedded at compile time.
pub static PG_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");
/// Migrations of the SQLite schema, embedded at compile time.
pub static SQLITE_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

/// The `application_name` of chatd's connections to the standby of
/// `database_replica_url`, as its `pg_stat_activity` shows them.
pub const REPLICA_APPLICATION: &str = "chatd replica reads";

/// How to open the database.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// `postgres://…`, `sqlite://relative/path` or `sqlite:///absolute/path`.
    pub url: String,
    /// Pool size (PostgreSQL) or read pool size (SQLite).
    pub max_connections: u32,
    /// The longest any one store call may take (`db_timeout_ms`): waiting for
    /// a connection, every statement, the commit. See [`Store::connect`].
    pub timeout: Duration,
}

/// Creates the SQLite database file `path`, if missing, with mode 0600 in
/// directories created with mode 0700 (existing ones are left as they are),
/// so that stored messages are readable by the server's user only. SQLite
/// gives the `-wal` and `-shm` files the database file's mode. The file is
/// empty until SQLite writes its header on first use.
fn create_private_file(path: &std::path::Path) -> std::io::Result<()> {
    if path.as_os_str().is_empty() || path.to_str() == Some(":memory:") {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        crate::private_files::create_private_dir(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Opens the PostgreSQL pools of `url`: writes and reads, each at most
/// `options.max_connections` connections.
///
/// Both run with `synchronous_commit = on` and
/// `idle_in_transaction_session_timeout` = `db_timeout_ms`. Reads also run
/// with `statement_timeout` = `db_timeout_ms`; writes run with
/// `lock_timeout` = `db_timeout_ms` and no `statement_timeout`, because a
/// `COMMIT` waiting for a synchronous standby that `statement_timeout`
/// cancels is committed locally all the same (PostgreSQL only warns): chatd
/// would take it for stored although a failover would lose it. A write's
/// other statements only ever wait on row locks, which `lock_timeout` bounds.
///
/// A URL naming several hosts (or asking for `target_session_attrs=read-write`)
/// is followed by [`PgHosts`]: the pools connect to whichever host is the
/// primary.
async fn connect_postgres(url: &str, options: &StoreOptions) -> Result<(PgPool, PgPool), StoreError> {
    let timeout = options.timeout;
    let ms = timeout.as_millis().max(1).to_string();
    let list = crate::database_hosts::pg_host_list(url).map_err(|_| StoreError::UnsupportedUrl)?;
    let (mut writes, mut reads) = (Vec::new(), Vec::new());
    for host_url in &list.urls {
        let base = PgConnectOptions::from_str(host_url)?;
        writes.push(base.clone().options([
            ("synchronous_commit", "on"),
            ("statement_timeout", "0"),
            ("lock_timeout", ms.as_str()),
            ("idle_in_transaction_session_timeout", ms.as_str()),
        ]));
        reads.push(base.options([
            ("synchronous_commit", "on"),
            ("statement_timeout", ms.as_str()),
            ("idle_in_transaction_session_timeout", ms.as_str()),
        ]));
    }
    let pool = || {
        PgPoolOptions::new()
            .max_connections(options.max_connections)
            .acquire_timeout(timeout)
    };
    if !list.find_primary {
        // One host: opened at once (a database that is down fails the start),
        // with no check added.
        let write_pool = pool().connect_with(writes.swap_remove(0)).await?;
        let read_pool = pool().connect_lazy_with(reads.swap_remove(0));
        return Ok((write_pool, read_pool));
    }
    crate::telemetry::feature_on(crate::telemetry::catalog::When::DbHosts);
    let hosts = Arc::new(PgHosts::new(writes, reads, list.labels));
    hosts.find_first(timeout).await?;
    let (write, read) = hosts.options();
    let write_pool = hosts.guard(pool()).connect_lazy_with(write);
    let read_pool = hosts.guard(pool()).connect_lazy_with(read);
    Arc::clone(&hosts).spawn_watcher(write_pool.clone(), read_pool.clone());
    Ok((write_pool, read_pool))
}

impl Store {
    /// Opens the database named by `options.url` (creating an SQLite file and
    /// its directory when missing) without running migrations.
    ///
    /// Every later call is bounded by `options.timeout`, however the database
    /// fails (down, unreachable, hung, locked):
    /// - waiting for a pooled connection (connecting included) gives up after it;
    /// - PostgreSQL sessions run with `idle_in_transaction_session_timeout`
    ///   and, for writes, `lock_timeout` (for reads `statement_timeout`) set
    ///   to it, so the server itself cancels a statement stuck on a lock and
    ///   ends a transaction its client abandoned (its row locks are released,
    ///   its writes rolled back); a write's `COMMIT` is never cancelled
    ///   ([`connect_postgres`]);
    /// - SQLite waits at most that long for a lock (`busy_timeout`);
    /// - and each call runs under a `tokio` timeout of the same length, the last
    ///   resort when the database does not answer at all. A call abandoned
    ///   before its commit was sent is [`StoreError::TimedOut`] (nothing stored);
    ///   one abandoned after it is [`StoreError::InDoubt`].
    ///
    /// # Errors
    /// [`StoreError::UnsupportedUrl`], or the connection error.
    pub async fn connect(options: &StoreOptions) -> Result<Self, StoreError> {
        let url = options.url.as_str();
        let timeout = options.timeout;
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let (write_pool, read_pool) = connect_postgres(url, options).await?;
            Ok(Store::Postgres(SqlStore {
                write_pool,
                read_pool,
                timeout,
                channel_of_cache: Arc::new(ChannelOfCache::new(CAPACITY)),
                max_reactions: DEFAULT_MAX_REACTIONS_PER_MESSAGE,
                wal_scrub: Arc::default(),
                replica: None,
                search_indexer: Arc::default(),
            }))
        } else if url.starts_with("sqlite:") {
            let connect = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Full)
                .busy_timeout(timeout)
                .foreign_keys(true)
                // A deleted message's text is overwritten in the file, not
                // just unlinked from the b-tree (protocol guarantee 9).
                .pragma("secure_delete", "ON");
            create_private_file(connect.get_filename()).map_err(|e| StoreError::Unavailable(sqlx::Error::Io(e)))?;
            // One writer connection: SQLite has one writer at a time anyway, and
            // queueing in the pool avoids SQLITE_BUSY between our own connections.
            let write_pool = SqlitePoolOptions::new()
                .max_connections(1)
                .acquire_timeout(timeout)
                .connect_with(connect.clone())
                .await?;
            let read_pool = SqlitePoolOptions::new()
                .max_connections(options.max_connections.max(1))
                .acquire_timeout(timeout)
                .connect_with(connect)
                .await?;
            let store = SqlStore {
                write_pool,
                read_pool,
                timeout,
                channel_of_cache: Arc::new(ChannelOfCache::new(CAPACITY)),
                max_reactions: DEFAULT_MAX_REACTIONS_PER_MESSAGE,
                wal_scrub: Arc::default(),
                replica: None,
                search_indexer: Arc::default(),
            };
            // A process that died while a reader kept an erasing write's
            // checkpoint from finishing left the erased text in the `-wal`
            // file (and the older page in the database file); nothing reads
            // yet, so the checkpoint now finishes (guarantee 9).
            store.scrub_wal().await;
            Ok(Store::Sqlite(store))
        } else {
            Err(StoreError::UnsupportedUrl)
        }
    }

    /// This store with history and `SYNC` pages, thread pages and search
    /// reading from the PostgreSQL standby at `url` (`database_replica_url`)
    /// whenever it has replayed what the primary had committed when the read
    /// began, and from the primary otherwise ([`super::replica`]). The
    /// standby's pool holds up to the store's `max_connections` connections,
    /// opened on first use (a standby down at start does not stop chatd: its
    /// reads go to the primary), with the read pool's `statement_timeout`
    /// and `idle_in_transaction_session_timeout` (the store's timeout,
    /// `timeout`).
    ///
    /// # Errors
    /// [`StoreError::UnsupportedUrl`] on an SQLite store (it has no standby)
    /// or for a `url` that is not one PostgreSQL host; the URL's parse error.
    pub fn with_read_replica(self, url: &str, max_connections: u32) -> Result<Self, StoreError> {
        let Store::Postgres(mut store) = self else {
            return Err(StoreError::UnsupportedUrl);
        };
        let list = crate::database_hosts::pg_host_list(url).map_err(|_| StoreError::UnsupportedUrl)?;
        let [one] = list.urls.as_slice() else {
            return Err(StoreError::UnsupportedUrl);
        };
        let ms = store.timeout.as_millis().max(1).to_string();
        let options = PgConnectOptions::from_str(one)?
            .application_name(REPLICA_APPLICATION)
            .options([
                ("statement_timeout", ms.as_str()),
                ("idle_in_transaction_session_timeout", ms.as_str()),
            ]);
        let pool = PgPoolOptions::new()
            .max_connections(max_connections.max(1))
            .acquire_timeout(store.timeout)
            .connect_lazy_with(options);
        crate::telemetry::feature_on(crate::telemetry::catalog::When::ReplicaReads);
        store.replica = Some(Arc::new(Replica::new(pool)));
        Ok(Store::Postgres(store))
    }

    /// Applies the backend's pending migrations (and, on SQLite, repairs
    /// the search index's separators, `search_separators::repair_all`, and
    /// starts the indexer that keeps the index after each send's commit,
    /// `search_indexer`).
    /// On PostgreSQL they run on a connection of their own without the
    /// store's timeouts (a migration may rightly take long, and waits for
    /// another node's migration lock), which is closed afterwards.
    ///
    /// # Errors
    /// [`StoreError::Migrate`].
    pub async fn migrate(&self) -> Result<(), StoreError> {
        match self {
            Store::Postgres(s) => {
                let mut conn = s.write_pool.acquire().await?.detach();
                sqlx::query("SET statement_timeout = 0").execute(&mut conn).await?;
                sqlx::query("SET idle_in_transaction_session_timeout = 0")
                    .execute(&mut conn)
                    .await?;
                sqlx::query("SET lock_timeout = 0").execute(&mut conn).await?;
                PG_MIGRATOR.run(&mut conn).await?;
                let _ = sqlx::Connection::close(conn).await;
            }
            Store::Sqlite(s) => {
                SQLITE_MIGRATOR.run(&s.write_pool).await?;
                // Separators a delete left before every delete repaired
                // them (`search_separators`): checked once per start. A
                // failure is logged and the server starts: a delete that
                // meets the same page fails on its own, loudly.
                if let Err(error) = s.repair_all_search_separators().await {
                    tracing::error!(%error, "search index: separators not checked at start");
                }
                // The rows a crash left unindexed, then each batch's
                // (`search_indexer`).
                s.start_search_indexer();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh data directory and the database in it (and its WAL) are
    /// private to the server's user; before, they were made with the
    /// umask's modes (0755 and 0644: every local user could read messages).
    #[cfg(unix)]
    #[tokio::test]
    async fn a_new_sqlite_database_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("data").join("db");
        let file = dir.join("chatd.db");
        let options = StoreOptions {
            url: format!("sqlite://{}", file.display()),
            max_connections: 2,
            timeout: Duration::from_secs(5),
        };
        let store = Store::connect(&options).await.unwrap();
        store.migrate().await.unwrap();
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&root.path().join("data")), 0o700);
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(&dir.join("chatd.db-wal")), 0o600);
        store.close().await;
    }
}
