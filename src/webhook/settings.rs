//! The webhook settings (`webhook_*`), read from the server's [`Config`].

use std::time::Duration;

use crate::config::{Config, WebhookStart};

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
