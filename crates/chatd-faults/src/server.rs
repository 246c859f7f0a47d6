//! The chatd process under test: start, kill -9, SIGTERM, restart, and the
//! database it runs on.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{bail, Context};
use tokio::process::{Child, Command};

use crate::metrics::ReplicaCounts;

/// A chatd child process on a fixed port, restartable on the same data.
pub struct Server {
    binary: PathBuf,
    pub port: u16,
    pub admin_token: String,
    data_dir: PathBuf,
    database_url: Option<String>,
    /// `database_replica_url` (`--replica-reads`).
    replica_url: Option<String>,
    /// Replica reads counted by the processes that ended (read just before
    /// each kill or termination).
    replica_counted: ReplicaCounts,
    log: PathBuf,
    child: Option<Child>,
    http: reqwest::Client,
}

impl Server {
    /// A server definition; call [`Self::start`] to run it.
    pub fn new(binary: PathBuf, data_dir: PathBuf, database_url: Option<String>) -> anyhow::Result<Self> {
        let port = free_port()?;
        Ok(Self {
            binary,
            port,
            admin_token: format!("faults-admin-{}", uuid::Uuid::now_v7().simple()),
            log: data_dir.join("chatd.log"),
            data_dir,
            database_url,
            replica_url: None,
            replica_counted: ReplicaCounts::default(),
            child: None,
            http: reqwest::Client::new(),
        })
    }

    /// Starts chatd with `database_replica_url` = `url` from the next start on.
    pub fn set_replica_url(&mut self, url: String) {
        self.replica_url = Some(url);
    }

    /// The replica-read counters of every process so far, the running one
    /// included (read from its `/metrics` now; a read that fails adds 0).
    /// Reads made by a process between the last read of its counters and
    /// its kill are not in it: a lower bound.
    pub async fn replica_counts(&self) -> ReplicaCounts {
        let mut counts = self.replica_counted;
        counts.add(self.running_replica_counts().await);
        counts
    }

    async fn running_replica_counts(&self) -> ReplicaCounts {
        if self.replica_url.is_none() || self.child.is_none() {
            return ReplicaCounts::default();
        }
        let read = async {
            let response = self.http.get(format!("{}/metrics", self.base())).send().await?;
            response.error_for_status()?.text().await
        };
        match tokio::time::timeout(Duration::from_secs(2), read).await {
            Ok(Ok(text)) => ReplicaCounts::parse(&text),
            _ => ReplicaCounts::default(),
        }
    }

    /// Adds the running process's counters to those of the ended ones
    /// (called just before it is stopped).
    async fn keep_replica_counts(&mut self) {
        let counts = self.running_replica_counts().await;
        self.replica_counted.add(counts);
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Starts the process and waits until `/readyz` answers 200 (30 s at most).
    pub async fn start(&mut self) -> anyhow::Result<()> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .context("open the server log")?;
        let mut command = Command::new(&self.binary);
        command
            .arg("serve")
            .env("CHATD_LISTEN", format!("127.0.0.1:{}", self.port))
            .env("CHATD_DATA_DIR", &self.data_dir)
            .env("CHATD_ADMIN_TOKEN", &self.admin_token)
            .env("CHATD_RATE_LIMIT_PER_SEC", "0")
            .env("CHATD_USER_RATE_LIMIT_PER_SEC", "0")
            .env("CHATD_SHUTDOWN_GRACE", "3")
            .env("CHATD_LOG", "warn")
            .stdout(Stdio::from(log.try_clone()?))
            .stderr(Stdio::from(log))
            .kill_on_drop(true);
        if let Some(url) = &self.database_url {
            command.env("CHATD_DATABASE_URL", url);
        }
        if let Some(url) = &self.replica_url {
            command.env("CHATD_DATABASE_REPLICA_URL", url);
        }
        self.child = Some(command.spawn().context("spawn chatd")?);
        for _ in 0..300 {
            if let Ok(r) = self.http.get(format!("{}/readyz", self.base())).send().await {
                if r.status().is_success() {
                    return Ok(());
                }
            }
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    bail!("chatd exited at start ({status}); see {}", self.log.display());
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        bail!("chatd did not become ready within 30 s; see {}", self.log.display())
    }

    /// `kill -9`: no chance to finish anything.
    pub async fn kill(&mut self) -> anyhow::Result<()> {
        self.keep_replica_counts().await;
        if let Some(mut child) = self.child.take() {
            child.start_kill().context("SIGKILL")?;
            child.wait().await?;
        }
        Ok(())
    }

    /// SIGTERM and wait for the graceful exit (at most 30 s, then SIGKILL).
    pub async fn terminate(&mut self) -> anyhow::Result<()> {
        self.keep_replica_counts().await;
        if let Some(mut child) = self.child.take() {
            if let Some(pid) = child.id() {
                Command::new("kill").arg("-TERM").arg(pid.to_string()).status().await?;
            }
            if tokio::time::timeout(Duration::from_secs(30), child.wait())
                .await
                .is_err()
            {
                child.start_kill()?;
                child.wait().await?;
                bail!("chatd ignored SIGTERM for 30 s");
            }
        }
        Ok(())
    }
}

/// A port that was free a moment ago.
pub fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// A PostgreSQL database of the run's own, created and dropped with `psql`.
pub struct PgDatabase {
    admin_url: String,
    pub name: String,
    pub url: String,
}

impl PgDatabase {
    /// Creates `chatd_faults_<uuid>` on the server of `admin_url`.
    pub async fn create(admin_url: &str) -> anyhow::Result<Self> {
        let name = format!("chatd_faults_{}", uuid::Uuid::now_v7().simple());
        psql(admin_url, &format!("CREATE DATABASE {name}")).await?;
        let base = admin_url.rsplit_once('/').map_or(admin_url, |(b, _)| b);
        Ok(Self {
            admin_url: admin_url.to_owned(),
            url: format!("{base}/{name}"),
            name,
        })
    }

    /// Closes every connection chatd has to this database (the server sees
    /// them fail and must reconnect by itself).
    pub async fn terminate_connections(&self) -> anyhow::Result<()> {
        psql(
            &self.admin_url,
            &format!(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '{}' AND pid <> pg_backend_pid()",
                self.name
            ),
        )
        .await
    }

    /// Drops the database.
    pub async fn drop_database(&self) -> anyhow::Result<()> {
        psql(
            &self.admin_url,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        )
        .await
    }
}

async fn psql(url: &str, sql: &str) -> anyhow::Result<()> {
    let out = Command::new("psql")
        .arg(url)
        .arg("-qtAc")
        .arg(sql)
        .output()
        .await
        .context("run psql")?;
    if !out.status.success() {
        bail!("psql failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}
