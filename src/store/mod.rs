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

mod channel_of;
mod dialects;
mod entry_rules;
mod sql;

use std::future::Future;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgDatabaseError, PgPoolOptions, PgSeverity};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

pub use dialects::{PgStore, SqliteStore};

use crate::ids::{ChannelId, ClientMsgId, UserId};

/// Migrations of the PostgreSQL schema, embedded at compile time.
pub static PG_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");
/// Migrations of the SQLite schema, embedded at compile time.
pub static SQLITE_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");

/// The kind of a log entry (`docs/protocol.md` §8), as the `kind` column holds it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A message (MSG_SEND).
    #[default]
    Message,
    /// A new text for a message (MSG_EDIT).
    Edit,
    /// A message deleted (MSG_DELETE).
    Delete,
    /// A reaction added or removed (MSG_REACT).
    Reaction,
}

impl EntryKind {
    /// The `kind` column's text.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Message => "message",
            Self::Edit => "edit",
            Self::Delete => "delete",
            Self::Reaction => "reaction",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "message" => Self::Message,
            "edit" => Self::Edit,
            "delete" => Self::Delete,
            "reaction" => Self::Reaction,
            _ => return None,
        })
    }
}

/// One emoji's reactions on a message at the time of a read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReactionState {
    pub emoji: String,
    /// Users holding it (> 0).
    pub count: i64,
    /// Whether the reader holds it.
    pub me: bool,
}

/// A stored log entry (of any kind), read back or just written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// UUIDv7 assigned when the entry was stored.
    pub message_id: uuid::Uuid,
    pub channel_id: ChannelId,
    pub sender_id: UserId,
    /// The sender's idempotency key.
    pub client_msg_id: ClientMsgId,
    /// Position in the channel, 1-based, gapless.
    pub seq: i64,
    /// The text as sent (a message) or the new text (an edit); `""` for a
    /// delete or a reaction, and once the message (or the edit's target) is
    /// deleted.
    pub body: String,
    /// Stored time, ms since the Unix epoch.
    pub ts: i64,
    pub kind: EntryKind,
    /// Edit, delete, reaction: the target message.
    pub target_id: Option<uuid::Uuid>,
    /// Reaction: the emoji.
    pub emoji: Option<String>,
    /// Reaction: `Some(true)` add, `Some(false)` remove.
    pub add: Option<bool>,
    /// Message: the latest edit's text, when edited and not deleted.
    pub edited_body: Option<String>,
    /// Message: the latest edit's ts, when edited and not deleted.
    pub edited_at: Option<i64>,
    /// Message: deleted (its text is gone).
    pub deleted: bool,
    /// Reaction: it changed nothing (add of a held one, remove of one not held).
    pub noop: bool,
    /// Message, in reads for a reader only: its reactions by first use.
    pub reactions: Vec<ReactionState>,
}

impl Entry {
    /// Whether a MSG_SEND with this entry's key and `channel_id` and `body`
    /// is a retry of it (guarantee 2: same key, channel and body); else the
    /// key was used for another entry (`idempotency_conflict`). Once the
    /// message is deleted its text is gone and cannot be compared: the same
    /// key and channel is then a retry.
    pub fn is_retried_by(&self, channel_id: &str, body: &str) -> bool {
        self.kind == EntryKind::Message && self.channel_id.as_str() == channel_id && (self.body == body || self.deleted)
    }

    /// Whether `new` (with this entry's key) is a retry of this entry: the
    /// same frame type, channel, target, body, emoji and op (§8). An edit
    /// whose target was deleted has lost its text (`""`, which no edit can
    /// send): its body is not compared.
    pub fn is_retried_as(&self, new: &NewEntry) -> bool {
        match &new.change {
            Change::Message => self.is_retried_by(new.channel_id.as_str(), &new.body),
            Change::Edit { target } => {
                self.kind == EntryKind::Edit
                    && self.target_id == Some(*target)
                    && (self.body == new.body || self.body.is_empty())
            }
            Change::Delete { target } => self.kind == EntryKind::Delete && self.target_id == Some(*target),
            Change::React { target, emoji, add } => {
                self.kind == EntryKind::Reaction
                    && self.target_id == Some(*target)
                    && self.emoji.as_deref() == Some(emoji.as_str())
                    && self.add == Some(*add)
            }
        }
    }

