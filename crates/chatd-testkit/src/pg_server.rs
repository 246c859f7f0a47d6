//! A PostgreSQL server of the test's own (`initdb` into a temporary
//! directory, a free port), for tests that stop, restart, freeze or kill the
//! database under a running chatd, and standbys made from it
//! (`pg_basebackup -R`) to promote ([`crate::pg_pair`]).

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
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
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
        let _ = std::fs::remove_file(self.data().join("postmaster.pid"));
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

    /// Runs one of PostgreSQL's programs and asserts that it succeeded.
    fn run(&self, program: &str, args: &[&str]) {
        let output = self.command(program, args).output().expect("run a PostgreSQL program");
        assert!(
            output.status.success(),
            "{program} {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
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

/// Initialises and starts a cluster of the test's own; `None` to skip.
pub fn own_postgres() -> Option<OwnPostgres> {
    let pg = OwnPostgres::init()?;
    pg.start();
    Some(pg)
}
