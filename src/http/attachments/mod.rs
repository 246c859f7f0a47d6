//! `POST /v1/channels/{channelId}/attachments` (protocol.md §15): a
//! member uploads a file into a channel. The body is streamed to the
//! attachment storage as it arrives (hashed and counted on the way; never
//! the whole file in memory: an image's bytes are also spooled to an
//! anonymous temporary file, decoded from there once all are in), checked against the type allow-list and the
//! size limit (413 at once when `Content-Length` says so), images measured
//! and refused over `max_image_pixels` or when they do not decode, and
//! their thumbnails made and stored. The bytes of a user's uploads that
//! no message claimed are bounded (`max_unclaimed_upload_bytes`, summed
//! over all channels): 429 `rate_limited` past it, at once when
//! `Content-Length` says so, as soon as the body passes what was left, and
//! finally, exactly, in the statement that stores the row. A refused upload
//! leaves nothing behind.
//!
//! One user's uploads in progress on a node are bounded
//! (`max_uploads_in_flight_per_user`: 429 `rate_limited`, reason
//! `uploads_in_flight`, before the body is read), and so is the time one
//! body may take (`upload_timeout_secs`: 408), so a member trickling bytes
//! cannot hold a node's connections and files. Image decodes share the
//! node's decode budget fairly between users (`attachments::decodes`).
//!
//! - `body.rs`: the body read as it arrives, within its bounds and times;
//! - `unclaimed.rs`: the objects written that no row names yet, removed
//!   if the upload ends unstored.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use serde::Serialize;

use super::caller::{caller_from_header_or_query, channel_reader, Caller};
use super::channels::channel_id;
use super::error::ApiError;
use super::extract::{ApiPath, ApiQuery, QueryParams};
use super::openapi::ErrorBody;
use crate::attachments::{self, images};
use crate::permissions;
use crate::state::AppState;
use crate::store::{AttachmentRow, UploadStored};

mod body;
mod unclaimed;

use body::{receive, spool_failed, Limits, Times};
use unclaimed::Unclaimed;

/// Longest `filename`, bytes of UTF-8.
pub const MAX_FILENAME_BYTES: usize = 255;

/// The 201 body of an upload.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UploadedAttachment {
    /// UUIDv7: what `MSG_SEND`'s `attachments` names.
    #[schema(value_type = String)]
    pub attachment_id: uuid::Uuid,
    pub channel_id: String,
    /// The media type, as given (lower case, without parameters).
    pub content_type: String,
    /// Bytes.
    pub size: i64,
    /// Hex SHA-256 of the bytes.
    pub sha256: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// Images: pixels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height: Option<i64>,
    /// ms since the Unix epoch.
    pub created_at: i64,
}

/// The media type of a `Content-Type` value: lower case, parameters dropped.
pub(crate) fn media_type(value: &str) -> String {
    value.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// Whether `path` is the upload route, whose body limit is
/// `max_attachment_bytes` (checked by the route) instead of `max_request_bytes`.
pub(super) fn is_upload(method: &axum::http::Method, path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    method == axum::http::Method::POST
        && parts.len() == 5
        && parts[0].is_empty()
        && parts[1] == "v1"
        && parts[2] == "channels"
        && !parts[3].is_empty()
        && parts[4] == "attachments"
}

/// A `filename` checked: 1 to 255 bytes, no `/`, `\`, control or
/// bidirectional control characters, not `.` or `..`, not blank
/// ([`crate::text::shows_nothing`]) and no zero-width filler
/// ([`crate::text::is_zero_width_filler`]: `\u{200b}invoice.pdf`).
fn check_filename(name: &str) -> Result<(), ApiError> {
    let bad = |why: &str| Err(ApiError::invalid_field("filename", why));
    if name.is_empty() || name.len() > MAX_FILENAME_BYTES {
        return bad("must be 1 to 255 bytes");
    }
    if name
        .chars()
        .any(|c| c == '/' || c == '\\' || c.is_control() || is_bidi_control(c))
    {
        return bad("must not contain '/', '\\', control or bidirectional control characters");
    }
    if name == "." || name == ".." {
        return bad("must not be . or ..");
    }
    if crate::text::shows_nothing(name) || name.chars().any(crate::text::is_zero_width_filler) {
        return bad(
            "must show something and not contain zero-width characters (U+200B, U+2060 to U+2064, U+FEFF, U+00AD)",
        );
    }
    Ok(())
}

/// The Unicode bidirectional controls (embeddings, overrides, isolates and
/// marks), with which `\u{202e}gnp.exe` shows as `exe.png`.
fn is_bidi_control(c: char) -> bool {
    crate::text::is_bidi_mark(c) || crate::text::is_bidi_override(c)
}

fn too_large(max: u64) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "body_too_large",
        &format!("attachment over max_attachment_bytes ({max} bytes)"),
    )
}

