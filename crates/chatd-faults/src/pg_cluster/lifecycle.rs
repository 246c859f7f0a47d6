//! A cluster's life: started, stopped, reconfigured, promoted; and what
//! happens to a machine: its processes killed (SIGKILL, the lock files a
//! dead machine leaves no trace of removed), frozen (SIGSTOP) and thawed.
//! Dropping a cluster stops it.

use std::io::Write;
use std::process::Command;

use super::OwnPostgres;

impl OwnPostgres {
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

    /// `pg_ctl start` on 127.0.0.1 and its port, `fsync=off`, its log in
    /// `postgres.log`; waits (up to 60 s) until it accepts connections.
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

    /// `pg_ctl stop -m mode` (`smart`, `fast` or `immediate`); waits until
    /// it is stopped.
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

    /// Sends `signal` to the postmaster and its processes; how many there were.
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

    /// Resumes a frozen server (SIGCONT); nothing when it is not frozen.
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

#[cfg(test)]
mod tests {
    use super::super::own_postgres;
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
