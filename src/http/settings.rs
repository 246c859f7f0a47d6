//! A user's notification settings in one of its channels (protocol.md
//! §16): `PUT /v1/me/channels/{channelId}/settings`. The change reaches the
//! user's other sessions at once as `CHANNEL_SETTINGS`; the webhook's
//! `notify` reads the settings under the channel lock at each commit
//! (`store/locked.rs`).

use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use serde_json::Value;

use super::body::{parse_json, read_body};
use super::channels::channel_id;
use super::error::ApiError;
use super::extract::ApiPath;
use super::me::signed_in_user;
use super::openapi::ErrorBody;
use crate::ids::MAX_SEQ;
use crate::protocol::Notify;
use crate::state::AppState;
use crate::store::{ChannelSettings, SettingsPatch};

/// The shape of the settings body.
const SETTINGS_SHAPE: &str = r#"{"notify"?: "all"|"mentions"|"none", "snoozeUntil"?: ms|null}"#;

/// The caller's settings in a channel, as the route answers them.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    channel_id: String,
    /// `all`, `mentions` or `none`.
    notify: String,
    /// Snoozed until then (ms since the epoch); `null`: no snooze.
    snooze_until: Option<i64>,
}

/// The body's fields checked: `notify` one of the three words,
/// `snoozeUntil` an integer 0..=2^53-1 or `null`; any other field is
/// refused (as `PATCH /v1/channels/{id}` does), so a misspelt field is not
/// taken for "leave it as it is".
///
/// # Errors
/// 400 `invalid_field` naming the field.
fn patch_of(body: &serde_json::Map<String, Value>) -> Result<SettingsPatch, ApiError> {
    if let Some(unknown) = body.keys().find(|k| !matches!(k.as_str(), "notify" | "snoozeUntil")) {
        return Err(ApiError::invalid_field(
            unknown,
            "unknown field (notify and snoozeUntil may be changed)",
        ));
    }
    let notify = match body.get("notify") {
        None => None,
        Some(Value::String(text)) => Some(
            Notify::parse(text).ok_or_else(|| ApiError::invalid_field("notify", "must be all, mentions or none"))?,
        ),
        Some(_) => return Err(ApiError::invalid_field("notify", "must be all, mentions or none")),
    };
    let snooze_until = match body.get("snoozeUntil") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(Value::Number(n)) => match crate::number::integer(n).filter(|ms| (0..=MAX_SEQ).contains(ms)) {
            Some(ms) => Some(Some(ms)),
            None => {
                return Err(ApiError::invalid_field(
                    "snoozeUntil",
                    "must be ms since the epoch or null",
                ))
            }
        },
        Some(_) => {
            return Err(ApiError::invalid_field(
                "snoozeUntil",
                "must be ms since the epoch or null",
            ))
        }
    };
    Ok(SettingsPatch { notify, snooze_until })
}

/// `PUT /v1/me/channels/{channelId}/settings` (a member's user token)
/// `{"notify"?, "snoozeUntil"?}`: 200 with the settings as they are now
/// (a field left out keeps its value; `snoozeUntil: null` ends a snooze),
/// and `CHANNEL_SETTINGS` to every live session of the caller. 400
/// `invalid_field` for a bad value or an unknown field, 403 for a channel the caller is not in
/// (or an unknown one) and for the admin token; nothing changes then.
#[utoipa::path(
    put,
    path = "/v1/me/channels/{channelId}/settings",
    tag = "channels",
    params(("channelId" = String, Path, description = "The channel id")),
    request_body(content = serde_json::Value, description = "notify and snoozeUntil, each optional; no other field"),
    responses(
        (status = 200, description = "The settings now", body = SettingsView),
        (status = 400, description = "Not a JSON object, a bad notify or snoozeUntil, or an unknown field", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "Not a member (or unknown channel), or the admin token", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("userJwt" = [])),
)]
pub async fn put_settings(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
    raw: Request,
) -> Result<Response, ApiError> {
    let user = signed_in_user(&state, &headers)?;
    let ApiPath(raw_channel) = path?;
    let channel = channel_id(&raw_channel)?;
    let body = read_body(raw, state.config.max_request_bytes).await?;
    let body: serde_json::Map<String, Value> = parse_json(&body, SETTINGS_SHAPE)?;
    let patch = patch_of(&body)?;
    let Some(settings) = state.store.change_settings(&user.user_id, &channel, patch).await? else {
        return Err(ApiError::forbidden("not a member of this channel"));
    };
    state.delivery.settings_changed(&user.user_id, &channel, &settings);
    Ok(Json(view_of(&channel, settings)).into_response())
}

fn view_of(channel: &crate::ids::ChannelId, settings: ChannelSettings) -> SettingsView {
    SettingsView {
        channel_id: channel.as_str().to_owned(),
        notify: settings.notify.as_str().to_owned(),
        snooze_until: settings.snooze_until,
    }
}
