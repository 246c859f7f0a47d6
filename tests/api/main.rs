//! Integration tests: one binary (one link step), one module per area.
//! Every test that touches storage runs on both stores (`on_both_stores!`).

mod helpers;

mod client;
mod client_ephemeral;
mod fanout;
mod frames;
mod http;
mod lifecycle;
mod presence;
mod receipts;
mod security;
mod send;
mod store;
mod sync;
mod typing;
