//! Fixtures shared by every integration test binary of chatd (`tests/api`,
//! `tests/abuse.rs`, `tests/cluster.rs`, `tests/outage.rs`): a real chatd on
//! a random port over a real database of its own, driven through real
//! WebSocket and HTTP clients.
//!
//! - [`db`]: which store a test runs on, and a database of the test's own
//!   (a fresh PostgreSQL database, dropped afterwards, or a fresh SQLite file).
//! - [`pg_server`]: a PostgreSQL server of the test's own, to stop, freeze or
//!   kill, and a primary with a streaming standby to fail over (from
//!   `chatd-faults`, which the fault harness shares).
//! - [`app`]: a server in-process (`Application::build`), [`spawn_app_with`],
//!   and [`on_both_stores!`].
//! - [`process`]: the `chatd` binary as a child process, with its log kept.
//! - [`ws`]: a WebSocket client speaking JSON frames, and frame builders.
//! - [`admin`]: the admin HTTP API and the probes (`/readyz`, `/metrics`).
//! - [`wait`]: polling until the server has done something in its own
//!   time, and the process's resident memory.
//! - [`nats_node`]: a `chatd` node of a cluster (PostgreSQL and NATS) as a
//!   child process, under a NATS subject prefix of the test's own.
//! - [`client`]: waiting on what a `chatd-client` client holds (a thread).
//!
//! A crate of its own rather than a module each test binary includes: its
//! items are `pub`, so a binary that uses only some of them compiles without
//! dead-code warnings and without an `allow` over the whole file.

pub mod admin;
pub mod app;
pub mod client;
pub mod db;
pub mod nats_node;
pub mod pg_server;
pub mod process;
pub mod wait;
pub mod ws;

use std::time::Duration;

pub use admin::Admin;
pub use app::{spawn_app, spawn_app_on, spawn_app_with, test_config, TestApp};
pub use client::thread_until;
pub use db::{pg_admin, postgres_url, AnyPool, Backend, TestDb};
pub use nats_node::{require_nats, subject_prefix, NatsNode, NATS_URL};
pub use pg_server::{own_postgres, OwnPostgres, PgPair};
pub use process::{chatd_command, ServerProcess};
pub use wait::{eventually, resident_bytes};
pub use ws::{reply, seqs, sync, ws_connect, ws_connect_hello, ws_request, WsClient};

/// How long a test waits for a frame it expects.
pub const FRAME_TIMEOUT: Duration = Duration::from_secs(10);
/// The JWT secret of every test server that does not set its own.
pub const JWT_SECRET: &str = "test-secret-test-secret-test-secret!";
/// The admin token of every test server that does not set its own.
pub const ADMIN_TOKEN: &str = "test-admin-token-0123456789";

/// A token for `user` signed with `jwt_secret`, valid for `ttl` seconds
/// (what `chatd token` prints).
pub fn mint_token(jwt_secret: &str, user: &str, ttl: u64) -> String {
    // Minting reads only the secret; the admin token is not used.
    chatd::auth::Auth::new(jwt_secret, "unused-admin-token", None, None, 0)
        .mint(&chatd::ids::UserId::parse(user).expect("user id"), ttl)
        .expect("mint")
        .0
}

/// Runs each named `async fn name(backend: Backend)` once per store:
/// `sqlite::name` and `postgres::name` (skipped without PostgreSQL, see
/// [`postgres_url`]).
#[macro_export]
macro_rules! on_both_stores {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::Backend::Sqlite).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    if $crate::postgres_url().is_some() {
                        super::$name($crate::Backend::Postgres).await;
                    }
                }
            )*
        }
    };
}

/// A [`chatd_command`] for the `chatd` binary of the package under test, run
/// in `dir`. A macro because Cargo tells the binary's path
/// (`CARGO_BIN_EXE_chatd`) only to that package's integration tests.
#[macro_export]
macro_rules! chatd {
    ($dir:expr) => {
        $crate::chatd_command(env!("CARGO_BIN_EXE_chatd"), $dir)
    };
}
