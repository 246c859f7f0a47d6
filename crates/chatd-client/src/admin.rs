//! The HTTP API (`docs/protocol.md` §4), for back ends, tests, the load
//! generator and the fault harness: with the admin token every route; with a
//! user JWT the routes a member may call (a channel's history and members).

mod api_error;
mod attachments;
mod erasure;
mod export;
mod moderation;
mod search;

pub use api_error::ApiError;
pub use attachments::Attachment;
pub use export::{ExportLine, ExportStream, ExportedAttachment};
pub use moderation::{Ban, BansPage, ChannelSettings, Flag, FlagsPage};
pub use search::{SearchPage, SearchQuery, DEFAULT_SEARCH_LIMIT};

use chatd_proto::protocol::{ChannelState, Notify, RecvMessage, Role, TaggedMessage, Visibility};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A user's notification settings in a channel (protocol.md §16), as
/// `PUT /v1/me/channels/{channelId}/settings` answers them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotifySettings {
    pub channel_id: String,
    pub notify: Notify,
    /// Snoozed until then (ms since the epoch); `None`: no snooze.
    pub snooze_until: Option<i64>,
}

/// An admin API error.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// The request did not get an answer.
    #[error("request failed: {0}")]
    Transport(#[from] reqwest::Error),
    /// The server answered with an error status.
    #[error("HTTP {status}: {body}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The response body (`{"error": {"code", "message"}}`).
        body: String,
    },
    /// A user's export was not complete or not well-formed (§19).
    #[error("export: {0}")]
    Export(String),
}

/// A channel as the admin API returns it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Channel {
    /// Its id.
    pub channel_id: String,
    /// Current members.
    pub members: Vec<String>,
    /// Highest stored `seq` (0 when empty).
    pub last_seq: i64,
    /// Creation time, ms since the Unix epoch.
    pub created_at: i64,
    /// `group` or `direct` (version 1.2; `group` from an older server).
    #[serde(default)]
    pub kind: chatd_proto::protocol::ChannelKind,
    /// `private` or `public` (version 1.2; `private` from an older server).
    #[serde(default)]
    pub visibility: chatd_proto::protocol::Visibility,
    /// Its display name, `None` when unset.
    #[serde(default)]
    pub name: Option<String>,
    /// How many members it has (version 1.2; 0 from an older server).
    #[serde(default)]
    pub member_count: i64,
    /// Who may post (§17): `member` (anyone; also from an older server) or
    /// `moderator` (an announcement channel).
    #[serde(default)]
    pub posting_role: Role,
    /// Slow mode in ms (§17; 0: off, also from an older server).
    #[serde(default)]
    pub slow_mode_ms: i64,
}

/// A channel to create: `POST /v1/channels` (admin: [`AdminClient::create`])
/// or `POST /v1/me/channels` (a user, who becomes its owner:
/// [`AdminClient::create_mine`]). Absent fields are left out of the body.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewChannel {
    /// Its id; `None`: the server assigns a UUIDv7.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel_id: Option<String>,
    /// Members with the role `member`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// Members with the role `owner` (admin only; a user's own channel has
    /// the user as its owner).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub owners: Vec<String>,
    /// `private` (the server's default) or `public`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
    /// Its display name (a user's channel only; the admin sets it with
    /// `PATCH`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// One member of a channel (`GET /v1/channels/{channelId}/members`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    /// Its user id.
    pub user_id: String,
    /// `member`, `moderator` or `owner`.
    pub role: Role,
    /// When it (last) joined, ms since the Unix epoch.
    pub joined_at: i64,
    /// Its delivered watermark in the channel (0: none).
    pub delivered_seq: i64,
    /// Its read watermark in the channel (0: none).
    pub read_seq: i64,
    /// Until when it is muted (ms since the epoch, §17); `None` when not.
    #[serde(default)]
    pub muted_until: Option<i64>,
}

/// A page of a channel's members, in byte order of the user id.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MembersPage {
    /// The members of the page.
    pub members: Vec<Member>,
    /// Whether members follow the last one.
    pub has_more: bool,
    /// The channel's last seq when the page was read: `MEMBER` frames with a
    /// higher `afterSeq` are not reflected in it.
    pub at_seq: i64,
}

/// A public channel as the directory lists it (`GET /v1/directory`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DirectoryChannel {
    /// Its id.
    pub channel_id: String,
    /// Its display name, `None` when unset.
    pub name: Option<String>,
    /// How many members it has.
    pub member_count: i64,
    /// Highest stored `seq` (0 when empty).
    pub last_seq: i64,
}

