-- S3 multipart uploads in progress (attachments_store = "s3"): one row per
-- upload, written before its first part and deleted once it is completed or
-- aborted. S3 lists no incomplete upload as an object, so a process that
-- dies mid-upload (kill -9) would leave its parts for good; the stray sweep
-- (src/attachments/strays.rs) aborts the uploads of rows older than its
-- grace period. upload_id: S3's UploadId; storage_key: the object's key;
-- started_at: ms since the epoch.
CREATE TABLE attachment_multiparts (
    upload_id TEXT PRIMARY KEY,
    storage_key TEXT NOT NULL,
    started_at BIGINT NOT NULL
);
CREATE INDEX attachment_multiparts_started ON attachment_multiparts (started_at);
