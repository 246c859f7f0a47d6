//! Reads from a PostgreSQL standby (`database_replica_url`, off by default):
//! history and `SYNC` pages, thread pages and search may read from it, and
//! every such read still sees what was committed before it began.
//!
//! Read your writes, by WAL position: before a read goes to the standby,
//! chatd asks the primary for its WAL position (`pg_current_wal_lsn()`),
//! which is past the commit record of every transaction that had committed
//! by then, this session's last send included (its ACK is sent after its
//! commit returned). The read goes to the standby once the standby has
//! replayed up to that position (`pg_last_wal_replay_lsn()`), asked every
//! [`POLL`] for up to [`WAIT`]; otherwise it goes to the primary (and for
//! [`BACK_OFF`] reads do not wait for it again, or, after an error, do not
//! try it at all). The check
//! runs before the read's snapshot is taken (a statement of its own: a
//! snapshot taken in the same statement could be older than the position it
//! reads), and replay only moves forward, so the snapshot holds every
//! commit the primary held when the read began. This is stronger than a
//! session's own writes: a write by any session or node finished before the
//! read began is seen, so a reconnect to another node, or an HTTP read
//! through another node, loses nothing either.
//!
//! Guarantee 4 (no read returns a `seq` while a lower one is invisible)
//! holds on the standby as on the primary: seq N of a channel is written
//! under the channel's row lock, which seq N-1's transaction held until its
//! commit record was written, so N-1's commit record precedes N's in the
//! WAL; the standby replays commit records in WAL order, and a snapshot on
//! it sees a prefix of them, so one that sees N sees N-1.
//!
//! A read that fails on the standby runs again on the primary
//! ([`super::sql_store::fresh_read`]).
//!
//! When the setting is off there is no replica and none of this runs: no
//! query is added to a read or a write. When it is on, a send is unchanged
//! too (the position is asked by the read, on the primary's read pool).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use sqlx::Database;

use super::dialect::{Columns, Dialect, Executes, Params};
use super::error::StoreError;
use crate::telemetry;

/// The longest a read waits for the standby to replay the primary's
/// position before it reads from the primary instead.
pub(super) const WAIT: Duration = Duration::from_millis(50);
/// How often the standby's replay position is asked while waiting.
pub(super) const POLL: Duration = Duration::from_millis(2);

/// The primary's WAL position, as text (`0/3000148`).
const PRIMARY_POSITION: &str = "SELECT pg_current_wal_lsn()::text";
/// Whether the standby has replayed up to `$1`. A server that is not in
/// recovery (the standby was promoted) has everything it wrote.
const REPLAYED: &str = "SELECT COALESCE(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() \
     ELSE pg_current_wal_lsn() END >= $1::pg_lsn, FALSE)";

/// The longest a read waits for a connection to the standby (a new one
/// included) before it takes the standby for failed.
pub(super) const CONNECT: Duration = Duration::from_millis(250);

/// How long reads stay off a standby that failed (they go to the primary
/// at once), and how long, after the standby was found behind, a read asks
/// it once instead of waiting up to [`WAIT`] (a standby that lags for a
/// while would add [`WAIT`] to every read).
pub(super) const BACK_OFF: Duration = Duration::from_secs(1);

/// The standby's pool (PostgreSQL only; an SQLite store never has one) and
/// what the last reads found of it.
#[derive(Debug)]
pub struct Replica<D: Database> {
    pub(super) pool: sqlx::Pool<D>,
    health: Mutex<Health>,
}

/// When the standby last failed, and last was behind.
#[derive(Debug, Default, Clone, Copy)]
struct Health {
    failed: Option<Instant>,
    behind: Option<Instant>,
}

/// Where a read goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// The standby: it had replayed the primary's position.
    Standby,
    /// The primary: the standby was behind for [`WAIT`], or failed.
    Primary,
}

fn recent(at: Option<Instant>) -> bool {
    at.is_some_and(|at| at.elapsed() < BACK_OFF)
}

impl<D: Database> Replica<D> {
    /// The standby at `pool`, not known to have failed or lagged.
    pub(super) fn new(pool: sqlx::Pool<D>) -> Self {
        Self {
            pool,
            health: Mutex::new(Health::default()),
        }
    }

    fn health(&self) -> std::sync::MutexGuard<'_, Health> {
        self.health.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The standby failed (a connection or a statement): reads skip it for
    /// [`BACK_OFF`]. Counted as a fallback (`error`).
    pub(super) fn failed(&self, error: &dyn std::fmt::Display) {
        tracing::debug!(%error, "standby failed; reading from the primary");
        self.health().failed = Some(Instant::now());
        telemetry::db_replica_fallback("error");
    }
}

impl<D: Dialect> Replica<D> {
    /// Where a read beginning now may go, given `primary` (the pool whose
    /// position the standby must reach). Counts a choice of the primary in
    /// the metrics (a read the standby served is counted once it is done).
    /// A standby that gives no connection within [`CONNECT`] failed.
    /// Within [`BACK_OFF`] of a failure of the standby: the primary, without
    /// asking either; within [`BACK_OFF`] of finding it behind: the standby
    /// only if its first answer shows it caught up.
    ///
    /// # Errors
    /// The primary's error when its position cannot be read (the read
    /// would fail there too).
    pub(super) async fn choose(&self, primary: &sqlx::Pool<D>) -> Result<Source, StoreError> {
        let health = *self.health();
        if recent(health.failed) {
            telemetry::db_replica_fallback("error");
            return Ok(Source::Primary);
        }
        let patient = !recent(health.behind);
        // A standby that is down or unreachable: sqlx retries the connect
        // until the pool's acquire timeout, so the wait is bounded here.
        let conn = match tokio::time::timeout(CONNECT, self.pool.acquire()).await {
            Ok(Ok(conn)) => conn,
            Ok(Err(error)) => {
                self.failed(&error);
                return Ok(Source::Primary);
            }
            Err(_) => {
                self.failed(&format!("no connection within {} ms", CONNECT.as_millis()));
                return Ok(Source::Primary);
            }
        };
        let mut on_primary = primary.acquire().await?;
        let row = sqlx::query::<D>(PRIMARY_POSITION).fetch_one(on_primary.ex()).await?;
        drop(on_primary);
        let position: String = row.value(0)?;
        let started = Instant::now();
        match tokio::time::timeout(WAIT, Self::wait_for(conn, &position, patient)).await {
            Ok(Ok(true)) => {
                self.health().behind = None;
                return Ok(Source::Standby);
            }
            Ok(Err(error)) => {
                self.failed(&error);
                return Ok(Source::Primary);
            }
            Ok(Ok(false)) | Err(_) => {
                tracing::debug!(%position, waited_ms = started.elapsed().as_millis(), "standby behind; reading from the primary");
                self.health().behind = Some(Instant::now());
            }
        }
        telemetry::db_replica_fallback("behind");
        Ok(Source::Primary)
    }

    /// Whether the standby has replayed up to `position`: asked every
    /// [`POLL`] until it has when `patient` (the caller bounds the wait),
    /// else once.
    async fn wait_for(
        mut conn: sqlx::pool::PoolConnection<D>,
        position: &str,
        patient: bool,
    ) -> Result<bool, StoreError> {
        loop {
            let row = sqlx::query::<D>(REPLAYED).param(position).fetch_one(conn.ex()).await?;
            if row.value::<bool>(0)? {
                return Ok(true);
            }
            if !patient {
                return Ok(false);
            }
            tokio::time::sleep(POLL).await;
        }
    }
}
