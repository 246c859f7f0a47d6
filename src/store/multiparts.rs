//! The journal of S3 multipart uploads in progress (`attachment_multiparts`,
//! migration 0023): a row written before an upload's first part, deleted
//! once the upload is completed or aborted. What a crash leaves in it is
//! read by the stray sweep (`attachments/strays.rs`), which aborts those
//! uploads.

use super::dialect::{Columns, Dialect, Executes, Params};
use super::error::{CommitSent, StoreError};
use super::handle::{dispatch, dispatch_write, Store};
use super::sql_store::SqlStore;

/// Records upload `$1` of key `$2` begun at `$3`.
const JOURNAL: &str =
    "INSERT INTO attachment_multiparts (upload_id, storage_key, started_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING";
const ENDED: &str = "DELETE FROM attachment_multiparts WHERE upload_id = $1";
/// Up to `$2` uploads begun before `$1`, oldest first.
const STARTED_BEFORE: &str = "SELECT upload_id, storage_key FROM attachment_multiparts WHERE started_at < $1 \
     ORDER BY started_at, upload_id LIMIT $2";

/// A multipart upload as journaled: S3's upload id and the object's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournaledMultipart {
    /// S3's `UploadId`.
    pub upload_id: String,
    /// The key of the object being written (`files/<id>`).
    pub storage_key: String,
}

impl Store {
    /// Journals multipart upload `upload_id` of `key`, begun at `started_at`
    /// (ms since the epoch), before any part of it is written.
    pub async fn journal_multipart(&self, upload_id: &str, key: &str, started_at: i64) -> Result<(), StoreError> {
        dispatch_write!(self, self.deadline(), journal_multipart(upload_id, key, started_at))
    }

    /// Takes upload `upload_id` off the journal (completed or aborted).
    pub async fn multipart_ended(&self, upload_id: &str) -> Result<(), StoreError> {
        dispatch_write!(self, self.deadline(), multipart_ended(upload_id))
    }

    /// Up to `limit` journaled uploads begun before `cutoff` (ms since the
    /// epoch), oldest first.
    pub async fn multiparts_started_before(
        &self,
        cutoff: i64,
        limit: u32,
    ) -> Result<Vec<JournaledMultipart>, StoreError> {
        self.read(async { dispatch!(self.multiparts_started_before(cutoff, limit)) })
            .await
    }
}

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn journal_multipart(
        &self,
        upload_id: &str,
        key: &str,
        started_at: i64,
        sent: &CommitSent,
    ) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query::<D>(JOURNAL)
            .param(upload_id)
            .param(key)
            .param(started_at)
            .execute(tx.ex())
            .await?;
        Self::commit(tx, sent).await
    }

    pub(super) async fn multipart_ended(&self, upload_id: &str, sent: &CommitSent) -> Result<(), StoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query::<D>(ENDED).param(upload_id).execute(tx.ex()).await?;
        Self::commit(tx, sent).await
    }

    pub(super) async fn multiparts_started_before(
        &self,
        cutoff: i64,
        limit: u32,
    ) -> Result<Vec<JournaledMultipart>, StoreError> {
        let rows = sqlx::query::<D>(STARTED_BEFORE)
            .param(cutoff)
            .param(i64::from(limit))
            .fetch_all(self.reader().await?.ex())
            .await?;
        rows.iter()
            .map(|r| {
                Ok(JournaledMultipart {
                    upload_id: r.value(0)?,
                    storage_key: r.value(1)?,
                })
            })
            .collect()
    }
}