/// 429 `rate_limited`: with this upload (`size` bytes; "at least" while
/// it is still arriving), the bytes of the user's uploads no message
/// claimed (`unclaimed`) would pass `max` (`max_unclaimed_upload_bytes`).
/// No `retryAfterMs`: it ends when the user sends uploads or they expire.
fn over_bound(max: u64, unclaimed: i64, size: u64, at_least: bool) -> ApiError {
    let at_least = if at_least { "at least " } else { "" };
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
        &format!(
            "over max_unclaimed_upload_bytes ({max} bytes): this user's uploads not yet part of a message \
             hold {unclaimed} bytes and this one is {at_least}{size}; send them or wait for them to expire"
        ),
    )
}

/// 429 `rate_limited`, reason `uploads_in_flight`: the user has `max`
/// (`max_uploads_in_flight_per_user`) uploads in progress on this node. No
/// `retryAfterMs`: it ends when one of them does.
fn too_many_uploads(refused: attachments::TooManyUploads) -> ApiError {
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
        &format!(
            "over max_uploads_in_flight_per_user ({}): this user has that many uploads in progress; \
             retry when one ends",
            refused.max
        ),
    )
    .with_reason("uploads_in_flight")
}

/// `POST /v1/channels/{channelId}/attachments?filename=NAME`: 201 with the
/// attachment; 413 `body_too_large`; 429 `rate_limited` past
/// `max_unclaimed_upload_bytes` or `max_uploads_in_flight_per_user` (this
/// one before anything else is judged); 408 when the body stalls for
/// `handshake_timeout_ms` or takes longer than `upload_timeout_secs`; 415 `unsupported_media_type`; 400
/// `invalid_field` (`body`: an image that does not decode or is too large;
/// `filename`); 403 for a non-member or an unknown channel, as the history
/// route, judged when the upload starts and again when its row is stored
/// (a channel deleted, or its user removed or erased, meanwhile: refused,
/// and the bytes removed).
#[utoipa::path(
    post,
    path = "/v1/channels/{channelId}/attachments",
    tag = "attachments",
    params(
        ("channelId" = String, Path, description = "The channel id"),
        ("filename" = Option<String>, Query, description = "The file's name (1 to 255 bytes, no '/' or control characters)"),
    ),
    request_body(content = Vec<u8>, description = "The raw bytes; Content-Type is the attachment's type", content_type = "application/octet-stream"),
    responses(
        (status = 201, description = "Stored", body = UploadedAttachment),
        (status = 400, description = "An image that does not decode or has too many pixels (field body), a bad filename", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "The admin token, a non-member, or an unknown channel", body = ErrorBody),
        (status = 413, description = "Over max_attachment_bytes", body = ErrorBody),
        (status = 415, description = "No Content-Type, or one not in attachment_types", body = ErrorBody),
        (status = 408, description = "No body bytes for handshake_timeout_ms, or the body took longer than upload_timeout_secs", body = ErrorBody),
        (status = 429, description = "rate_limited: the user's uploads not yet part of a message would pass max_unclaimed_upload_bytes, or (reason uploads_in_flight) the user has max_uploads_in_flight_per_user uploads in progress", body = ErrorBody),
        (status = 503, description = "Database or storage unavailable", body = ErrorBody),
    ),
    security(("userJwt" = [])),
)]
pub async fn upload(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
    ApiQuery(query): ApiQuery<Vec<(String, String)>>,
    request: Request,
) -> Result<Response, ApiError> {
    let query = QueryParams::new(query);
    let who = caller_from_header_or_query(&state, &headers, &query)?;
    let ApiPath(raw) = path?;
    let channel = channel_id(&raw)?;
    let Caller::User(user) = &who else {
        return Err(ApiError::forbidden("uploads are made with a member's user token"));
    };
    // Held until the answer (or until this future is dropped, its client
    // gone): given back however the upload ends.
    let _slot = state
        .attachments
        .uploads
        .acquire(&user.user_id)
        .map_err(too_many_uploads)?;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(state.config.upload_timeout_secs);
    channel_reader(&state, &who, &channel).await?;
    let config = &state.config;
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(media_type)
        .unwrap_or_default();
    if !config
        .attachment_types
        .iter()
        .any(|t| t.eq_ignore_ascii_case(&content_type))
    {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "Content-Type must be one of attachment_types",
        ));
    }
    let filename = query.field("filename")?.map(str::to_owned);
    if let Some(name) = &filename {
        check_filename(name)?;
    }
    let max = config.max_attachment_bytes;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|len| len > max) {
        return Err(too_large(max));
    }
    // What the bound leaves when the upload starts: refused at once when
    // `Content-Length` says more, and as soon as the body passes it. The
    // row's insert judges again, exactly (others may have been stored or
    // sent meanwhile).
    let bound = config.max_unclaimed_upload_bytes;
    let held = state.store.unclaimed_upload_bytes(&user.user_id).await?;
    let left = bound.saturating_sub(u64::try_from(held).unwrap_or(0));
    if let Some(len) = declared.filter(|len| *len > left) {
        return Err(over_bound(bound, held, len, false));
    }
    let limits = Limits { max, bound, held, left };
    let id = uuid::Uuid::now_v7();
    let key = attachments::file_key(id);
    let format = images::format_of(&content_type);
    let storage = &state.attachments.storage;
    // From here until its row is stored, whatever ends the upload (a
    // refusal, a failure, or the client going away, which drops this
    // future) removes what it wrote.
    let mut unclaimed = Unclaimed::new(&state);
    let mut writer = storage.writer(&key, &state.store).await.map_err(storage_failed)?;
    unclaimed.keys.push(key.clone());
    let times = Times {
        idle: config.handshake_timeout(),
        deadline,
    };
    // An image's bytes are spooled to a file of their own as they arrive
    // (never held in memory), to be decoded from there once all are in.
    let mut spool = match format {
        Some(_) => Some(
            attachments::spool::spool_file(config.data_dir.clone())
                .await
                .map_err(spool_failed)?,
        ),
        None => None,
    };
    let received = match receive(request, &mut writer, &limits, spool.as_mut(), &times).await {
        Ok(received) => received,
        Err(refusal) => {
            writer.abort().await;
            return Err(refusal);
        }
    };
    writer.finish().await.map_err(storage_failed)?;
    let (mut width, mut height, mut thumbnail_key) = (None, None, None);
    if let (Some(format), Some(spool)) = (format, spool) {
        let (max_pixels, px) = (config.max_image_pixels, config.attachment_thumbnail_px);
        let file = std::io::BufReader::new(spool.into_std().await);
        let (mut file, charge) = tokio::task::spawn_blocking(move || {
            let mut file = file;
            let size = images::dimensions_of(&mut file, format, max_pixels)
                .map_err(|r| ApiError::invalid_field("body", &r.to_string()))?;
            let charge = images::decode_charge(&mut file, format, size, max_pixels).map_err(spool_failed)?;
            Ok::<_, ApiError>((file, charge))
        })
        .await
        .map_err(|_| image_check_failed())??;
        let permit = state
            .attachments
            .decode_permit(&user.user_id, charge)
            .await
            .map_err(|_| ApiError::unavailable("image decoding unavailable; retry"))?;
        let inspected = tokio::task::spawn_blocking(move || {
            let _held = permit;
            images::inspect_file(&mut file, format, max_pixels, px)
        })
        .await
        .map_err(|_| image_check_failed())?
        .map_err(|refusal| ApiError::invalid_field("body", &refusal.to_string()))?;
        width = Some(i64::from(inspected.width));
        height = Some(i64::from(inspected.height));
        let thumb = attachments::thumbnail_key(id);
        unclaimed.keys.push(thumb.clone());
        storage.put(&thumb, inspected.thumbnail).await.map_err(storage_failed)?;
        thumbnail_key = Some(thumb);
    }
    let mut url_key = [0u8; 32];
    rand::Rng::fill(&mut rand::rng(), &mut url_key[..]);
    let row = AttachmentRow {
        attachment_id: id,
        channel_id: channel,
        uploader_id: user.user_id.clone(),
        content_type,
        size: i64::try_from(received.size).unwrap_or(i64::MAX),
        sha256: received.sha256,
        filename,
        width,
        height,
        created_at: attachments::now_ms(),
        message_id: None,
        storage_key: key.clone(),
        thumbnail_key: thumbnail_key.clone(),
        url_key: hex::encode(url_key),
        url_ttl_secs: i64::try_from(config.attachment_url_ttl_secs).unwrap_or(i64::MAX),
    };
    // Membership, the channel and erasure are judged again as the row is
    // written: the channel may have been deleted, or the user removed or
    // erased, while the body arrived. Refused as at the start (the
    // dropped `unclaimed` removes the bytes).
    // The bound is judged there too, exactly: the insert stores the row
    // only if the user's unclaimed bytes with this upload stay within it.
    let bound_i64 = i64::try_from(bound).unwrap_or(i64::MAX);
    match state.store.insert_attachment(&row, bound_i64).await? {
        UploadStored::Stored => {}
        UploadStored::NotAMember => {
            return Err(ApiError::forbidden(&permissions::Denied::NotAMember.to_string()));
        }
        UploadStored::OverBound { unclaimed: held } => {
            return Err(over_bound(bound, held, received.size, false));
        }
    }
    unclaimed.claimed();
    let body = UploadedAttachment {
        attachment_id: row.attachment_id,
        channel_id: row.channel_id.as_str().to_owned(),
        content_type: row.content_type,
        size: row.size,
        sha256: row.sha256,
        filename: row.filename,
        width: row.width,
        height: row.height,
        created_at: row.created_at,
    };
    Ok((StatusCode::CREATED, axum::Json(body)).into_response())
}

fn image_check_failed() -> ApiError {
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "image check failed")
}

pub(super) fn storage_failed(error: attachments::StorageError) -> ApiError {
    tracing::warn!(%error, "attachment storage failed");
    ApiError::unavailable("attachment storage unavailable; retry")
}
