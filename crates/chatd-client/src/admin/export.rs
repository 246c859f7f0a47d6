//! A user's export (`docs/protocol.md`, "Export a user", §19; `GET
//! /v1/users/{userId}/export`, the admin token) on [`AdminClient`]: the
//! NDJSON lines as typed [`ExportLine`]s, read as they arrive
//! ([`ExportStream`], constant memory) or all at once
//! ([`AdminClient::export_user`]).

use chatd_proto::protocol::{RecvMessage, Role};
use serde::Deserialize;

use super::{AdminClient, AdminError};

/// One line of an export.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ExportLine {
    /// A message the user sent, as history renders it, with its `channel_id`.
    Message(Box<RecvMessage>),
    /// A channel the user is a member of.
    #[serde(rename_all = "camelCase")]
    Membership {
        channel_id: String,
        role: Role,
        /// ms since the Unix epoch.
        joined_at: i64,
    },
    /// A reaction the user holds.
    #[serde(rename_all = "camelCase")]
    Reaction {
        channel_id: String,
        message_id: uuid::Uuid,
        emoji: String,
    },
    /// An upload of the user's.
    Attachment(Box<ExportedAttachment>),
    /// The last line: `count` lines came before it.
    End { count: u64 },
    /// A line of a kind this client does not know (a newer server).
    #[serde(other)]
    Other,
}

/// An upload as its export line shows it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportedAttachment {
    pub attachment_id: uuid::Uuid,
    pub channel_id: String,
    /// The message that carries it; `None` while no message does.
    #[serde(default)]
    pub message_id: Option<uuid::Uuid>,
    pub content_type: String,
    /// Bytes.
    pub size: i64,
    /// Hex SHA-256 of the bytes.
    pub sha256: String,
    #[serde(default)]
    pub filename: Option<String>,
    #[serde(default)]
    pub width: Option<i64>,
    #[serde(default)]
    pub height: Option<i64>,
    /// ms since the Unix epoch.
    pub created_at: i64,
    /// A path on the server, signed: fetches the bytes without a token
    /// until it expires (`attachment_url_ttl_secs`).
    pub url: String,
    #[serde(default)]
    pub thumbnail_url: Option<String>,
}

/// An export being read, a line at a time: only the current chunk and
/// one partial line are held.
#[derive(Debug)]
pub struct ExportStream {
    response: reqwest::Response,
    buffer: Vec<u8>,
    lines: u64,
    ended: bool,
}

impl ExportStream {
    /// The next line; `None` after the end line.
    ///
    /// # Errors
    /// [`AdminError::Transport`] when the body breaks off;
    /// [`AdminError::Export`] for a line that is not JSON, a body that
    /// ends without its end line (the server failed part-way), or an end
    /// line whose count is not the number of lines read.
    pub async fn next_line(&mut self) -> Result<Option<ExportLine>, AdminError> {
        if self.ended {
            return Ok(None);
        }
        loop {
            if let Some(at) = self.buffer.iter().position(|b| *b == b'\n') {
                let rest = self.buffer.split_off(at + 1);
                let line = std::mem::replace(&mut self.buffer, rest);
                let line: ExportLine = serde_json::from_slice(&line[..at])
                    .map_err(|e| AdminError::Export(format!("a line is not an export line: {e}")))?;
                if let ExportLine::End { count } = line {
                    if count != self.lines {
                        return Err(AdminError::Export(format!(
                            "the end line counts {count} lines, {} were read",
                            self.lines
                        )));
                    }
                    self.ended = true;
                } else {
                    self.lines += 1;
                }
                return Ok(Some(line));
            }
            match self.response.chunk().await? {
                Some(chunk) => self.buffer.extend_from_slice(&chunk),
                None => return Err(AdminError::Export("the export ended without its end line".into())),
            }
        }
    }
}

impl AdminClient {
    /// `GET /v1/users/{userId}/export` (admin), read as it streams.
    ///
    /// # Errors
    /// [`AdminError::Status`] 400 for an id that is not a user id, 403
    /// without the admin token.
    pub async fn export_stream(&self, user_id: &str) -> Result<ExportStream, AdminError> {
        let request = self.http.get(format!("{}/v1/users/{user_id}/export", self.base));
        Ok(ExportStream {
            response: self.call(request).await?,
            buffer: Vec::new(),
            lines: 0,
            ended: false,
        })
    }

    /// Every line of user `user_id`'s export, the end line last (an unknown
    /// user's is that line alone, `count` 0).
    ///
    /// # Errors
    /// As [`Self::export_stream`] and [`ExportStream::next_line`].
    pub async fn export_user(&self, user_id: &str) -> Result<Vec<ExportLine>, AdminError> {
        let mut stream = self.export_stream(user_id).await?;
        let mut lines = Vec::new();
        while let Some(line) = stream.next_line().await? {
            lines.push(line);
        }
        Ok(lines)
    }
}
