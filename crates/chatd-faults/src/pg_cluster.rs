//! PostgreSQL clusters of a test's or a harness run's own, shared by
//! chatd's tests (through `chatd-testkit`) and the fault harness: one server
//! ([`OwnPostgres`]: `initdb` into a temporary directory, a free port) to
//! stop, restart, freeze or kill under a running chatd, and a primary with a
//! streaming standby ([`PgPair`]: `pg_basebackup -R`) to fail over.
//!
//! The programs run as the `postgres` OS user when we are root
//! (`runuser`). Every call blocks until the program is done.

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::process::Command;

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

    /// Appends `lines` to its `postgresql.conf` (read at the next start or
    /// [`OwnPostgres::reload`]).
    pub fn configure(&self, lines: &str) {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(self.data().join("postgresql.conf"))
            .expect("open postgresql.conf");
        writeln!(file, "{lines}").expect("write postgresql.conf");
    }

    /// `pg_ctl reload`: the server rereads its configuration.
    pub fn reload(&self) {
        self.run("pg_ctl", &["-D", self.data().to_str().expect("utf-8 path"), "reload"]);
    }

    /// `pg_ctl promote`: a standby becomes a primary (waits until it is).
    pub fn promote(&self) {
        self.run(
            "pg_ctl",
            &[
                "-D",
                self.data().to_str().expect("utf-8 path"),
                "-w",
                "-t",
                "60",
                "promote",
            ],
        );
    }

    /// SIGKILL to the postmaster and every process it started: the machine's
    /// sudden death, as far as clients and standbys can tell.
    pub fn kill(&self) {
        assert!(self.signal("KILL") > 0, "no PostgreSQL processes to kill");
        // The pid file stays behind; wait until the processes are gone.
        let postmaster = self.pids().first().copied();
        for _ in 0..200 {
            match postmaster {
                Some(pid) if std::path::Path::new(&format!("/proc/{pid}/stat")).exists() => {
                    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                    // A zombie (not yet reaped by pg_ctl's shell) is dead too.
                    if state
                        .rsplit_once(')')
                        .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
                    {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(25));
                }
                _ => break,
            }
        }
        // The lock files name the dead postmaster, and a postmaster that
        // nobody reaps stays a zombie, which a restart's check of the pid
        // counts as alive ("lock file .s.PGSQL.N.lock already exists"): a
        // dead machine leaves no process behind, so neither do we.
        let _ = std::fs::remove_file(self.data().join("postmaster.pid"));
        for name in [
            format!(".s.PGSQL.{}.lock", self.port),
            format!(".s.PGSQL.{}", self.port),
        ] {
            let _ = std::fs::remove_file(self.dir.path().join(name));
        }
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

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Runs `sql` with `psql` on this server (database `postgres`, user
    /// `postgres`) and returns what it printed (unaligned, no headers), trimmed.
    ///
    /// # Errors
    /// psql's error output when it fails.
    pub fn sql(&self, sql: &str) -> Result<String, String> {
        let output = Command::new(self.bin.join("psql"))
            .args([
                "-X",
                "-qtA",
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-c",
                sql,
            ])
            .output()
            .map_err(|e| e.to_string())?;
        if !output.status.success() {
            return Err(String::from_utf8_lossy(&output.stderr).into_owned());
        }
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }

    /// Polls `sql` until it prints `t`, for up to 60 s.
    ///
    /// # Panics
    /// When it does not within 60 s.
    pub fn wait_until(&self, sql: &str, what: &str) {
        let started = std::time::Instant::now();
        loop {
            if self.sql(sql).as_deref() == Ok("t") {
                return;
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(60),
                "waited 60 s for {what}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Runs one of PostgreSQL's programs and asserts that it succeeded; the
    /// failure message ends with the last lines of the server's log (why a
    /// `pg_ctl start` gave up is only there, and the directory goes with
    /// the panic).
    fn run(&self, program: &str, args: &[&str]) {
        let output = self.command(program, args).output().expect("run a PostgreSQL program");
        assert!(
            output.status.success(),
            "{program} {args:?} failed: {}\n{}\nthe end of postgres.log:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
            self.log_tail(40)
        );
    }

    /// The last `lines` lines of the server's log (`pg_ctl -l`), or why
    /// there are none.
    fn log_tail(&self, lines: usize) -> String {
        match std::fs::read_to_string(self.dir.path().join("postgres.log")) {
            Ok(text) => {
                let all: Vec<&str> = text.lines().collect();
                all[all.len().saturating_sub(lines)..].join("\n")
            }
            Err(e) => format!("(not readable: {e})"),
        }
    }

    fn command(&self, program: &str, args: &[&str]) -> Command {
        let path = self.bin.join(program);
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        };
        command.args(args).current_dir(self.dir.path());
        command
    }

    pub fn start(&self) {
        let options = format!(
            "-p {} -k {} -h 127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("postgres.log");
        self.run(
            "pg_ctl",
            &[
                "-D",
                self.data().to_str().expect("utf-8 path"),
                "-o",
                &options,
                "-l",
                log.to_str().expect("utf-8 path"),
                "-w",
                "-t",
                "60",
                "start",
            ],
        );
    }

    pub fn stop(&self, mode: &str) {
        self.run(
            "pg_ctl",
            &[
                "-D",
                self.data().to_str().expect("utf-8 path"),
                "-m",
                mode,
                "-w",
                "stop",
            ],
        );
    }

    /// The postmaster and every process it started.
    fn pids(&self) -> Vec<u32> {
        let Ok(text) = std::fs::read_to_string(self.data().join("postmaster.pid")) else {
            return Vec::new();
        };
        let Some(Ok(postmaster)) = text.lines().next().map(str::parse::<u32>) else {
            return Vec::new();
        };
        let mut pids = vec![postmaster];
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // pid (comm) state ppid ...; comm may hold spaces and parentheses.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            if ppid == Some(postmaster) {
                pids.push(pid);
            }
        }
        pids
    }

    fn signal(&self, signal: &str) -> usize {
        let pids = self.pids();
        if !pids.is_empty() {
            let _ = Command::new("kill")
                .arg(format!("-{signal}"))
                .args(pids.iter().map(u32::to_string))
                .status();
        }
        pids.len()
    }

    /// Freezes the server (SIGSTOP to the postmaster and its processes): it
    /// keeps every connection open and answers nothing.
    pub fn freeze(&self) {
        assert!(self.signal("STOP") > 1, "no PostgreSQL processes to freeze");
    }

    pub fn thaw(&self) {
        self.signal("CONT");
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        self.thaw();
        if self.data().join("postmaster.pid").exists() {
            let _ = self
                .command(
                    "pg_ctl",
                    &[
                        "-D",
                        self.data().to_str().unwrap_or_default(),
                        "-m",
                        "immediate",
                        "-w",
                        "stop",
                    ],
                )
                .output();
        }
        // The TempDir removes the directory.
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

/// A running primary and a standby streaming from it.
pub struct PgPair {
    pub primary: OwnPostgres,
    pub standby: OwnPostgres,
}

impl PgPair {
    /// Makes and starts both clusters and waits until the standby streams
    /// (with `synchronous`, until the primary counts it as synchronous:
    /// `synchronous_standby_names = '*'` by `ALTER SYSTEM`, set after the base
    /// backup so the standby, once promoted, does not wait for a standby of
    /// its own). `None` (said on stderr) when PostgreSQL's programs are not
    /// installed; a failure under `CHATD_REQUIRE_POSTGRES=1`.
    pub fn start(synchronous: bool) -> Option<Self> {
        let primary = OwnPostgres::init()?;
        primary.configure("wal_level = replica\nmax_wal_senders = 10\nwal_keep_size = '64MB'");
        primary.start();
        let standby = OwnPostgres::standby_of(&primary);
        standby.start();
        let pair = Self { primary, standby };
        pair.set_synchronous(synchronous);
        pair.wait_streaming(synchronous);
        Some(pair)
    }

    /// The URL naming both hosts (the standby first, or the primary), with
    /// `target_session_attrs=read-write`, as an operator configures chatd.
    pub fn url(&self, standby_first: bool) -> String {
        let (a, b) = if standby_first {
            (self.standby.port(), self.primary.port())
        } else {
            (self.primary.port(), self.standby.port())
        };
        format!("postgres://postgres@127.0.0.1:{a},127.0.0.1:{b}/postgres?target_session_attrs=read-write")
    }

    /// `synchronous_standby_names` on the primary: `'*'` (a commit waits
    /// for the standby) or empty, by `ALTER SYSTEM` and a reload.
    pub fn set_synchronous(&self, on: bool) {
        let set = if on {
            "ALTER SYSTEM SET synchronous_standby_names = '*'"
        } else {
            "ALTER SYSTEM RESET synchronous_standby_names"
        };
        self.primary.sql(set).expect("set synchronous_standby_names");
        self.primary.sql("SELECT pg_reload_conf()").expect("reload");
    }

    /// Waits (up to 60 s) until the primary has a standby streaming, and a
    /// synchronous one with `synchronous`.
    pub fn wait_streaming(&self, synchronous: bool) {
        let sync = if synchronous { " AND sync_state = 'sync'" } else { "" };
        self.primary.wait_until(
            &format!("SELECT count(*) > 0 FROM pg_stat_replication WHERE state = 'streaming'{sync}"),
            "a streaming standby",
        );
    }

    /// Waits (up to 60 s) until the standby has replayed everything the
    /// primary has written so far.
    pub fn wait_replayed(&self) {
        let lsn = self
            .primary
            .sql("SELECT pg_current_wal_lsn()")
            .expect("the primary's WAL position");
        self.standby.wait_until(
            &format!("SELECT pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn"),
            "the standby to replay the primary's WAL",
        );
    }

    /// A failover as a failover manager does it: SIGKILL to the primary,
    /// promotion of the standby (synchronous replication off while it has
    /// no standby), the old primary rebuilt as its standby from a fresh base
    /// backup and started; once it streams, synchronous again (with
    /// `synchronous`). The two then swap roles.
    pub fn fail_over(&mut self, synchronous: bool) {
        self.promote_standby();
        self.rejoin_old_primary(synchronous);
    }

    /// The first half of [`PgPair::fail_over`]: SIGKILL to the primary and
    /// promotion of the standby, which becomes [`PgPair::primary`]
    /// (synchronous replication off while it has no standby);
    /// [`PgPair::standby`] is then the dead old primary.
    pub fn promote_standby(&mut self) {
        self.primary.kill();
        self.standby.promote();
        std::mem::swap(&mut self.primary, &mut self.standby);
        self.set_synchronous(false);
    }

    /// The second half of [`PgPair::fail_over`]: the dead old primary
    /// rebuilt as the new primary's standby from a fresh base backup and
    /// started; once it streams, synchronous again (with `synchronous`).
    pub fn rejoin_old_primary(&mut self, synchronous: bool) {
        self.standby.rebuild_as_standby_of(&self.primary);
        self.standby.start();
        self.wait_streaming(false);
        if synchronous {
            self.set_synchronous(true);
            self.wait_streaming(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A killed postmaster that nobody has reaped yet is a zombie, whose pid
    /// still answers `kill -0`: a restart found it in the socket's lock file
    /// and refused to start ("lock file .s.PGSQL.N.lock already exists"; the
    /// failover fault in CI). A live pid in the lock file stands in for it.
    #[test]
    fn a_killed_server_restarts_though_its_lock_file_names_a_live_process() {
        let Some(pg) = own_postgres() else {
            return;
        };
        // Owned by the server's user: a pid it may not signal counts as gone.
        let mut stand_in = Command::new("sleep");
        stand_in.arg("120");
        if pg.as_postgres {
            use std::os::unix::process::CommandExt;
            let id = |flag: &str| -> u32 {
                let out = Command::new("id").args([flag, "postgres"]).output().expect("id");
                String::from_utf8_lossy(&out.stdout)
                    .trim()
                    .parse()
                    .expect("a numeric id")
            };
            stand_in.uid(id("-u")).gid(id("-g"));
        }
        let mut stand_in = stand_in.spawn().expect("spawn sleep");
        let lock = pg.dir.path().join(format!(".s.PGSQL.{}.lock", pg.port()));
        let text = std::fs::read_to_string(&lock).expect("the socket's lock file");
        let rest: Vec<&str> = text.lines().skip(1).collect();
        std::fs::write(&lock, format!("{}\n{}\n", stand_in.id(), rest.join("\n"))).expect("rewrite the lock file");
        pg.kill();
        pg.start();
        assert_eq!(pg.sql("SELECT 1").as_deref(), Ok("1"));
        let _ = stand_in.kill();
        let _ = stand_in.wait();
    }
}
