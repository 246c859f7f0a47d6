//! chatd: a standalone chat server daemon.
//!
//! A client sends `MSG_SEND {channelId, clientMsgId, body}` over a WebSocket;
//! the server stores it keyed on (`senderId`, `clientMsgId`), the idempotency
//! key, assigns the canonical `messageId` (UUIDv7) and the channel's next
//! `seq`, commits, answers `MSG_ACK`, then fans `MSG_RECV` out to the
//! channel's members. `docs/architecture.md` walks through one message.
//!
//! Modules, each owning one thing:
//! - [`config`]: layered settings and the checks of their values;
//! - [`secrets`]: the JWT secret and admin token, generated when not configured;
//! - `private_files`: the data directory and files only the server's user reads;
//! - [`database_url`]: the database URLs chatd accepts, and the default SQLite file's;
//! - [`database_hosts`]: a PostgreSQL URL's host list (libpq's `h1,h2` form);
//! - [`nats_addr`]: the grammar of the NATS server list and subject prefix;
//! - [`ids`]: validated identifiers and units;
//! - [`protocol`]: wire frames, their codec and validation;
//! - [`auth`]: user JWTs and the admin token;
//! - [`store`]: PostgreSQL / SQLite persistence (rows and typed errors);
//! - [`view`]: stored rows as frames, pages, store errors as wire codes;
//! - [`commit`]: group commit, ACK and hand-off to delivery;
//! - [`outbound`]: a session's bounded outbound queue and close switch;
//! - [`channel_gate`]: which channel frames a session may get yet (§13.3 order);
//! - [`delivery`]: frames to sessions, on this node or every node;
//! - [`cluster`]: the NATS side of delivery (`nats_url`);
//! - [`command`]: one handler per client command;
//! - [`gateway`]: the WebSocket endpoint and the session lifecycle;
//! - [`http`]: the HTTP API;
//! - [`console`]: the web console at `/console`, embedded;
//! - [`listener`]: the accept loop (handshake timeout, graceful HTTP shutdown);
//! - [`limits`]: connection counts and frame rates;
//! - [`telemetry`]: logs and metrics;
//! - [`startup`]: building, running and shutting down the server.

pub use chatd_proto::{ids, number, protocol, text};

pub mod attachments;
pub mod auth;
pub mod channel_gate;
pub mod close_code;
pub mod command;
pub mod commit;
pub mod config;
pub mod database_hosts;
pub mod database_url;
pub mod delivery;
pub mod erasure;
pub mod erasures;
pub mod fd_limit;
pub mod http;
pub mod limits;
pub mod listener;
pub mod nats_addr;
pub mod outbound;
pub mod permissions;
pub(crate) mod private_files;
pub mod retention;
pub mod secrets;
pub mod startup;
pub mod state;
pub mod store;
pub mod telemetry;
pub mod view;
pub mod webhook;
