//! The server's HTTP error (`{"error": {"code", "message", "reason"?,
//! "retryAfterMs"?, "field"?}}`, protocol.md §4) read out of an
//! [`AdminError::Status`], so a caller matches on its `code` (an upload
//! over the server's `max_unclaimed_upload_bytes` is 429 `rate_limited`)
//! instead of parsing the body.

use chatd_proto::protocol::ErrorCode;
use serde::Deserialize;

use super::AdminError;

/// An HTTP error answer of the server, as its body says it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiError {
    /// The HTTP status.
    #[serde(skip)]
    pub status: u16,
    /// `bad_request`, `invalid_field`, `forbidden`, `rate_limited`, …
    pub code: String,
    /// What was refused and why (for people, not for matching).
    pub message: String,
    /// A word telling refusals of one code apart (`banned`, `muted`, …).
    #[serde(default)]
    pub reason: Option<String>,
    /// Milliseconds until the refusal ends by itself, when it does.
    #[serde(default)]
    pub retry_after_ms: Option<u64>,
    /// `invalid_field`: the field it names.
    #[serde(default)]
    pub field: Option<String>,
}

impl ApiError {
    /// Whether the spec marks its code retryable
    /// ([`ErrorCode::retryable`]); `false` for a code the frames do not
    /// share (HTTP-only codes such as `unsupported_media_type`).
    #[must_use]
    pub fn retryable(&self) -> bool {
        serde_json::from_value::<ErrorCode>(serde_json::Value::String(self.code.clone()))
            .is_ok_and(ErrorCode::retryable)
    }
}

/// The `{"error": …}` envelope.
#[derive(Deserialize)]
struct Envelope {
    error: ApiError,
}

impl AdminError {
    /// The server's error of an [`AdminError::Status`] whose body has the
    /// spec's shape; `None` for a transport failure or a body of another
    /// shape (a proxy's page).
    #[must_use]
    pub fn api_error(&self) -> Option<ApiError> {
        let AdminError::Status { status, body } = self else {
            return None;
        };
        let mut error = serde_json::from_str::<Envelope>(body).ok()?.error;
        error.status = *status;
        Some(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_body_of_the_spec_shape_is_read_out() {
        let error = AdminError::Status {
            status: 429,
            body: r#"{"error":{"code":"rate_limited","message":"over max_unclaimed_upload_bytes (10 bytes)"}}"#.into(),
        };
        let api = error.api_error().expect("typed");
        assert_eq!(
            (api.status, api.code.as_str(), api.retryable()),
            (429, "rate_limited", true)
        );
        assert!(api.message.contains("max_unclaimed_upload_bytes"));
        let other = AdminError::Status {
            status: 502,
            body: "<html>bad gateway</html>".into(),
        };
        assert_eq!(other.api_error(), None);
        for (code, retryable) in [
            ("unavailable", true),
            ("forbidden", false),
            ("unsupported_media_type", false),
        ] {
            let error = AdminError::Status {
                status: 400,
                body: format!(r#"{{"error":{{"code":"{code}","message":"m"}}}}"#),
            };
            assert_eq!(error.api_error().expect("typed").retryable(), retryable, "{code}");
        }
    }
}
