//! Why a store operation failed ([`StoreError`]), and when a write's
//! outcome stops being known ([`CommitSent`]).

use std::sync::atomic::{AtomicBool, Ordering};

use sqlx::postgres::{PgDatabaseError, PgSeverity};

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A channel with that id already exists.
    #[error("channel already exists")]
    Exists,
    /// No channel with that id.
    #[error("channel not found")]
    NotFound,
    /// The channel exists but its kind or visibility refuses the change
    /// (joining a private or direct channel, leaving a direct one).
    #[error("not allowed in this channel")]
    NotAllowed,
    /// The user is banned from the channel (§17): it may not join it again.
    #[error("banned from this channel")]
    Banned,
    /// The user's erasure (§19) is pending: it gains no membership (an
    /// add or a join) until the erasure is done.
    #[error("the user is being erased")]
    Erasing,
    /// The acting user's role, read under the channel lock, does not allow
    /// the change.
    #[error("{0}")]
    Denied(crate::permissions::Denied),
    /// The database cannot be reached, or refused the work for lack of time or
    /// resources; the operation stored nothing.
    #[error("database unavailable")]
    Unavailable(#[source] sqlx::Error),
    /// The operation did not finish within the store's timeout (`db_timeout_ms`)
    /// and was abandoned before its commit was sent: nothing was stored.
    #[error("database did not answer in time")]
    TimedOut,
    /// The connection failed, or the timeout ran out, after a write's commit
    /// was sent: the write may or may not have been stored. Not `Unavailable`,
    /// whose promise is that nothing was stored.
    #[error("outcome unknown: the database failed while committing")]
    InDoubt(#[source] Option<sqlx::Error>),
    /// The PostgreSQL server is a standby (`pg_is_in_recovery()`): it
    /// takes no writes, so the node is not ready (`/readyz`).
    #[error("the database is a standby (in recovery)")]
    Standby,
    /// Two transactions deadlocked or failed to serialise; safe to retry.
    #[error("transaction conflict, retry")]
    Retry(#[source] sqlx::Error),
    /// Any other database error.
    #[error("database error")]
    Internal(#[source] sqlx::Error),
    /// A row that does not decode (a bug or manual edit).
    #[error("corrupt row: {0}")]
    Corrupt(String),
    /// The database URL is neither `postgres://` nor `sqlite:`.
    #[error("unsupported database URL (use postgres:// or sqlite://)")]
    UnsupportedUrl,
    /// Migrations failed.
    #[error("migration failed")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

impl StoreError {
    /// Classifies an error that came back after a write's commit was sent
    /// (`COMMIT`, or an autocommit write statement): only an error the server
    /// reported for the statement while the session lived on (PostgreSQL
    /// severity `ERROR`; SQLite busy/locked, which leave the transaction open
    /// and then rolled back) means the write was rolled back. Anything else (the
    /// connection dropped, a `FATAL` such as `pg_terminate_backend`, which can
    /// come after the commit record is durable) leaves the outcome unknown.
    pub(super) fn after_commit_sent(e: sqlx::Error) -> Self {
        let definite = match &e {
            sqlx::Error::Database(db) => match db.try_downcast_ref::<PgDatabaseError>() {
                Some(pg) => pg.severity() == PgSeverity::Error,
                None => StoreError::sqlite_busy(db.code().as_deref()),
            },
            _ => false,
        };
        if definite {
            StoreError::from(e)
        } else {
            StoreError::InDoubt(Some(e))
        }
    }

    /// SQLite: SQLITE_BUSY, SQLITE_LOCKED (and extended codes).
    fn sqlite_busy(code: Option<&str>) -> bool {
        matches!(code, Some("5" | "6" | "261" | "262" | "517"))
    }
}

/// Set just before a write's outcome leaves the server's hands (its `COMMIT`,
/// or an autocommit write statement, is sent). A failure or timeout after that
/// point is [`StoreError::InDoubt`]; before it, the database stored nothing.
#[derive(Debug, Default)]
pub(crate) struct CommitSent(AtomicBool);

impl CommitSent {
    pub(crate) fn set(&self) {
        self.0.store(true, Ordering::Release);
    }

    pub(super) fn is_set(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        use sqlx::Error as E;
        match &e {
            E::PoolTimedOut | E::PoolClosed | E::Io(_) | E::Tls(_) | E::Protocol(_) | E::WorkerCrashed => {
                StoreError::Unavailable(e)
            }
            E::Database(db) => match db.code().as_deref() {
                // PostgreSQL: deadlock, serialization failure.
                Some("40P01" | "40001") => StoreError::Retry(e),
                // PostgreSQL: connection exceptions (08), insufficient resources
                // (53), operator intervention (57P: admin/crash shutdown, cannot
                // connect now), a database not accepting connections (55000) or
                // gone (3D000), refused credentials (28); a statement cancelled
                // (57014: `statement_timeout`), a lock not obtained in time
                // (55P03), a session ended for idling in a transaction (25P03),
                // a write on a standby (25006: the primary moved, or a standby
                // was reached; the store follows the primary, `pg_hosts.rs`).
                // Seen before a commit was sent, each means nothing was stored;
                // after it, `after_commit_sent` decides.
                Some(c)
                    if c.starts_with("08")
                        || c.starts_with("53")
                        || c.starts_with("57P")
                        || c.starts_with("28")
                        || matches!(c, "55000" | "3D000" | "57014" | "55P03" | "25P03" | "25006") =>
                {
                    StoreError::Unavailable(e)
                }
                code if StoreError::sqlite_busy(code) => StoreError::Unavailable(e),
                _ => StoreError::Internal(e),
            },
            _ => StoreError::Internal(e),
        }
    }
}
