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

/// `axum::extract::Query` whose refusals use the API's error shape (400
/// `bad_request`), refusing a parameter that is not UTF-8 once
/// percent-decoded with 400 `invalid_field` naming it.
#[derive(Debug)]
pub struct ApiQuery<T>(pub T);

impl<S, T> axum::extract::FromRequestParts<S> for ApiQuery<T>
where
    S: Send + Sync,
    T: serde::de::DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, state: &S) -> Result<Self, Self::Rejection> {
        // serde_urlencoded decodes bytes that are not UTF-8 lossily (each bad
        // sequence becomes U+FFFD), so `?filename=%FF.txt` would be stored as
        // "\u{FFFD}.txt" and `?q=%FF` searched for U+FFFD: refuse such a
        // parameter, as a path segment that is not UTF-8 is refused.
        if let Some(name) = parts.uri.query().and_then(first_non_utf8_param) {
            return Err(ApiError::invalid_field(&name, "not UTF-8 once percent-decoded"));
        }
        LossyQuery::<T>::from_request_parts(parts, state)
            .await
            .map(|LossyQuery(value)| ApiQuery(value))
    }
}

/// [`ApiQuery`] that takes bytes that are not UTF-8 as U+FFFD: for the
/// signed attachment URLs, where any altered URL (`sig=%FF…` included) is
/// answered 404 like every other one that does not verify (protocol §15).
#[derive(Debug)]
pub struct LossyQuery<T>(pub T);

impl<S, T> axum::extract::FromRequestParts<S> for LossyQuery<T>
where
    S: Send + Sync,
    T: serde::de::DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(value)| LossyQuery(value))
            .map_err(|rejection| ApiError::new(rejection.status(), "bad_request", &rejection.body_text()))
    }
}

/// The name (decoded lossily) of the first `name=value` pair of the query
/// `query` (`application/x-www-form-urlencoded`) whose name or value is not
/// UTF-8 once percent-decoded, or `None` when every pair is.
fn first_non_utf8_param(query: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let name = form_decode(name);
        let bad = std::str::from_utf8(&name).is_err() || std::str::from_utf8(&form_decode(value)).is_err();
        bad.then(|| String::from_utf8_lossy(&name).into_owned())
    })
}

/// `text` percent-decoded as a form field: `+` is a space, `%XY` the byte
/// XY; a `%` not followed by two hex digits stays as it is (as
/// `serde_urlencoded` reads it).
fn form_decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => match (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            ) {
                (Some(hi), Some(lo)) => {
                    // Two hex digits: at most 0xFF.
                    out.push(u8::try_from(hi * 16 + lo).unwrap_or(u8::MAX));
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            other => out.push(other),
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_that_is_not_utf8_once_decoded_is_named() {
        assert_eq!(first_non_utf8_param("q=%C3%A4rger&limit=5"), None);
        assert_eq!(first_non_utf8_param("q=a+b%20c&x=%"), None);
        assert_eq!(first_non_utf8_param("limit=5&q=%FF"), Some("q".to_owned()));
        assert_eq!(
            first_non_utf8_param("filename=%ED%A0%80.txt"),
            Some("filename".to_owned())
        );
        assert_eq!(first_non_utf8_param("q=%C0%80"), Some("q".to_owned()));
        assert_eq!(first_non_utf8_param("%FF=1"), Some("\u{FFFD}".to_owned()));
        assert_eq!(form_decode("a+%41%4"), b"a A%4".to_vec());
    }
}
