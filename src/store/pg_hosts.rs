//! Following the PostgreSQL primary among the hosts of the database URL
//! (libpq's `postgres://h1:5432,h2:5433/db?target_session_attrs=read-write`,
//! split by [`crate::database_hosts`]), and telling a standby from a primary.
//!
//! sqlx opens one host per pool, so chatd does libpq's walk itself:
//! - at startup it tries each host in the order written and takes the first
//!   that answers `SELECT pg_is_in_recovery()` with false, trying again until
//!   the store's timeout (`db_timeout_ms`) ends;
//! - a watcher task asks the current primary the same question every
//!   [`POLL`] on a connection of its own (with the replication lag and the
//!   number of synchronous standbys it sees, for the metrics); when that
//!   fails (the host died, or was demoted) it walks the list again and points
//!   both pools at the new primary (`Pool::set_connect_options`);
//! - every new pooled connection checks `pg_is_in_recovery()` once
//!   (`after_connect`) and is refused on a standby (the pool retries, and the
//!   watcher is woken), and a connection opened before the last switch is
//!   closed instead of being handed out (`before_acquire`), so no write goes
//!   to the old primary after the switch.
//!
//! None of this runs for a URL with one host and no `target_session_attrs`:
//! the send path costs what it did. `/readyz` asks `pg_is_in_recovery()` on
//! every PostgreSQL store ([`PgStore::ping_primary`]).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};
use sqlx::{ConnectOptions, Connection, Row};

use super::error::StoreError;
use super::sql_store::PgStore;
use crate::telemetry;

/// How often the watcher asks the current primary whether it still is one.
pub(super) const POLL: Duration = Duration::from_millis(250);
/// The longest one probe of a host (connect and query) may take.
const PROBE: Duration = Duration::from_secs(2);
/// Pause between two walks of the list at startup, while no host is primary.
const RETRY: Duration = Duration::from_millis(200);

/// What the watcher asks: standby or not, and, on a primary, the replay lag
/// of its slowest standby in bytes (NULL without standbys, or without the
/// `pg_monitor` role) and how many standbys are synchronous now.
const CHECK: &str = "SELECT pg_is_in_recovery(), \
     CASE WHEN pg_is_in_recovery() THEN NULL ELSE \
       (SELECT max(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn))::float8 FROM pg_stat_replication) END, \
     CASE WHEN pg_is_in_recovery() THEN 0 ELSE \
       (SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')) END";

/// The hosts of the URL and which one is the primary now.
#[derive(Debug)]
pub(super) struct PgHosts {
    /// Per host: the options of write connections and of read connections
    /// (they differ in their timeouts, `connect.rs`).
    write: Vec<PgConnectOptions>,
    read: Vec<PgConnectOptions>,
    /// `host:port` per host, for the log.
    labels: Vec<String>,
    current: Mutex<Current>,
    /// Wakes the watcher at once (a pooled connection found a standby).
    wake: tokio::sync::Notify,
}

#[derive(Debug, Clone, Copy)]
struct Current {
    /// Index of the primary in the lists.
    index: usize,
    /// When the pools were last pointed at another host.
    switched: Instant,
}

impl PgHosts {
    /// The hosts, by the options of their write and read connections (same
    /// length and order) and their labels.
    pub(super) fn new(write: Vec<PgConnectOptions>, read: Vec<PgConnectOptions>, labels: Vec<String>) -> Self {
        Self {
            write,
            read,
            labels,
            current: Mutex::new(Current {
                index: 0,
                switched: Instant::now(),
            }),
            wake: tokio::sync::Notify::new(),
        }
    }

