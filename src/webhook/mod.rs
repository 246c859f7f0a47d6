//! Webhooks for members who are not connected (protocol §12): every stored
//! log entry is POSTed to `webhook_url`, at least once, in `seq` order per
//! channel, with its `offlineMembers` and a `Chatd-Signature`.
//!
//! The feed never touches the send path. The commit path does two cheap
//! things while webhooks are on: each new entry is stored with its
//! `offlineMembers` in the batch's transaction (asked of the presence state
//! under the channel's lock, [`crate::store::OfflineMembers`]), and after
//! the commit it marks the channels that grew ([`Signal`]). Everything else
//! runs in the feed's own tasks ([`feed`]): they read entries after each
//! channel's durable cursor (`webhook_cursors`), POST them, and move the
//! cursor only on a 2xx; failures are retried with backoff for up to
//! `webhook_max_retry_secs`, then skipped with an error log and a metric.
//! With several nodes each channel's feed is driven by the node that holds
//! its bucket's lease ([`lease`]).
//!
//! - `settings.rs`: the `webhook_*` settings ([`Settings`]);
//! - `signal.rs`: which channels grew, from the commit path ([`Signal`]);
//! - [`signature`]: the `Chatd-Signature` header;
//! - [`body`]: the `entry` and `entries` bodies (MSG_RECV by [`crate::view::recv`]);
//! - [`sender`]: one request, and the backoff;
//! - [`lease`]: buckets of channels and their leases;
//! - [`feed`]: the scheduler and the per-channel drivers.

pub mod body;
pub mod feed;
pub mod lease;
pub mod sender;
mod settings;
mod signal;
pub mod signature;

pub use feed::Feed;
pub use sender::SenderError;
pub use settings::Settings;
pub use signal::Signal;
