//! The attachment storage's error, apart from the storage itself so that
//! its parts (`storage.rs`, `multipart.rs`) share it without importing
//! each other.

use crate::store::StoreError;

/// A storage failure (the object store's error, or a bad setting).
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The object does not exist.
    #[error("no such object")]
    NotFound,
    /// Anything else the store reported.
    #[error("attachment storage: {0}")]
    Store(#[from] object_store::Error),
    /// The storage could not be set up (the directory, the S3 settings).
    #[error("attachment storage: {0}")]
    Setup(String),
    /// An S3 upload could not be journaled (it was aborted).
    #[error("attachment storage journal: {0}")]
    Journal(#[source] StoreError),
    /// Walking the file store's directory failed.
    #[error("attachment storage: {0}")]
    Io(#[from] std::io::Error),
}

/// The object store's error as chatd's: a missing object is [`StorageError::NotFound`].
pub(super) fn from_store(error: object_store::Error) -> StorageError {
    match error {
        object_store::Error::NotFound { .. } => StorageError::NotFound,
        other => StorageError::Store(other),
    }
}
