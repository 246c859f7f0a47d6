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
    /// Nothing was sent: the entries could not be read again for the
    /// attempt (the database is unavailable).
    #[error("entries not read")]
    Store,
}

impl Failure {
    /// The metric label: the status code, or `timeout`, `connect`, `request`, `store`.
    pub fn label(&self) -> String {
        match self {
            Failure::Status(code) => code.to_string(),
            Failure::Timeout => "timeout".into(),
            Failure::Connect => "connect".into(),
            Failure::Request => "request".into(),
            Failure::Store => "store".into(),
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
            // Below the 5 s after which common servers (Node's default
            // `keepAliveTimeout`) close an idle connection, so a kept
            // connection is seldom reused just as its receiver drops it.
            .pool_idle_timeout(IDLE_CONNECTION)
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
    /// A request that fails with no answer and no timeout, as when the
    /// receiver closed an idle kept-alive connection while the request was
    /// on its way (a receiver that closes idle connections without
    /// `Connection: close` made about 3 % of POSTs fail so), is sent once
    /// more at once, on a new connection: delivery is at least once, so a
    /// receiver that did get the first copy sees the same entries again.
    ///
    /// # Errors
    /// [`Failure`]: any other status, a timeout, no connection; for a
    /// failed request, the second attempt's.
    pub async fn post(&self, body: Vec<u8>) -> Result<(), Failure> {
        let body = bytes::Bytes::from(body);
        match self.attempt(body.clone()).await {
            Err(Failure::Request) => self.attempt(body).await,
            other => other,
        }
    }

    /// One POST of `body`, signed now.
    async fn attempt(&self, body: bytes::Bytes) -> Result<(), Failure> {
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

/// How long an idle kept-alive connection to the receiver is kept for reuse.
const IDLE_CONNECTION: Duration = Duration::from_secs(4);

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

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// Reads one HTTP/1.1 request (head and a `Content-Length` body) from
    /// `stream`; `false` when the connection ended first.
    async fn read_request(stream: &mut tokio::net::TcpStream) -> bool {
        let mut seen = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            if let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&seen[..end]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                if seen.len() >= end + 4 + length {
                    return true;
                }
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return false,
                Ok(n) => seen.extend_from_slice(&chunk[..n]),
            }
        }
    }

    /// A receiver that keeps connections alive and answers 204, except that
    /// it drops the connection, unanswered, on the second request it reads
    /// (what a receiver closing an idle connection as a request arrives
    /// looks like to the sender). Returns its URL and its request count.
    async fn receiver_dropping_the_second_request() -> (String, std::sync::Arc<std::sync::atomic::AtomicU32>) {
        use std::sync::atomic::{AtomicU32, Ordering};
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
        let count = std::sync::Arc::new(AtomicU32::new(0));
        let counted = count.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let counted = counted.clone();
                tokio::spawn(async move {
                    while read_request(&mut stream).await {
                        if counted.fetch_add(1, Ordering::SeqCst) + 1 == 2 {
                            return; // dropped: closed with no answer
                        }
                        let answer = b"HTTP/1.1 204 No Content\r\n\r\n";
                        if stream.write_all(answer).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (url, count)
    }

    #[tokio::test]
    async fn a_post_whose_kept_connection_is_dropped_unanswered_is_sent_again_at_once() {
        use std::sync::atomic::Ordering;
        let (url, count) = receiver_dropping_the_second_request().await;
        let sender = Sender::new(&url, "secret", Duration::from_secs(5)).expect("sender");
        assert_eq!(sender.post(b"{}".to_vec()).await, Ok(()), "first POST");
        // The second goes over the kept connection, which the receiver drops
        // unanswered; without the second attempt this was Failure::Request.
        assert_eq!(sender.post(b"{}".to_vec()).await, Ok(()), "second POST");
        assert_eq!(
            count.load(Ordering::SeqCst),
            3,
            "the dropped request and its second attempt"
        );
    }

    #[tokio::test]
    async fn a_receiver_that_keeps_failing_is_tried_twice_per_post_and_reported() {
        // Every connection is dropped as soon as its request is read.
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
        let count = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let counted = count.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                if read_request(&mut stream).await {
                    counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            }
        });
        let sender = Sender::new(&url, "secret", Duration::from_secs(5)).expect("sender");
        assert_eq!(sender.post(b"{}".to_vec()).await, Err(Failure::Request));
        assert_eq!(
            count.load(std::sync::atomic::Ordering::SeqCst),
            2,
            "one POST, two attempts, no more"
        );
    }

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
