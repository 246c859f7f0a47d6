//! Running PostgreSQL's programs on a cluster: as the `postgres` OS user
//! when we are root, asserted to succeed (the server's log tail in the
//! failure), and `psql` statements, once or polled until true.

use std::path::PathBuf;
use std::process::Command;

use super::OwnPostgres;

impl OwnPostgres {
    /// Its data directory (`data` in the cluster's temporary directory).
    pub(super) fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The URL of its database `postgres` as user `postgres`.
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
    pub(super) fn run(&self, program: &str, args: &[&str]) {
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

    pub(super) fn command(&self, program: &str, args: &[&str]) -> Command {
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
}
