//! `GET /v1/users/{userId}/export` (protocol.md §19, admin): a user's data
//! as NDJSON, streamed. The store reads it from one snapshot a page at a
//! time (`store/export.rs`) into a channel of one page; this module turns
//! each page into lines as the client takes them, so memory stays at a
//! page or two whatever the user's size, and a client that reads slowly
//! slows the reads instead of filling memory.
//!
//! Lines, one JSON object each, in this order:
//!
//! - `{"type":"message", ...}`: every message the user sent, as history
//!   renders it (`view::recv_read`: current text, `deleted`/`expired`,
//!   reactions with `me` for the user, previews, signed attachment URLs,
//!   thread summaries), with its `channelId`;
//! - `{"type":"membership","channelId","role","joinedAt"}`;
//! - `{"type":"reaction","channelId","messageId","emoji"}`;
//! - `{"type":"attachment","attachmentId","channelId","messageId"?,
//!   "contentType","size","sha256","filename"?,"width"?,"height"?,
//!   "createdAt","url","thumbnailUrl"?}`: every upload of the user's, with
//!   URLs signed for `attachment_url_ttl_secs` from the moment the line is
//!   written;
//! - last, `{"type":"end","count":N}`: `N` is the number of lines before it.
//!
//! A failure after the first byte cannot change the status any more: the
//! body then ends without its `end` line (and the chunked encoding is cut),
//! so a client tells a complete export by its `end` line and its count.
//!
//! Erased means erased (guarantee 14): an export asked for while an erasure
//! of its user is in progress is refused (409 `conflict`), and one streaming
//! when an erasure of its user begins (on any node: this node's watermark
//! moves when one begins here, within [`crate::erasure::REFRESH`] of one
//! begun elsewhere, and again when it ends) is cut before its next chunk.
//! What the socket held already may still arrive (at most about one page
//! and the listener's unsent-bytes bound, `TCP_NOTSENT_LOWAT`).

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};

use super::caller::require_admin;
use super::channels::user_id;
use super::error::ApiError;
use super::extract::ApiPath;
use super::openapi::ErrorBody;
use crate::attachments::signing::{self, Part};
use crate::auth::ErasedUsers;
use crate::ids::UserId;
use crate::protocol::RecvMessage;
use crate::state::AppState;
use crate::store::{AttachmentRow, ExportItem, ExportPage, StoreError};
use crate::view;

/// The media type of the export.
pub const NDJSON: &str = "application/x-ndjson";

/// One line of an export.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Line<'a> {
    Message(Box<RecvMessage>),
    #[serde(rename_all = "camelCase")]
    Membership {
        channel_id: &'a str,
        role: crate::permissions::Role,
        joined_at: i64,
    },
    #[serde(rename_all = "camelCase")]
    Reaction {
        channel_id: &'a str,
        message_id: uuid::Uuid,
        emoji: &'a str,
    },
    Attachment(AttachmentLine<'a>),
    End {
        count: u64,
    },
}

/// An upload as its export line shows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct AttachmentLine<'a> {
    attachment_id: uuid::Uuid,
    channel_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    message_id: Option<uuid::Uuid>,
    content_type: &'a str,
    size: i64,
    sha256: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    filename: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    width: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    height: Option<i64>,
    created_at: i64,
    url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    thumbnail_url: Option<String>,
}

fn attachment_line(row: &AttachmentRow, now_secs: i64) -> AttachmentLine<'_> {
    AttachmentLine {
        attachment_id: row.attachment_id,
        channel_id: row.channel_id.as_str(),
        message_id: row.message_id,
        content_type: &row.content_type,
        size: row.size,
        sha256: &row.sha256,
        filename: row.filename.as_deref(),
        width: row.width,
        height: row.height,
        created_at: row.created_at,
        url: signing::signed_path(row, Part::File, now_secs),
        thumbnail_url: row
            .thumbnail_key
            .as_ref()
            .map(|_| signing::signed_path(row, Part::Thumbnail, now_secs)),
    }
}

/// Appends `line` and a newline to `out`.
fn write_line(out: &mut Vec<u8>, line: &Line<'_>) -> Result<(), std::io::Error> {
    serde_json::to_writer(&mut *out, line)?;
    out.push(b'\n');
    Ok(())
}

/// A page's lines, appended to `out`.
fn write_page(out: &mut Vec<u8>, page: &[ExportItem]) -> Result<(), std::io::Error> {
    let now = signing::now_secs();
    for item in page {
        let line = match item {
            ExportItem::Message(entry) => Line::Message(Box::new(view::recv_read(entry))),
            ExportItem::Membership(m) => Line::Membership {
                channel_id: m.channel_id.as_str(),
                role: m.role,
                joined_at: m.joined_at,
            },
            ExportItem::Reaction(r) => Line::Reaction {
                channel_id: r.channel_id.as_str(),
                message_id: r.message_id,
                emoji: &r.emoji,
            },
            ExportItem::Attachment(row) => Line::Attachment(attachment_line(row, now)),
        };
        write_line(out, &line)?;
    }
    Ok(())
}

