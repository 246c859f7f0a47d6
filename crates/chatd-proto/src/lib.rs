//! The chatd wire contract (`docs/protocol.md`), shared by the server and the
//! client library so both sides agree on one set of types.
//!
//! - [`ids`]: validated identifiers and units (§1 of the contract);
//! - [`protocol`]: WebSocket frames, their codec and validation (§5).
//!
//! Depends only on serde, serde_json, uuid and thiserror, so an application
//! that links the client does not pull in the server's dependencies.

pub mod ids;
pub mod protocol;
