//! An upload's body read as it arrives: streamed into the storage's
//! writer (and an image's spool file), hashed and counted on the way, and
//! cut off with the right refusal as soon as it passes a bound or stalls.

use axum::extract::Request;
use axum::http::StatusCode;
use futures_util::StreamExt;
use sha2::{Digest, Sha256};

use super::{over_bound, storage_failed, too_large};
use crate::attachments::storage::Writer;
use crate::http::error::ApiError;

/// What [`receive`] read of a body.
pub(super) struct Received {
    pub(super) size: u64,
    pub(super) sha256: String,
}

pub(super) fn spool_failed(error: std::io::Error) -> ApiError {
    tracing::warn!(%error, "an image upload's spool file failed");
    ApiError::unavailable("image upload spool unavailable; retry")
}

/// The bounds [`receive`] holds a body to.
pub(super) struct Limits {
    /// `max_attachment_bytes`.
    pub(super) max: u64,
    /// `max_unclaimed_upload_bytes`.
    pub(super) bound: u64,
    /// The user's unclaimed bytes when the upload started.
    pub(super) held: i64,
    /// What `bound` left then.
    pub(super) left: u64,
}

/// How long [`receive`] waits for a body.
pub(super) struct Times {
    /// Longest gap between body bytes (`handshake_timeout_ms`).
    pub(super) idle: std::time::Duration,
    /// When the whole body must have arrived (`upload_timeout_secs` after
    /// the request started).
    pub(super) deadline: tokio::time::Instant,
}

/// Streams `request`'s body into `writer`, hashing and counting it; 413
/// as soon as it passes `max` bytes, 429 as soon as it passes what the
/// bound on unclaimed bytes left; 408 when no bytes arrive for
/// `times.idle` (a slow link may take minutes for a large file, but never
/// stalls that long) or the body is not all there by `times.deadline` (a
/// trickle cannot hold an upload open forever). Copies the bytes of an
/// image to its `spool` file too (flushed at the end).
pub(super) async fn receive(
    request: Request,
    writer: &mut Writer,
    limits: &Limits,
    mut spool: Option<&mut tokio::fs::File>,
    times: &Times,
) -> Result<Received, ApiError> {
    use tokio::io::AsyncWriteExt;
    let mut stream = request.into_body().into_data_stream();
    let mut hasher = Sha256::new();
    let mut size: u64 = 0;
    loop {
        let until = times.deadline.min(tokio::time::Instant::now() + times.idle);
        let Ok(next) = tokio::time::timeout_at(until, stream.next()).await else {
            let why = if tokio::time::Instant::now() >= times.deadline {
                "the body did not arrive within upload_timeout_secs"
            } else {
                "no body bytes arrived within handshake_timeout_ms"
            };
            return Err(ApiError::new(StatusCode::REQUEST_TIMEOUT, "bad_request", why));
        };
        let Some(chunk) = next else { break };
        let chunk = chunk.map_err(|_| ApiError::bad_request("the request body could not be read"))?;
        size = size.saturating_add(chunk.len() as u64);
        if size > limits.max {
            return Err(too_large(limits.max));
        }
        if size > limits.left {
            return Err(over_bound(limits.bound, limits.held, size, true));
        }
        hasher.update(&chunk);
        if let Some(spool) = spool.as_deref_mut() {
            spool.write_all(&chunk).await.map_err(spool_failed)?;
        }
        writer.write(&chunk).await.map_err(storage_failed)?;
    }
    if let Some(spool) = spool {
        spool.flush().await.map_err(spool_failed)?;
    }
    Ok(Received {
        size,
        sha256: hex::encode(hasher.finalize()),
    })
}
