//! Objects in attachment storage that no row names: what a crash leaves.
//!
//! An upload writes its bytes first and its row after (`http/attachments.rs`),
//! and an image's thumbnail is written before its key is recorded. A process
//! that dies between the two (a crash, `kill -9`; a shutdown or a refusal
//! removes them itself) leaves an object that neither the orphan expiry nor
//! the removal queue knows, since both work from rows. This sweep lists the
//! storage's `files/` and `thumbnails/` keys older than a grace period and
//! removes those no attachment row names.
//!
//! A crash in the middle of an upload's body leaves no object at all, but
//! bytes still: on the file store a staging file `files/<id>#<n>` (which
//! `object_store` never lists), on S3 an incomplete multipart upload (which
//! S3 never lists as an object). The sweep removes the staging files of
//! keys of its shapes older than the grace, and aborts the S3 uploads
//! journaled in `attachment_multiparts` (`multipart.rs`) that began before
//! it. An upload never outlasts `upload_timeout_secs`, so nothing older is
//! in progress on any node.
//!
//! The grace period ([`grace`]) is at least [`STRAY_GRACE`], at least
//! `attachment_orphan_ttl_secs`, and an hour more than `upload_timeout_secs`:
//! an object being written now, or written moments before its row, is young
//! (S3 may date an object written in parts from when its upload began, so
//! the grace outlasts any upload). Keys of any other shape (another
//! application's objects in a shared bucket) are never touched.

use std::time::Duration;

use futures_util::StreamExt;

use super::storage::Storage;
use super::storage_error::StorageError;
use super::{file_key, thumbnail_key};
use crate::store::{Store, StoreError};

/// The least age (since last written) of an object this sweep may remove.
pub const STRAY_GRACE: Duration = Duration::from_secs(24 * 3600);
/// How often each node sweeps for strays, after the first sweep.
pub const STRAY_SWEEP_EVERY: Duration = Duration::from_secs(6 * 3600);
/// How long after start a node sweeps first: soon (a node restarted more
/// often than [`STRAY_SWEEP_EVERY`] still sweeps), but not in the rush of
/// the start itself.
pub const FIRST_STRAY_SWEEP_AFTER: Duration = Duration::from_secs(60);

/// The wait before sweep number `round` (0 the first) of a node.
pub fn wait_before_sweep(round: u64) -> Duration {
    if round == 0 {
        FIRST_STRAY_SWEEP_AFTER
    } else {
        STRAY_SWEEP_EVERY
    }
}
/// The grace period for `config`: the longest of [`STRAY_GRACE`],
/// `attachment_orphan_ttl_secs`, and `upload_timeout_secs` plus an hour.
pub fn grace(config: &crate::config::Config) -> Duration {
    STRAY_GRACE
        .max(Duration::from_secs(config.attachment_orphan_ttl_secs))
        .max(Duration::from_secs(config.upload_timeout_secs.saturating_add(3600)))
}

/// Keys looked up in the database at once.
const KEYS_PER_LOOKUP: usize = 500;
/// Journaled uploads read at once.
const UPLOADS_PER_PAGE: u32 = 500;

