//! Flags (reports) of messages (protocol.md §17): a member flags a message
//! (`POST /v1/messages/{messageId}/flags`), the admin lists them
//! (`GET /v1/flags`), and with webhooks on each new flag is POSTed as
//! `{"type":"flag","flag","entry"}`.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

use super::body::{parse_json, read_body};
use super::caller::require_admin;
use super::error::ApiError;
use super::extract::{ApiPath, ApiQuery, QueryParams};
use super::me::signed_in_user;
use super::openapi::ErrorBody;
use crate::ids::now_ms;
use crate::permissions::Denied;
use crate::protocol::TaggedMessage;
use crate::state::AppState;
use crate::store::{EntryKind, FlagRow};
use crate::view;

/// Flags per page of `GET /v1/flags` when `limit` is absent.
pub const DEFAULT_FLAGS_PAGE: u32 = 100;
/// The largest `limit` of `GET /v1/flags`.
pub const MAX_FLAGS_PAGE: u32 = 500;
/// The longest `note`, in bytes.
pub const MAX_NOTE_BYTES: usize = 1000;

/// A flag as the routes and the webhook show it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FlagView {
    flag_id: String,
    message_id: String,
    channel_id: String,
    reporter_id: String,
    /// `spam`, `abuse` or `other`.
    reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    /// When, ms since the epoch.
    created_at: i64,
}

impl From<FlagRow> for FlagView {
    fn from(f: FlagRow) -> Self {
        Self {
            flag_id: f.flag_id.hyphenated().to_string(),
            message_id: f.message_id.hyphenated().to_string(),
            channel_id: f.channel_id.as_str().to_owned(),
            reporter_id: f.reporter_id.as_str().to_owned(),
            reason: f.reason,
            note: f.note,
            created_at: f.created_at,
        }
    }
}

/// The `POST /v1/messages/{messageId}/flags` body.
#[derive(Debug, utoipa::ToSchema)]
#[allow(dead_code)] // a schema: the handler reads the body as a JSON object.
pub struct FlagBody {
    /// `spam`, `abuse` or `other`.
    reason: String,
    /// Up to 1000 bytes of text.
    note: Option<String>,
}

const FLAG_SHAPE: &str = r#"{"reason": "spam" | "abuse" | "other", "note"?: string}"#;

/// `GET /v1/flags`'s answer.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FlagList {
    /// Flags in flag order (oldest first).
    flags: Vec<FlagView>,
    /// Whether more flags follow the last one.
    has_more: bool,
}

