//! `PATCH /v1/channels/{channelId}`: a channel's name, metadata,
//! visibility, posting role, slow mode and retention changed, each field
//! checked before anything is.

use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::Value;

use super::body::{parse_json, read_body};
use super::caller::{actor_in, caller};
use super::channels::{channel_id, check_name, visibility, ChannelView};
use super::error::ApiError;
use super::extract::ApiPath;
use super::openapi::{ChannelPatchBody, ErrorBody};
use crate::permissions::{self, Action};
use crate::protocol::Role;
use crate::state::AppState;
use crate::store::{ChannelPatch, StoreError};

/// How deep `metadata` may nest (the object itself is level 1). It travels
/// 3 levels down in HELLO and 2 in `CHANNEL_ADDED`, and common JSON
/// decoders stop at 128 (serde_json) or about 100 levels: deeper metadata
/// would make a member's HELLO undecodable, so the client could never
/// connect.
const MAX_METADATA_DEPTH: usize = 32;

/// The nesting depth of `value`: 0 for a scalar, 1 for a flat object or
/// array. Iterative, so no input can exhaust the stack.
fn json_depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1)];
    while let Some((value, level)) = stack.pop() {
        match value {
            Value::Object(map) => stack.extend(map.values().map(|child| (child, level + 1))),
            Value::Array(items) => stack.extend(items.iter().map(|child| (child, level + 1))),
            _ => continue,
        }
        deepest = deepest.max(level);
    }
    deepest
}

/// The shape of the `PATCH /v1/channels/{channelId}` body, for `reason`.
const PATCH_SHAPE: &str = r#"{"name"?: string | null, "metadata"?: object | null, "visibility"?: "private" | "public", "postingRole"?: "member" | "moderator", "slowModeMs"?: 0..3600000, "retentionSecs"?: 0..3155760000 | null}"#;

/// The largest `slowModeMs` (one hour).
pub const MAX_SLOW_MODE_MS: i64 = 3_600_000;

/// A field that may be absent (leave it), `null` (clear it) or a value.
fn patch_field(body: &serde_json::Map<String, Value>, name: &str) -> Option<Option<Value>> {
    body.get(name).map(|v| (!v.is_null()).then(|| v.clone()))
}