/// A page of the directory, in byte order of the channel id.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DirectoryPage {
    /// The channels of the page.
    pub channels: Vec<DirectoryChannel>,
    /// Whether channels follow the last one.
    pub has_more: bool,
}

#[derive(Deserialize)]
struct Token {
    token: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Page {
    messages: Vec<TaggedMessage>,
    has_more: bool,
}

/// A client of the HTTP API, holding the base URL (`http://host:port`) and
/// a bearer token: the admin token, or a member's user JWT for the routes
/// open to members ([`Self::members_page`], [`Self::history_page`]).
#[derive(Debug, Clone)]
pub struct AdminClient {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl AdminClient {
    /// A client for the server at `base` (e.g. `http://127.0.0.1:8080`)
    /// calling with `admin_token` (or a user JWT: see the type's doc).
    pub fn new(base: impl Into<String>, admin_token: impl Into<String>) -> Self {
        Self {
            http: reqwest::Client::new(),
            base: base.into().trim_end_matches('/').to_owned(),
            token: admin_token.into(),
        }
    }

    /// The server's base URL (`http://host:port`), for a client of the same
    /// server with another token.
    pub fn base(&self) -> &str {
        &self.base
    }

    async fn call(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response, AdminError> {
        let response = request.bearer_auth(&self.token).send().await?;
        if response.status().is_success() {
            Ok(response)
        } else {
            let status = response.status().as_u16();
            let body = response.text().await.unwrap_or_default();
            Err(AdminError::Status { status, body })
        }
    }

    /// `POST /v1/channels`: creates a channel (a server-assigned id when
    /// `channel_id` is `None`).
    ///
    /// # Errors
    /// [`AdminError::Status`] 409 when the id exists, 400 on a bad id.
    pub async fn create_channel(&self, channel_id: Option<&str>, members: &[String]) -> Result<Channel, AdminError> {
        self.create(&NewChannel {
            channel_id: channel_id.map(str::to_owned),
            members: members.to_vec(),
            ..NewChannel::default()
        })
        .await
    }

    /// `POST /v1/channels` (admin) with owners and visibility (version 1.2).
    ///
    /// # Errors
    /// [`AdminError::Status`] 409 when the id exists, 400 on a bad id, user
    /// or visibility (a `name` here is refused: set it with `PATCH`).
    pub async fn create(&self, channel: &NewChannel) -> Result<Channel, AdminError> {
        let request = self.http.post(format!("{}/v1/channels", self.base)).json(channel);
        Ok(self.call(request).await?.json().await?)
    }

    /// `POST /v1/me/channels` (a user JWT): a group channel with the caller
    /// as its `owner` and `members` as `member`s (`owners` must be empty).
    ///
    /// # Errors
    /// [`AdminError::Status`] 403 when the server's
    /// `user_channel_creation` is off, 409 when the id exists, 400 on a bad
    /// id, name, visibility or member.
    pub async fn create_mine(&self, channel: &NewChannel) -> Result<Channel, AdminError> {
        let request = self.http.post(format!("{}/v1/me/channels", self.base)).json(channel);
        Ok(self.call(request).await?.json().await?)
    }

    /// `PUT /v1/channels/{channelId}/members/{userId}` `{"role"}` (admin,
    /// or an owner; a moderator may add `member`s only): adds the user with
    /// `role`, or sets an existing member's role.
    ///
    /// # Errors
    /// [`AdminError::Status`] 403 when the caller's role does not allow it
    /// (or for a direct channel), 404 for an unknown channel (admin).
    pub async fn set_member_role(&self, channel_id: &str, user_id: &str, role: Role) -> Result<(), AdminError> {
        let request = self
            .http
            .put(format!("{}/v1/channels/{channel_id}/members/{user_id}", self.base))
            .json(&json!({ "role": role }));
        self.call(request).await.map(drop)
    }

    /// `GET /v1/channels/{channelId}`.
    ///
    /// # Errors
    /// [`AdminError::Status`] 404 for an unknown channel.
    pub async fn channel(&self, channel_id: &str) -> Result<Channel, AdminError> {
        let request = self.http.get(format!("{}/v1/channels/{channel_id}", self.base));
        Ok(self.call(request).await?.json().await?)
    }

    /// `PUT /v1/channels/{channelId}/members/{userId}`.
    ///
    /// # Errors
    /// [`AdminError::Status`] 404 for an unknown channel.
    pub async fn add_member(&self, channel_id: &str, user_id: &str) -> Result<(), AdminError> {
        let request = self
            .http
            .put(format!("{}/v1/channels/{channel_id}/members/{user_id}", self.base));
        self.call(request).await.map(drop)
    }

    /// `DELETE /v1/channels/{channelId}/members/{userId}`.
    ///
    /// # Errors
    /// [`AdminError::Status`] 404 for an unknown channel.
    pub async fn remove_member(&self, channel_id: &str, user_id: &str) -> Result<(), AdminError> {
        let request = self
            .http
            .delete(format!("{}/v1/channels/{channel_id}/members/{user_id}", self.base));
        self.call(request).await.map(drop)
    }

    /// `POST /v1/tokens`: a user JWT valid for `ttl_seconds` (the server's
    /// default when `None`).
    ///
    /// # Errors
    /// [`AdminError::Status`] 400 on a bad user id or ttl.
    pub async fn token(&self, user_id: &str, ttl_seconds: Option<u64>) -> Result<String, AdminError> {
        let mut body = json!({ "userId": user_id });
        if let Some(ttl) = ttl_seconds {
            body["ttlSeconds"] = json!(ttl);
        }
        let request = self.http.post(format!("{}/v1/tokens", self.base)).json(&body);
        let token: Token = self.call(request).await?.json().await?;
        Ok(token.token)
    }

    /// One page of `GET /v1/channels/{channelId}/messages`: messages after
    /// `after_seq` (at most `limit`, 1..=500) and whether more follow.
    ///
    /// # Errors
    /// [`AdminError::Status`] 404 for an unknown channel.
    pub async fn history_page(
        &self,
        channel_id: &str,
        after_seq: i64,
        limit: u32,
    ) -> Result<(Vec<RecvMessage>, bool), AdminError> {
        let request = self.http.get(format!(
            "{}/v1/channels/{channel_id}/messages?afterSeq={after_seq}&limit={limit}",
            self.base
        ));
        let page: Page = self.call(request).await?.json().await?;
        let messages = page.messages.into_iter().map(|TaggedMessage::MsgRecv(m)| m).collect();
        Ok((messages, page.has_more))
    }

    /// Up to `limit` messages just below `before_seq` (exclusive), or the
    /// newest `limit` when `before_seq` is `None` (`latest=true`), in `seq`
    /// order, and whether older ones exist.
    ///
    /// # Errors
    /// As [`Self::history_page`].
    pub async fn history_before(
        &self,
        channel_id: &str,
        before_seq: Option<i64>,
        limit: u32,
    ) -> Result<(Vec<RecvMessage>, bool), AdminError> {
        let from = match before_seq {
            Some(seq) => format!("beforeSeq={seq}"),
            None => "latest=true".to_owned(),
        };
        let request = self.http.get(format!(
            "{}/v1/channels/{channel_id}/messages?{from}&limit={limit}",
            self.base
        ));
        let page: Page = self.call(request).await?.json().await?;
        let messages = page.messages.into_iter().map(|TaggedMessage::MsgRecv(m)| m).collect();
        Ok((messages, page.has_more))
    }

    /// A channel's whole history, paged 500 at a time.
    ///
    /// # Errors
    /// As [`Self::history_page`].
    pub async fn history(&self, channel_id: &str) -> Result<Vec<RecvMessage>, AdminError> {
        let mut all: Vec<RecvMessage> = Vec::new();
        loop {
            let after = all.last().map_or(0, |m| m.seq);
            let (page, has_more) = self.history_page(channel_id, after, 500).await?;
            let empty = page.is_empty();
            all.extend(page);
            if !has_more || empty {
                return Ok(all);
            }
        }
    }

    /// One page of `GET /v1/channels/{channelId}/members`: up to `limit`
    /// (1..=500) members with a user id above `after` (from the first when
    /// `None`), in byte order of the user id.
    ///
    /// # Errors
    /// [`AdminError::Status`] 403 for a user who is not a member (or an
    /// unknown channel), 404 for an unknown channel (admin token), 400 for a
    /// bad `after` or `limit`.
    pub async fn members_page(
        &self,
        channel_id: &str,
        after: Option<&str>,
        limit: u32,
    ) -> Result<MembersPage, AdminError> {
        let mut query = vec![("limit", limit.to_string())];
        if let Some(after) = after {
            query.push(("after", after.to_owned()));
        }
        let request = self
            .http
            .get(format!("{}/v1/channels/{channel_id}/members", self.base))
            .query(&query);
        Ok(self.call(request).await?.json().await?)
    }

    /// Every member of a channel, paged 500 at a time, and the `atSeq` of
    /// the first page.
    ///
    /// # Errors
    /// As [`Self::members_page`].
    pub async fn all_members(&self, channel_id: &str) -> Result<(Vec<Member>, i64), AdminError> {
        let mut page = self.members_page(channel_id, None, 500).await?;
        let at_seq = page.at_seq;
        let mut all = std::mem::take(&mut page.members);
        while page.has_more {
            let Some(last) = all.last().map(|m| m.user_id.clone()) else {
                break;
            };
            page = self.members_page(channel_id, Some(&last), 500).await?;
            all.append(&mut page.members);
        }
        Ok((all, at_seq))
    }

    /// One page of `GET /v1/directory` (a user JWT): public channels whose
    /// id or name holds `q` (all when `None`), after `after`, up to `limit`
    /// (1..=500).
    ///
    /// # Errors
    /// [`AdminError::Status`] 403 with the admin token (it is no user), 400
    /// for a bad `q`, `after` or `limit`.
    pub async fn directory_page(
        &self,
        q: Option<&str>,
        after: Option<&str>,
        limit: u32,
    ) -> Result<DirectoryPage, AdminError> {
        let mut query = vec![("limit", limit.to_string())];
        if let Some(q) = q {
            query.push(("q", q.to_owned()));
        }
        if let Some(after) = after {
            query.push(("after", after.to_owned()));
        }
        let request = self.http.get(format!("{}/v1/directory", self.base)).query(&query);
        Ok(self.call(request).await?.json().await?)
    }

    /// `PUT /v1/me/channels/{channelId}` (a user JWT): join a public
    /// channel (no-op when already a member).
    ///
    /// # Errors
    /// [`AdminError::Status`] 403 for a private, direct or unknown channel.
    pub async fn join(&self, channel_id: &str) -> Result<(), AdminError> {
        let request = self.http.put(format!("{}/v1/me/channels/{channel_id}", self.base));
        self.call(request).await.map(drop)
    }

    /// `DELETE /v1/me/channels/{channelId}` (a user JWT): leave a channel
    /// (no-op when not a member).
    ///
    /// # Errors
    /// [`AdminError::Status`] 403 for a direct channel.
    pub async fn leave(&self, channel_id: &str) -> Result<(), AdminError> {
        let request = self.http.delete(format!("{}/v1/me/channels/{channel_id}", self.base));
        self.call(request).await.map(drop)
    }

    /// `PUT /v1/me/direct/{userId}` (a user JWT): the one direct channel of
    /// the caller and `user_id`, and whether this call made it (201) or it
    /// existed (200).
    ///
    /// # Errors
    /// [`AdminError::Status`] 403 when the server's `dm_policy` refuses it
    /// (the body's `reason` is `dm_policy`), 400 for a bad user id.
    pub async fn open_direct(&self, user_id: &str) -> Result<(Channel, bool), AdminError> {
        let request = self.http.put(format!("{}/v1/me/direct/{user_id}", self.base));
        let response = self.call(request).await?;
        let created = response.status().as_u16() == 201;
        Ok((response.json().await?, created))
    }

    /// `GET /v1/me/channels` (a user JWT): the caller's channels as HELLO
    /// lists them, with `unread`, `unreadMentions`, `notify` and
    /// `snoozeUntil` (§16).
    pub async fn my_channels(&self) -> Result<Vec<ChannelState>, AdminError> {
        #[derive(Deserialize)]
        struct Page {
            channels: Vec<ChannelState>,
        }
        let request = self.http.get(format!("{}/v1/me/channels", self.base));
        let page: Page = self.call(request).await?.json().await?;
        Ok(page.channels)
    }

    /// `PUT /v1/me/channels/{channelId}/settings` (a member's user JWT,
    /// §16): sets `notify` when given and the snooze when given
    /// (`Some(None)` ends it); returns the settings now. The caller's other
    /// sessions get [`crate::Event::Settings`].
    ///
    /// # Errors
    /// [`AdminError::Status`] 403 when the caller is not a member, 400 for
    /// a bad value.
    pub async fn set_settings(
        &self,
        channel_id: &str,
        notify: Option<Notify>,
        snooze_until: Option<Option<i64>>,
    ) -> Result<NotifySettings, AdminError> {
        let mut body = serde_json::Map::new();
        if let Some(notify) = notify {
            body.insert("notify".into(), json!(notify));
        }
        if let Some(until) = snooze_until {
            body.insert("snoozeUntil".into(), json!(until));
        }
        let request = self
            .http
            .put(format!("{}/v1/me/channels/{channel_id}/settings", self.base))
            .json(&body);
        Ok(self.call(request).await?.json().await?)
    }
}
