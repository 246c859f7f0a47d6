//! Persistence: channels, members, the log of entries, receipt watermarks,
//! presence's `lastSeenAt` and the webhook feed's cursors, on PostgreSQL
//! (production) or embedded SQLite (the default).
//!
//! Invariants the store owns (`docs/protocol.md` §6):
//! - a send is looked up by its idempotency key (`senderId`, `clientMsgId`)
//!   before anything else; a duplicate or refused send uses up no `seq`;
//! - `seq` is assigned under the channel's lock inside the transaction that
//!   inserts the message, so each channel's sequence is exactly 1..N;
//! - `ts` never decreases as `seq` grows (the channel row keeps the newest);
//! - watermarks only move forward, and `read` drags `delivered` with it.
//!
//! Organized by what is stored. Each operation lives in one file: the public
//! [`Store`] method (bounded by the store's timeout), its implementation
//! written once over [`dialect::Dialect`] for both databases, and its SQL
//! (a [`dialect::Sql`] pair where the two databases' text differs):
//!
//! | file | what it stores or reads |
//! |---|---|
//! | `channels.rs` | channels: create, read, list, rename, delete; the channel lock |
//! | `members.rs` | members, when each joined, who shares a channel |
//! | `entries.rs` | pages of the log, one entry by id or key, [`Store::channel_of`] |
//! | `log_write.rs` | a batch of entries, per row (SQLite; PostgreSQL's fallback) |
//! | `pg_batch/` | PostgreSQL's set-based batch |
//! | `entry_rules.rs` | what decides each entry of a batch, for both write paths |
//! | `receipts.rs` | watermarks and each user's channel positions |
//! | `last_seen.rs` | presence's stored `lastSeenAt` |
//! | `webhooks.rs` | webhook cursors, backlog and leases |
//!
//! and around them `types.rs` (rows), `error.rs`, `connect.rs` (URLs, pools,
//! migrations), `dialect.rs` (what an operation needs of a database),
//! `entry_row.rs` (an entry's columns) and `channel_of.rs` (the routing cache).

mod channel_of;
mod channels;
mod connect;
mod dialect;
mod entries;
mod entry_row;
mod entry_rules;
mod error;
mod last_seen;
mod log_write;
mod members;
mod pg_batch;
mod receipts;
mod types;
mod webhooks;

use std::future::Future;
use std::time::Duration;

pub use connect::{StoreOptions, PG_MIGRATOR, SQLITE_MIGRATOR};
pub use dialect::{PgStore, SqlStore, SqliteStore};
pub(crate) use error::CommitSent;
pub use error::StoreError;
pub use types::*;

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
use dispatch;

/// Runs a backend's write method with a fresh [`CommitSent`] (passed as its
/// last argument) until `deadline`, through [`Store::write`].
macro_rules! dispatch_write {
    ($self:ident, $deadline:expr, $method:ident ( $($arg:expr),* )) => {{
        let sent = $crate::store::CommitSent::default();
        Self::write($deadline, &sent, async { $crate::store::dispatch!($self.$method($($arg,)* &sent)) }).await
    }};
}
use dispatch_write;

impl Store {
    /// `"postgres"` or `"sqlite"`.
    pub fn backend_name(&self) -> &'static str {
        match self {
            Store::Postgres(_) => "postgres",
            Store::Sqlite(_) => "sqlite",
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
    async fn read<T>(&self, call: impl Future<Output = Result<T, StoreError>>) -> Result<T, StoreError> {
        tokio::time::timeout(self.timeout(), call)
            .await
            .unwrap_or(Err(StoreError::TimedOut))
    }

    /// Runs a call that writes until `deadline`: abandoned before its commit
    /// was sent, it is [`StoreError::TimedOut`]; after, [`StoreError::InDoubt`].
    async fn write<T>(
        deadline: tokio::time::Instant,
        sent: &CommitSent,
        call: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        match tokio::time::timeout_at(deadline, call).await {
            Ok(result) => result,
            Err(_) if sent.is_set() => Err(StoreError::InDoubt(None)),
            Err(_) => Err(StoreError::TimedOut),
        }
    }

    fn deadline(&self) -> tokio::time::Instant {
        tokio::time::Instant::now() + self.timeout()
    }

    fn channel_of_cache(&self) -> &channel_of::ChannelOfCache {
        match self {
            Store::Postgres(s) => &s.channel_of_cache,
            Store::Sqlite(s) => &s.channel_of_cache,
        }
    }

    /// Closes every pooled connection.
    pub async fn close(&self) {
        dispatch!(self.close())
    }

    /// Runs `SELECT 1`.
    ///
    /// # Errors
    /// The database's error, typically [`StoreError::Unavailable`] or
    /// [`StoreError::TimedOut`].
    pub async fn ping(&self) -> Result<(), StoreError> {
        self.read(async { dispatch!(self.ping()) }).await
    }
}
