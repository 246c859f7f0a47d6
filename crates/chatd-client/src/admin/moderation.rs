//! Moderation's routes (`docs/protocol.md` §17) on [`AdminClient`]: with
//! the admin token, or an owner's or moderator's user JWT.

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{AdminClient, AdminError, Channel};
use chatd_proto::protocol::Role;

/// One ban of a channel (`GET /v1/channels/{channelId}/bans`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ban {
    /// The banned user.
    pub user_id: String,
    /// When, ms since the Unix epoch.
    pub banned_at: i64,
    /// The owner or moderator who banned; `None` for the admin token.
    #[serde(default)]
    pub actor_id: Option<String>,
}

/// A page of a channel's bans, in byte order of the user id.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BansPage {
    /// The bans of the page.
    pub bans: Vec<Ban>,
    /// Whether bans follow the last one.
    pub has_more: bool,
}

/// A flag of a message (`POST /v1/messages/{messageId}/flags`, `GET /v1/flags`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Flag {
    /// A UUIDv7: flags are listed in its order.
    pub flag_id: String,
    /// The flagged message.
    pub message_id: String,
    /// Its channel.
    pub channel_id: String,
    /// Who flagged it.
    pub reporter_id: String,
    /// `spam`, `abuse` or `other`.
    pub reason: String,
    /// The reporter's note, if any.
    #[serde(default)]
    pub note: Option<String>,
    /// When, ms since the Unix epoch.
    pub created_at: i64,
}

/// A page of flags, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FlagsPage {
    /// The flags of the page.
    pub flags: Vec<Flag>,
    /// Whether flags follow the last one.
    pub has_more: bool,
}

/// A channel's moderation settings for `PATCH /v1/channels/{channelId}`;
/// `None` leaves one as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelSettings {
    /// `member` (anyone posts) or `moderator` (an announcement channel).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub posting_role: Option<Role>,
    /// Slow mode, 0 (off) to 3600000 ms between two messages of a member.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slow_mode_ms: Option<i64>,
}

impl AdminClient {
    /// `PUT /v1/channels/{channelId}/members/{userId}` `{"mutedUntil"}`:
    /// mutes the member until `until` (ms since the epoch), or unmutes it
    /// with `None`; a user who is not a member is added first.
    ///
    /// # Errors
    /// [`AdminError::Status`] 403 when the caller may not (a moderator mutes
    /// `member`s only; a direct channel), 404 for an unknown channel (admin).
    pub async fn mute(&self, channel_id: &str, user_id: &str, until: Option<i64>) -> Result<(), AdminError> {
        let request = self
            .http
            .put(format!("{}/v1/channels/{channel_id}/members/{user_id}", self.base))
            .json(&json!({ "mutedUntil": until }));
        self.call(request).await.map(drop)
    }

    /// `DELETE /v1/channels/{channelId}/members/{userId}?ban=true`: removes
    /// the user and bans it from joining again.
    ///
    /// # Errors
    /// As [`Self::mute`].
    pub async fn ban(&self, channel_id: &str, user_id: &str) -> Result<(), AdminError> {
        let request = self
            .http
            .delete(format!("{}/v1/channels/{channel_id}/members/{user_id}", self.base))
            .query(&[("ban", "true")]);
        self.call(request).await.map(drop)
    }

    /// `DELETE /v1/channels/{channelId}/bans/{userId}`: lifts a ban (no-op
    /// when there is none).
    ///
    /// # Errors
    /// [`AdminError::Status`] 403 for a user who is not a moderator, 404 for
    /// an unknown channel (admin).
    pub async fn lift_ban(&self, channel_id: &str, user_id: &str) -> Result<(), AdminError> {
        let request = self
            .http
            .delete(format!("{}/v1/channels/{channel_id}/bans/{user_id}", self.base));
        self.call(request).await.map(drop)
    }

    /// One page of `GET /v1/channels/{channelId}/bans`, after `after`, up
    /// to `limit` (1..=500).
    ///
    /// # Errors
    /// As [`Self::lift_ban`]; 400 for a bad `after` or `limit`.
    pub async fn bans_page(&self, channel_id: &str, after: Option<&str>, limit: u32) -> Result<BansPage, AdminError> {
        let mut query = vec![("limit", limit.to_string())];
        if let Some(after) = after {
            query.push(("after", after.to_owned()));
        }
        let request = self
            .http
            .get(format!("{}/v1/channels/{channel_id}/bans", self.base))
            .query(&query);
        Ok(self.call(request).await?.json().await?)
    }