    /// The text a read shows: `""` when deleted, else the latest edit's, else as sent.
    pub fn current_body(&self) -> &str {
        if self.deleted {
            ""
        } else {
            self.edited_body.as_deref().unwrap_or(&self.body)
        }
    }
}

/// What a new entry does (the kind of entry, with its target).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Change {
    /// A message (MSG_SEND): `body` is its text.
    #[default]
    Message,
    /// A new text (`body`) for the sender's own message `target`.
    Edit { target: uuid::Uuid },
    /// Deletes the sender's own message `target` and erases its text.
    Delete { target: uuid::Uuid },
    /// Adds (`add`) or removes the sender's reaction `emoji` on `target`.
    React {
        target: uuid::Uuid,
        emoji: String,
        add: bool,
    },
}

impl Change {
    /// The entry kind this change is stored as.
    pub fn kind(&self) -> EntryKind {
        match self {
            Change::Message => EntryKind::Message,
            Change::Edit { .. } => EntryKind::Edit,
            Change::Delete { .. } => EntryKind::Delete,
            Change::React { .. } => EntryKind::Reaction,
        }
    }

    /// The target message, for every kind but a message.
    pub fn target(&self) -> Option<uuid::Uuid> {
        match self {
            Change::Message => None,
            Change::Edit { target } | Change::Delete { target } | Change::React { target, .. } => Some(*target),
        }
    }
}

/// A page of entries read in their current state ([`Store::entries_after`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntriesPage {
    /// In `seq` order, `message` entries with their state and reactions.
    pub entries: Vec<Entry>,
    /// Whether more entries were stored after the last one returned.
    pub has_more: bool,
    /// The channel's last seq in the read's snapshot: the states include
    /// every entry up to it.
    pub last_seq: i64,
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
    /// Display name, `None` when unset.
    pub name: Option<String>,
    /// Metadata: the serialized text of a JSON object, `None` when unset.
    pub metadata: Option<String>,
}

/// A change to a channel's `name` and `metadata`: for each, `None` leaves
/// it as it is, `Some(None)` clears it, `Some(Some(v))` sets it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelPatch {
    /// The new display name.
    pub name: Option<Option<String>>,
    /// The new metadata, the serialized text of a JSON object.
    pub metadata: Option<Option<String>>,
}

/// An entry to persist (a send, edit, delete or reaction), already validated.
#[derive(Debug, Clone)]
pub struct NewEntry {
    pub sender_id: UserId,
    /// The channel; for an entry about a message, the target's channel.
    pub channel_id: ChannelId,
    pub client_msg_id: ClientMsgId,
    /// A message's or an edit's text; `""` for the other kinds.
    pub body: String,
    /// What the entry is.
    pub change: Change,
}

/// What became of one send in a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryOutcome {
    /// Newly stored by this batch.
    Stored(Entry),
    /// The key was already stored with the same channel and body: the original.
    Duplicate(Entry),
    /// The key was already stored with another channel or body; nothing stored.
    Conflict,
    /// Unknown channel or the sender is not a member; nothing stored.
    Forbidden,
    /// Edit, delete, reaction: the target is unknown or deleted.
    TargetNotFound,
    /// Edit, delete, reaction: the target is not a `message` entry.
    TargetNotAMessage,
    /// Edit, delete: the sender did not send the target.
    NotTheSender,
}

/// The result of one committed batch of sends.
#[derive(Debug, Default)]
pub struct BatchOutcome {
    /// One outcome per send, in the order given.
    pub outcomes: Vec<EntryOutcome>,
    /// The members, read under the channel lock, of every channel that got a
    /// new message: the fan-out's recipients.
    pub members: Vec<(ChannelId, Vec<UserId>)>,
}

