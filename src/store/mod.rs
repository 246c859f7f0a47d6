//! Persistence: channels, members, messages and receipt watermarks, on
//! PostgreSQL (production) or embedded SQLite (the default).
//!
//! Invariants the store owns (`docs/protocol.md` §6):
//! - a send is looked up by its idempotency key (`senderId`, `clientMsgId`)
//!   before anything else; a duplicate or refused send uses up no `seq`;
//! - `seq` is assigned under the channel's lock inside the transaction that
//!   inserts the message, so each channel's sequence is exactly 1..N;
//! - `ts` never decreases as `seq` grows (the channel row keeps the newest);
//! - watermarks only move forward, and `read` drags `delivered` with it.
//!
//! Both backends run the same code ([`backend`]) over their own SQL ([`sql`]).

mod backend;
mod sql;

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::PgPoolOptions;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

pub use backend::{PgStore, SqliteStore};

use crate::ids::{ChannelId, ClientMsgId, UserId};
use crate::protocol::{ChannelState, ErrorCode, RecvMessage};

/// Migrations of the PostgreSQL schema, embedded at compile time.
pub static PG_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");
/// Migrations of the SQLite schema, embedded at compile time.
pub static SQLITE_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

/// A stored message, read back or just written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMessage {
    /// UUIDv7 assigned when the message was stored.
    pub message_id: uuid::Uuid,
    pub channel_id: ChannelId,
    pub sender_id: UserId,
    /// The sender's idempotency key.
    pub client_msg_id: ClientMsgId,
    /// Position in the channel, 1-based, gapless.
    pub seq: i64,
    pub body: String,
    /// Stored time, ms since the Unix epoch.
    pub ts: i64,
}

impl StoredMessage {
    /// The message as the MSG_RECV object clients see.
    pub fn to_recv(&self) -> RecvMessage {
        RecvMessage {
            message_id: self.message_id,
            channel_id: self.channel_id.as_str().to_owned(),
            sender_id: self.sender_id.as_str().to_owned(),
            seq: self.seq,
            body: self.body.clone(),
            ts: self.ts,
            client_msg_id: self.client_msg_id.as_str().to_owned(),
        }
    }
}

/// A channel and its current members.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channel {
    pub channel_id: ChannelId,
    /// Sorted by user id.
    pub members: Vec<UserId>,
    /// Highest stored `seq` (0 when empty).
    pub last_seq: i64,
    /// Creation time, ms since the Unix epoch.
    pub created_at: i64,
}

/// A send to persist, already validated.
#[derive(Debug, Clone)]
pub struct NewMessage {
    pub sender_id: UserId,
    pub channel_id: ChannelId,
    pub client_msg_id: ClientMsgId,
    pub body: String,
}

/// What became of one send in a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendOutcome {
    /// Newly stored by this batch.
    Stored(StoredMessage),
    /// The key was already stored with the same channel and body: the original.
    Duplicate(StoredMessage),
    /// The key was already stored with another channel or body; nothing stored.
    Conflict,
    /// Unknown channel or the sender is not a member; nothing stored.
    Forbidden,
}

/// The result of one committed batch of sends.
#[derive(Debug, Default)]
pub struct BatchOutcome {
    /// One outcome per send, in the order given.
    pub outcomes: Vec<SendOutcome>,
    /// The members, read under the channel lock, of every channel that got a
    /// new message: the fan-out's recipients.
    pub members: Vec<(ChannelId, Vec<UserId>)>,
}

