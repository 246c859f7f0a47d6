//! `GET /v1/me/search` (protocol.md §18): the caller's messages that hold
//! every term of `q`, newest first, a page at a time. The matching is the
//! store's (`store/search.rs`); this module checks the query and the
//! membership and renders the page.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};

use super::caller::{channel_reader, Caller};
use super::channels::channel_id;
use super::error::ApiError;
use super::extract::{ApiQuery, QueryParams};
use super::me::signed_in_user;
use super::openapi::{ErrorBody, HistoryMessage};
use crate::protocol::TaggedMessage;
use crate::state::AppState;
use crate::store::search_terms::parse_terms;
use crate::store::SearchRequest;
use crate::view;

/// Results per page when `limit` is absent.
pub const DEFAULT_SEARCH_PAGE: u32 = 20;
/// The largest `limit`.
pub const MAX_SEARCH_PAGE: u32 = 100;
/// The longest `before` accepted before the store reads it, in bytes.
const MAX_CURSOR_BYTES: usize = 64;

/// The query of the search route.
#[derive(Debug, IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
#[allow(dead_code)] // a schema: the handler reads the pairs itself.
pub struct SearchQuery {
    /// The terms, separated by white space; each is found as a
    /// case-insensitive substring, in any script. 1 to 256 bytes.
    q: String,
    /// Only this channel (the caller must be a member).
    channel_id: Option<String>,
    /// The `next` of the previous page.
    before: Option<String>,
    /// Results per page, 1 to 100; default 20.
    #[param(minimum = 1, maximum = 100)]
    limit: Option<i64>,
}

/// A page of search results, newest first.
#[derive(Debug, Serialize, ToSchema)]
#[allow(dead_code)]
pub struct SearchResults {
    /// Messages in their current state (as history returns them), each with
    /// its `channelId`.
    #[schema(value_type = Vec<HistoryMessage>)]
    results: Vec<TaggedMessage>,
    /// The `before` of the next page; absent on the last page. A page may
    /// hold fewer than `limit` results and still have a `next`.
    #[serde(skip_serializing_if = "Option::is_none")]
    next: Option<String>,
}

/// `GET /v1/me/search?q=TEXT&channelId=ID&before=CURSOR&limit=N` (user
/// token): 200 `{"results": [...], "next"?}`. 400 `invalid_field` for a `q`
/// that is empty, over 256 bytes or holds a control character, a bad
/// `limit`, `channelId` or `before`; 403 for the admin token, or a
/// `channelId` the caller is not a member of (also when it does not exist:
/// the same answer).
#[utoipa::path(
    get,
    path = "/v1/me/search",
    tag = "channels",
    params(SearchQuery),
    responses(
        (status = 200, description = "A page of results, newest first", body = SearchResults),
        (status = 400, description = "A bad q, channelId, before or limit", body = ErrorBody),
        (status = 401, description = "No or a refused token", body = ErrorBody),
        (status = 403, description = "Not a member of channelId (or unknown), or the admin token", body = ErrorBody),
        (status = 503, description = "Database unavailable", body = ErrorBody),
    ),
    security(("userJwt" = [])),
)]
pub async fn search(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiQuery(query): ApiQuery<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    let user = signed_in_user(&state, &headers)?;
    let query = QueryParams::new(query);
    let terms =
        parse_terms(query.field("q")?.unwrap_or("")).map_err(|e| ApiError::invalid_field("q", &e.to_string()))?;
    let limit = query.page_limit(DEFAULT_SEARCH_PAGE, MAX_SEARCH_PAGE)?;
    let channel = query.field("channelId")?.map(channel_id).transpose()?;
    let before = query.field("before")?;
    if before.is_some_and(|b| b.is_empty() || b.len() > MAX_CURSOR_BYTES) {
        return Err(bad_cursor());
    }
    let who = Caller::User(user);
    if let Some(channel) = &channel {
        // 403 for a non-member and for an unknown channel alike.
        channel_reader(&state, &who, channel).await?;
    }
    let Caller::User(user) = &who else {
        return Err(ApiError::forbidden("a user token is required"));
    };
    let request = SearchRequest {
        user: &user.user_id,
        terms: &terms,
        channel: channel.as_ref(),
        before,
        limit,
    };
    let page = state.store.search(request).await?.map_err(|_| bad_cursor())?;
    let body = SearchResults {
        results: page
            .entries
            .iter()
            .map(|e| TaggedMessage::MsgRecv(view::recv_read(e)))
            .collect(),
        next: page.next,
    };
    Ok(Json(body).into_response())
}

fn bad_cursor() -> ApiError {
    ApiError::invalid_field("before", "not a cursor of this server (use a page's next)")
}