/// Who of a channel's members has no open session on any node, asked by a
/// batch that stores entries while webhooks are on (protocol §12,
/// `offlineMembers`), once per channel, with the channel locked, so the
/// answer is the one at the entry's commit. The store knows no sessions: the
/// delivery side implements it.
pub trait OfflineMembers: Sync {
    /// Those of `members` (in byte order) with no open session on any node,
    /// in the same order.
    fn offline(&self, members: &[UserId]) -> Vec<UserId>;
}

/// A channel whose log goes past its webhook cursor ([`Store::webhook_backlog`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookBacklog {
    pub channel_id: ChannelId,
    /// The channel's last seq.
    pub last_seq: i64,
    /// The cursor: the last seq delivered (0: none).
    pub delivered_seq: i64,
    /// The `ts` of the first entry after the cursor (ms), when it exists.
    pub first_ts: Option<i64>,
}

/// A log entry as the webhook feed reads it ([`Store::webhook_entries_after`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookEntry {
    /// The entry as stored (its MSG_RECV is [`crate::view::recv`]'s).
    pub entry: Entry,
    /// The members other than the sender with no open session on any node
    /// when it was committed; empty for an entry stored while webhooks were off.
    pub offline_members: Vec<UserId>,
}

/// Where a user stands in one channel: the channel's last `seq` and the
/// user's watermarks (HELLO's channel entries).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelPosition {
    pub channel_id: ChannelId,
    /// Highest stored `seq` (0 when empty).
    pub last_seq: i64,
    /// The user's delivered watermark.
    pub delivered_seq: i64,
    /// The user's read watermark (at most `delivered_seq`).
    pub read_seq: i64,
    /// `message` entries after `read_seq`, not deleted, not sent by the user.
    pub unread: i64,
    /// The channel's display name, `None` when unset.
    pub name: Option<String>,
    /// The channel's metadata (serialized JSON object), `None` when unset.
    pub metadata: Option<String>,
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
    fn after_commit_sent(e: sqlx::Error) -> Self {
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

    fn is_set(&self) -> bool {
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
                // (55P03), a session ended for idling in a transaction (25P03).
                // Seen before a commit was sent, each means nothing was stored;
                // after it, `after_commit_sent` decides.
                Some(c)
                    if c.starts_with("08")
                        || c.starts_with("53")
                        || c.starts_with("57P")
                        || c.starts_with("28")
                        || matches!(c, "55000" | "3D000" | "57014" | "55P03" | "25P03") =>
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

/// The database, whichever backend the URL names.
#[derive(Debug, Clone)]
pub enum Store {
    Postgres(PgStore),
    Sqlite(SqliteStore),
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

macro_rules! dispatch {
    ($self:ident . $method:ident ( $($arg:expr),* )) => {
        match $self {
            Store::Postgres(s) => s.$method($($arg),*).await,
            Store::Sqlite(s) => s.$method($($arg),*).await,
        }
    };
}

/// Runs a backend's write method with a fresh [`CommitSent`] (passed as its
/// last argument) until `deadline`, through [`Store::write`].
macro_rules! dispatch_write {
    ($self:ident, $deadline:expr, $method:ident ( $($arg:expr),* )) => {{
        let sent = CommitSent::default();
        Self::write($deadline, &sent, async { dispatch!($self.$method($($arg,)* &sent)) }).await
    }};
}

impl Store {
    /// Opens the database named by `options.url` (creating an SQLite file and
    /// its directory when missing) without running migrations.
    ///
    /// Every later call is bounded by `options.timeout`, however the database
    /// fails (down, unreachable, hung, locked):
    /// - waiting for a pooled connection (connecting included) gives up after it;
    /// - PostgreSQL sessions run with `statement_timeout` and
    ///   `idle_in_transaction_session_timeout` set to it, so the server itself
    ///   cancels a statement stuck on a lock and ends a transaction its client
    ///   abandoned (its row locks are released, its writes rolled back);
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
            let ms = timeout.as_millis().max(1).to_string();
            let connect = sqlx::postgres::PgConnectOptions::from_str(url)?.options([
                ("synchronous_commit", "on"),
                ("statement_timeout", ms.as_str()),
                ("idle_in_transaction_session_timeout", ms.as_str()),
            ]);
            let pool = PgPoolOptions::new()
                .max_connections(options.max_connections)
                .acquire_timeout(timeout)
                .connect_with(connect)
                .await?;
            Ok(Store::Postgres(PgStore {
                write_pool: pool.clone(),
                read_pool: pool,
                timeout,
                channel_of_cache: Arc::new(channel_of::ChannelOfCache::new(channel_of::CAPACITY)),
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
            Ok(Store::Sqlite(SqliteStore {
                write_pool,
                read_pool,
                timeout,
                channel_of_cache: Arc::new(channel_of::ChannelOfCache::new(channel_of::CAPACITY)),
            }))
        } else {
            Err(StoreError::UnsupportedUrl)
        }
    }

    /// Applies the backend's pending migrations. On PostgreSQL they run on a
    /// connection of their own without the store's timeouts (a migration may
    /// rightly take long, and waits for another node's migration lock), which
    /// is closed afterwards.
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
                PG_MIGRATOR.run(&mut conn).await?;
                let _ = sqlx::Connection::close(conn).await;
            }
            Store::Sqlite(s) => SQLITE_MIGRATOR.run(&s.write_pool).await?,
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
        dispatch_write!(self, self.deadline(), create_channel(channel_id, members, now))
    }

    /// The channel and its members, or `None`.
    pub async fn channel(&self, channel_id: &ChannelId) -> Result<Option<Channel>, StoreError> {
        self.read(async { dispatch!(self.channel(channel_id)) }).await
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
        dispatch_write!(self, self.deadline(), set_member(channel_id, user_id, add, now))
    }

    /// The current members of `channel_id` with the seq each (last) joined
    /// at (see [`Self::member_since`]), earliest join first; empty for an
    /// unknown channel. Messages read back from the database go to the
    /// members who joined before them.
    pub async fn members_since(&self, channel_id: &ChannelId) -> Result<Vec<(UserId, i64)>, StoreError> {
        self.read(async { dispatch!(self.members_since(channel_id)) }).await
    }

    /// `Some(seq)` when `user_id` is a current member of `channel_id`: the
    /// channel's last seq when the member (last) joined, so every message
    /// after it was stored with this member (0 for members added with the
    /// channel). `None` for a non-member or an unknown channel.
    pub async fn member_since(&self, channel_id: &ChannelId, user_id: &UserId) -> Result<Option<i64>, StoreError> {
        self.read(async { dispatch!(self.member_since(channel_id, user_id)) })
            .await
    }

    /// Whether `user_id` is a current member of `channel_id` (false for an unknown channel).
    pub async fn is_member(&self, channel_id: &ChannelId, user_id: &UserId) -> Result<bool, StoreError> {
        Ok(self.member_since(channel_id, user_id).await?.is_some())
    }

    /// Where `user_id` stands in every channel it is a member of, by channel id.
    pub async fn channel_states(&self, user_id: &UserId) -> Result<Vec<ChannelPosition>, StoreError> {
        self.read(async { dispatch!(self.channel_states(user_id)) }).await
    }

    /// Up to `limit` messages with `seq > after_seq`, in `seq` order, and
    /// whether more were stored after the last one returned.
    pub async fn messages_after(
        &self,
        channel_id: &ChannelId,
        after_seq: i64,
        limit: u32,
    ) -> Result<(Vec<Entry>, bool), StoreError> {
        self.read(async { dispatch!(self.messages_after(channel_id, after_seq, limit)) })
            .await
    }

    /// As [`Self::messages_after`], each `message` entry with its state at
    /// the time of the read, reactions included (`me` for `reader`; none
    /// holds it for `None`, the admin): one statement for the page and one
    /// for the reactions of all its messages, whatever the page's size, and
    /// one for the channel's last seq, all from one snapshot.
    pub async fn entries_after(
        &self,
        channel_id: &ChannelId,
        after_seq: i64,
        limit: u32,
        reader: Option<&UserId>,
    ) -> Result<EntriesPage, StoreError> {
        self.read(async { dispatch!(self.entries_after(channel_id, after_seq, limit, reader)) })
            .await
    }

    /// As [`Self::entries_after`], for the last `limit` entries with
    /// `seq < before_seq`, returned in `seq` order, and whether older ones
    /// exist: one backward scan of the `(channel_id, seq)` index, whatever
    /// the channel's length.
    pub async fn entries_before(
        &self,
        channel_id: &ChannelId,
        before_seq: i64,
        limit: u32,
        reader: Option<&UserId>,
    ) -> Result<EntriesPage, StoreError> {
        self.read(async { dispatch!(self.entries_before(channel_id, before_seq, limit, reader)) })
            .await
    }

    /// Up to `limit` channels with an id above `after` (every channel when
    /// `None`) in byte order of the id, and whether more follow.
    pub async fn list_channels(
        &self,
        after: Option<&ChannelId>,
        limit: u32,
    ) -> Result<(Vec<Channel>, bool), StoreError> {
        self.read(async { dispatch!(self.list_channels(after, limit)) }).await
    }

    /// Applies `patch` to the channel's name and metadata; returns the
    /// channel as it is afterwards.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] for an unknown channel.
    pub async fn update_channel(&self, channel_id: &ChannelId, patch: &ChannelPatch) -> Result<Channel, StoreError> {
        dispatch_write!(self, self.deadline(), update_channel(channel_id, patch))?;
        self.channel(channel_id).await?.ok_or(StoreError::NotFound)
    }

    /// Deletes the channel with its messages, members and watermarks in one
    /// transaction (all or nothing), under the channel lock, so a send
    /// either committed before it or finds no channel. Returns the members
    /// it had.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] for an unknown channel.
    pub async fn delete_channel(&self, channel_id: &ChannelId) -> Result<Vec<UserId>, StoreError> {
        dispatch_write!(self, self.deadline(), delete_channel(channel_id))
    }

    /// Where entry `message_id` lives, to route a change of it: its kind and
    /// channel, or `None` when no entry has this id. Answered from memory for
    /// a message this node stored or routed before (a message never moves;
    /// see `channel_of.rs` for why a deleted channel does not matter), else read.
    ///
    /// # Errors
    /// As [`Store::message`].
    pub async fn channel_of(&self, message_id: uuid::Uuid) -> Result<Option<(EntryKind, ChannelId)>, StoreError> {
        let cache = self.channel_of_cache();
        if let Some(channel_id) = cache.get(&message_id) {
            return Ok(Some((EntryKind::Message, channel_id)));
        }
        let Some(stored) = self.message(message_id).await? else {
            return Ok(None);
        };
        if stored.kind == EntryKind::Message {
            cache.remember(message_id, &stored.channel_id);
        }
        Ok(Some((stored.kind, stored.channel_id)))
    }

    fn channel_of_cache(&self) -> &channel_of::ChannelOfCache {
        match self {
            Store::Postgres(s) => &s.channel_of_cache,
            Store::Sqlite(s) => &s.channel_of_cache,
        }
    }

    /// The message with this id, or `None`.
    pub async fn message(&self, message_id: uuid::Uuid) -> Result<Option<Entry>, StoreError> {
        self.read(async { dispatch!(self.message(message_id)) }).await
    }

    /// The message stored under the idempotency key, or `None`.
    pub async fn message_by_key(
        &self,
        sender_id: &UserId,
        client_msg_id: &ClientMsgId,
    ) -> Result<Option<Entry>, StoreError> {
        self.read(async { dispatch!(self.message_by_key(sender_id, client_msg_id)) })
            .await
    }

    /// Moves `user_id`'s delivered (or read) watermark in the message's channel
    /// forward to the message's `seq`. Returns whether it moved.
    ///
    /// # Errors
    /// [`StoreError::InDoubt`] when the connection failed after the statement
    /// was sent (the watermark may have moved; moving it again is harmless).
    pub async fn advance_watermark(&self, user_id: &UserId, message: &Entry, read: bool) -> Result<bool, StoreError> {
        dispatch_write!(self, self.deadline(), advance_watermark(user_id, message, read))
    }

    /// Which of `others` share at least one channel with `user` (presence
    /// shows only those), in no order. A read.
    pub async fn sharing_a_channel(&self, user: &UserId, others: &[UserId]) -> Result<Vec<UserId>, StoreError> {
        if others.is_empty() {
            return Ok(Vec::new());
        }
        self.read(async { dispatch!(self.sharing_a_channel(user, others)) })
            .await
    }

    /// The stored `lastSeenAt` (ms) of those of `users` that have one.
    pub async fn last_seen(&self, users: &[UserId]) -> Result<Vec<(UserId, i64)>, StoreError> {
        if users.is_empty() {
            return Ok(Vec::new());
        }
        self.read(async { dispatch!(self.last_seen(users)) }).await
    }

    /// Moves each user's stored `lastSeenAt` forward to the given time (ms;
    /// never back), in one transaction: presence writes in batches.
    ///
    /// # Errors
    /// The store's error; nothing, or all of it, is written.
    pub async fn record_last_seen(&self, seen: &[(UserId, i64)]) -> Result<(), StoreError> {
        if seen.is_empty() {
            return Ok(());
        }
        dispatch_write!(self, self.deadline(), record_last_seen(seen))
    }

    /// Channels whose log goes past their webhook cursor, with the cursor
    /// (one read over every channel: the webhook feed polls it).
    pub async fn webhook_backlog(&self) -> Result<Vec<WebhookBacklog>, StoreError> {
        self.read(async { dispatch!(self.webhook_backlog()) }).await
    }

    /// Channel `channel_id`'s webhook cursor: the last seq delivered (0: none).
    pub async fn webhook_cursor(&self, channel_id: &ChannelId) -> Result<i64, StoreError> {
        self.read(async { dispatch!(self.webhook_cursor(channel_id)) }).await
    }

    /// Up to `limit` entries of `channel_id` with `seq > after_seq`, in seq
    /// order, each with its `offlineMembers`.
    pub async fn webhook_entries_after(
        &self,
        channel_id: &ChannelId,
        after_seq: i64,
        limit: u32,
    ) -> Result<Vec<WebhookEntry>, StoreError> {
        self.read(async { dispatch!(self.webhook_entries_after(channel_id, after_seq, limit)) })
            .await
    }

    /// Moves `channel_id`'s webhook cursor from `from` to `to` (`now` ms),
    /// only when it is still at `from`. Returns whether it moved: false when
    /// an operator (a replay) or another node moved it meanwhile; the caller
    /// reads it again.
    ///
    /// # Errors
    /// [`StoreError::InDoubt`] when the connection failed after the
    /// statement was sent (it may have moved; the entries are then sent again).
    pub async fn move_webhook_cursor(
        &self,
        channel_id: &ChannelId,
        from: i64,
        to: i64,
        now: i64,
    ) -> Result<bool, StoreError> {
        dispatch_write!(self, self.deadline(), move_webhook_cursor(channel_id, from, to, now))
    }

    /// PostgreSQL: takes or renews, for `owner`, every one of `buckets` that
    /// is free, expired or its own already, for `ttl_ms` on the database's
    /// clock; returns those it holds now. SQLite (one node): every bucket,
    /// without a database call.
    pub async fn take_webhook_leases(&self, owner: &str, buckets: &[i32], ttl_ms: i64) -> Result<Vec<i32>, StoreError> {
        match self {
            Store::Postgres(s) => self.read(s.take_webhook_leases(owner, buckets, ttl_ms)).await,
            Store::Sqlite(_) => Ok(buckets.to_vec()),
        }
    }

    /// PostgreSQL: gives back `owner`'s leases (clean shutdown) so another
    /// node takes them at once. SQLite: nothing.
    pub async fn release_webhook_leases(&self, owner: &str) -> Result<(), StoreError> {
        match self {
            Store::Postgres(s) => self.read(s.release_webhook_leases(owner)).await,
            Store::Sqlite(_) => Ok(()),
        }
    }

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
