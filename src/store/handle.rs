//! The store as the rest of the server holds it: [`Store`], whichever
//! database the URL names, each call bounded by the store's timeout, and the
//! `dispatch!` of a call to the database's implementation.

use std::future::Future;
use std::time::Duration;

use super::channel_of::ChannelOfCache;
use super::error::{CommitSent, StoreError};
use super::sql_store::{PgStore, SqliteStore};

/// The database, whichever backend the URL names.
#[derive(Debug, Clone)]
pub enum Store {
    Postgres(PgStore),
    Sqlite(SqliteStore),
}

/// Calls the same method on whichever database the store is.
macro_rules! dispatch {
    ($self:ident . $method:ident ( $($arg:expr),* )) => {
        match $self {
            $crate::store::Store::Postgres(s) => s.$method($($arg),*).await,
            $crate::store::Store::Sqlite(s) => s.$method($($arg),*).await,
        }
    };
}
pub(crate) use dispatch;

/// Runs a backend's write method with a fresh [`CommitSent`] (passed as its
/// last argument) until `deadline`, through [`Store::write`].
macro_rules! dispatch_write {
    ($self:ident, $deadline:expr, $method:ident ( $($arg:expr),* )) => {{
        let sent = $crate::store::CommitSent::default();
        Self::write($deadline, &sent, async { $crate::store::dispatch!($self.$method($($arg,)* &sent)) }).await
    }};
}
pub(crate) use dispatch_write;

impl Store {
    /// `"postgres"` or `"sqlite"`.
    pub fn backend_name(&self) -> &'static str {
        match self {
            Store::Postgres(_) => "postgres",
            Store::Sqlite(_) => "sqlite",
        }
    }

    /// The state of the two database pools, for the metrics: `(name, open
    /// connections, idle connections, most connections)`, `name` being
    /// `write` (transactions that write) or `read`.
    pub fn pool_stats(&self) -> [(&'static str, u32, usize, u32); 2] {
        fn one<D: sqlx::Database>(name: &'static str, pool: &sqlx::Pool<D>) -> (&'static str, u32, usize, u32) {
            (name, pool.size(), pool.num_idle(), pool.options().get_max_connections())
        }
        match self {
            Store::Postgres(s) => [one("write", &s.write_pool), one("read", &s.read_pool)],
            Store::Sqlite(s) => [one("write", &s.write_pool), one("read", &s.read_pool)],
        }
    }

    /// The bound on every store call (`db_timeout_ms`).
    pub fn timeout(&self) -> Duration {
        match self {
            Store::Postgres(s) => s.timeout,
            Store::Sqlite(s) => s.timeout,
        }
    }

    /// Runs a call that writes nothing within the store's timeout.
    pub(super) async fn read<T>(&self, call: impl Future<Output = Result<T, StoreError>>) -> Result<T, StoreError> {
        tokio::time::timeout(self.timeout(), call)
            .await
            .unwrap_or(Err(StoreError::TimedOut))
    }

    /// Runs a call that writes until `deadline`: abandoned before its commit
    /// was sent, it is [`StoreError::TimedOut`]; after, [`StoreError::InDoubt`].
    pub(super) async fn write<T>(
        deadline: tokio::time::Instant,
        sent: &CommitSent,
        call: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        let result = match tokio::time::timeout_at(deadline, call).await {
            Ok(result) => result,
            Err(_) if sent.is_set() => Err(StoreError::InDoubt(None)),
            Err(_) => Err(StoreError::TimedOut),
        };
        if matches!(result, Err(StoreError::InDoubt(_))) {
            crate::telemetry::db_in_doubt();
        }
        result
    }

    pub(super) fn deadline(&self) -> tokio::time::Instant {
        tokio::time::Instant::now() + self.timeout()
    }

    /// This store with `max_reactions_per_message` set to `most` (default
    /// [`crate::config::DEFAULT_MAX_REACTIONS_PER_MESSAGE`]): a reaction `add` of an
    /// emoji no one holds on a message that holds `most` distinct emoji is
    /// refused ([`super::EntryOutcome::TooManyReactions`]), and reads that
    /// render a message's state (pages of the log, thread pages, search
    /// results; not exports) return at most `most` of its reactions, the
    /// first by first use.
    #[must_use]
    pub fn with_max_reactions_per_message(mut self, most: usize) -> Self {
        match &mut self {
            Store::Postgres(s) => s.max_reactions = most,
            Store::Sqlite(s) => s.max_reactions = most,
        }
        self
    }

    pub(super) fn channel_of_cache(&self) -> &ChannelOfCache {
        match self {
            Store::Postgres(s) => &s.channel_of_cache,
            Store::Sqlite(s) => &s.channel_of_cache,
        }
    }

    /// Closes every pooled connection.
    pub async fn close(&self) {
        dispatch!(self.close())
    }

    /// Runs `SELECT 1` (SQLite) or `SELECT pg_is_in_recovery()` (PostgreSQL).
    ///
    /// # Errors
    /// The database's error, typically [`StoreError::Unavailable`] or
    /// [`StoreError::TimedOut`]; [`StoreError::Standby`] when the PostgreSQL
    /// server is a standby.
    pub async fn ping(&self) -> Result<(), StoreError> {
        self.read(async {
            match self {
                Store::Postgres(s) => s.ping_primary().await,
                Store::Sqlite(s) => s.ping().await,
            }
        })
        .await
    }
}