    fn current(&self) -> Current {
        *self.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The write and read options of the primary found last.
    pub(super) fn options(&self) -> (PgConnectOptions, PgConnectOptions) {
        let index = self.current().index;
        (self.write[index].clone(), self.read[index].clone())
    }

    /// Walks the list until a primary answers, for up to `within`.
    ///
    /// # Errors
    /// [`StoreError::Unavailable`] when no host was a reachable primary in time.
    pub(super) async fn find_first(&self, within: Duration) -> Result<(), StoreError> {
        let deadline = Instant::now() + within;
        loop {
            let answers = match self.walk_telling().await {
                Ok((index, conn)) => {
                    let _ = conn.close().await;
                    self.current
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .index = index;
                    tracing::info!(host = %self.labels[index], "database primary found");
                    return Ok(());
                }
                Err(answers) => answers,
            };
            if Instant::now() + RETRY >= deadline {
                return Err(StoreError::Unavailable(sqlx::Error::Protocol(format!(
                    "no primary among the database hosts ({})",
                    answers.join("; ")
                ))));
            }
            tokio::time::sleep(RETRY).await;
        }
    }

    /// The first host, from the current one on, that is a primary, with a
    /// connection to it (the watcher's).
    async fn walk(&self) -> Option<(usize, PgConnection)> {
        self.walk_telling().await.ok()
    }

    /// [`Self::walk`], or what each host answered when none was a primary
    /// (`"h1:5432: connection refused"`, `"h2:5433: a standby"`), for the
    /// operator who started chatd with that list.
    async fn walk_telling(&self) -> Result<(usize, PgConnection), Vec<String>> {
        let start = self.current().index;
        let mut answers = Vec::with_capacity(self.write.len());
        for step in 0..self.write.len() {
            let index = (start + step) % self.write.len();
            let label = &self.labels[index];
            let probe = async {
                let mut conn = self.read[index].connect().await?;
                let standby = in_recovery(&mut conn).await?;
                Ok::<_, sqlx::Error>((standby, conn))
            };
            match tokio::time::timeout(PROBE, probe).await {
                Ok(Ok((false, conn))) => return Ok((index, conn)),
                Ok(Ok((true, conn))) => {
                    let _ = conn.close().await;
                    tracing::debug!(host = %label, "database host is a standby");
                    answers.push(format!("{label}: a standby"));
                }
                Ok(Err(error)) => {
                    tracing::debug!(host = %label, %error, "database host unreachable");
                    answers.push(format!("{label}: {error}"));
                }
                Err(_) => {
                    tracing::debug!(host = %label, "database host did not answer");
                    answers.push(format!("{label}: no answer within {} ms", PROBE.as_millis()));
                }
            }
        }
        Err(answers)
    }

    /// Adds the checks of a pool that must only hold connections to the
    /// primary: a new connection to a standby is refused (and the watcher
    /// woken), one opened before the last switch is closed.
    pub(super) fn guard(self: &Arc<Self>, options: PgPoolOptions) -> PgPoolOptions {
        let on_connect = Arc::clone(self);
        let on_acquire = Arc::clone(self);
        options
            .after_connect(move |conn, _| {
                let hosts = Arc::clone(&on_connect);
                Box::pin(async move {
                    if in_recovery(conn).await? {
                        hosts.wake.notify_one();
                        return Err(sqlx::Error::Protocol("connected to a standby".into()));
                    }
                    Ok(())
                })
            })
            .before_acquire(move |_, meta| {
                // Opened after the last switch: `age` is shorter than the time since.
                let fresh = meta.age < on_acquire.current().switched.elapsed();
                Box::pin(async move { Ok(fresh) })
            })
    }

    /// Starts the watcher over the store's two pools; it ends when the
    /// write pool is closed ([`super::Store::close`]).
    pub(super) fn spawn_watcher(self: Arc<Self>, write_pool: PgPool, read_pool: PgPool) {
        tokio::spawn(async move {
            let mut monitor: Option<PgConnection> = None;
            loop {
                if write_pool.is_closed() {
                    if let Some(conn) = monitor {
                        let _ = conn.close().await;
                    }
                    return;
                }
                let healthy = match monitor.as_mut() {
                    Some(conn) => check(conn).await,
                    None => false,
                };
                if !healthy {
                    telemetry::db_primary_known(false);
                    monitor = None;
                    if let Some((index, conn)) = self.walk().await {
                        self.follow(index, &write_pool, &read_pool);
                        telemetry::db_primary_known(true);
                        monitor = Some(conn);
                    }
                }
                tokio::select! {
                    () = tokio::time::sleep(POLL) => {}
                    () = self.wake.notified() => {}
                }
            }
        });
    }

    /// Points both pools at host `index` when it is not the current one.
    fn follow(&self, index: usize, write_pool: &PgPool, read_pool: &PgPool) {
        let mut current = self.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if current.index == index {
            return;
        }
        tracing::warn!(from = %self.labels[current.index], to = %self.labels[index], "database primary moved; following it");
        write_pool.set_connect_options(self.write[index].clone());
        read_pool.set_connect_options(self.read[index].clone());
        *current = Current {
            index,
            switched: Instant::now(),
        };
        telemetry::db_primary_switched();
    }
}

/// `SELECT pg_is_in_recovery()`: true on a standby.
async fn in_recovery(conn: &mut PgConnection) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("SELECT pg_is_in_recovery()").fetch_one(conn).await
}

/// The watcher's question to the current primary: true while it answers
/// and is not in recovery; updates the replication metrics.
async fn check(conn: &mut PgConnection) -> bool {
    let row = match tokio::time::timeout(PROBE, sqlx::query(CHECK).fetch_one(&mut *conn)).await {
        Ok(Ok(row)) => row,
        _ => return false,
    };
    let standby: bool = row.try_get(0).unwrap_or(true);
    if let Ok(Some(lag)) = row.try_get::<Option<f64>, _>(1) {
        telemetry::db_replication_lag(lag);
    }
    if let Ok(sync) = row.try_get::<i64, _>(2) {
        telemetry::db_sync_standbys(sync);
    }
    !standby
}

impl PgStore {
    /// `/readyz`'s question: the database answers and is not a standby.
    ///
    /// # Errors
    /// [`StoreError::Standby`] on a standby, else the database's error.
    pub(super) async fn ping_primary(&self) -> Result<(), StoreError> {
        let standby: bool = sqlx::query_scalar("SELECT pg_is_in_recovery()")
            .fetch_one(&self.read_pool)
            .await?;
        if standby {
            return Err(StoreError::Standby);
        }
        Ok(())
    }
}
