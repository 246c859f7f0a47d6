//! The chatd wire contract (`docs/protocol.md`), shared by the server and the
//! client library so both sides agree on one set of types.
//!
//! - [`ids`]: validated identifiers and units (§1 of the contract);
//! - [`protocol`]: WebSocket frames, their codec and validation (§5);
//! - [`number`]: the one rule for JSON numbers in integer fields (frames and HTTP);
//! - [`channel`]: a channel's kind and visibility and a member's role (§13.1).
//!
//! Depends only on serde, serde_json, uuid and thiserror, so an application
//! that links the client does not pull in the server's dependencies.

pub mod channel;
pub mod ids;
pub mod number;
pub mod protocol;
pub mod text;