/// Why a stray sweep stopped early (what it removed until then stays removed).
#[derive(Debug, thiserror::Error)]
pub enum StraySweepError {
    /// Listing or deleting objects failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// Reading which keys rows name failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The attachment id a storage key of ours names, with the key it must
/// equal (`files/<id>` or `thumbnails/<id>`), or `None` for any other key.
pub(super) fn attachment_of(key: &str) -> Option<uuid::Uuid> {
    let (prefix, id) = key.split_once('/')?;
    let id = uuid::Uuid::parse_str(id).ok()?;
    let ours = match prefix {
        "files" => file_key(id),
        "thumbnails" => thumbnail_key(id),
        _ => return None,
    };
    (ours == key).then_some(id)
}

/// Removes what a crash left that is older than `grace` before `now_ms`
/// (ms since the epoch): the objects under `files/` and `thumbnails/` no
/// attachment row names, the file store's staging files of such keys, and
/// the S3 multipart uploads journaled as begun before then (aborted, their
/// rows deleted). Returns how many of all three it removed. The listing is
/// read in pages and the rows looked up [`KEYS_PER_LOOKUP`] keys at a time.
/// Several nodes may sweep at once: what another removed is not an error.
///
/// # Errors
/// [`StraySweepError`] when the storage cannot be listed or an object
/// deleted, or the database read fails.
pub async fn sweep_strays(
    storage: &Storage,
    store: &Store,
    grace: Duration,
    now_ms: i64,
) -> Result<usize, StraySweepError> {
    let cutoff = now_ms.saturating_sub(i64::try_from(grace.as_millis()).unwrap_or(i64::MAX));
    let mut removed = 0;
    for prefix in ["files/", "thumbnails/"] {
        let mut keys = storage.keys_older_than(prefix, cutoff).chunks(KEYS_PER_LOOKUP);
        while let Some(page) = keys.next().await {
            let page: Vec<(String, uuid::Uuid)> = page
                .into_iter()
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .filter_map(|key| attachment_of(&key).map(|id| (key, id)))
                .collect();
            let ids: Vec<uuid::Uuid> = page.iter().map(|(_, id)| *id).collect();
            let named = store.attachment_keys_of(&ids).await?;
            for (key, _) in page.into_iter().filter(|(key, _)| !named.contains(key)) {
                storage.delete(&key).await?;
                removed += 1;
            }
        }
    }
    for prefix in ["files", "thumbnails"] {
        removed += storage
            .remove_staging_older_than(prefix, cutoff, |key| attachment_of(key).is_some())
            .await?;
    }
    removed += abort_journaled_uploads(storage, store, cutoff).await?;
    Ok(removed)
}

/// Aborts the journaled S3 uploads begun before `cutoff` (ms since the
/// epoch) and deletes their rows; returns how many.
async fn abort_journaled_uploads(storage: &Storage, store: &Store, cutoff: i64) -> Result<usize, StraySweepError> {
    let mut aborted = 0;
    loop {
        let page = store.multiparts_started_before(cutoff, UPLOADS_PER_PAGE).await?;
        if page.is_empty() {
            return Ok(aborted);
        }
        for upload in page {
            storage.abort_multipart(&upload.storage_key, &upload.upload_id).await?;
            store.multipart_ended(&upload.upload_id).await?;
            aborted += 1;
        }
    }
}

/// Runs [`sweep_strays`] [`FIRST_STRAY_SWEEP_AFTER`] after start, then
/// every [`STRAY_SWEEP_EVERY`] until `stop`, with
/// `grace` ([`grace`] of the settings); failures are logged and the next
/// round tries again.
pub fn spawn(storage: Storage, store: Store, grace: Duration, stop: tokio_util::sync::CancellationToken) {
    tokio::spawn(async move {
        for round in 0.. {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(wait_before_sweep(round)) => {}
            }
            match sweep_strays(&storage, &store, grace, super::now_ms()).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(count = n, "what crashes left in attachment storage removed"),
                Err(error) => tracing::warn!(%error, "sweeping what crashes left in attachment storage failed"),
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_keys_of_chatds_own_shape_name_an_attachment() {
        let id = uuid::Uuid::now_v7();
        assert_eq!(attachment_of(&file_key(id)), Some(id));
        assert_eq!(attachment_of(&thumbnail_key(id)), Some(id));
        for other in [
            format!("other/{id}"),
            format!("files/{id}/x"),
            format!("files/{}", id.simple()),
            format!("files/{}", id.hyphenated().to_string().to_uppercase()),
            "files/".to_owned(),
            "files/readme.txt".to_owned(),
        ] {
            assert_eq!(attachment_of(&other), None, "{other}");
        }
    }

    #[test]
    fn the_first_sweep_comes_within_a_minute_of_start_then_every_six_hours() {
        assert!(wait_before_sweep(0) <= Duration::from_secs(60));
        assert!(wait_before_sweep(0) > Duration::ZERO);
        assert_eq!(wait_before_sweep(1), STRAY_SWEEP_EVERY);
        assert_eq!(wait_before_sweep(7), STRAY_SWEEP_EVERY);
    }

    #[test]
    fn staging_names_stage_keys_of_chatds_shape_only() {
        let id = uuid::Uuid::now_v7();
        let owned = |prefix: &str, name: &str| {
            super::super::storage::staged_key(prefix, name).is_some_and(|key| attachment_of(&key).is_some())
        };
        assert!(owned("files", &format!("{id}#1")));
        assert!(owned("thumbnails", &format!("{id}#12")));
        for name in [
            format!("{id}"),
            format!("{id}#"),
            format!("{id}#x"),
            format!("{id}#1#2"),
            format!("{}#1", id.simple()),
            "readme.txt#1".to_owned(),
        ] {
            assert!(!owned("files", &name), "{name}");
        }
        assert!(!owned("other", &format!("{id}#1")));
    }
}
