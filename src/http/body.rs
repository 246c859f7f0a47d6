//! Request bodies: reading them within `max_request_bytes` and decoding
//! JSON of a documented shape, with refusals in the API's error shape.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, StatusCode};

use super::caller::require_admin;
use super::error::ApiError;
use crate::state::AppState;

/// The body of an admin request: the credentials are checked first, so a
/// request without valid ones is refused before its body is read (and is
/// never told `100 Continue`), then the body is read ([`read_body`]).
///
/// # Errors
/// 401/403 for the credentials, as [`require_admin`]; then as [`read_body`].
pub async fn admin_body(state: &AppState, headers: &HeaderMap, request: Request) -> Result<Bytes, ApiError> {
    require_admin(state, headers)?;
    read_body(request, state.config.max_request_bytes).await
}

/// Reads the request's body, or answers with the extractor's refusal (413
/// past `max_request_bytes`) in the API's error shape. Handlers call
/// it after the credential check, so a request without valid credentials is
/// refused before its body is read (and is never told `100 Continue`).
pub async fn read_body(request: Request, limit: usize) -> Result<Bytes, ApiError> {
    Bytes::from_request(request, &())
        .await
        .map_err(|rejection: BytesRejection| {
            let status = rejection.status();
            if status == StatusCode::PAYLOAD_TOO_LARGE {
                // The same words as a declared over-long body (a chunked one
                // is only found out while it is read).
                ApiError::new(status, "body_too_large", &body_too_large(limit))
            } else {
                ApiError::new(status, "bad_request", &rejection.body_text())
            }
        })
}

/// Decodes a request body of `shape`. A refusal (400 `bad_request`) says
/// whether the body is not JSON or not that shape, names a missing field, and
/// gives the line and column, in words of its own: serde's text names Rust
/// types ("expected struct CreateChannel") that mean nothing to a client.
pub fn parse_json<T: serde::de::DeserializeOwned>(body: &Bytes, shape: &str) -> Result<T, ApiError> {
    // serde also takes a struct written as a JSON array (`["room", ["alice"]]`):
    // only an object is the documented shape.
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        let not_json = serde_json::from_slice::<serde::de::IgnoredAny>(body).is_err();
        let message = if not_json {
            "body is not valid JSON".to_owned()
        } else {
            format!("body must be {shape}")
        };
        return Err(ApiError::bad_request(&message));
    }
    // A name given twice: `Map` and `Value` keep the last value where a
    // proxy or an audit log may read the first, so which one counts would
    // depend on the parser (RFC 8259 §4); refused like a frame's (§5).
    if let Ok(UniqueKeys(Some(field))) = serde_json::from_slice::<UniqueKeys>(body) {
        return Err(ApiError::invalid_field(&field, "appears more than once"));
    }
    // A fraction is not an integer even when its nearest double is
    // (`0.99999999999999999`, `1e-400`); past this point only that double
    // is left (`chatd::number`). No body has a field that takes a fraction.
    // A member the body's struct does not read is ignored like any unknown
    // field (a backend's additive field may hold any number); a body read
    // as a map (its fields unknown here) has every member looked at.
    let fields = struct_fields::<T>();
    let wanted = |key: &str| fields.is_none_or(|fields| fields.contains(&key));
    if let Some(field) = std::str::from_utf8(body)
        .ok()
        .and_then(|text| crate::number::hidden_fraction_among(text, wanted))
    {
        return Err(ApiError::invalid_field(
            &field,
            "must be an integer (this number has a fraction)",
        ));
    }
    serde_json::from_slice(body).map_err(|e| {
        use serde_json::error::Category;
        let at = format!("line {}, column {}", e.line(), e.column());
        let message = match e.classify() {
            Category::Syntax | Category::Eof | Category::Io => format!("body is not valid JSON ({at})"),
            Category::Data => match missing_field(&e) {
                Some(field) => format!("body must be {shape}: \"{field}\" is missing"),
                None => format!("body must be {shape} ({at})"),
            },
        };
        ApiError::bad_request(&message)
    })
}

/// The member names the struct `T` reads (serde's field list, renames and
/// aliases included), or `None` when `T` does not decode as a struct with a
/// fixed list (a map, a `Value`, a struct with a flattened part).
fn struct_fields<T: serde::de::DeserializeOwned>() -> Option<&'static [&'static str]> {
    let mut fields = None;
    let _ = T::deserialize(FieldsProbe(&mut fields));
    fields
}

