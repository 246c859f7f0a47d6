//! Attachments (protocol.md §15): files and images uploaded into a channel
//! and carried by messages.
//!
//! - [`storage`]: where the bytes live (`object_store`: the local file
//!   system or an S3-compatible bucket), written in parts as they arrive;
//! - [`images`]: images measured, bombs refused, thumbnails made at upload;
//! - [`decodes`]: the decode budget (`max_image_pixels` in flight), shared
//!   fairly between users;
//! - [`in_flight`]: the uploads each user has in progress
//!   (`max_uploads_in_flight_per_user`);
//! - `multipart`: S3 uploads with their multipart id journaled
//!   (`attachment_multiparts`) before the first part, so one cut off by a
//!   crash can be aborted;
//! - `storage_error`: [`StorageError`], which `storage` and `multipart`
//!   share;
//! - [`strays`]: what a crash leaves (objects no row names, the file
//!   store's staging files, journaled S3 uploads never completed), removed
//!   after a grace period, first a minute after start then every 6 hours;
//! - [`signing`]: the signed URLs messages carry (HMAC with the
//!   attachment's own key, checked in constant time);
//! - [`Attachments`]: the storage and the task that removes objects queued
//!   by deletes (`attachment_removals`, written in the transaction that
//!   deletes their rows, so a crash between the commit and the removal
//!   leaves nothing behind) and expires uploads no message claimed.
//!
//! The rows are the store's (`store/attachments.rs`); the routes are
//! `http/attachments/`; a send claims its uploads in the transaction that
//! stores it (`store/log_write/per_row.rs`).

pub mod decodes;
pub mod images;
pub mod in_flight;
mod multipart;
pub mod signing;
pub mod spool;
pub mod storage;
mod storage_error;
pub mod strays;

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::ids::UserId;
use crate::protocol::AttachmentObject;
use crate::store::{AttachmentRow, Store};
pub use decodes::{DecodeBudget, DecodePermit, PIXELS_PER_PERMIT};
pub use in_flight::{TooManyUploads, UploadSlot, UploadSlots};
pub use storage::Storage;
pub use storage_error::StorageError;

/// The storage key of an attachment's bytes.
pub fn file_key(id: uuid::Uuid) -> String {
    format!("files/{}", id.hyphenated())
}

/// The storage key of an image attachment's thumbnail.
pub fn thumbnail_key(id: uuid::Uuid) -> String {
    format!("thumbnails/{}", id.hyphenated())
}

/// `row` as a message carries it on the wire, with URLs signed from
/// `now_secs` (unix seconds) for the row's `url_ttl_secs`.
pub fn object(row: &AttachmentRow, now_secs: i64) -> AttachmentObject {
    AttachmentObject {
        attachment_id: row.attachment_id,
        content_type: row.content_type.clone(),
        size: row.size,
        filename: row.filename.clone(),
        width: row.width,
        height: row.height,
        url: signing::signed_path(row, signing::Part::File, now_secs),
        thumbnail_url: row
            .thumbnail_key
            .as_ref()
            .map(|_| signing::signed_path(row, signing::Part::Thumbnail, now_secs)),
    }
}

/// How often the queue of removals is drained.
const DRAIN_EVERY: Duration = Duration::from_secs(1);
/// Most removals done per round.
const REMOVALS_PER_ROUND: u32 = 100;

/// The attachment storage of this node, shared by the routes and the
/// removal task, with the bounds uploads share.
#[derive(Debug)]
pub struct Attachments {
    /// Where the bytes are.
    pub storage: Storage,
    /// The uploads in progress per user (`max_uploads_in_flight_per_user`).
    pub uploads: Arc<UploadSlots>,
    /// The pixels image decodes in flight may hold together
    /// (`max_image_pixels` worth), shared fairly between users.
    pub decodes: DecodeBudget,
}

impl Attachments {
    /// The storage `config` names.
    ///
    /// # Errors
    /// [`StorageError::Setup`] when it cannot be set up.
    pub fn from_config(config: &Config) -> Result<Self, StorageError> {
        Ok(Self {
            storage: Storage::from_config(config)?,
            uploads: Arc::new(UploadSlots::new(config.max_uploads_in_flight_per_user)),
            decodes: DecodeBudget::new(config.max_image_pixels),
        })
    }

    /// Waits until `user_id` may decode an image of `pixels`: after its
    /// earlier decodes, and for that share of the decode budget (see
    /// [`decodes`]). The permit holds both until dropped (move it into the
    /// decoding task, so the share is held for as long as the memory is,
    /// even when the upload that asked has gone away).
    ///
    /// # Errors
    /// Only if the budget were closed, which nothing does.
    pub async fn decode_permit(
        &self,
        user_id: &UserId,
        pixels: u64,
    ) -> Result<DecodePermit, tokio::sync::AcquireError> {
        self.decodes.permit(user_id, pixels).await
    }

    /// Runs the removal task until `stop`: every second it removes the
    /// objects queued for removal (each taken off the queue once gone; one
    /// that fails stays queued and is tried again), and every
    /// `min(attachment_orphan_ttl_secs, retention_sweep_secs, 60)` seconds
    /// it deletes the uploads no message claimed within
    /// `attachment_orphan_ttl_secs`, or within their channel's retention
    /// (`retentionSecs`, else `retention_secs`) when that is shorter. Beside
    /// it, [`strays::spawn`] removes objects no row names.
    pub fn spawn_sweeper(self: &Arc<Self>, store: Store, config: &Config, stop: CancellationToken) {
        strays::spawn(self.storage.clone(), store.clone(), strays::grace(config), stop.clone());
        let this = Arc::clone(self);
        let orphan_ttl_ms = i64::try_from(config.attachment_orphan_ttl_secs.saturating_mul(1000)).unwrap_or(i64::MAX);
        let retention_secs = i64::try_from(config.retention_secs).unwrap_or(i64::MAX);
        let orphan_every = Duration::from_secs(
            config
                .attachment_orphan_ttl_secs
                .min(config.retention_sweep_secs)
                .clamp(1, 60),
        );
        tokio::spawn(async move {
            let mut last_orphans = tokio::time::Instant::now();
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(DRAIN_EVERY) => {}
                }
                if last_orphans.elapsed() >= orphan_every {
                    last_orphans = tokio::time::Instant::now();
                    let now = now_ms();
                    match store
                        .expire_orphan_attachments(now.saturating_sub(orphan_ttl_ms), now, retention_secs)
                        .await
                    {
                        Ok(0) => {}
                        Ok(n) => tracing::info!(count = n, "unsent attachments expired"),
                        Err(error) => tracing::warn!(%error, "expiring unsent attachments failed"),
                    }
                }
                this.drain(&store).await;
            }
        });
    }

    /// Removes up to a round of queued objects.
    pub async fn drain(&self, store: &Store) {
        let keys = match store.attachment_removals(REMOVALS_PER_ROUND).await {
            Ok(keys) => keys,
            Err(error) => {
                tracing::warn!(%error, "reading the attachment removal queue failed");
                return;
            }
        };
        for key in keys {
            if let Err(error) = self.storage.delete(&key).await {
                tracing::warn!(%error, "removing an attachment object failed; it stays queued");
                continue;
            }
            if let Err(error) = store.attachment_removed(&key).await {
                tracing::warn!(%error, "taking an attachment removal off the queue failed");
            }
        }
    }
}

/// Now, ms since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
