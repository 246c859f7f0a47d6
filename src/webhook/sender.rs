//! One webhook request: POST the body, signed, within `webhook_timeout_ms`;
//! and the pause before the next attempt (exponential backoff with jitter).

use std::time::Duration;

use super::signature;
use crate::ids::now_ms;

/// Why an attempt did not get a 2xx, as the `status` label of
/// `chatd_webhook_failures_total`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// The receiver answered this status (not 2xx).
    #[error("the receiver answered {0}")]
    Status(u16),
    /// No answer within `webhook_timeout_ms`.
    #[error("no answer in time")]
    Timeout,
    /// The connection could not be made (refused, unreachable, DNS, TLS).
    #[error("cannot connect")]
    Connect,
    /// The request failed otherwise (connection reset, bad answer).
    #[error("request failed")]
    Request,
}

impl Failure {
    /// The metric label: the status code, or `timeout`, `connect`, `request`.
    pub fn label(&self) -> String {
        match self {
            Failure::Status(code) => code.to_string(),
            Failure::Timeout => "timeout".into(),
            Failure::Connect => "connect".into(),
            Failure::Request => "request".into(),
        }
    }
}

/// Sends webhook requests to one URL with one secret.
#[derive(Debug, Clone)]
pub struct Sender {
    client: reqwest::Client,
    url: reqwest::Url,
    secret: String,
}

/// The webhook client could not be built.
#[derive(Debug, thiserror::Error)]
pub enum SenderError {
    /// `webhook_url` is not a URL.
    #[error("webhook_url is not a valid URL: {0}")]
    Url(String),
    /// The HTTP client could not be built (TLS setup).
    #[error("cannot build the webhook HTTP client")]
    Client(#[source] reqwest::Error),
}

impl Sender {
    /// A sender to `url` signing with `secret`, each request bounded by `timeout`.
    ///
    /// # Errors
    /// [`SenderError`] when `url` does not parse or the client cannot be built.
    pub fn new(url: &str, secret: &str, timeout: Duration) -> Result<Self, SenderError> {
        let url = reqwest::Url::parse(url).map_err(|e| SenderError::Url(e.to_string()))?;
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("chatd/", env!("CARGO_PKG_VERSION")))
            // A webhook answers; it is not followed elsewhere.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(SenderError::Client)?;
        Ok(Self {
            client,
            url,
            secret: secret.to_owned(),
        })
    }

    /// POSTs `body` (JSON) with `Chatd-Signature` made now. `Ok` on 2xx.
    ///
    /// # Errors
    /// [`Failure`]: any other status, a timeout, no connection.
    pub async fn post(&self, body: Vec<u8>) -> Result<(), Failure> {
        let signature = signature::header_value(&self.secret, now_ms(), &body);
        let result = self
            .client
            .post(self.url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(signature::HEADER, signature)
            .body(body)
            .send()
            .await;
        match result {
            Ok(response) if response.status().is_success() => Ok(()),
            Ok(response) => Err(Failure::Status(response.status().as_u16())),
            Err(e) if e.is_timeout() => Err(Failure::Timeout),
            Err(e) if e.is_connect() => Err(Failure::Connect),
            Err(_) => Err(Failure::Request),
        }
    }
}

/// The first pause after a failure.
const FIRST_PAUSE: Duration = Duration::from_millis(250);
/// The longest pause between two attempts.
const LONGEST_PAUSE: Duration = Duration::from_secs(60);

/// The pause before attempt `failures + 1` (after `failures` failures, ≥ 1):
/// 250 ms doubled per failure, at most 60 s, times a random factor in
/// [0.5, 1] (jitter: receivers coming back are not hit by every channel at once).
pub fn backoff(failures: u32) -> Duration {
    let doubled = FIRST_PAUSE.saturating_mul(1u32 << failures.saturating_sub(1).min(16));
    doubled.min(LONGEST_PAUSE).mul_f64(rand::random_range(0.5..=1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_up_to_a_minute_with_jitter() {
        for failures in 1..40 {
            let pause = backoff(failures);
            let full = FIRST_PAUSE
                .saturating_mul(1 << (failures - 1).min(16))
                .min(LONGEST_PAUSE);
            assert!(pause <= full && pause >= full / 2, "{failures}: {pause:?} vs {full:?}");
        }
        assert!(backoff(30) >= Duration::from_secs(30));
    }
}
