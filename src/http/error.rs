//! The HTTP API's error: `{"error": {"code", "message", "reason"?}}` with its
//! status (`docs/protocol.md` §4), and how a store error becomes one.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::permissions::Denied;
use crate::store::StoreError;

/// An HTTP error: `{"error": {"code", "message", "reason"?}}` with its status.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    /// A lower-case word telling refusals of one code apart (version 1.2:
    /// `dm_policy`, `banned`, …).
    reason: Option<String>,
    /// Milliseconds until the refusal ends by itself (`muted`, `slow_mode`).
    retry_after_ms: Option<u64>,
    /// `invalid_field`: the field it names (as `ERROR` frames carry it).
    field: Option<String>,
}

impl ApiError {
    /// An error with an explicit status and code.
    pub fn new(status: StatusCode, code: &'static str, message: &str) -> Self {
        Self {
            status,
            code,
            message: message.to_owned(),
            reason: None,
            retry_after_ms: None,
            field: None,
        }
    }

    /// The same error with `reason`.
    #[must_use]
    pub fn with_reason(mut self, reason: &str) -> Self {
        self.reason = Some(reason.to_owned());
        self
    }

    /// The same error with `retryAfterMs`.
    #[must_use]
    pub fn with_retry_after_ms(mut self, ms: Option<u64>) -> Self {
        self.retry_after_ms = ms;
        self
    }

    /// 400 `bad_request`: body not JSON or not the expected shape.
    pub fn bad_request(message: &str) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// 400 `invalid_field`, naming `field` (also as `"field"`).
    pub fn invalid_field(field: &str, reason: &str) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_field", &format!("{field}: {reason}")).with_field(Some(field))
    }

    /// The same error naming `field` (`"field"`), when given.
    #[must_use]
    pub fn with_field(mut self, field: Option<&str>) -> Self {
        self.field = field.map(str::to_owned);
        self
    }

    /// 401 `unauthorized`.
    pub fn unauthorized(message: &str) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    /// 403 `forbidden`.
    pub fn forbidden(message: &str) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    /// 404 `not_found`.
    pub fn not_found(message: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 503 `unavailable`.
    pub fn unavailable(message: &str) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut error = serde_json::json!({"code": self.code, "message": self.message});
        if let Some(reason) = self.reason {
            error["reason"] = serde_json::json!(reason);
        }
        if let Some(ms) = self.retry_after_ms {
            error["retryAfterMs"] = serde_json::json!(ms);
        }
        if let Some(field) = self.field {
            error["field"] = serde_json::json!(field);
        }
        let body = serde_json::json!({ "error": error });
        (self.status, Json(body)).into_response()
    }
}

impl From<crate::commit::MembershipError> for ApiError {
    fn from(error: crate::commit::MembershipError) -> Self {
        match error {
            crate::commit::MembershipError::Store(error) => Self::from(error),
            crate::commit::MembershipError::Stopped => Self::unavailable("the server is shutting down"),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Exists => Self::new(StatusCode::CONFLICT, "conflict", "channel already exists"),
            StoreError::NotFound => Self::not_found("unknown channel"),
            StoreError::NotAllowed => Self::forbidden("not allowed in this channel"),
            StoreError::Banned => Self::forbidden("banned from this channel").with_reason("banned"),
            StoreError::Erasing => Self::new(StatusCode::CONFLICT, "conflict", "the user is being erased"),
            StoreError::Denied(denied) => Self::from(denied),
            StoreError::Unavailable(_) | StoreError::TimedOut => Self::unavailable("database unavailable"),
            StoreError::Standby => Self::unavailable("the database is a standby"),
            StoreError::InDoubt(_) => {
                tracing::error!(error = %error, cause = ?std::error::Error::source(&error), "store call outcome unknown");
                Self::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "the database failed while committing; the change may have been made",
                )
            }
            other => {
                tracing::error!(error = %other, cause = ?std::error::Error::source(&other), "store call failed");
                Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "internal error")
            }
        }
    }
}

impl From<Denied> for ApiError {
    /// A refusal of `permissions::may`: 403 `forbidden`, saying why.
    fn from(denied: Denied) -> Self {
        Self::forbidden(&denied.to_string())
    }
}
