//! Where attachment bytes live: one interface ([`Storage`]) over
//! `object_store`'s local file system store (`attachments_store = "file"`,
//! under `<data_dir>/attachments`) and its S3 store (`"s3"`, any
//! S3-compatible server). Objects are written in parts as they arrive
//! (never the whole file in memory), read in ranges, and deleted. What a
//! crash leaves of an upload in progress can be found: the file store's
//! staging files ([`Storage::remove_staging_older_than`]), S3's journaled
//! multipart uploads ([`Storage::abort_multipart`], `multipart.rs`).

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore, WriteMultipart};

use super::multipart::{self, Journal, JournaledUpload};
use crate::config::{AttachmentsStore, Config};
use crate::store::Store;

use super::storage_error::from_store;
pub use super::storage_error::StorageError;

/// The attachment storage in force.
#[derive(Debug, Clone)]
pub struct Storage {
    store: Arc<dyn ObjectStore>,
    backing: Backing,
}

/// What is behind [`Storage::store`], for what `ObjectStore` cannot do.
#[derive(Debug, Clone)]
enum Backing {
    /// The file store's root directory (canonical).
    File(PathBuf),
    /// The S3 store, for its multipart uploads.
    S3(Arc<object_store::aws::AmazonS3>),
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
        let (store, backing): (Arc<dyn ObjectStore>, Backing) = match config.attachments_store {
            AttachmentsStore::File => {
                let dir = config.data_dir.join("attachments");
                crate::private_files::create_private_dir(&dir)
                    .map_err(|e| StorageError::Setup(format!("{}: {e}", dir.display())))?;
                let dir =
                    std::fs::canonicalize(&dir).map_err(|e| StorageError::Setup(format!("{}: {e}", dir.display())))?;
                let store = object_store::local::LocalFileSystem::new_with_prefix(&dir)
                    .map_err(|e| StorageError::Setup(e.to_string()))?;
                (Arc::new(store), Backing::File(dir))
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
                let s3 = Arc::new(builder.build().map_err(|e| StorageError::Setup(e.to_string()))?);
                (Arc::clone(&s3) as Arc<dyn ObjectStore>, Backing::S3(s3))
            }
        };
        Ok(Self { store, backing })
    }

    /// Starts writing object `key`. On S3 the multipart upload is journaled
    /// in `journal` before any part is written (see `multipart.rs`); the
    /// file store writes a staging file `<key>#<n>` renamed at the end.
    ///
    /// # Errors
    /// The store's error, or [`StorageError::Journal`].
    pub async fn writer(&self, key: &str, journal: &Store) -> Result<Writer, StorageError> {
        let (upload, journal): (Box<dyn object_store::MultipartUpload>, _) = match &self.backing {
            Backing::S3(s3) => {
                let upload = JournaledUpload::begin(Arc::clone(s3), key, journal, super::now_ms()).await?;
                let journal = upload.journal(journal);
                (Box::new(upload), Some(journal))
            }
            Backing::File(_) => (
                self.store.put_multipart(&Path::from(key)).await.map_err(from_store)?,
                None,
            ),
        };
        Ok(Writer {
            inner: Some(WriteMultipart::new_with_chunk_size(upload, PART_BYTES)),
            journal,
        })
    }

    /// The file store's root directory (`<data_dir>/attachments`,
    /// canonical), or `None` on S3.
    pub fn root_dir(&self) -> Option<&std::path::Path> {
        match &self.backing {
            Backing::File(dir) => Some(dir),
            Backing::S3(_) => None,
        }
    }

    /// Removes the file store's staging files under `prefix` (`files`,
    /// `thumbnails`) last written before `cutoff_ms` (ms since the epoch)
    /// whose key `owns` accepts; returns how many it removed. A staging
    /// file is `<key>#<n>` (`n` decimal): what `object_store` writes an
    /// object to before renaming it into place, left behind only when the
    /// process died mid-write. Nothing else is touched (other names,
    /// directories, links); nothing to do on S3. The directory is read on
    /// a blocking thread, one entry at a time.
    ///
    /// # Errors
    /// [`StorageError::Io`] when the directory cannot be read or a file
    /// removed (one removed meanwhile by another node is not an error).
    pub async fn remove_staging_older_than(
        &self,
        prefix: &str,
        cutoff_ms: i64,
        owns: fn(&str) -> bool,
    ) -> Result<usize, StorageError> {
        let Backing::File(root) = &self.backing else {
            return Ok(0);
        };
        let dir = root.join(prefix);
        let prefix = prefix.to_owned();
        let removed = tokio::task::spawn_blocking(move || remove_staging(&dir, &prefix, cutoff_ms, owns))
            .await
            .map_err(|e| StorageError::Io(std::io::Error::other(e)))??;
        Ok(removed)
    }

    /// Aborts S3 multipart upload `upload_id` of `key`; one that no longer
    /// exists (completed or aborted already) is not an error. Nothing to do
    /// on the file store.
    ///
    /// # Errors
    /// The store's error.
    pub async fn abort_multipart(&self, key: &str, upload_id: &str) -> Result<(), StorageError> {
        let Backing::S3(s3) = &self.backing else {
            return Ok(());
        };
        use object_store::multipart::MultipartStore;
        match s3.abort_multipart(&Path::from(key), &upload_id.to_owned()).await {
            Ok(()) => Ok(()),
            Err(error) if multipart::no_such_upload(&error) => Ok(()),
            Err(error) => Err(StorageError::Store(error)),
        }
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

/// The key a staging file named `name` under `prefix` stages (`<key>#<n>`,
/// `n` decimal digits), or `None` for any other name.
pub(super) fn staged_key(prefix: &str, name: &str) -> Option<String> {
    let (base, n) = name.rsplit_once('#')?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then(|| format!("{prefix}/{base}"))
}

/// [`Storage::remove_staging_older_than`] on directory `dir` (blocking).
fn remove_staging(
    dir: &std::path::Path,
    prefix: &str,
    cutoff_ms: i64,
    owns: fn(&str) -> bool,
) -> Result<usize, std::io::Error> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(error) => return Err(error),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if !staged_key(prefix, &name).is_some_and(|key| owns(&key)) {
            continue;
        }
        let meta = match entry.metadata() {
            Ok(meta) => meta,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => return Err(error),
        };
        let written_ms = meta
            .modified()?
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        if !meta.file_type().is_file() || written_ms >= cutoff_ms {
            continue;
        }
        match std::fs::remove_file(entry.path()) {
            Ok(()) => removed += 1,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
    }
    Ok(removed)
}

