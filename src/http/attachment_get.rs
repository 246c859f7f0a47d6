//! `GET /v1/attachments/{attachmentId}` and `…/thumbnail` (protocol.md
//! §15): the bytes of an attachment (or its thumbnail) to a member of its
//! channel, the admin, or anyone holding its signed URL until it expires;
//! 404 for anyone else, the same answer as for an unknown id. Served with
//! its stored type, `ETag`, single `Range` requests (206), `nosniff`, a CSP
//! of `sandbox`, and `Content-Disposition: attachment` for every type but
//! images, audio and video (so an HTML or SVG upload never renders inline).

use std::ops::Range;

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;

use super::attachments::storage_failed;
use super::caller::{caller_from_header_or_query, Caller};
use super::error::ApiError;
use super::extract::{ApiPath, LossyQuery, QueryParams};
use super::openapi::ErrorBody;
use crate::attachments::images::THUMBNAIL_TYPE;
use crate::attachments::signing::{self, Part};
use crate::state::AppState;
use crate::store::AttachmentRow;

fn not_found() -> ApiError {
    ApiError::not_found("no such attachment")
}

/// The attachment `raw` names, when the caller may read its `part`: a
/// valid signed URL (`exp`, `sig`), or a member's token or the admin's.
async fn readable(
    state: &AppState,
    headers: &HeaderMap,
    raw: &str,
    query: &QueryParams,
    part: Part,
) -> Result<AttachmentRow, ApiError> {
    let id = crate::ids::parse_message_id(raw).map_err(|_| not_found())?;
    let signed = match (query.field("exp")?, query.field("sig")?) {
        (Some(exp), Some(sig)) => Some((signing::parse_exp(exp).ok_or_else(not_found)?, sig.to_owned())),
        _ => None,
    };
    let who = match signed {
        Some(_) => None,
        None if crate::auth::bearer(headers).is_none() && query.get("access_token").ok().flatten().is_none() => {
            return Err(not_found());
        }
        None => Some(caller_from_header_or_query(state, headers, query)?),
    };
    let row = state.store.attachment(id).await?.ok_or_else(not_found)?;
    match (who, signed) {
        (None, Some((exp, sig))) if signing::verify(&row, part, exp, &sig, signing::now_secs()) => Ok(row),
        (Some(Caller::Admin), _) => Ok(row),
        (Some(Caller::User(user)), _) => match state.store.role_of(&row.channel_id, &user.user_id).await? {
            Some(_) => Ok(row),
            None => Err(not_found()),
        },
        _ => Err(not_found()),
    }
}

/// A single `bytes=` range of an object of `size` bytes: `Ok(None)` for
/// none (or one chatd does not serve in parts: several ranges), `Err` for
/// one outside the object (416).
fn parse_range(value: Option<&HeaderValue>, size: u64) -> Result<Option<Range<u64>>, ()> {
    let Some(text) = value.and_then(|v| v.to_str().ok()) else {
        return Ok(None);
    };
    let Some(spec) = text.trim().strip_prefix("bytes=") else {
        return Ok(None);
    };
    if spec.contains(',') {
        return Ok(None);
    }
    let Some((first, last)) = spec.split_once('-') else {
        return Ok(None);
    };
    let (first, last) = (first.trim(), last.trim());
    // A range that is not `digits-digits` is ignored (the whole file), as
    // RFC 9110 §14.2 lets a server do with one it cannot read; a position
    // too large for u64 is past any file, and so the end.
    let position = |text: &str| -> Option<u64> {
        (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())).then(|| text.parse().unwrap_or(u64::MAX))
    };
    let range = if first.is_empty() {
        let Some(n) = position(last) else { return Ok(None) };
        if n == 0 || size == 0 {
            return Err(());
        }
        size.saturating_sub(n)..size
    } else {
        let Some(start) = position(first) else { return Ok(None) };
        let end = if last.is_empty() {
            size
        } else {
            let Some(last) = position(last) else { return Ok(None) };
            last.saturating_add(1).min(size)
        };
        if start >= size || start >= end {
            return Err(());
        }
        start..end
    };
    Ok(Some(range))
}

/// Whether a type is shown inline (images, audio, video); every other is
/// served as a download.
/// Whether `If-None-Match` (every line of it) names `etag` (quoted, `"…"`)
/// or is `*`: then the answer is 304. The comparison is RFC 9110's weak one
/// (§13.1.2), as that header requires: `W/"…"` names the same file as `"…"`,
/// so a cache that kept the tag as weak (as some proxies do) still revalidates.
fn none_match(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| {
            v.trim() == "*"
                || v.split(',').any(|tag| {
                    let tag = tag.trim();
                    tag.strip_prefix("W/").unwrap_or(tag) == etag
                })
        })
}

fn inline(content_type: &str) -> bool {
    ["image/", "audio/", "video/"]
        .iter()
        .any(|p| content_type.starts_with(p))
}

