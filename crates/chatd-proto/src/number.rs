//! JSON numbers in integer fields: the one rule for frames (§5) and HTTP
//! bodies and queries alike.
//!
//! JSON has one kind of number: `-0`, `3.0` or `1e3` in an integer field is
//! the integer it equals. serde_json reads them as floats, which a typed
//! decoder refuses, so every integer field goes through [`integer`] (or
//! [`optional_integer`] for a typed struct, [`integer_text`] for a query
//! value). A float with a fraction, or past ±2^53 (where it no longer names
//! one integer), is not an integer; nor is an integer past `i64`.

use serde::de::{Deserializer, Error, Unexpected, Visitor};
use serde_json::{Number, Value};

/// 2^53: every integer up to it in magnitude is exactly one `f64`.
const EXACT: f64 = 9_007_199_254_740_992.0;

/// The integer `n` equals: an integer as written, or an integral float of
/// magnitude at most 2^53 (`-0` is 0). `None` for a fraction, a float past
/// ±2^53, or an integer past `i64` (the caller's range check refuses those
/// as it refuses any other value out of its range).
pub fn integer(n: &Number) -> Option<i64> {
    if let Some(i) = n.as_i64() {
        return Some(i);
    }
    let f = n
        .as_f64()
        .filter(|f| n.is_f64() && f.fract() == 0.0 && f.abs() <= EXACT)?;
    // In range by the filter above, so the cast is exact.
    #[allow(clippy::cast_possible_truncation)]
    Some(f as i64)
}

/// [`integer`] of a JSON value: `None` for anything but such a number.
pub fn integer_value(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => integer(n),
        _ => None,
    }
}

/// A query parameter's text read as a number by the same rule: a decimal
/// integer (a leading `+` taken, as before), or a JSON number that
/// [`integer`] takes (`1e3`, `3.0`, `-0`). `None` otherwise (`0x10`, `inf`,
/// `1.5`, an empty text).
pub fn integer_text(text: &str) -> Option<i64> {
    if let Ok(i) = text.parse::<i64>() {
        return Some(i);
    }
    // Only the JSON number grammar: Rust's float parser also takes `inf`,
    // `NaN`, `.5` and `1.`, which are not JSON numbers. serde_json also
    // skips whitespace around a value, which a parameter never had.
    if text.trim_matches(|c: char| c.is_ascii_whitespace()) != text {
        return None;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Number(n)) => integer(&n),
        _ => None,
    }
}

/// `deserialize_with` for an optional integer field of a typed request body
/// (`#[serde(default, deserialize_with = "…")]`): absent or `null` is
/// `None`; a number is taken by [`integer`] and must fit `T` (a `u64` field
/// refuses a negative one).
///
/// # Errors
/// The deserializer's error for a value that is not such an integer.
pub fn optional_integer<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i64>,
{
    struct Integer<T>(std::marker::PhantomData<T>);

    impl<T: TryFrom<i64>> Integer<T> {
        fn fit<E: Error>(i: i64, shown: Unexpected<'_>) -> Result<Option<T>, E> {
            T::try_from(i)
                .map(Some)
                .map_err(|_| E::invalid_value(shown, &"an integer in range"))
        }
    }

    impl<'de, T: TryFrom<i64>> Visitor<'de> for Integer<T> {
        type Value = Option<T>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an integer or null")
        }

        fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D2: Deserializer<'de>>(self, deserializer: D2) -> Result<Self::Value, D2::Error> {
            deserializer.deserialize_any(self)
        }

        fn visit_i64<E: Error>(self, v: i64) -> Result<Self::Value, E> {
            Self::fit(v, Unexpected::Signed(v))
        }

        fn visit_u64<E: Error>(self, v: u64) -> Result<Self::Value, E> {
            let i = i64::try_from(v).map_err(|_| E::invalid_value(Unexpected::Unsigned(v), &"an integer in range"))?;
            Self::fit(i, Unexpected::Unsigned(v))
        }

        fn visit_f64<E: Error>(self, v: f64) -> Result<Self::Value, E> {
            let i = Number::from_f64(v)
                .as_ref()
                .and_then(integer)
                .ok_or_else(|| E::invalid_type(Unexpected::Float(v), &"an integer"))?;
            Self::fit(i, Unexpected::Float(v))
        }
    }

    deserializer.deserialize_option(Integer(std::marker::PhantomData))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str) -> Option<i64> {
        integer_value(&serde_json::from_str(text).expect("JSON"))
    }

    #[test]
    fn an_integral_number_is_that_integer_and_nothing_else_is() {
        for (text, n) in [
            ("0", 0),
            ("-0", 0),
            ("3.0", 3),
            ("1e3", 1000),
            ("6e1", 60),
            ("1.8e12", 1_800_000_000_000),
            ("-1", -1),
            ("9007199254740992.0", 9_007_199_254_740_992),
            ("9223372036854775807", i64::MAX),
        ] {
            assert_eq!(of(text), Some(n), "{text}");
        }
        for text in [
            "1.5",
            "-0.5",
            "1e-3",
            "1e16",
            "-1e16",
            "18446744073709551615",
            "\"3\"",
            "true",
            "null",
        ] {
            assert_eq!(of(text), None, "{text}");
        }
    }

    #[test]
    fn a_query_value_is_read_by_the_same_rule() {
        for (text, n) in [("+5", 5), ("-0", 0), ("1e3", 1000), ("3.0", 3), ("42", 42)] {
            assert_eq!(integer_text(text), Some(n), "{text}");
        }
        for text in [
            "", "1.5", "inf", "NaN", ".5", "1.", "0x10", " 1", "1 ", "\n1", "1e400", "\"1\"",
        ] {
            assert_eq!(integer_text(text), None, "{text}");
        }
    }

    #[derive(Debug, serde::Deserialize)]
    struct Body {
        #[serde(default, deserialize_with = "optional_integer")]
        ttl: Option<u64>,
    }

    #[test]
    fn a_typed_field_takes_integral_numbers_and_refuses_the_rest() {
        let read = |text: &str| serde_json::from_str::<Body>(text).map(|b| b.ttl);
        assert_eq!(read("{}").ok(), Some(None));
        assert_eq!(read(r#"{"ttl":null}"#).ok(), Some(None));
        assert_eq!(read(r#"{"ttl":3.6e3}"#).ok(), Some(Some(3600)));
        assert_eq!(read(r#"{"ttl":-0}"#).ok(), Some(Some(0)));
        assert_eq!(read(r#"{"ttl":7}"#).ok(), Some(Some(7)));
        for bad in [r#"{"ttl":1.5}"#, r#"{"ttl":-1}"#, r#"{"ttl":1e300}"#, r#"{"ttl":"7"}"#] {
            assert!(read(bad).is_err(), "{bad}");
        }
    }
}
