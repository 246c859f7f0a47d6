//! Search (`docs/protocol.md`, search; `GET /v1/me/search`) on
//! [`AdminClient`] with a user JWT: a page of the caller's messages that
//! hold every term, newest first, and the pages after it by `next`.

use chatd_proto::protocol::{RecvMessage, TaggedMessage};
use serde::Deserialize;

use super::{AdminClient, AdminError};

/// Results per page when none is asked for (the server's default).
pub const DEFAULT_SEARCH_LIMIT: u32 = 20;

/// One page of search results.
#[derive(Debug, Clone)]
pub struct SearchPage {
    /// Messages in their current state, newest first, each with its
    /// `channel_id`.
    pub results: Vec<RecvMessage>,
    /// The cursor of the next page (pass it as `before`); `None` on the
    /// last page. A page may hold fewer than `limit` results and still
    /// have one.
    pub next: Option<String>,
}

#[derive(Deserialize)]
struct WirePage {
    results: Vec<TaggedMessage>,
    #[serde(default)]
    next: Option<String>,
}

/// What to search for.
#[derive(Debug, Clone, Default)]
pub struct SearchQuery {
    /// White-space separated terms, each a case-insensitive substring
    /// (1 to 256 bytes in all).
    pub q: String,
    /// Only this channel (the caller must be a member).
    pub channel_id: Option<String>,
    /// Results per page, 1 to 100 (`None`: the server's 20).
    pub limit: Option<u32>,
}

impl SearchQuery {
    /// `q` in every channel of the caller, pages of the server's default size.
    pub fn new(q: impl Into<String>) -> Self {
        Self {
            q: q.into(),
            ..Self::default()
        }
    }
}

impl AdminClient {
    /// One page of `GET /v1/me/search` (a user JWT): `query`'s results
    /// before `before` (a previous page's `next`; `None`: from the newest).
    ///
    /// # Errors
    /// [`AdminError::Status`] 400 `invalid_field` for an empty or too long
    /// `q`, a bad `limit` or `before`; 403 for a `channel_id` the caller is
    /// not in (or that does not exist), or the admin token.
    pub async fn search_page(&self, query: &SearchQuery, before: Option<&str>) -> Result<SearchPage, AdminError> {
        let mut params = vec![("q", query.q.clone())];
        if let Some(channel_id) = &query.channel_id {
            params.push(("channelId", channel_id.clone()));
        }
        if let Some(limit) = query.limit {
            params.push(("limit", limit.to_string()));
        }
        if let Some(before) = before {
            params.push(("before", before.to_owned()));
        }
        let request = self.http.get(format!("{}/v1/me/search", self.base)).query(&params);
        let page: WirePage = self.call(request).await?.json().await?;
        Ok(SearchPage {
            results: page.results.into_iter().map(|TaggedMessage::MsgRecv(m)| m).collect(),
            next: page.next,
        })
    }

    /// Every result of `query`, newest first, following `next` until the
    /// last page or until `most` results were read.
    ///
    /// # Errors
    /// As [`Self::search_page`].
    pub async fn search_all(&self, query: &SearchQuery, most: usize) -> Result<Vec<RecvMessage>, AdminError> {
        let mut results = Vec::new();
        let mut before: Option<String> = None;
        loop {
            let page = self.search_page(query, before.as_deref()).await?;
            results.extend(page.results);
            match page.next {
                Some(next) if results.len() < most => before = Some(next),
                _ => break,
            }
        }
        results.truncate(most);
        Ok(results)
    }
}
