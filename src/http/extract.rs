//! Request extractors whose refusals use the API's error shape
//! ([`ApiError`]): path and query parameters, and a query whose repeated
//! names are remembered.

use super::error::ApiError;

/// A query parameter given more than once, where chatd reads it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("query parameter {0} given more than once")]
pub struct RepeatedParam(pub String);

/// A request's query parameters (`application/x-www-form-urlencoded`, as
/// percent-decoded by `serde_urlencoded`), with the names given more than
/// once remembered: which of several values counts would depend on the
/// parser (a proxy that reads the first `access_token` and a server that
/// reads the last see two different users), so a parameter chatd reads is
/// refused when repeated. Names chatd does not read may repeat.
#[derive(Debug, Default)]
pub struct QueryParams {
    values: std::collections::HashMap<String, String>,
    repeated: std::collections::HashSet<String>,
}

impl QueryParams {
    /// Collects `pairs`, noting repeated names.
    pub fn new(pairs: Vec<(String, String)>) -> Self {
        let mut params = Self::default();
        for (name, value) in pairs {
            match params.values.entry(name) {
                std::collections::hash_map::Entry::Occupied(seen) => {
                    params.repeated.insert(seen.key().clone());
                }
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(value);
                }
            }
        }
        params
    }

    /// The value of `name`, `None` when absent.
    ///
    /// # Errors
    /// [`RepeatedParam`] when `name` was given more than once.
    pub fn get(&self, name: &str) -> Result<Option<&str>, RepeatedParam> {
        if self.repeated.contains(name) {
            return Err(RepeatedParam(name.to_owned()));
        }
        Ok(self.values.get(name).map(String::as_str))
    }

    /// The value of `name` for a route, `None` when absent.
    ///
    /// # Errors
    /// 400 `invalid_field` when `name` was given more than once.
    pub fn field(&self, name: &'static str) -> Result<Option<&str>, ApiError> {
        self.get(name)
            .map_err(|_| ApiError::invalid_field(name, "given more than once"))
    }

    /// A page route's `limit`: an integer in `1..=most`, `default` when
    /// absent; read as a JSON number is (`1e2` is 100; [`crate::number::integer_text`]).
    ///
    /// # Errors
    /// 400 `invalid_field` for anything else, or when given more than once.
    pub fn page_limit(&self, default: u32, most: u32) -> Result<u32, ApiError> {
        match self.field("limit")? {
            None => Ok(default),
            Some(raw) => crate::number::integer_text(raw)
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| (1..=most).contains(n))
                .ok_or_else(|| ApiError::invalid_field("limit", &format!("must be an integer between 1 and {most}"))),
        }
    }

    /// The keyset cursor `after` of a page, parsed by `parse` (a channel or
    /// user id; `None` when absent).
    ///
    /// # Errors
    /// 400 `invalid_field` naming `after` when `parse` refuses it, or when
    /// given more than once.
    pub fn after<T, E: std::fmt::Display>(
        &self,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<Option<T>, ApiError> {
        self.field("after")?
            .map(|raw| parse(raw).map_err(|e| ApiError::invalid_field("after", &e.to_string())))
            .transpose()
    }
}

/// `axum::extract::Path` whose refusals use the API's error shape: a path
/// segment that is not UTF-8 once percent-decoded (`/v1/channels/%FF`) is
/// 400 `invalid_field` naming the segment by its wire name (`channelId:
/// ...`), like every other `invalid_field`. Handlers take it as
/// `Result<ApiPath<T>, ApiError>` and check the credentials first, so 401 and
/// 403 come before a bad path (protocol.md, HTTP errors).
#[derive(Debug)]
pub struct ApiPath<T>(pub T);

impl<S, T> axum::extract::FromRequestParts<S> for ApiPath<T>
where
    S: Send + Sync,
    T: serde::de::DeserializeOwned + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| ApiPath(value))
            .map_err(|rejection| {
                use axum::extract::path::ErrorKind;
                use axum::extract::rejection::PathRejection;
                if let PathRejection::FailedToDeserializePathParams(failed) = &rejection {
                    if let ErrorKind::InvalidUtf8InPathParam { key } = failed.kind() {
                        return ApiError::invalid_field(path_field(key), "not UTF-8 once percent-decoded");
                    }
                }
                ApiError::new(rejection.status(), "invalid_field", &rejection.body_text())
            })
    }
}

/// The wire name of a route's path parameter (`channel_id` → `channelId`).
fn path_field(key: &str) -> &str {
    match key {
        "channel_id" => "channelId",
        "user_id" => "userId",
        other => other,
    }
}

/// `axum::extract::Query` whose refusals use the API's error shape (400 `bad_request`).
#[derive(Debug)]
pub struct ApiQuery<T>(pub T);

impl<S, T> axum::extract::FromRequestParts<S> for ApiQuery<T>
where
    S: Send + Sync,
    T: serde::de::DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(value)| ApiQuery(value))
            .map_err(|rejection| ApiError::new(rejection.status(), "bad_request", &rejection.body_text()))
    }
}
