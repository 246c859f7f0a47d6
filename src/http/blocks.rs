//! A user's blocks (protocol.md §17): `PUT` and `DELETE
//! /v1/me/blocks/{userId}`, `GET /v1/me/blocks`. What a block does is
//! judged elsewhere: the direct-channel route (`me.rs`), presence
//! (`command/presence.rs`) and the write batch (`store/entry_rules.rs`).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

use super::channels::user_id;
use super::error::ApiError;
use super::extract::ApiPath;
use super::me::signed_in_user;
use super::openapi::ErrorBody;
use crate::ids::now_ms;
use crate::state::AppState;
use crate::store::StoreError;

/// `GET /v1/me/blocks`'s answer.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct BlockList {
    /// The users the caller blocks, in byte order of the id.
    blocks: Vec<String>,
}

/// `PUT /v1/me/blocks/{userId}` (user token): the caller blocks `userId`:
/// 204, also when it did already. 400 for a bad id or the caller itself,
/// 403 for the admin token or past `MAX_BLOCKS` (10,000) blocks.
#[utoipa::path(
    put,
    path = "/v1/me/blocks/{userId}",
    tag = "moderation",
    params(("userId" = String, Path, description = "The user to block")),
    responses(
        (status = 204, description = "Blocked (also when it was)"),
        (status = 400, description = "A bad user id, or the caller itself", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "The admin token, or too many blocks", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("userJwt" = [])),
)]
pub async fn block(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
) -> Result<StatusCode, ApiError> {
    let user = signed_in_user(&state, &headers)?;
    let ApiPath(raw) = path?;
    let other = user_id(&raw, "userId")?;
    if other == user.user_id {
        return Err(ApiError::invalid_field("userId", "a user cannot block itself"));
    }
    match state.store.block(&user.user_id, &other, now_ms()).await {
        Ok(_) => {
            // Stored: the blocked user's open presence subscriptions stop
            // showing the blocker at once (§17), on every node.
            state.delivery.user_blocked(&other, &user.user_id);
            Ok(StatusCode::NO_CONTENT)
        }
        Err(StoreError::NotAllowed) => Err(ApiError::forbidden("too many blocks (at most 10000)")),
        Err(other) => Err(other.into()),
    }
}

/// `DELETE /v1/me/blocks/{userId}` (user token): the caller no longer
/// blocks `userId`: 204, also when it did not. 403 for the admin token.
#[utoipa::path(
    delete,
    path = "/v1/me/blocks/{userId}",
    tag = "moderation",
    params(("userId" = String, Path, description = "The user to unblock")),
    responses(
        (status = 204, description = "Not blocked (also when it was not)"),
        (status = 400, description = "A bad user id", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "The admin token", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("userJwt" = [])),
)]
pub async fn unblock(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
) -> Result<StatusCode, ApiError> {
    let user = signed_in_user(&state, &headers)?;
    let ApiPath(raw) = path?;
    let other = user_id(&raw, "userId")?;
    if state.store.unblock(&user.user_id, &other).await? {
        // The blocked user's subscriptions may show the caller again.
        state
            .delivery
            .sharing_may_have_started(std::slice::from_ref(&user.user_id));
    }
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /v1/me/blocks` (user token): 200 `{"blocks": [userId...]}`, whom the
/// caller blocks, in byte order of the id. 403 for the admin token.
#[utoipa::path(
    get,
    path = "/v1/me/blocks",
    tag = "moderation",
    responses(
        (status = 200, description = "Whom the caller blocks", body = BlockList),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "The admin token", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("userJwt" = [])),
)]
pub async fn list_blocks(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    let user = signed_in_user(&state, &headers)?;
    let blocks = state.store.blocks_of(&user.user_id).await?;
    let body = BlockList {
        blocks: blocks.iter().map(|u| u.as_str().to_owned()).collect(),
    };
    Ok(Json(body).into_response())
}