/// A `filename` for `Content-Disposition`: printable ASCII kept, `"` and
/// `\` and the rest replaced by `_`.
fn disposition_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `Content-Disposition: attachment` naming `name`: `filename` in
/// printable ASCII (for old clients), and where that changed the name,
/// `filename*` with the UTF-8 bytes percent-encoded (RFC 6266 §4.3,
/// RFC 8187), which browsers prefer.
fn disposition(name: &str) -> String {
    let ascii = disposition_name(name);
    if ascii == name {
        return format!("attachment; filename=\"{ascii}\"");
    }
    let encoded: String = name
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'!'
            | b'#'
            | b'$'
            | b'&'
            | b'+'
            | b'-'
            | b'.'
            | b'^'
            | b'_'
            | b'`'
            | b'|'
            | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

/// Serves object `key` of `size` bytes as `content_type` with `etag`.
async fn serve(
    state: &AppState,
    headers: &HeaderMap,
    key: &str,
    size: u64,
    content_type: &str,
    etag: &str,
    filename: Option<&str>,
) -> Result<Response, ApiError> {
    let etag = format!("\"{etag}\"");
    let mut builder = Response::builder()
        .header(header::ETAG, &etag)
        .header(header::ACCEPT_RANGES, "bytes")
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(header::CONTENT_SECURITY_POLICY, "sandbox")
        .header(header::CACHE_CONTROL, "private, max-age=300");
    let disposition = match (inline(content_type), filename) {
        (true, _) => "inline".to_owned(),
        (false, Some(name)) => disposition(name),
        (false, None) => "attachment".to_owned(),
    };
    builder = builder.header(header::CONTENT_DISPOSITION, disposition);
    if none_match(headers, &etag) {
        return builder
            .status(StatusCode::NOT_MODIFIED)
            .body(Body::empty())
            .map_err(|_| internal());
    }
    let range = match parse_range(headers.get(header::RANGE), size) {
        Ok(range) => range,
        Err(()) => {
            let mut response = ApiError::new(
                StatusCode::RANGE_NOT_SATISFIABLE,
                "bad_request",
                "range not satisfiable",
            )
            .into_response();
            if let Ok(value) = HeaderValue::from_str(&format!("bytes */{size}")) {
                response.headers_mut().insert(header::CONTENT_RANGE, value);
            }
            return Ok(response);
        }
    };
    let stream = match state.attachments.storage.read(key, range.clone()).await {
        Ok(stream) => stream,
        // The row is there but its bytes are gone (a delete racing this read).
        Err(crate::attachments::StorageError::NotFound) => return Err(not_found()),
        Err(error) => return Err(storage_failed(error)),
    };
    let body = Body::from_stream(stream.map(|chunk| chunk.map_err(std::io::Error::other)));
    builder = builder.header(header::CONTENT_TYPE, content_type);
    let response = match range {
        Some(range) => builder
            .status(StatusCode::PARTIAL_CONTENT)
            .header(header::CONTENT_LENGTH, range.end - range.start)
            .header(
                header::CONTENT_RANGE,
                format!("bytes {}-{}/{size}", range.start, range.end - 1),
            )
            .body(body),
        None => builder
            .status(StatusCode::OK)
            .header(header::CONTENT_LENGTH, size)
            .body(body),
    };
    response.map_err(|_| internal())
}

fn internal() -> ApiError {
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "response")
}

/// `GET /v1/attachments/{attachmentId}`: the bytes (200, or 206 for a
/// `Range`); 404 for anyone but a member, the admin or a valid signed URL.
#[utoipa::path(
    get,
    path = "/v1/attachments/{attachmentId}",
    tag = "attachments",
    params(
        ("attachmentId" = String, Path, description = "The attachment id (a UUIDv7)"),
        ("exp" = Option<i64>, Query, description = "Signed URL: its expiry, unix seconds"),
        ("sig" = Option<String>, Query, description = "Signed URL: its signature"),
    ),
    responses(
        (status = 200, description = "The bytes, with the stored Content-Type", content_type = "application/octet-stream"),
        (status = 206, description = "A range of the bytes", content_type = "application/octet-stream"),
        (status = 401, description = "A refused token", body = ErrorBody),
        (status = 404, description = "Unknown, not the caller's to read, or an expired or altered signed URL", body = ErrorBody),
        (status = 416, description = "A range outside the attachment (Content-Range: bytes */size)", body = ErrorBody),
    ),
    security(("userJwt" = []), ("adminToken" = []), ()),
)]
pub async fn download(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
    LossyQuery(query): LossyQuery<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    let query = QueryParams::new(query);
    let ApiPath(raw) = path?;
    let row = readable(&state, &headers, &raw, &query, Part::File).await?;
    let size = u64::try_from(row.size).unwrap_or(0);
    serve(
        &state,
        &headers,
        &row.storage_key,
        size,
        &row.content_type,
        &row.sha256,
        row.filename.as_deref(),
    )
    .await
}

