//! The WebSocket frames of the wire contract (`docs/protocol.md` §5) and their codec.
//!
//! Client frames are decoded in two steps: [`decode_client_frame`] turns text
//! into the typed, tagged [`ClientFrame`] (refusing what is not JSON, not an
//! object, has no string `type`, an unknown `type` or a field of the wrong JSON
//! type), then [`ClientFrame::validate`] checks each field's grammar and range
//! and yields a [`Command`] whose ids are the validated newtypes of
//! [`crate::ids`]. Every refusal is a [`FrameError`] that maps onto one
//! [`ErrorCode`] of the spec. Nothing here touches a socket or the store.

pub use crate::channel::{ChannelKind, Role, Visibility};

/// Default and maximum page size of SYNC and the history route.
pub const DEFAULT_PAGE: u32 = 100;
/// Largest `limit` accepted by SYNC and the history route.
pub const MAX_PAGE: u32 = 500;

mod channels;
mod client;
mod command;
mod decode;
mod entry;
mod errors;
mod keys;
pub(crate) mod scan;
mod server;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_fallback;

pub use channels::*;
pub use client::*;
pub use command::*;
pub use decode::*;
pub use entry::*;
pub use errors::*;
pub use keys::*;
pub use server::*;
