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
//! [`POLL`] for up to [`WAIT`]; otherwise it goes to the primary. The check
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
//! When the setting is off there is no replica and none of this runs: no
//! query is added to a read or a write. When it is on, a send is unchanged
//! too (the position is asked by the read, on the primary's read pool).

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

/// The standby's pool (PostgreSQL only; an SQLite store never has one).
#[derive(Debug)]
pub struct Replica<D: Database> {
    pub(super) pool: sqlx::Pool<D>,
}

/// Where a read goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// The standby: it had replayed the primary's position.
    Standby,
    /// The primary: the standby was behind for [`WAIT`], or failed.
    Primary,
}

impl<D: Dialect> Replica<D> {
    /// Where a read beginning now may go, given `primary` (the pool whose
    /// position the standby must reach). Counts the choice in the metrics.
    ///
    /// # Errors
    /// The primary's error when its position cannot be read (the read
    /// would fail there too).
    pub(super) async fn choose(&self, primary: &sqlx::Pool<D>) -> Result<Source, StoreError> {
        let mut conn = primary.acquire().await?;
        let row = sqlx::query::<D>(PRIMARY_POSITION).fetch_one(conn.ex()).await?;
        drop(conn);
        let position: String = row.value(0)?;
        let started = Instant::now();
        let reason = match tokio::time::timeout(WAIT, self.wait_for(&position)).await {
            Ok(Ok(())) => {
                telemetry::db_replica_read();
                return Ok(Source::Standby);
            }
            Ok(Err(error)) => {
                tracing::debug!(%error, "standby failed; reading from the primary");
                "error"
            }
            Err(_) => {
                tracing::debug!(%position, waited_ms = started.elapsed().as_millis(), "standby behind; reading from the primary");
                "behind"
            }
        };
        telemetry::db_replica_fallback(reason);
        Ok(Source::Primary)
    }

    /// Returns once the standby has replayed up to `position`.
    async fn wait_for(&self, position: &str) -> Result<(), StoreError> {
        let mut conn = self.pool.acquire().await?;
        loop {
            let row = sqlx::query::<D>(REPLAYED).param(position).fetch_one(conn.ex()).await?;
            if row.value::<bool>(0)? {
                return Ok(());
            }
            tokio::time::sleep(POLL).await;
        }
    }
}
