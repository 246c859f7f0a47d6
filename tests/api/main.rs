//! Integration tests: one binary (one link step), one module per area.
//! Every test that touches storage runs on both stores (`on_both_stores!`).
//! The fixtures are in `crates/chatd-testkit`, shared with the other test
//! binaries.

mod attachments;
mod attachments_storage;
mod backend_api;
mod blocks;
mod client;
mod client_attachments;
mod client_entries;
mod client_ephemeral;
mod client_mentions;
mod client_moderation;
mod client_replies;
mod client_search;
mod client_threads;
mod console;
mod cors;
mod direct;
mod directory;
mod entries;
mod entry_origin;
mod erasure;
mod fanout;
mod flags;
mod frames;
mod http;
mod idp_tokens;
mod lifecycle;
mod members;
mod membership_frames;
mod mentions;
mod moderation;
mod moderation_channel;
mod moderation_delete;
mod openapi;
mod presence;
mod receipts;
mod replies;
mod search;
mod security;
mod send;
mod store;
mod sync;
mod typing;
mod upgrade;
