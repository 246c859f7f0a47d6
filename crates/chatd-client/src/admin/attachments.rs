//! Attachments (protocol.md §15) over HTTP with a member's user JWT:
//! upload a file into a channel (then send its id in
//! [`crate::SendOptions::attachments`]), and read an attachment's bytes by
//! its id or its signed `url`.

use serde::Deserialize;

use super::{AdminClient, AdminError};

/// An upload as the server stored it (`201` of
/// `POST /v1/channels/{channelId}/attachments`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    /// What a send's `attachments` names.
    pub attachment_id: uuid::Uuid,
    pub channel_id: String,
    /// The media type (lower case, without parameters).
    pub content_type: String,
    /// Bytes.
    pub size: i64,
    /// Hex SHA-256 of the bytes.
    pub sha256: String,
    #[serde(default)]
    pub filename: Option<String>,
    /// Images: pixels.
    #[serde(default)]
    pub width: Option<i64>,
    #[serde(default)]
    pub height: Option<i64>,
    /// ms since the Unix epoch.
    pub created_at: i64,
}

impl AdminClient {
    /// `POST /v1/channels/{channelId}/attachments` (a member's user JWT):
    /// uploads `bytes` as `content_type`, named `filename`.
    ///
    /// # Errors
    /// [`AdminError::Status`] 413 `body_too_large` (over the server's
    /// `max_attachment_bytes`), 415 `unsupported_media_type`, 400
    /// `invalid_field` (`body`: an image that does not decode or has too
    /// many pixels; `filename`), 403 for a non-member, 429 `rate_limited`
    /// when the user's uploads not yet part of a message would pass the
    /// server's `max_unclaimed_upload_bytes` (send them, or wait for them
    /// to expire). [`AdminError::api_error`] reads the code.
    pub async fn upload(
        &self,
        channel_id: &str,
        content_type: &str,
        bytes: Vec<u8>,
        filename: Option<&str>,
    ) -> Result<Attachment, AdminError> {
        let mut request = self
            .http
            .post(format!("{}/v1/channels/{channel_id}/attachments", self.base))
            .header("content-type", content_type)
            .body(bytes);
        if let Some(name) = filename {
            request = request.query(&[("filename", name)]);
        }
        Ok(self.call(request).await?.json().await?)
    }

    /// The bytes of attachment `attachment_id` (a member's token or the
    /// admin's).
    ///
    /// # Errors
    /// [`AdminError::Status`] 404 for an unknown attachment or one the
    /// caller may not read.
    pub async fn download(&self, attachment_id: uuid::Uuid) -> Result<Vec<u8>, AdminError> {
        let request = self
            .http
            .get(format!("{}/v1/attachments/{}", self.base, attachment_id.hyphenated()));
        Ok(self.call(request).await?.bytes().await?.to_vec())
    }

    /// The bytes behind a signed `url` (or `thumbnailUrl`) a message
    /// carries: a path on this server, read without any token.
    ///
    /// # Errors
    /// [`AdminError::Status`] 404 once it expired or when it was altered.
    pub async fn fetch_signed(&self, url: &str) -> Result<Vec<u8>, AdminError> {
        let response = self.http.get(format!("{}{url}", self.base)).send().await?;
        if !response.status().is_success() {
            let status = response.status().as_u16();
            let body = response.text().await.unwrap_or_default();
            return Err(AdminError::Status { status, body });
        }
        Ok(response.bytes().await?.to_vec())
    }
}