/// `POST /v1/messages/{messageId}/flags` `{"reason", "note"?}` (a member of
/// the message's channel): 201 with the flag; the same reporter flagging the
/// same message again gets 200 with its first flag. 404 for an unknown or
/// deleted message (or an entry that is not a message), 403 for a user who
/// is not a member of its channel or the admin token, 400 `invalid_field`
/// for a bad `reason` or `note`.
#[utoipa::path(
    post,
    path = "/v1/messages/{messageId}/flags",
    tag = "moderation",
    params(("messageId" = String, Path, description = "The message's id")),
    request_body(content = FlagBody, description = "Why"),
    responses(
        (status = 201, description = "Flagged", body = FlagView),
        (status = 200, description = "Flagged already by this user: the first flag", body = FlagView),
        (status = 400, description = "A bad reason or note", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "Not a member of the message's channel, or the admin token", body = ErrorBody),
        (status = 404, description = "Unknown or deleted message", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("userJwt" = [])),
)]
pub async fn flag_message(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
    raw: Request,
) -> Result<Response, ApiError> {
    let user = signed_in_user(&state, &headers)?;
    let ApiPath(raw_message) = path?;
    let body = read_body(raw, state.config.max_request_bytes).await?;
    let request: serde_json::Map<String, serde_json::Value> = parse_json(&body, FLAG_SHAPE)?;
    if let Some(other) = request.keys().find(|k| !matches!(k.as_str(), "reason" | "note")) {
        return Err(ApiError::invalid_field(other, "unknown field (reason and note)"));
    }
    let reason = match request.get("reason").and_then(|r| r.as_str()) {
        Some(reason @ ("spam" | "abuse" | "other")) => reason.to_owned(),
        _ => return Err(ApiError::invalid_field("reason", "must be spam, abuse or other")),
    };
    let note = match request.get("note") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(note)) if note.len() > MAX_NOTE_BYTES => {
            return Err(ApiError::invalid_field("note", "must be at most 1000 bytes"));
        }
        Some(serde_json::Value::String(note)) if note.contains('\0') => {
            return Err(ApiError::invalid_field("note", "must not contain U+0000"));
        }
        Some(serde_json::Value::String(note)) => Some(note.clone()),
        Some(_) => {
            return Err(ApiError::invalid_field(
                "note",
                "must be a string of at most 1000 bytes",
            ))
        }
    };
    let unknown = || ApiError::not_found("unknown or deleted message");
    let message_id = crate::ids::parse_message_id(&raw_message).map_err(|_| unknown())?;
    let message = state
        .store
        .message(message_id)
        .await?
        .filter(|m| m.kind == EntryKind::Message && !m.deleted)
        .ok_or_else(unknown)?;
    if state.store.role_of(&message.channel_id, &user.user_id).await?.is_none() {
        return Err(ApiError::from(Denied::NotAMember));
    }
    let new = FlagRow {
        flag_id: uuid::Uuid::now_v7(),
        message_id,
        channel_id: message.channel_id.clone(),
        reporter_id: user.user_id.clone(),
        reason,
        note,
        created_at: now_ms(),
    };
    let (flag, created) = state.store.flag(&new).await?;
    let view = FlagView::from(flag);
    if created {
        tracing::info!(message_id = %message_id, channel_id = %message.channel_id, "message flagged");
        if let Some(feed) = &state.webhooks {
            let (store, reporter) = (state.store.clone(), user.user_id.clone());
            feed.post_flag(move || flag_body(store.clone(), message_id, reporter.clone()));
        }
    }
    let status = if created { StatusCode::CREATED } else { StatusCode::OK };
    Ok((status, Json(view)).into_response())
}

/// The webhook body of `reporter`'s flag of `message_id` as stored now
/// (`{"type":"flag","flag","entry"}`, the entry read now: a deleted
/// message's body is `""`); `None` when the flag or the message is gone.
async fn flag_body(
    store: crate::store::Store,
    message_id: uuid::Uuid,
    reporter: crate::ids::UserId,
) -> Result<Option<Vec<u8>>, crate::store::StoreError> {
    let Some(flag) = store.flag_of(message_id, &reporter).await? else {
        return Ok(None);
    };
    let Some(message) = store.message(message_id).await? else {
        return Ok(None);
    };
    let body = serde_json::json!({
        "type": "flag",
        "flag": FlagView::from(flag),
        "entry": TaggedMessage::MsgRecv(view::recv_read(&message)),
    });
    Ok(Some(body.to_string().into_bytes()))
}

/// The query of `GET /v1/flags`.
#[derive(Debug, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // a schema: the handler reads the query as pairs.
pub struct FlagsQuery {
    /// Flags after this flag id (exclusive).
    after: Option<String>,
    /// Page size, 1 to 500; default 100.
    #[param(minimum = 1, maximum = 500)]
    limit: Option<i64>,
}

/// `GET /v1/flags?after=FLAGID&limit=N` (admin): 200 `{"flags": [...],
/// "hasMore"}` in flag order (oldest first) after `after`; `limit` 1..500,
/// default 100.
#[utoipa::path(
    get,
    path = "/v1/flags",
    tag = "moderation",
    params(FlagsQuery),
    responses(
        (status = 200, description = "A page of flags", body = FlagList),
        (status = 400, description = "A bad after or limit", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "A user token", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("adminToken" = [])),
)]
pub async fn list_flags(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    require_admin(&state, &headers)?;
    let query = QueryParams::new(query);
    let after = query.after(crate::ids::parse_message_id)?;
    let limit = query.page_limit(DEFAULT_FLAGS_PAGE, MAX_FLAGS_PAGE)?;
    let (flags, has_more) = state.store.flags_page(after, limit).await?;
    let body = FlagList {
        flags: flags.into_iter().map(FlagView::from).collect(),
        has_more,
    };
    Ok(Json(body).into_response())
}