/// A deserializer that only records the field list a struct asks for, then
/// fails (no value is made).
struct FieldsProbe<'a>(&'a mut Option<&'static [&'static str]>);

impl<'de> serde::Deserializer<'de> for FieldsProbe<'_> {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(serde::de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = Some(fields);
        Err(serde::de::Error::custom("fields read"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

/// The field a "missing field" decode error names.
fn missing_field(error: &serde_json::Error) -> Option<String> {
    let text = error.to_string();
    let name = text.strip_prefix("missing field `")?.split('`').next()?;
    Some(name.to_owned())
}

/// Decodes a JSON object only to find the first name that appears twice at
/// its top level (values are skipped): `Some(name)`, or `None` when every
/// name is unique. Any other problem is left to the real decode, which
/// words it.
struct UniqueKeys(Option<String>);

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Names;
        impl<'de> serde::de::Visitor<'de> for Names {
            type Value = UniqueKeys;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<UniqueKeys, A::Error> {
                let mut seen = std::collections::HashSet::new();
                let mut repeated = None;
                // The whole object is read even after a repeat: the
                // deserializer checks that the map was read to its end.
                while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if !seen.insert(name.clone()) && repeated.is_none() {
                        repeated = Some(name.into_owned());
                    }
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
                Ok(UniqueKeys(repeated))
            }
        }
        deserializer.deserialize_map(Names)
    }
}

/// The message of a 413 for a body over `limit` bytes.
pub(super) fn body_too_large(limit: usize) -> String {
    match limit {
        1 => "request body over 1 byte".to_owned(),
        _ if limit.is_multiple_of(1024 * 1024) => format!("request body over {} MiB", limit / (1024 * 1024)),
        _ => format!("request body over {limit} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct Shape {
        #[allow(dead_code)]
        role: String,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Renamed {
        #[allow(dead_code)]
        #[serde(default)]
        ttl_seconds: Option<i64>,
        #[allow(dead_code)]
        #[serde(alias = "uid")]
        user_id: String,
    }

    #[test]
    fn a_struct_s_fields_are_read_and_a_map_has_none() {
        assert_eq!(struct_fields::<Renamed>(), Some(&["ttlSeconds", "uid", "userId"][..]));
        assert_eq!(struct_fields::<serde_json::Value>(), None);
        assert_eq!(struct_fields::<serde_json::Map<String, serde_json::Value>>(), None);
        // A hidden fraction in a member the struct reads is refused, in another ignored.
        let read = Bytes::from_static(br#"{"userId":"a","ttlSeconds":0.99999999999999999}"#);
        assert!(format!("{:?}", parse_json::<Renamed>(&read, "{}").expect_err("refused")).contains("ttlSeconds"));
        let other = Bytes::from_static(br#"{"userId":"a","traceId":1e-400}"#);
        assert!(parse_json::<Renamed>(&other, "{}").is_ok());
        assert!(parse_json::<serde_json::Map<String, serde_json::Value>>(&other, "{}").is_err());
    }

    #[test]
    fn a_name_given_twice_is_refused_naming_it() {
        let body = Bytes::from_static(br#"{"role":"member","role":"owner"}"#);
        let refused =
            parse_json::<serde_json::Map<String, serde_json::Value>>(&body, "{role}").expect_err("a repeated name");
        let shown = format!("{refused:?}");
        assert!(
            shown.contains("\"invalid_field\"") && shown.contains("role: appears more than once"),
            "{shown}"
        );
        // Escaped names are compared decoded: "r\u006fle" is "role".
        let escaped = Bytes::from_static(br#"{"role":"member","r\u006fle":"owner"}"#);
        assert!(parse_json::<Shape>(&escaped, "{role}").is_err());
        // Nested objects may repeat a top-level name; distinct names pass.
        let fine = Bytes::from_static(br#"{"role":"owner","x":{"role":1}}"#);
        let map = parse_json::<serde_json::Map<String, serde_json::Value>>(&fine, "{role}").expect("fine");
        assert_eq!(map["role"], "owner");
    }

    #[test]
    fn the_repeated_name_is_told_whole_with_names_after_it() {
        // A name holding a backquote: read back out of serde's error text,
        // it was cut at the backquote ("a: appears…").
        let body = Bytes::from_static(br#"{"a`b":1,"a`b":2,"c":3}"#);
        let refused =
            parse_json::<serde_json::Map<String, serde_json::Value>>(&body, "{}").expect_err("a repeated name");
        let shown = format!("{refused:?}");
        assert!(shown.contains("a`b: appears more than once"), "{shown}");
    }
}
