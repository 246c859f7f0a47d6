//! PostgreSQL clusters of a test's or a harness run's own, shared by
//! chatd's tests (through `chatd-testkit`) and the fault harness: one server
//! ([`OwnPostgres`]: `initdb` into a temporary directory, a free port) to
//! stop, restart, freeze or kill under a running chatd, and a primary with a
//! streaming standby ([`PgPair`]: `pg_basebackup -R`) to fail over.
//!
//! The programs run as the `postgres` OS user when we are root
//! (`runuser`). Every call blocks until the program is done.
//!
//! By concern: this file makes a cluster (its directory, port and data:
//! `initdb`, or a base backup of another); `programs.rs` runs PostgreSQL's
//! programs and `psql` on it; `lifecycle.rs` starts, stops, reloads and
//! promotes it, and kills, freezes and thaws its processes; `pair.rs` is
//! [`PgPair`], a primary and its standby, failed over.

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::process::Command;

mod lifecycle;
mod pair;
mod programs;

pub use pair::PgPair;

/// A PostgreSQL cluster in a temporary directory, listening on 127.0.0.1 and a
/// free port. Dropping it resumes it if frozen, stops it and removes the
/// directory, also when the test failed.
pub struct OwnPostgres {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
    /// Run the PostgreSQL programs as the `postgres` OS user (we are root).
    as_postgres: bool,
}

impl OwnPostgres {
    /// Creates the cluster (not started), or `None` when PostgreSQL's server
    /// programs are not installed (said on stderr; a failure instead with
    /// `CHATD_REQUIRE_POSTGRES=1`).
    pub fn init() -> Option<Self> {
        let pg = Self::empty()?;
        let data = pg.data();
        pg.run(
            "initdb",
            &[
                "-D",
                data.to_str().expect("utf-8 path"),
                "-U",
                "postgres",
                "-A",
                "trust",
                "--no-sync",
                "--no-instructions",
            ],
        );
        Some(pg)
    }

    /// A standby of `primary` (running): a base backup of it
    /// (`pg_basebackup -R`, so it streams from `primary` once started), not
    /// started, on a free port of its own.
    pub fn standby_of(primary: &OwnPostgres) -> Self {
        let pg = Self::empty().expect("PostgreSQL was found for the primary");
        pg.base_backup_from(primary.port);
        pg
    }

    /// Replaces this (stopped or killed) cluster's data by a base backup of
    /// the server on `primary_port`: the way back for an old primary after a
    /// failover, as a standby of the new one.
    pub fn rebuild_as_standby_of(&self, primary: &OwnPostgres) {
        let data = self.data();
        let _ = std::fs::remove_dir_all(&data);
        self.base_backup_from(primary.port);
    }

    fn base_backup_from(&self, port: u16) {
        let data = self.data();
        self.run(
            "pg_basebackup",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "-U",
                "postgres",
                "-D",
                data.to_str().expect("utf-8 path"),
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
                "--no-sync",
            ],
        );
    }

    /// The directory and port of a cluster not made yet, or `None` when
    /// PostgreSQL's server programs are not installed.
    fn empty() -> Option<Self> {
        let Some(bin) = Self::find_bin() else {
            assert!(
                std::env::var("CHATD_REQUIRE_POSTGRES").as_deref() != Ok("1"),
                "CHATD_REQUIRE_POSTGRES=1 but initdb was not found (/usr/lib/postgresql/*/bin or PATH)"
            );
            // Straight to the stderr handle: the test harness captures eprintln!.
            let _ = writeln!(
                std::io::stderr(),
                "\n*** tests with their own PostgreSQL SKIPPED: initdb not found ***\n"
            );
            return None;
        };
        let as_postgres = std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false);
        // The postgres user must reach the directory: /tmp rather than a
        // TMPDIR that may sit in root's home.
        let dir = if as_postgres {
            tempfile::Builder::new().prefix("chatd-pg-").tempdir_in("/tmp")
        } else {
            tempfile::Builder::new().prefix("chatd-pg-").tempdir()
        }
        .expect("tempdir");
        if as_postgres {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .expect("chown");
            assert!(status.success(), "chown of the cluster directory failed");
        }
        let port = free_port_below_ephemeral();
        Some(Self {
            bin,
            dir,
            port,
            as_postgres,
        })
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    fn find_bin() -> Option<PathBuf> {
        let mut candidates: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path().join("bin"))
            .collect();
        candidates.sort();
        candidates.reverse();
        if let Some(path) = std::env::var_os("PATH") {
            candidates.extend(std::env::split_paths(&path));
        }
        candidates.into_iter().find(|dir| dir.join("initdb").is_file())
    }
}

/// A port free on 127.0.0.1 below the kernel's ephemeral range
/// (`/proc/sys/net/ipv4/ip_local_port_range`, 32768 when unreadable), in
/// 10000 up to it. A cluster keeps its port across a kill and restart (the
/// multi-host URL chatd holds names it); a port of the ephemeral range can
/// be taken meanwhile as the local end of an outgoing connection (a psql
/// poll, a pool's connect), which lingers in TIME_WAIT for 60 s and makes
/// the restarted postmaster's `bind` fail. No outgoing connection takes a
/// port below the range.
///
/// # Panics
/// When 500 tries find no free port.
fn free_port_below_ephemeral() -> u16 {
    use rand::Rng;
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768)
        .max(10_001);
    let mut rng = rand::rng();
    for _ in 0..500 {
        let port = rng.random_range(10_000..low);
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port in 10000..{low} on 127.0.0.1 after 500 tries");
}

/// Initialises and starts a cluster of the test's own; `None` to skip.
pub fn own_postgres() -> Option<OwnPostgres> {
    let pg = OwnPostgres::init()?;
    pg.start();
    Some(pg)
}
