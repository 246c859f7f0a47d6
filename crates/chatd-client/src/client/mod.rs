//! The client handle and the connection task behind it.
//!
//! One task per client owns the WebSocket. The [`Client`] handle talks to it
//! over a queue of commands; the application gets [`Event`]s from another
//! queue. The task connects, reads HELLO, fills gaps with SYNC, re-sends
//! every send not yet ACKed (same `clientMsgId`), and on any trouble
//! reconnects with backoff and does it all again.
//!
//! The parts, by concern: the public types the application sees
//! (`types.rs`), the [`Client`] handle (`handle.rs`), the commands it sends
//! the task (`command.rs`), opening a connection up to HELLO (`connect.rs`)
//! and the task itself (`task/`).

mod command;
mod connect;
mod handle;
mod task;
mod types;

pub use handle::{Client, PendingAck};
pub use types::{Ack, ConnectError, EntryRequest, Event, SendError, SendOptions};
