//! Users as the admin sees them (protocol.md §19): `DELETE
//! /v1/users/{userId}` erases a user; the work is `crate::erasure`'s.

use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::caller::require_admin;
use super::channels::user_id;
use super::error::ApiError;
use super::extract::ApiPath;
use super::openapi::ErrorBody;
use crate::erasure::{self, EraseError};
use crate::state::AppState;

/// `DELETE /v1/users/{userId}` (admin): erases the user (§19) and answers
/// 204 once every effect is stored; an unknown user (nothing to erase) is
/// 204 too, and so is a second call. An erasure that is not done within
/// `handshake_timeout_ms` less a second goes on in the background and is
/// answered 202 `{"userId","status":"pending"}`: calling again waits for the
/// same erasure. 400 for a bad id.
#[utoipa::path(
    delete,
    path = "/v1/users/{userId}",
    tag = "users",
    params(("userId" = String, Path, description = "The user to erase")),
    responses(
        (status = 204, description = "Erased: messages deleted, reactions removed, memberships ended, the rest gone; earlier tokens refused"),
        (status = 202, description = "Still erasing (a large user): call again to wait for it"),
        (status = 400, description = "A bad user id", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "A user token, not the admin token", body = ErrorBody),
        (status = 503, description = "Database unavailable, or shutting down", body = ErrorBody),
    ),
    security(("adminToken" = [])),
)]
pub async fn erase_user(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
) -> Result<Response, ApiError> {
    require_admin(&state, &headers)?;
    let ApiPath(raw) = path?;
    let user = user_id(&raw, "userId")?;
    let mut done = match erasure::start(&state, &user).await {
        Ok(done) => done,
        Err(EraseError::Store(error)) => return Err(error.into()),
        Err(EraseError::Stopped) => return Err(ApiError::unavailable("server is shutting down; retry")),
    };
    // Answered before the request's own deadline (`handshake_timeout_ms`).
    let wait = state
        .config
        .handshake_timeout()
        .saturating_sub(Duration::from_secs(1))
        .max(Duration::from_millis(500));
    let finished = tokio::time::timeout(wait, done.wait_for(|finished| *finished))
        .await
        .map(|signal| signal.is_ok());
    match finished {
        Ok(true) => Ok(StatusCode::NO_CONTENT.into_response()),
        // The erasure stopped with the server: it resumes at the next start.
        Ok(false) => Err(ApiError::unavailable(
            "server is shutting down; the erasure resumes at its next start",
        )),
        Err(_) => Ok((
            StatusCode::ACCEPTED,
            Json(serde_json::json!({"userId": user.as_str(), "status": "pending"})),
        )
            .into_response()),
    }
}