/// A watermark that moved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatermarkMove {
    /// `true` for `read`, `false` for `delivered`.
    pub read: bool,
    /// The message at the new watermark.
    pub message: StoredMessage,
}

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A channel with that id already exists.
    #[error("channel already exists")]
    Exists,
    /// No channel with that id.
    #[error("channel not found")]
    NotFound,
    /// The database cannot be reached (or timed out); the operation stored nothing.
    #[error("database unavailable")]
    Unavailable(#[source] sqlx::Error),
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
    /// The wire error code for a failed store call: `unavailable` when the
    /// database could not be reached (nothing was stored), else `internal`.
    /// Both are retryable.
    pub fn wire_code(&self) -> ErrorCode {
        match self {
            StoreError::Unavailable(_) => ErrorCode::Unavailable,
            _ => ErrorCode::Internal,
        }
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
                // gone (3D000), refused credentials (28).
                Some(c)
                    if c.starts_with("08")
                        || c.starts_with("53")
                        || c.starts_with("57P")
                        || c.starts_with("28")
                        || matches!(c, "55000" | "3D000") =>
                {
                    StoreError::Unavailable(e)
                }
                // SQLite: SQLITE_BUSY, SQLITE_LOCKED (and extended codes).
                Some("5" | "6" | "261" | "262" | "517") => StoreError::Unavailable(e),
                _ => StoreError::Internal(e),
            },
            _ => StoreError::Internal(e),
        }
    }
}

/// How to open the database.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// `postgres://…`, `sqlite://relative/path` or `sqlite:///absolute/path`.
    pub url: String,
    /// Pool size (PostgreSQL) or reader pool size (SQLite).
    pub max_connections: u32,
    /// How long to wait for a connection before [`StoreError::Unavailable`].
    pub acquire_timeout: Duration,
}

/// The database, whichever backend the URL names.
#[derive(Debug, Clone)]
pub enum Store {
    Postgres(PgStore),
    Sqlite(SqliteStore),
}

macro_rules! dispatch {
    ($self:ident . $method:ident ( $($arg:expr),* )) => {
        match $self {
            Store::Postgres(s) => s.$method($($arg),*).await,
            Store::Sqlite(s) => s.$method($($arg),*).await,
        }
    };
}