/// An object being written in parts. Dropped without [`Writer::finish`]
/// or [`Writer::abort`] (its request's future dropped), an S3 upload is
/// aborted in a task of its own; the file store's staging file is removed
/// by `object_store`.
pub struct Writer {
    /// `None` once finished or aborted.
    inner: Option<WriteMultipart>,
    /// The S3 upload's journal row.
    journal: Option<Journal>,
}

impl Writer {
    /// Adds `chunk`, waiting while two parts are in flight (so at most a
    /// few parts are held in memory).
    ///
    /// # Errors
    /// The store's error.
    pub async fn write(&mut self, chunk: &[u8]) -> Result<(), StorageError> {
        let Some(inner) = self.inner.as_mut() else {
            return Ok(());
        };
        inner.wait_for_capacity(2).await.map_err(from_store)?;
        inner.write(chunk);
        Ok(())
    }

    /// Completes the object. The S3 upload's journal row goes whether it
    /// completed or not (a failed completion is aborted by `WriteMultipart`).
    ///
    /// # Errors
    /// The store's error.
    pub async fn finish(mut self) -> Result<(), StorageError> {
        let Some(inner) = self.inner.take() else {
            return Ok(());
        };
        let result = inner.finish().await;
        if let Some(journal) = self.journal.take() {
            match &result {
                Ok(_) => journal.ended().await,
                Err(_) => journal.abandon(),
            }
        }
        result.map_err(from_store)?;
        Ok(())
    }

    /// Abandons the object (nothing is left behind).
    pub async fn abort(mut self) {
        let Some(inner) = self.inner.take() else {
            return;
        };
        match inner.abort().await {
            Ok(()) => {
                if let Some(journal) = self.journal.take() {
                    journal.ended().await;
                }
            }
            Err(error) => tracing::warn!(%error, "abandoning an attachment upload failed"),
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if let Some(journal) = self.journal.take() {
            // Finished or aborted, the journal was taken; here the upload
            // was abandoned mid-way (or its abort failed: tried again).
            drop(self.inner.take());
            journal.abandon();
        }
    }
}
