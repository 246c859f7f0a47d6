//! The membership routes (`/v1/channels/{channelId}/members/{userId}`).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};

use super::channels::{channel_id, user_id};
use super::openapi::ErrorBody;
use super::{require_admin, ApiError, ApiPath};
use crate::ids::now_ms;
use crate::state::AppState;

/// `PUT /v1/channels/{channelId}/members/{userId}` (admin): 204; 404 for an unknown channel.
#[utoipa::path(
    put,
    path = "/v1/channels/{channelId}/members/{userId}",
    tag = "channels",
    params(
        ("channelId" = String, Path, description = "The channel id"),
        ("userId" = String, Path, description = "The user id"),
    ),
    responses(
        (status = 204, description = "Member (also when already one)"),
        (status = 400, description = "A bad channel or user id", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "A user token, not the admin token", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
        (status = 404, description = "Unknown channel", body = ErrorBody),
    ),
    security(("adminToken" = [])),
)]
pub async fn add_member(
    state: State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<(String, String)>, ApiError>,
) -> Result<StatusCode, ApiError> {
    set_member(state, headers, path, true).await
}

/// `DELETE /v1/channels/{channelId}/members/{userId}` (admin): 204; 404 for an unknown channel.
#[utoipa::path(
    delete,
    path = "/v1/channels/{channelId}/members/{userId}",
    tag = "channels",
    params(
        ("channelId" = String, Path, description = "The channel id"),
        ("userId" = String, Path, description = "The user id"),
    ),
    responses(
        (status = 204, description = "Not a member (also when not one)"),
        (status = 400, description = "A bad channel or user id", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "A user token, not the admin token", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
        (status = 404, description = "Unknown channel", body = ErrorBody),
    ),
    security(("adminToken" = [])),
)]
pub async fn remove_member(
    state: State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<(String, String)>, ApiError>,
) -> Result<StatusCode, ApiError> {
    set_member(state, headers, path, false).await
}

async fn set_member(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<(String, String)>, ApiError>,
    add: bool,
) -> Result<StatusCode, ApiError> {
    require_admin(&state, &headers)?;
    let ApiPath((raw_channel, raw_user)) = path?;
    let channel = channel_id(&raw_channel)?;
    let user = user_id(&raw_user, "userId")?;
    let seq = state.store.set_member(&channel, &user, add, now_ms()).await?;
    state.delivery.membership_changed(&user, &channel, add, seq);
    tracing::info!(channel_id = %channel, user_id = %user, add, "membership changed");
    Ok(StatusCode::NO_CONTENT)
}
