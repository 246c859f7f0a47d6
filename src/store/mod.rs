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
//! | `channel_lock.rs` | the channel row lock every write of a channel takes |
//! | `channels.rs` | channels: create, read, list, rename, delete |
//! | `members.rs` | members, when each joined, who shares a channel; mutes and bans as membership changes |
//! | `succession.rs` | a group channel whose last owner goes: the next in line made owner in the same transaction |
//! | `blocks.rs` | users' blocks of other users |
//! | `flags.rs` | flags (reports) of messages |
//! | `moderation.rs` | a channel's mutes (for TYPING) and bans (listed, lifted) |
//! | `direct.rs` | direct channels: the one channel of a pair of users |
//! | `directory.rs` | the directory of public channels |
//! | `entries.rs` | pages of the log, one entry by id or key, [`Store::channel_of`] |
//! | `locked.rs` | what a batch reads of each channel under its lock: members, roles, moderation state |
//! | `log_write/` | a batch of entries: the `Store` methods and SQLite's batch (`mod.rs`), the per-row path (`per_row.rs`: SQLite; PostgreSQL's fallback), what an entry does to its target (`effects.rs`) |
//! | `pg_batch/` | PostgreSQL's set-based batch: the channels locked and read (`lock.rs`), the targets and effects (`changes.rs`), the inserts (`insert.rs`) |
//! | `pg_hosts.rs` | which PostgreSQL host is the primary: a URL's host list followed through failovers; standby or not for `/readyz` |
//! | `replica.rs` | reads from a standby (`database_replica_url`): whether it has replayed the primary's position, else the primary |
//! | `entry_rules.rs` | what decides each entry of a batch, for both write paths |
//! | `receipts.rs` | watermarks and each user's channel positions |
//! | `replies.rs` | replies and threads as reads show them: previews, one thread's pages |
//! | `settings.rs` | users' notification settings per channel (§16) |
//! | `wal_scrub.rs` | SQLite: the `-wal` file truncated after an erasing write, without waiting for readers (retried) |
//! | `retention.rs` | the retention sweep (§19): expired messages erased in bounded batches, no new entry |
//! | `export.rs` | a user's data as one snapshot, page by page (§19's export) |
//! | `search.rs` | search (§18): a page of a user's messages that hold every term, by the trigram index |
//! | `search_indexer.rs` | SQLite: the search index kept after each send's commit, up to a stored watermark; the test hold |
//! | `indexer_signal.rs` | the indexer's wake-up and switches, held by every clone of the store |
//! | `search_separators.rs` | SQLite: the search index's b-tree separators that hold a fragment of a text a transaction took out, repaired before its commit |
//! | `search_terms.rs` | a search's terms and how each database matches one |
//! | `erasure.rs` | erasing a user (§19): its erasure row and watermark, what is left to erase, its rows that are not entries |
//! | `last_seen.rs` | presence's stored `lastSeenAt` |
//! | `webhooks.rs` | webhook cursors, backlog and leases |
//! | `multiparts.rs` | the journal of S3 multipart uploads in progress, so a crash's incomplete uploads can be aborted |
//! | `uploads.rs` | an upload's row stored under its checks (member, not being erased, within `max_unclaimed_upload_bytes`), the uploader's unclaimed bytes, expiring unclaimed uploads |
//!
//! and around them `handle.rs` (the `Store` enum, its timeouts and the
//! `dispatch!` to the database), `entry_types.rs` (the log's rows as stored
//! and read, an upload's row, and the webhook feed's), `batch_types.rs` (what a write is
//! asked and answers), `idempotency.rs` (whether a send is a retry of a
//! stored entry), `channel_types.rs` (channels', members' and positions'
//! rows), `error.rs`, `connect.rs` (URLs, pools, migrations), `dialect.rs`
//! (what an operation needs of a database), `sql_store.rs` (`SqlStore`: its
//! pools, standby and WAL scrub, and the transactions every operation
//! begins; above `dialect.rs`, `replica.rs` and `wal_scrub.rs`, which know
//! nothing of it), `entry_row.rs` (an entry's columns) and `channel_of.rs`
//! (the routing cache).

mod attachments;
mod batch_types;
mod blocks;
mod channel_lock;
mod channel_of;
mod channel_types;
mod channels;
mod connect;
mod dialect;
mod direct;
mod directory;
mod entries;
mod entry_row;
mod entry_rules;
mod entry_types;
mod erasure;
mod error;
mod export;
mod flags;
mod fts5_fold;
mod handle;
mod idempotency;
mod indexer_signal;
mod last_seen;
mod locked;
mod log_write;
mod members;
mod moderation;
mod multiparts;
mod pg_batch;
mod pg_hosts;
mod receipts;
mod replica;
mod replies;
mod retention;
mod search;
mod search_indexer;
pub mod search_separators;
pub mod search_terms;
mod separator_notes;
mod settings;
mod sql_store;
mod succession;
mod uploads;
mod wal_scrub;
mod webhooks;

pub use batch_types::*;
pub use blocks::MAX_BLOCKS;
pub use channel_types::*;
pub use connect::{StoreOptions, PG_MIGRATOR, REPLICA_APPLICATION, SQLITE_MIGRATOR};
pub use directory::DirectoryEntry;
pub use entry_types::*;
pub use erasure::HeldReaction;
pub(crate) use error::CommitSent;
pub use error::StoreError;
pub use export::{ExportItem, ExportMembership, ExportPage, ExportReaction, EXPORT_PAGE};
pub use flags::FlagRow;
pub(crate) use handle::dispatch;
pub use handle::Store;
pub use members::MembershipChange;
pub use moderation::{BanRow, BansPage};
pub use multiparts::JournaledMultipart;
pub use retention::{SweepBatch, MAX_RETENTION_SECS, MAX_SWEEP_BATCH};
pub use search::{BadCursor, SearchPage, SearchRequest, SCAN_WINDOW};
pub use settings::SettingsPatch;
pub use sql_store::{PgStore, SqlStore, SqliteStore};
pub use uploads::UploadStored;
