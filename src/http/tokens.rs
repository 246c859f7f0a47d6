//! `POST /v1/tokens`: user tokens minted by the admin API.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;

use super::body::{admin_body, parse_json};
use super::channels::user_id;
use super::error::ApiError;
use super::openapi::{ErrorBody, TokenCreated};
use crate::state::AppState;

/// The shape of the `POST /v1/tokens` body, as its refusals name it.
const TOKEN_SHAPE: &str = r#"{"userId": string, "ttlSeconds"?: integer}"#;

/// The `POST /v1/tokens` body.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct CreateToken {
    /// The token's `sub`.
    user_id: String,
    /// Lifetime, 1 to 315360000 s; default `token_ttl_secs`.
    /// Any integral JSON number (`3.6e3` is 3600), as in a frame (§5).
    #[schema(minimum = 1, maximum = 315_360_000)]
    #[serde(default, deserialize_with = "crate::number::optional_integer")]
    ttl_seconds: Option<u64>,
}

/// `POST /v1/tokens` (admin): 201 `{"token", "expiresAt"}`.
#[utoipa::path(
    post,
    path = "/v1/tokens",
    tag = "tokens",
    request_body = CreateToken,
    responses(
        (status = 201, description = "A user JWT", body = TokenCreated),
        (status = 400, description = "Body not JSON, not the shape, a bad userId or ttlSeconds", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "A user token, not the admin token", body = ErrorBody),
        (status = 413, description = "Body over max_request_bytes", body = ErrorBody),
    ),
    security(("adminToken" = [])),
)]
pub async fn create_token(
    State(state): State<AppState>,
    headers: HeaderMap,
    raw: Request,
) -> Result<Response, ApiError> {
    let body = admin_body(&state, &headers, raw).await?;
    let request: CreateToken = parse_json(&body, TOKEN_SHAPE)?;
    let user = user_id(&request.user_id, "userId")?;
    let ttl = request.ttl_seconds.unwrap_or(state.config.token_ttl_secs);
    if ttl == 0 || ttl > crate::auth::MAX_TOKEN_TTL_SECS {
        return Err(ApiError::invalid_field("ttlSeconds", "must be between 1 and 315360000"));
    }
    let (token, expires_at) = state
        .auth
        .mint(&user, ttl)
        .map_err(|_| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "could not sign token"))?;
    let body = serde_json::json!({"token": token, "expiresAt": expires_at});
    Ok((StatusCode::CREATED, Json(body)).into_response())
}