/// `PATCH /v1/channels/{channelId}` (admin, or an owner of the channel)
/// `{"name"?, "metadata"?, "visibility"?}`: 200 with the channel object.
/// `name`: 0..200 characters of text (no control characters); `metadata`: a
/// JSON object of at most `max_channel_metadata_bytes` serialized; `null`
/// clears either; `visibility`: `private` or `public` (a direct channel
/// stays private: 403). 400 `invalid_field` (nothing changed), 404 for an
/// unknown channel (admin; a user gets 403).
#[utoipa::path(
    patch,
    path = "/v1/channels/{channelId}",
    tag = "channels",
    params(("channelId" = String, Path, description = "The channel id")),
    request_body(content = ChannelPatchBody, description = "The fields to change; null clears one"),
    responses(
        (status = 200, description = "The channel as changed", body = ChannelView),
        (status = 400, description = "Body not JSON or not the shape, a bad channel id, name or metadata", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "A user token of a non-owner (or an unknown channel), or visibility on a direct channel", body = ErrorBody),
        (status = 404, description = "Unknown channel (admin token)", body = ErrorBody),
        (status = 413, description = "Body over max_request_bytes", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("adminToken" = []), ("userJwt" = [])),
)]
pub async fn patch_channel(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
    raw: Request,
) -> Result<Response, ApiError> {
    caller(&state, &headers)?;
    let ApiPath(raw_channel) = path?;
    let id = channel_id(&raw_channel)?;
    let (actor, by) = actor_in(&state, &headers, &id).await?;
    permissions::may(actor, Action::UpdateChannel).map_err(ApiError::from)?;
    let body = read_body(raw, state.config.max_request_bytes).await?;
    let request: serde_json::Map<String, Value> = parse_json(&body, PATCH_SHAPE)?;
    if let Some(unknown) = request.keys().find(|k| {
        !matches!(
            k.as_str(),
            "name" | "metadata" | "visibility" | "postingRole" | "slowModeMs" | "retentionSecs"
        )
    }) {
        return Err(ApiError::invalid_field(
            unknown,
            "unknown field (name, metadata, visibility, postingRole, slowModeMs and retentionSecs may be changed)",
        ));
    }
    let posting_role = match request.get("postingRole") {
        None => None,
        Some(Value::String(text)) => match Role::parse(text) {
            Some(role @ (Role::Member | Role::Moderator)) => Some(role),
            _ => return Err(ApiError::invalid_field("postingRole", "must be member or moderator")),
        },
        Some(_) => return Err(ApiError::invalid_field("postingRole", "must be member or moderator")),
    };
    let slow_mode_ms = match request.get("slowModeMs") {
        None => None,
        Some(value) => match crate::number::integer_value(value) {
            Some(ms) if (0..=MAX_SLOW_MODE_MS).contains(&ms) => Some(ms),
            _ => {
                return Err(ApiError::invalid_field(
                    "slowModeMs",
                    "must be an integer from 0 to 3600000 (ms)",
                ))
            }
        },
    };
    // §19: null clears it (the server's retention_secs applies again).
    let retention_secs = match patch_field(&request, "retentionSecs") {
        None => None,
        Some(None) => Some(None),
        Some(Some(value)) => match crate::number::integer_value(&value) {
            Some(secs) if (0..=crate::store::MAX_RETENTION_SECS).contains(&secs) => Some(Some(secs)),
            _ => {
                return Err(ApiError::invalid_field(
                    "retentionSecs",
                    "must be null or an integer from 0 (forever) to 3155760000 (seconds)",
                ))
            }
        },
    };
    let visibility = match request.get("visibility") {
        None => None,
        Some(Value::String(text)) => Some(visibility(Some(text))?),
        Some(_) => return Err(ApiError::invalid_field("visibility", "must be private or public")),
    };
    let name = match patch_field(&request, "name") {
        None => None,
        Some(None) => Some(None),
        Some(Some(Value::String(name))) => {
            check_name(&name)?;
            Some(Some(name))
        }
        Some(Some(_)) => return Err(ApiError::invalid_field("name", "must be a string or null")),
    };
    let metadata = match patch_field(&request, "metadata") {
        None => None,
        Some(None) => Some(None),
        Some(Some(value @ Value::Object(_))) => {
            if json_depth(&value) > MAX_METADATA_DEPTH {
                return Err(ApiError::invalid_field(
                    "metadata",
                    &format!("nested at most {MAX_METADATA_DEPTH} levels deep"),
                ));
            }
            let text = value.to_string();
            let most = state.config.max_channel_metadata_bytes;
            if text.len() > most {
                return Err(ApiError::invalid_field(
                    "metadata",
                    &format!("at most {most} bytes of JSON (max_channel_metadata_bytes)"),
                ));
            }
            Some(Some(text))
        }
        Some(Some(_)) => return Err(ApiError::invalid_field("metadata", "must be a JSON object or null")),
    };
    let patch = ChannelPatch {
        name,
        metadata,
        visibility,
        posting_role,
        slow_mode_ms,
        retention_secs,
    };
    let channel = match state.store.update_channel_by(&id, &patch, by.as_ref()).await {
        Err(StoreError::NotFound) if by.is_some() => return Err(ApiError::from(permissions::Denied::NotAMember)),
        Err(StoreError::NotAllowed) => {
            return Err(ApiError::forbidden(
                "a direct channel is always private, with no posting role or slow mode",
            ))
        }
        other => other?,
    };
    tracing::info!(channel_id = %id, "channel updated");
    state.delivery.channel_updated(&channel);
    Ok(Json(ChannelView::from(channel)).into_response())
}