impl Store {
    /// Opens the database named by `options.url` (creating an SQLite file and
    /// its directory when missing) without running migrations.
    ///
    /// # Errors
    /// [`StoreError::UnsupportedUrl`], or the connection error.
    pub async fn connect(options: &StoreOptions) -> Result<Self, StoreError> {
        let url = options.url.as_str();
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let connect = sqlx::postgres::PgConnectOptions::from_str(url)?.options([("synchronous_commit", "on")]);
            let pool = PgPoolOptions::new()
                .max_connections(options.max_connections)
                .acquire_timeout(options.acquire_timeout)
                .connect_with(connect)
                .await?;
            Ok(Store::Postgres(PgStore {
                writer: pool.clone(),
                reader: pool,
            }))
        } else if url.starts_with("sqlite:") {
            let connect = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Full)
                .busy_timeout(Duration::from_secs(5))
                .foreign_keys(true);
            if let Some(dir) = connect.get_filename().parent() {
                if !dir.as_os_str().is_empty() {
                    std::fs::create_dir_all(dir).map_err(|e| StoreError::Unavailable(sqlx::Error::Io(e)))?;
                }
            }
            // One writer connection: SQLite has one writer at a time anyway, and
            // queueing in the pool avoids SQLITE_BUSY between our own connections.
            let writer = SqlitePoolOptions::new()
                .max_connections(1)
                .acquire_timeout(options.acquire_timeout)
                .connect_with(connect.clone())
                .await?;
            let reader = SqlitePoolOptions::new()
                .max_connections(options.max_connections.max(1))
                .acquire_timeout(options.acquire_timeout)
                .connect_with(connect)
                .await?;
            Ok(Store::Sqlite(SqliteStore { writer, reader }))
        } else {
            Err(StoreError::UnsupportedUrl)
        }
    }

    /// Applies the backend's pending migrations.
    ///
    /// # Errors
    /// [`StoreError::Migrate`].
    pub async fn migrate(&self) -> Result<(), StoreError> {
        match self {
            Store::Postgres(s) => PG_MIGRATOR.run(&s.writer).await?,
            Store::Sqlite(s) => SQLITE_MIGRATOR.run(&s.writer).await?,
        }
        Ok(())
    }

    /// `"postgres"` or `"sqlite"`.
    pub fn backend_name(&self) -> &'static str {
        match self {
            Store::Postgres(_) => "postgres",
            Store::Sqlite(_) => "sqlite",
        }
    }

    /// Closes every pooled connection.
    pub async fn close(&self) {
        dispatch!(self.close())
    }

    /// Runs `SELECT 1`.
    ///
    /// # Errors
    /// The database's error, typically [`StoreError::Unavailable`].
    pub async fn ping(&self) -> Result<(), StoreError> {
        dispatch!(self.ping())
    }

    /// Creates a channel with its first members.
    ///
    /// # Errors
    /// [`StoreError::Exists`] when the id is taken.
    pub async fn create_channel(
        &self,
        channel_id: &ChannelId,
        members: &[UserId],
        now: i64,
    ) -> Result<Channel, StoreError> {
        dispatch!(self.create_channel(channel_id, members, now))
    }

    /// The channel and its members, or `None`.
    pub async fn channel(&self, channel_id: &ChannelId) -> Result<Option<Channel>, StoreError> {
        dispatch!(self.channel(channel_id))
    }

    /// Adds (`add == true`) or removes a member; no-op when already so.
    /// Takes the channel lock, so sends committed after it see the change.
    /// Returns the channel's last `seq` at the change: every message after it
    /// was stored with the new membership.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] for an unknown channel.
    pub async fn set_member(
        &self,
        channel_id: &ChannelId,
        user_id: &UserId,
        add: bool,
        now: i64,
    ) -> Result<i64, StoreError> {
        dispatch!(self.set_member(channel_id, user_id, add, now))
    }

    /// Whether `user_id` is a current member of `channel_id` (false for an unknown channel).
    pub async fn is_member(&self, channel_id: &ChannelId, user_id: &UserId) -> Result<bool, StoreError> {
        dispatch!(self.is_member(channel_id, user_id))
    }

    /// The HELLO state of every channel `user_id` is a member of, by channel id.
    pub async fn channel_states(&self, user_id: &UserId) -> Result<Vec<ChannelState>, StoreError> {
        dispatch!(self.channel_states(user_id))
    }

    /// Up to `limit` messages with `seq > after_seq`, in `seq` order, and
    /// whether more were stored after the last one returned.
    pub async fn messages_after(
        &self,
        channel_id: &ChannelId,
        after_seq: i64,
        limit: u32,
    ) -> Result<(Vec<StoredMessage>, bool), StoreError> {
        dispatch!(self.messages_after(channel_id, after_seq, limit))
    }

    /// The message with this id, or `None`.
    pub async fn message(&self, message_id: uuid::Uuid) -> Result<Option<StoredMessage>, StoreError> {
        dispatch!(self.message(message_id))
    }

    /// The message stored under the idempotency key, or `None`.
    pub async fn message_by_key(
        &self,
        sender_id: &UserId,
        client_msg_id: &ClientMsgId,
    ) -> Result<Option<StoredMessage>, StoreError> {
        dispatch!(self.message_by_key(sender_id, client_msg_id))
    }

    /// Moves `user_id`'s delivered (or read) watermark in the message's channel
    /// forward to the message's `seq`. Returns whether it moved.
    pub async fn advance_watermark(
        &self,
        user_id: &UserId,
        message: &StoredMessage,
        read: bool,
    ) -> Result<bool, StoreError> {
        dispatch!(self.advance_watermark(user_id, message, read))
    }

    /// Stores a batch of sends in one transaction with one durable commit.
    /// Channels are locked in id order, so concurrent batches cannot deadlock
    /// on channel rows. Returns after the commit.
    ///
    /// # Errors
    /// Any database error fails the whole batch and stores nothing;
    /// [`StoreError::Retry`] when it lost a deadlock and may be run again.
    pub async fn write_batch(&self, sends: &[NewMessage], now: i64) -> Result<BatchOutcome, StoreError> {
        dispatch!(self.write_batch(sends, now))
    }
}
