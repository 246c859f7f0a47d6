//! A PostgreSQL primary and a streaming standby of the test's own, both
//! [`OwnPostgres`] clusters on this machine, for failover tests: kill the
//! primary, promote the standby, bring the old primary back as a standby.

use std::time::{Duration, Instant};

use sqlx::Connection;

use crate::OwnPostgres;

/// A running primary and a standby streaming from it.
pub struct PgPair {
    pub primary: OwnPostgres,
    pub standby: OwnPostgres,
}

impl PgPair {
    /// Makes and starts both clusters, waiting until the standby streams
    /// (and, with `synchronous`, until the primary counts it as its
    /// synchronous standby: `synchronous_standby_names = '*'`, set after the
    /// base backup so the standby, once promoted, does not wait for a
    /// standby of its own). `None` (said on stderr) when PostgreSQL's
    /// programs are not installed; a failure under `CHATD_REQUIRE_POSTGRES=1`.
    pub async fn start(synchronous: bool) -> Option<Self> {
        let primary = OwnPostgres::init()?;
        primary.configure("wal_level = replica\nmax_wal_senders = 10\nwal_keep_size = '64MB'");
        primary.start();
        let standby = OwnPostgres::standby_of(&primary);
        standby.start();
        if synchronous {
            primary.configure("synchronous_standby_names = '*'\nsynchronous_commit = on");
            primary.reload();
        }
        let pair = Self { primary, standby };
        pair.wait_streaming(synchronous).await;
        Some(pair)
    }

    /// The URL naming both hosts, `first` then the other, with
    /// `target_session_attrs=read-write` (what an operator configures).
    pub fn url(&self, standby_first: bool) -> String {
        let (a, b) = if standby_first {
            (self.standby.port(), self.primary.port())
        } else {
            (self.primary.port(), self.standby.port())
        };
        format!("postgres://postgres@127.0.0.1:{a},127.0.0.1:{b}/postgres?target_session_attrs=read-write")
    }

    /// Waits (up to 60 s) until the primary has a standby streaming, and a
    /// synchronous one with `synchronous`.
    pub async fn wait_streaming(&self, synchronous: bool) {
        let sql = if synchronous {
            "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state = 'sync'"
        } else {
            "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'"
        };
        wait_for(&self.primary.url(), sql, "a streaming standby").await;
    }

    /// Waits (up to 60 s) until the standby has replayed everything the
    /// primary has written so far.
    pub async fn wait_replayed(&self) {
        let mut primary = connect(&self.primary.url()).await;
        let lsn: String = sqlx::query_scalar("SELECT pg_current_wal_lsn()::text")
            .fetch_one(&mut primary)
            .await
            .expect("primary's WAL position");
        let sql = format!("SELECT count(*) FROM (SELECT 1 WHERE pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn) AS done");
        wait_for(&self.standby.url(), &sql, "the standby to replay the primary's WAL").await;
    }
}

/// A connection to `url`, retried for up to 60 s (a server starting up).
pub async fn connect(url: &str) -> sqlx::PgConnection {
    let started = Instant::now();
    loop {
        match sqlx::PgConnection::connect(url).await {
            Ok(conn) => return conn,
            Err(error) if started.elapsed() > Duration::from_secs(60) => panic!("connect to {url}: {error}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// Polls `sql` (a count) on `url` until it is positive, for up to 60 s.
async fn wait_for(url: &str, sql: &str, what: &str) {
    let started = Instant::now();
    let mut conn = connect(url).await;
    loop {
        let count: i64 = sqlx::query_scalar(sql).fetch_one(&mut conn).await.expect(what);
        if count > 0 {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "waited 60 s for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
