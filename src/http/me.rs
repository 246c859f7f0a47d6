//! The routes of the signed-in user (`/v1/me/...`).

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::openapi::{ErrorBody, MyChannels};
use super::{caller, ApiError, Caller};
use crate::state::AppState;
use crate::view;

/// `GET /v1/me/channels` (user token): 200 `{"channels": [...]}`, the
/// caller's channels as HELLO lists them (`channelId`, `lastSeq`,
/// `deliveredSeq`, `readSeq`, `name`, `metadata`), by channel id. 403 for
/// the admin token (it is no user).
#[utoipa::path(
    get,
    path = "/v1/me/channels",
    tag = "channels",
    responses(
        (status = 200, description = "The caller's channels", body = MyChannels),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "The admin token (it is no user)", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("userJwt" = [])),
)]
pub async fn my_channels(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    let user = match caller(&state, &headers)? {
        Caller::User(user) => user,
        Caller::Admin => {
            return Err(ApiError::forbidden(
                "a user token is required (the admin token is no user)",
            ))
        }
    };
    let positions = state.store.channel_states(&user.user_id).await?;
    let channels: Vec<_> = positions.iter().map(view::channel_state).collect();
    Ok(Json(serde_json::json!({"channels": channels})).into_response())
}