    /// `PATCH /v1/channels/{channelId}` with moderation settings (an owner
    /// or the admin): the channel as changed.
    ///
    /// # Errors
    /// [`AdminError::Status`] 400 for a bad setting, 403 for a non-owner or
    /// a direct channel, 404 for an unknown channel (admin).
    pub async fn set_channel_settings(
        &self,
        channel_id: &str,
        settings: &ChannelSettings,
    ) -> Result<Channel, AdminError> {
        let request = self
            .http
            .patch(format!("{}/v1/channels/{channel_id}", self.base))
            .json(settings);
        Ok(self.call(request).await?.json().await?)
    }

    /// `DELETE /v1/channels/{channelId}/messages/{messageId}`: a moderator's
    /// (or the admin's) delete of any message of the channel.
    ///
    /// # Errors
    /// [`AdminError::Status`] 404 for an unknown or deleted message, 403
    /// for a user who is not a moderator.
    pub async fn delete_message(&self, channel_id: &str, message_id: &str) -> Result<(), AdminError> {
        let request = self
            .http
            .delete(format!("{}/v1/channels/{channel_id}/messages/{message_id}", self.base));
        self.call(request).await.map(drop)
    }

    /// `PUT /v1/me/blocks/{userId}` (a user JWT): blocks the user (no-op
    /// when blocked already).
    ///
    /// # Errors
    /// [`AdminError::Status`] 400 for oneself or a bad id, 403 with the admin token.
    pub async fn block(&self, user_id: &str) -> Result<(), AdminError> {
        let request = self.http.put(format!("{}/v1/me/blocks/{user_id}", self.base));
        self.call(request).await.map(drop)
    }

    /// `DELETE /v1/me/blocks/{userId}` (a user JWT): unblocks the user.
    ///
    /// # Errors
    /// [`AdminError::Status`] 403 with the admin token.
    pub async fn unblock(&self, user_id: &str) -> Result<(), AdminError> {
        let request = self.http.delete(format!("{}/v1/me/blocks/{user_id}", self.base));
        self.call(request).await.map(drop)
    }

    /// `GET /v1/me/blocks` (a user JWT): whom the caller blocks, in byte
    /// order of the id.
    ///
    /// # Errors
    /// [`AdminError::Status`] 403 with the admin token.
    pub async fn blocks(&self) -> Result<Vec<String>, AdminError> {
        #[derive(Deserialize)]
        struct Blocks {
            blocks: Vec<String>,
        }
        let request = self.http.get(format!("{}/v1/me/blocks", self.base));
        Ok(self.call(request).await?.json::<Blocks>().await?.blocks)
    }

    /// `POST /v1/messages/{messageId}/flags` (a member's JWT): flags a
    /// message with `reason` (`spam`, `abuse`, `other`) and an optional
    /// note; the flag, and whether it is new (a second flag by the same
    /// user answers the first).
    ///
    /// # Errors
    /// [`AdminError::Status`] 404 for an unknown or deleted message, 403 for
    /// a non-member, 400 for a bad reason or note.
    pub async fn flag(&self, message_id: &str, reason: &str, note: Option<&str>) -> Result<(Flag, bool), AdminError> {
        let request = self
            .http
            .post(format!("{}/v1/messages/{message_id}/flags", self.base))
            .json(&json!({ "reason": reason, "note": note }));
        let response = self.call(request).await?;
        let created = response.status().as_u16() == 201;
        Ok((response.json().await?, created))
    }

    /// One page of `GET /v1/flags` (admin), after `after`, up to `limit` (1..=500).
    ///
    /// # Errors
    /// [`AdminError::Status`] 403 for a user token, 400 for a bad `after` or `limit`.
    pub async fn flags_page(&self, after: Option<&str>, limit: u32) -> Result<FlagsPage, AdminError> {
        let mut query = vec![("limit", limit.to_string())];
        if let Some(after) = after {
            query.push(("after", after.to_owned()));
        }
        let request = self.http.get(format!("{}/v1/flags", self.base)).query(&query);
        Ok(self.call(request).await?.json().await?)
    }
}
