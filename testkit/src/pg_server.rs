//! PostgreSQL servers of the test's own: one to stop, restart, freeze or
//! kill ([`OwnPostgres`]), and a primary with a streaming standby to fail
//! over ([`PgPair`]). They live in `chatd-faults` (`pg_cluster/`), which
//! the fault harness shares.

pub use chatd_faults::pg_cluster::{own_postgres, OwnPostgres, PgPair};

/// A connection to `url`, retried for up to 60 s (a server starting up).
pub async fn connect(url: &str) -> sqlx::PgConnection {
    let started = std::time::Instant::now();
    loop {
        match <sqlx::PgConnection as sqlx::Connection>::connect(url).await {
            Ok(conn) => return conn,
            Err(error) if started.elapsed() > std::time::Duration::from_secs(60) => panic!("connect to {url}: {error}"),
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
        }
    }
}
