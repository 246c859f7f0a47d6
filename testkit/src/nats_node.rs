//! A `chatd serve` node of a cluster: a child process on a PostgreSQL test
//! database with fan-out through NATS, under a subject prefix of the test's
//! own, so tests running in parallel on the machine's NATS never see each
//! other's traffic. The cluster tests (`tests/cluster.rs`,
//! `tests/presence_cluster.rs`, `tests/webhook.rs`) start their nodes here.

use std::process::Command;

use crate::{mint_token, Admin, ServerProcess, TestDb, WsClient, ADMIN_TOKEN, JWT_SECRET};

/// The machine's NATS server (`.ci/run` starts it).
pub const NATS_URL: &str = "nats://127.0.0.1:4222";

/// Fails clearly when the machine's NATS is not running.
///
/// # Panics
/// When nothing listens on 127.0.0.1:4222.
pub fn require_nats() {
    assert!(
        std::net::TcpStream::connect("127.0.0.1:4222").is_ok(),
        "NATS is not running on 127.0.0.1:4222 (`.ci/run` starts it; by hand: nats-server -a 127.0.0.1 -p 4222)"
    );
}

/// A NATS subject prefix no other test uses.
pub fn subject_prefix() -> String {
    format!("t{}", uuid::Uuid::now_v7().simple())
}

/// One node: its process and an admin client for it.
pub struct NatsNode {
    pub process: ServerProcess,
    pub admin: Admin,
}

impl NatsNode {
    /// Starts `cmd` (the [`chatd!`](crate::chatd) command of the test, run in
    /// `db`'s directory) as a node on `db` with NATS at `nats_url` under
    /// `prefix`, a data directory of its own, the test secrets, and `extra`
    /// settings (`CHATD_*` variables) after those; waits for its address.
    pub fn start(mut cmd: Command, db: &TestDb, nats_url: &str, prefix: &str, extra: &[(&str, &str)]) -> Self {
        let data = db.dir.path().join(format!("node-{}", uuid::Uuid::now_v7().simple()));
        cmd.env("CHATD_DATABASE_URL", &db.url)
            .env("CHATD_DATA_DIR", &data)
            .env("CHATD_JWT_SECRET", JWT_SECRET)
            .env("CHATD_ADMIN_TOKEN", ADMIN_TOKEN)
            .env("CHATD_NATS_URL", nats_url)
            .env("CHATD_NATS_SUBJECT_PREFIX", prefix)
            .env("CHATD_LOG", "info")
            .env("CHATD_SHUTDOWN_GRACE", "2");
        for (key, value) in extra {
            cmd.env(key, value);
        }
        let process = ServerProcess::start(cmd);
        Self {
            admin: process.admin(ADMIN_TOKEN),
            process,
        }
    }

    /// Connects `user` (a token signed with the test secret) and reads
    /// HELLO; a late repeat of an add HELLO already listed is read past
    /// ([`WsClient::tolerating_late_adds`]).
    pub async fn connect(&self, user: &str) -> WsClient {
        self.process
            .connect(&mint_token(JWT_SECRET, user, 3600))
            .await
            .tolerating_late_adds()
    }
}
