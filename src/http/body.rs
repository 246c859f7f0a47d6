//! Request bodies: reading them within `max_request_bytes` and decoding
//! JSON of a documented shape, with refusals in the API's error shape.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, StatusCode};

use super::{require_admin, ApiError};
use crate::state::AppState;

/// The body of an admin request: the credentials are checked first, so a
/// request without valid ones is refused before its body is read (and is
/// never told `100 Continue`), then the body is read ([`read_body`]).
///
/// # Errors
/// 401/403 for the credentials, as [`require_admin`]; then as [`read_body`].
pub async fn admin_body(state: &AppState, headers: &HeaderMap, request: Request) -> Result<Bytes, ApiError> {
    require_admin(state, headers)?;
    read_body(request, state.config.max_request_bytes).await
}

/// Reads the request's body, or answers with the extractor's refusal (413
/// past `max_request_bytes`) in the API's error shape. Handlers call
/// it after the credential check, so a request without valid credentials is
/// refused before its body is read (and is never told `100 Continue`).
pub async fn read_body(request: Request, limit: usize) -> Result<Bytes, ApiError> {
    Bytes::from_request(request, &())
        .await
        .map_err(|rejection: BytesRejection| {
            let status = rejection.status();
            if status == StatusCode::PAYLOAD_TOO_LARGE {
                // The same words as a declared over-long body (a chunked one
                // is only found out while it is read).
                ApiError::new(status, "bad_request", &super::body_too_large(limit))
            } else {
                ApiError::new(status, "bad_request", &rejection.body_text())
            }
        })
}

/// Decodes a request body of `shape`. A refusal (400 `bad_request`) says
/// whether the body is not JSON or not that shape, names a missing field, and
/// gives the line and column, in words of its own: serde's text names Rust
/// types ("expected struct CreateChannel") that mean nothing to a client.
pub fn parse_json<T: serde::de::DeserializeOwned>(body: &Bytes, shape: &str) -> Result<T, ApiError> {
    // serde also takes a struct written as a JSON array (`["room", ["alice"]]`):
    // only an object is the documented shape.
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        let not_json = serde_json::from_slice::<serde::de::IgnoredAny>(body).is_err();
        let message = if not_json {
            "body is not valid JSON".to_owned()
        } else {
            format!("body must be {shape}")
        };
        return Err(ApiError::bad_request(&message));
    }
    serde_json::from_slice(body).map_err(|e| {
        use serde_json::error::Category;
        let at = format!("line {}, column {}", e.line(), e.column());
        let message = match e.classify() {
            Category::Syntax | Category::Eof | Category::Io => format!("body is not valid JSON ({at})"),
            Category::Data => match missing_field(&e) {
                Some(field) => format!("body must be {shape}: \"{field}\" is missing"),
                None => format!("body must be {shape} ({at})"),
            },
        };
        ApiError::bad_request(&message)
    })
}

/// The field a "missing field" decode error names.
fn missing_field(error: &serde_json::Error) -> Option<String> {
    let text = error.to_string();
    let name = text.strip_prefix("missing field `")?.split('`').next()?;
    Some(name.to_owned())
}
