//! Where attachment bytes live: one interface ([`Storage`]) over
//! `object_store`'s local file system store (`attachments_store = "file"`,
//! under `<data_dir>/attachments`) and its S3 store (`"s3"`, any
//! S3-compatible server). Objects are written in parts as they arrive
//! (never the whole file in memory), read in ranges, and deleted.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore, WriteMultipart};

use crate::config::{AttachmentsStore, Config};

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
}

fn from_store(error: object_store::Error) -> StorageError {
    match error {
        object_store::Error::NotFound { .. } => StorageError::NotFound,
        other => StorageError::Store(other),
    }
}

/// The attachment storage in force.
#[derive(Debug, Clone)]
pub struct Storage {
    store: Arc<dyn ObjectStore>,
}

/// Bytes of one part written to the store (S3's least part size is 5 MiB).
const PART_BYTES: usize = 5 * 1024 * 1024;

impl Storage {
    /// The storage `config` names: the directory `<data_dir>/attachments`
    /// (created, mode 0700), or the S3 bucket.
    ///
    /// # Errors
    /// [`StorageError::Setup`] when the directory cannot be made or the S3
    /// settings are refused.
    pub fn from_config(config: &Config) -> Result<Self, StorageError> {
        let store: Arc<dyn ObjectStore> = match config.attachments_store {
            AttachmentsStore::File => {
                let dir = config.data_dir.join("attachments");
                crate::private_files::create_private_dir(&dir)
                    .map_err(|e| StorageError::Setup(format!("{}: {e}", dir.display())))?;
                let dir =
                    std::fs::canonicalize(&dir).map_err(|e| StorageError::Setup(format!("{}: {e}", dir.display())))?;
                Arc::new(
                    object_store::local::LocalFileSystem::new_with_prefix(&dir)
                        .map_err(|e| StorageError::Setup(e.to_string()))?,
                )
            }
            AttachmentsStore::S3 => {
                let mut builder = object_store::aws::AmazonS3Builder::from_env()
                    .with_bucket_name(config.attachments_s3_bucket.clone().unwrap_or_default());
                if let Some(region) = &config.attachments_s3_region {
                    builder = builder.with_region(region);
                }
                if let Some(endpoint) = &config.attachments_s3_endpoint {
                    builder = builder
                        .with_endpoint(endpoint)
                        .with_allow_http(endpoint.starts_with("http://"))
                        // An S3-compatible server by address: path-style requests.
                        .with_virtual_hosted_style_request(false);
                }
                Arc::new(builder.build().map_err(|e| StorageError::Setup(e.to_string()))?)
            }
        };
        Ok(Self { store })
    }

    /// Starts writing object `key`.
    ///
    /// # Errors
    /// The store's error.
    pub async fn writer(&self, key: &str) -> Result<Writer, StorageError> {
        let upload = self.store.put_multipart(&Path::from(key)).await.map_err(from_store)?;
        Ok(Writer {
            inner: WriteMultipart::new_with_chunk_size(upload, PART_BYTES),
        })
    }

    /// Writes object `key` whole (a thumbnail: small).
    ///
    /// # Errors
    /// The store's error.
    pub async fn put(&self, key: &str, bytes: Vec<u8>) -> Result<(), StorageError> {
        self.store
            .put(&Path::from(key), bytes.into())
            .await
            .map_err(from_store)?;
        Ok(())
    }

    /// The bytes of object `key` in `range` (all when `None`), as a stream.
    ///
    /// # Errors
    /// [`StorageError::NotFound`], or the store's error.
    pub async fn read(
        &self,
        key: &str,
        range: Option<Range<u64>>,
    ) -> Result<BoxStream<'static, Result<Bytes, StorageError>>, StorageError> {
        let options = GetOptions {
            range: range.map(GetRange::Bounded),
            ..GetOptions::default()
        };
        let result = self
            .store
            .get_opts(&Path::from(key), options)
            .await
            .map_err(from_store)?;
        Ok(result.into_stream().map(|chunk| chunk.map_err(from_store)).boxed())
    }

    /// The whole of object `key` (an image, to make its thumbnail).
    ///
    /// # Errors
    /// [`StorageError::NotFound`], or the store's error.
    pub async fn read_all(&self, key: &str) -> Result<Bytes, StorageError> {
        let result = self.store.get(&Path::from(key)).await.map_err(from_store)?;
        result.bytes().await.map_err(from_store)
    }

    /// Whether object `key` exists.
    ///
    /// # Errors
    /// The store's error (not for a missing object).
    pub async fn exists(&self, key: &str) -> Result<bool, StorageError> {
        match self.store.head(&Path::from(key)).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(other) => Err(StorageError::Store(other)),
        }
    }

    /// The keys of the objects under `prefix` (`files/`, …) last written
    /// before `cutoff_ms` (ms since the epoch), as the store lists them
    /// (in pages: never the whole listing in memory).
    ///
    /// # Errors
    /// The store's error, per item.
    pub fn keys_older_than(&self, prefix: &str, cutoff_ms: i64) -> BoxStream<'static, Result<String, StorageError>> {
        self.store
            .list(Some(&Path::from(prefix)))
            .filter_map(move |meta| {
                let item = match meta {
                    Ok(meta) if meta.last_modified.timestamp_millis() < cutoff_ms => {
                        Some(Ok(meta.location.to_string()))
                    }
                    Ok(_) => None,
                    Err(error) => Some(Err(from_store(error))),
                };
                std::future::ready(item)
            })
            .boxed()
    }

    /// Deletes object `key`; a missing object is not an error.
    ///
    /// # Errors
    /// The store's error.
    pub async fn delete(&self, key: &str) -> Result<(), StorageError> {
        match self.store.delete(&Path::from(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(other) => Err(StorageError::Store(other)),
        }
    }
}

/// An object being written in parts.
pub struct Writer {
    inner: WriteMultipart,
}

impl Writer {
    /// Adds `chunk`, waiting while two parts are in flight (so at most a
    /// few parts are held in memory).
    ///
    /// # Errors
    /// The store's error.
    pub async fn write(&mut self, chunk: &[u8]) -> Result<(), StorageError> {
        self.inner.wait_for_capacity(2).await.map_err(from_store)?;
        self.inner.write(chunk);
        Ok(())
    }

    /// Completes the object.
    ///
    /// # Errors
    /// The store's error.
    pub async fn finish(self) -> Result<(), StorageError> {
        self.inner.finish().await.map_err(from_store)?;
        Ok(())
    }

    /// Abandons the object (nothing is left behind).
    pub async fn abort(self) {
        if let Err(error) = self.inner.abort().await {
            tracing::warn!(%error, "abandoning an attachment upload failed");
        }
    }
}
