//! The HTTP API's error: `{"error": {"code", "message"}}` with its status
//! (`docs/protocol.md` §4), and how a store error becomes one.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::store::StoreError;

/// An HTTP error: `{"error": {"code", "message"}}` with its status.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl ApiError {
    /// An error with an explicit status and code.
    pub fn new(status: StatusCode, code: &'static str, message: &str) -> Self {
        Self {
            status,
            code,
            message: message.to_owned(),
        }
    }

    /// 400 `bad_request`: body not JSON or not the expected shape.
    pub fn bad_request(message: &str) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// 400 `invalid_field`.
    pub fn invalid_field(field: &str, reason: &str) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_field", &format!("{field}: {reason}"))
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
        let body = serde_json::json!({"error": {"code": self.code, "message": self.message}});
        (self.status, Json(body)).into_response()
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Exists => Self::new(StatusCode::CONFLICT, "conflict", "channel already exists"),
            StoreError::NotFound => Self::not_found("unknown channel"),
            StoreError::Unavailable(_) | StoreError::TimedOut => Self::unavailable("database unavailable"),
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