/// `GET /v1/attachments/{attachmentId}/thumbnail`: an image's thumbnail
/// (JPEG, at most `attachment_thumbnail_px` on the longer side); 404 for
/// other types and for anyone who may not read the attachment.
#[utoipa::path(
    get,
    path = "/v1/attachments/{attachmentId}/thumbnail",
    tag = "attachments",
    params(
        ("attachmentId" = String, Path, description = "The attachment id (a UUIDv7)"),
        ("exp" = Option<i64>, Query, description = "Signed URL: its expiry, unix seconds"),
        ("sig" = Option<String>, Query, description = "Signed URL: its signature"),
    ),
    responses(
        (status = 200, description = "The thumbnail", content_type = "image/jpeg"),
        (status = 401, description = "A refused token", body = ErrorBody),
        (status = 404, description = "Not an image, unknown, or not the caller's to read", body = ErrorBody),
    ),
    security(("userJwt" = []), ("adminToken" = []), ()),
)]
pub async fn thumbnail(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<ApiPath<String>, ApiError>,
    LossyQuery(query): LossyQuery<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    let query = QueryParams::new(query);
    let ApiPath(raw) = path?;
    let row = readable(&state, &headers, &raw, &query, Part::Thumbnail).await?;
    let key = row.thumbnail_key.as_deref().ok_or_else(not_found)?;
    // Thumbnails are small: read whole, so the length is known.
    let bytes = match state.attachments.storage.read_all(key).await {
        Ok(bytes) => bytes,
        Err(crate::attachments::StorageError::NotFound) => return Err(not_found()),
        Err(error) => return Err(storage_failed(error)),
    };
    let etag = format!("\"{}-t\"", row.sha256);
    Ok((
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, THUMBNAIL_TYPE.to_owned()),
            (header::ETAG, etag),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
            (header::CONTENT_SECURITY_POLICY, "sandbox".to_owned()),
            (header::CACHE_CONTROL, "private, max-age=300".to_owned()),
        ],
        bytes,
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(text: &str, size: u64) -> Result<Option<Range<u64>>, ()> {
        parse_range(Some(&HeaderValue::from_str(text).expect("header")), size)
    }

    #[test]
    fn ranges_are_read_as_rfc_9110_says() {
        assert_eq!(range("bytes=0-9", 100), Ok(Some(0..10)));
        assert_eq!(range("bytes=90-", 100), Ok(Some(90..100)));
        assert_eq!(range("bytes=-10", 100), Ok(Some(90..100)));
        assert_eq!(range("bytes=50-500", 100), Ok(Some(50..100)));
        assert_eq!(range("bytes=100-", 100), Err(()));
        assert_eq!(range("bytes=5-2", 100), Err(()));
        assert_eq!(range("bytes=0-1,5-6", 100), Ok(None));
        assert_eq!(range("items=0-1", 100), Ok(None));
        assert_eq!(parse_range(None, 100), Ok(None));
        // Not a range at all: ignored, the whole file.
        assert_eq!(range("bytes=abc", 100), Ok(None));
        assert_eq!(range("bytes=--5", 100), Ok(None));
        assert_eq!(range("bytes=+1-5", 100), Ok(None));
        // Past u64: the end of the file.
        assert_eq!(range("bytes=0-99999999999999999999999", 100), Ok(Some(0..100)));
        assert_eq!(range("bytes=-99999999999999999999999", 100), Ok(Some(0..100)));
        assert_eq!(range("bytes=99999999999999999999999-", 100), Err(()));
    }

    fn matches(lines: &[&str]) -> bool {
        let mut headers = HeaderMap::new();
        for line in lines {
            headers.append(header::IF_NONE_MATCH, HeaderValue::from_str(line).expect("header"));
        }
        none_match(&headers, "\"abc\"")
    }

    #[test]
    fn if_none_match_compares_weakly_on_every_line() {
        assert!(matches(&["\"abc\""]));
        assert!(matches(&["*"]));
        assert!(matches(&["\"x\", \"abc\""]));
        // RFC 9110 §13.1.2: If-None-Match uses the weak comparison.
        assert!(matches(&["W/\"abc\""]));
        assert!(matches(&["\"x\", W/\"abc\""]));
        // The header given on two lines is one list (RFC 9110 §5.3).
        assert!(matches(&["\"x\"", "\"abc\""]));
        assert!(!matches(&[]));
        assert!(!matches(&["\"abcd\""]));
        assert!(!matches(&["abc"]));
        assert!(!matches(&["w/\"abc\""]));
    }

    #[test]
    fn names_beyond_ascii_are_given_as_utf8_too() {
        assert_eq!(disposition("notes 1.txt"), "attachment; filename=\"notes 1.txt\"");
        assert_eq!(
            disposition("日本語 ü.txt"),
            "attachment; filename=\"___ _.txt\"; filename*=UTF-8''%E6%97%A5%E6%9C%AC%E8%AA%9E%20%C3%BC.txt"
        );
        assert_eq!(
            disposition("a\"b.txt"),
            "attachment; filename=\"a_b.txt\"; filename*=UTF-8''a%22b.txt"
        );
    }
}