/// `GET /v1/users/{userId}/export` (admin): 200 `application/x-ndjson`,
/// streamed from one snapshot: the user's messages, memberships, reactions
/// and uploads, one JSON object a line, then `{"type":"end","count":N}`
/// (`N`: the lines before it). An unknown user gets only the end line
/// (`count` 0). 400 `invalid_field` for an id that is not a user id; 409
/// `conflict` while an erasure of the user is in progress; the body is cut
/// (no end line) when an erasure of the user begins while it streams.
#[utoipa::path(
    get,
    path = "/v1/users/{userId}/export",
    tag = "users",
    params(("userId" = String, Path, description = "The user id")),
    responses(
        (status = 200, description = "One JSON object a line (`message`, `membership`, `reaction`, `attachment`), \
            then `{\"type\":\"end\",\"count\":N}` with N the lines before it; a body without its end line was cut short",
            content_type = "application/x-ndjson", body = String),
        (status = 400, description = "Not a user id", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "Not the admin token", body = ErrorBody),
        (status = 409, description = "An erasure of the user is in progress", body = ErrorBody),
    ),
    security(("adminToken" = [])),
)]
pub async fn export_user(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
) -> Result<Response, ApiError> {
    require_admin(&state, &headers)?;
    let ApiPath(raw) = path?;
    let user = user_id(&raw, "userId")?;
    // Read before the check: an erasure recorded after it moves it.
    let erased = state.auth.erased().clone();
    let watermark = erased.watermark(&user);
    if crate::erasure::in_progress(&state, &user).await? {
        return Err(ApiError::new(
            axum::http::StatusCode::CONFLICT,
            "conflict",
            "an erasure of this user is in progress",
        ));
    }
    let erasure = ErasureWatch {
        erased,
        user: user.clone(),
        watermark,
    };
    // One page in flight: the reads wait for the client.
    let (pages_tx, pages) = mpsc::channel::<ExportPage>(1);
    let (done_tx, done) = oneshot::channel::<Result<(), StoreError>>();
    let store = state.store.clone();
    tokio::spawn(async move {
        let result = store.export_user(&user, pages_tx).await;
        let _ = done_tx.send(result);
    });
    let lines = Lines {
        pages,
        done,
        count: 0,
        erasure,
    };
    let stream = futures_util::stream::unfold(Some(lines), next_chunk);
    let mut response = Body::from_stream(stream).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(NDJSON));
    Ok(response)
}

/// The state of a streaming export body.
struct Lines {
    pages: mpsc::Receiver<ExportPage>,
    done: oneshot::Receiver<Result<(), StoreError>>,
    /// Lines written so far.
    count: u64,
    erasure: ErasureWatch,
}

/// Whether an erasure of the exported user began after the export did: the
/// user's watermark on this node then differs from the one read at the start.
struct ErasureWatch {
    erased: std::sync::Arc<ErasedUsers>,
    user: UserId,
    watermark: Option<i64>,
}

impl ErasureWatch {
    fn began(&self) -> bool {
        self.erased.watermark(&self.user) != self.watermark
    }
}

/// The next chunk of the body: a page's lines, then the end line; an
/// error (the body cut) when the store failed or the user is being erased.
async fn next_chunk(state: Option<Lines>) -> Option<(Result<Bytes, std::io::Error>, Option<Lines>)> {
    let mut lines = state?;
    let mut out = Vec::new();
    let next = lines.pages.recv().await;
    if lines.erasure.began() {
        tracing::info!(user_id = %lines.erasure.user, lines = lines.count, "an export cut short: its user is being erased");
        return Some((Err(std::io::Error::other("the user is being erased")), None));
    }
    match next {
        Some(page) => {
            if let Err(error) = write_page(&mut out, &page) {
                return Some((Err(error), None));
            }
            lines.count += page.len() as u64;
            Some((Ok(Bytes::from(out)), Some(lines)))
        }
        None => match lines.done.await {
            Ok(Ok(())) => match write_line(&mut out, &Line::End { count: lines.count }) {
                Ok(()) => Some((Ok(Bytes::from(out)), None)),
                Err(error) => Some((Err(error), None)),
            },
            Ok(Err(error)) => Some((Err(failed(&error)), None)),
            Err(_) => Some((Err(std::io::Error::other("the export task ended early")), None)),
        },
    }
}

fn failed(error: &StoreError) -> std::io::Error {
    tracing::warn!(%error, "an export failed part-way; its body is cut short");
    std::io::Error::other(error.to_string())
}
