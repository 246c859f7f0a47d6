//! S3 uploads whose multipart upload id is journaled (`attachment_multiparts`,
//! `store/multiparts.rs`), so an upload cut off by a crash can be aborted.
//!
//! S3 keeps the parts of an incomplete multipart upload (billed, invisible
//! to `ListObjects`) until it is completed or aborted, and `object_store`
//! cannot list such uploads. So an upload here is begun with
//! [`MultipartStore::create_multipart`], its id journaled before any part is
//! written, and the row deleted once the upload is completed or aborted. A
//! process that dies in between leaves the row: the stray sweep
//! (`strays.rs`) aborts its upload once older than the grace period.
//!
//! A crash between `create_multipart` and the journal's insert leaves an
//! upload with no part (no bytes); S3 lifecycle rules
//! (`AbortIncompleteMultipartUpload`) cover that, see docs/deployment.md.

use std::sync::{Arc, Mutex};

use object_store::aws::AmazonS3;
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
use object_store::{MultipartUpload, PutPayload, PutResult, UploadPart};

use super::storage_error::StorageError;
use crate::store::Store;

/// One S3 multipart upload, for `object_store::WriteMultipart`: parts are
/// put with their index, their ids kept in order for the completion.
#[derive(Debug)]
pub(super) struct JournaledUpload {
    s3: Arc<AmazonS3>,
    path: Path,
    upload_id: String,
    next_part: usize,
    parts: Arc<Mutex<Vec<Option<PartId>>>>,
}

impl JournaledUpload {
    /// Begins an upload of `key` and journals it in `store` at `now_ms`
    /// (ms since the epoch). When the journal cannot be written the upload
    /// is aborted at once.
    ///
    /// # Errors
    /// The store's error or the journal's.
    pub(super) async fn begin(s3: Arc<AmazonS3>, key: &str, store: &Store, now_ms: i64) -> Result<Self, StorageError> {
        let path = Path::from(key);
        let upload_id = s3.create_multipart(&path).await?;
        if let Err(error) = store.journal_multipart(&upload_id, key, now_ms).await {
            if let Err(abort) = s3.abort_multipart(&path, &upload_id).await {
                tracing::warn!(%abort, "aborting an upload that could not be journaled failed");
            }
            return Err(StorageError::Journal(error));
        }
        Ok(Self {
            s3,
            path,
            upload_id,
            next_part: 0,
            parts: Arc::default(),
        })
    }

    /// What ends this upload if its writer goes without finishing (its
    /// client gone): see [`Journal::abandon`].
    pub(super) fn journal(&self, store: &Store) -> Journal {
        Journal {
            s3: Arc::clone(&self.s3),
            path: self.path.clone(),
            upload_id: self.upload_id.clone(),
            store: store.clone(),
        }
    }
}

#[async_trait::async_trait]
impl MultipartUpload for JournaledUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        let index = self.next_part;
        self.next_part += 1;
        let (s3, path, upload_id, parts) = (
            Arc::clone(&self.s3),
            self.path.clone(),
            self.upload_id.clone(),
            Arc::clone(&self.parts),
        );
        Box::pin(async move {
            let part = s3.put_part(&path, &upload_id, index, data).await?;
            let mut parts = parts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if parts.len() <= index {
                parts.resize(index + 1, None);
            }
            parts[index] = Some(part);
            Ok(())
        })
    }

    async fn complete(&mut self) -> object_store::Result<PutResult> {
        let parts: Option<Vec<PartId>> = self
            .parts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect();
        let parts = parts.ok_or_else(|| object_store::Error::Generic {
            store: "S3",
            source: "a part of the upload is missing at its completion".into(),
        })?;
        self.s3.complete_multipart(&self.path, &self.upload_id, parts).await
    }

    async fn abort(&mut self) -> object_store::Result<()> {
        self.s3.abort_multipart(&self.path, &self.upload_id).await
    }
}

/// A journaled upload's row, to delete once the upload has ended.
#[derive(Debug)]
pub(super) struct Journal {
    s3: Arc<AmazonS3>,
    path: Path,
    upload_id: String,
    store: Store,
}

impl Journal {
    /// The upload was completed or aborted: its row goes. A failure is
    /// logged (the sweep later aborts an upload that no longer exists,
    /// which S3 refuses harmlessly, and deletes the row).
    pub(super) async fn ended(&self) {
        if let Err(error) = self.store.multipart_ended(&self.upload_id).await {
            tracing::warn!(%error, "taking a finished upload off the multipart journal failed");
        }
    }

    /// The writer went without finishing (its client gone, the request's
    /// future dropped): the upload is aborted in a task of its own and its
    /// row deleted; if that fails the row stays for the stray sweep.
    pub(super) fn abandon(self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            match self.s3.abort_multipart(&self.path, &self.upload_id).await {
                Ok(()) => self.ended().await,
                Err(error) if no_such_upload(&error) => self.ended().await,
                Err(error) => tracing::warn!(%error, "aborting an abandoned upload failed; the stray sweep will"),
            }
        });
    }
}

/// Whether `error` (of an abort) says the upload no longer exists: it was
/// completed or aborted already (S3's `NoSuchUpload`, a 404).
pub(super) fn no_such_upload(error: &object_store::Error) -> bool {
    if matches!(error, object_store::Error::NotFound { .. }) {
        return true;
    }
    let mut text = format!("{error:?}");
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text.contains("NoSuchUpload") || text.contains("status code: 404 Not Found")
}
