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
//! - [`signature`]: the `Chatd-Signature` header;
//! - [`body`]: the `entry` and `entries` bodies (MSG_RECV by [`crate::view::recv`]);
//! - [`sender`]: one request, and the backoff;
//! - [`lease`]: buckets of channels and their leases;
//! - [`feed`]: the scheduler and the per-channel drivers.

pub mod body;
pub mod feed;
pub mod lease;
pub mod sender;
pub mod signature;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

use crate::config::{Config, WebhookStart};
use crate::ids::ChannelId;

pub use feed::Feed;
pub use sender::SenderError;

/// The webhook settings (`webhook_*`), when `webhook_url` is set.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where to POST.
    pub url: String,
    /// The HMAC key of `Chatd-Signature`.
    pub secret: String,
    /// How long one entry is retried before it is skipped.
    pub max_retry: Duration,
    /// Most entries per request; 1 sends the `entry` body, more the `entries` body.
    pub batch_max: u32,
    /// Bound on one request (connecting included).
    pub timeout: Duration,
    /// Channels whose requests may be in flight at once.
    pub concurrency: usize,
    /// Where the feed starts on a database it never ran on.
    pub start: WebhookStart,
}

impl Settings {
    /// The settings in `config`; `None` when `webhook_url` is unset (off).
    pub fn from_config(config: &Config) -> Option<Self> {
        let url = config.webhook_url.clone()?;
        Some(Self {
            url,
            secret: config.webhook_secret.clone().unwrap_or_default(),
            max_retry: Duration::from_secs(config.webhook_max_retry_secs),
            batch_max: u32::try_from(config.webhook_batch_max).unwrap_or(u32::MAX).max(1),
            timeout: Duration::from_millis(config.webhook_timeout_ms),
            concurrency: config.webhook_concurrency.max(1),
            start: config.webhook_start,
        })
    }
}

/// What the commit path tells the feed: which channels got new entries
/// since the feed last looked. Cheap to clone; one short lock per batch.
#[derive(Debug, Clone, Default)]
pub struct Signal(Arc<SignalInner>);

#[derive(Debug, Default)]
struct SignalInner {
    grown: Mutex<HashSet<ChannelId>>,
    notify: Notify,
}

impl Signal {
    /// `channels` got new entries (just committed).
    pub fn grew<'a>(&self, channels: impl Iterator<Item = &'a ChannelId>) {
        let mut any = false;
        {
            let mut grown = self.0.grown.lock().unwrap_or_else(|e| e.into_inner());
            for channel in channels {
                if !grown.contains(channel) {
                    grown.insert(channel.clone());
                }
                any = true;
            }
        }
        if any {
            self.0.notify.notify_one();
        }
    }

    /// The channels that grew since the last call.
    fn take(&self) -> HashSet<ChannelId> {
        std::mem::take(&mut *self.0.grown.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Waits until a channel grew (returns at once if one did since the last wait).
    async fn wait(&self) {
        self.0.notify.notified().await;
    }
}
