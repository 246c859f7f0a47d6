//! A client for chatd that makes "send" safe to retry.
//!
//! A chat client cannot tell whether a send worked when the connection drops
//! before the MSG_ACK comes back. This client picks a `clientMsgId` once per
//! message and reuses it on every retry (the server's idempotency key), so a
//! message is stored once however many times it is sent. Around that it:
//!
//! - retries on ACK timeout, on disconnect and on retryable ERRORs
//!   (`rate_limited`, honouring `retryAfterMs`; `unavailable`; `internal`),
//!   with exponential backoff and full jitter ([`Backoff`]);
//! - reconnects by itself and re-sends every send not yet ACKed, in the order
//!   they were submitted;
//! - hands the application each message once, in `seq` order per channel
//!   ([`Event::Message`]): duplicates are dropped, gaps (from a MSG_RECV
//!   above the next expected `seq`, or from HELLO's `lastSeq`) are filled
//!   with SYNC, and the client's own messages are included, built from their
//!   ACK;
//! - edits, deletes and reacts ([`Client::edit`], [`Client::delete`],
//!   [`Client::react`]) with the same safe retries, and folds every entry
//!   into a per-channel message state ([`Client::message`],
//!   [`Event::Changed`]; see [`ChannelMessages`]);
//! - sends MSG_DELIVERED / MSG_READ ([`Client::mark_delivered`],
//!   [`Client::mark_read`], or automatically with
//!   [`ClientConfig::auto_delivered`]).
//!
//! ```no_run
//! use chatd_client::{Client, ClientConfig, Event};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let config = ClientConfig::new("ws://127.0.0.1:8080/v1/ws", "<alice's JWT>");
//! let (client, mut events) = Client::connect(config).await?;
//! let ack = client.send("room1", "hello").await?;
//! println!("stored as seq {} ({})", ack.seq, ack.message_id);
//! while let Some(event) = events.recv().await {
//!     if let Event::Message(m) = event {
//!         println!("#{} {}: {}", m.seq, m.sender_id, m.body);
//!         client.mark_read(m.message_id).await;
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! The wire types are those of [`chatd_proto`], shared with the server. With
//! the `admin` feature, [`admin::AdminClient`] drives the admin HTTP API
//! (channels, members, tokens, history).

#[cfg(feature = "admin")]
pub mod admin;
mod client;
mod config;
mod log;
mod order;
pub mod thread;

#[cfg(feature = "admin")]
pub use admin::NotifySettings;
pub use chatd_proto;
pub use client::{Ack, Client, ConnectError, EntryRequest, Event, PendingAck, SendError, SendOptions};
pub use config::{Backoff, ClientConfig};
pub use log::{ChannelMessages, MessageState};
pub use order::{ChannelOrder, StartFrom};
pub use thread::{PendingReply, Thread};
