//! JSON numbers in integer fields: the one rule for frames (§5) and HTTP
//! bodies and queries alike.
//!
//! JSON has one kind of number: `-0`, `3.0` or `1e3` in an integer field is
//! the integer it equals. serde_json reads them as floats, which a typed
//! decoder refuses, so every integer field goes through [`integer`] (or
//! [`optional_integer`] for a typed struct, [`integer_text`] for a query
//! value). A float with a fraction, or past ±2^53 (where it no longer names
//! one integer), is not an integer; nor is an integer past `i64`.
//!
//! Whether a number has a fraction is decided from its text
//! ([`integer_literal`]): the parsed `f64` of `0.99999999999999999` is 1.0
//! and that of `1e-400` is 0.0, yet neither is an integer. [`integer`] and
//! [`optional_integer`] only see the `f64`, so a reader holding the text
//! (a frame, a request body, a query) checks it with [`integer_literal`]
//! (the frame decoder and `parse_json` do, for top-level members).

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
/// integer (a leading `+` taken, as before), or a JSON number that is an
/// integer by [`integer_literal`] (`1e3`, `3.0`, `-0`). `None` otherwise
/// (`0x10`, `inf`, `1.5`, `2.9999999999999999`, an empty text).
pub fn integer_text(text: &str) -> Option<i64> {
    if let Ok(i) = text.parse::<i64>() {
        return Some(i);
    }
    integer_literal(text)
}

/// The integer the JSON number `text` (exactly one number token, RFC 8259
/// §6, no whitespace) equals, decided from its digits, never from a
/// rounded `f64`: `3.0`, `1e3`, `3.6e3`, `-0` are integers; `1.5`,
/// `0.99999999999999999` and `1e-400` are not. A number written with a
/// fraction or an exponent must be at most 2^53 in magnitude, as in
/// [`integer`]; one written as plain digits must fit `i64`. `None` for
/// anything else, including a text that is not a JSON number.
pub fn integer_literal(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let (negative, rest) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    let int_len = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    let (int_digits, rest) = rest.split_at(int_len);
    if int_digits.is_empty() || (int_digits.len() > 1 && int_digits[0] == b'0') {
        return None;
    }
    let (frac_digits, rest) = match rest.split_first() {
        Some((b'.', rest)) => {
            let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
            if n == 0 {
                return None;
            }
            rest.split_at(n)
        }
        _ => (&[][..], rest),
    };
    let (exponent, rest) = match rest.split_first() {
        Some((b'e' | b'E', rest)) => {
            let (sign, rest) = match rest.split_first() {
                Some((b'-', rest)) => (-1_i64, rest),
                Some((b'+', rest)) => (1, rest),
                _ => (1, rest),
            };
            let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
            if n == 0 {
                return None;
            }
            // Saturated: past a few thousand it only says "huge" or "tiny".
            let magnitude = rest[..n]
                .iter()
                .fold(0_i64, |acc, d| (acc * 10 + i64::from(d - b'0')).min(1_000_000));
            (sign * magnitude, &rest[n..])
        }
        _ => (0, rest),
    };
    if !rest.is_empty() {
        return None;
    }
    let plain = frac_digits.is_empty() && text.len() == int_digits.len() + usize::from(negative);
    // The value is `digits × 10^scale`, digits = the integer and fraction
    // digits together, without leading zeros.
    let all: Vec<u8> = int_digits.iter().chain(frac_digits).copied().collect();
    let first = all.iter().position(|&d| d != b'0');
    let Some(first) = first else {
        return Some(0); // 0, -0, 0.000, 0e-400
    };
    let digits = &all[first..];
    let trailing = digits.iter().rev().take_while(|&&d| d == b'0').count();
    let significant = &digits[..digits.len() - trailing];
    let frac_len = i64::try_from(frac_digits.len()).ok()?;
    let trailing = i64::try_from(trailing).ok()?;
    let scale = exponent - frac_len + trailing;
    if scale < 0 {
        return None; // a fraction, however small
    }
    let len = i64::try_from(significant.len()).ok()?;
    if len + scale > 19 {
        return None; // past i64 in any case
    }
    let mut value: i128 = significant.iter().fold(0, |acc, d| acc * 10 + i128::from(d - b'0'));
    for _ in 0..scale {
        value *= 10;
    }
    if negative {
        value = -value;
    }
    let most = if plain {
        i128::from(i64::MAX)
    } else {
        9_007_199_254_740_992
    };
    if value.abs() > most && !(plain && value == i128::from(i64::MIN)) {
        return None;
    }
    i64::try_from(value).ok()
}

/// The key of the first top-level member of the JSON object `text` whose
/// value is a number with a fraction that its parsed `f64` hides
/// (`0.99999999999999999`, `1e-400`): [`integer`] takes that `f64` as an
/// integer, [`integer_literal`] does not. `None` when there is none, or
/// when `text` is not one JSON object (its decoder refuses it anyway).
/// A reader that decodes an object to a `Value` or a typed struct, where
/// the numbers' text is gone, refuses such a member first.
pub fn hidden_fraction(text: &str) -> Option<String> {
    hidden_fraction_among(text, |_| true)
}

/// [`hidden_fraction`] among the top-level members whose key `wanted`
/// takes: a reader that ignores unknown members (an additive field of a
/// later version) looks only at the ones it reads.
pub fn hidden_fraction_among(text: &str, wanted: impl Fn(&str) -> bool) -> Option<String> {
    let members = crate::protocol::scan::object_members(text).ok()?;
    members
        .into_iter()
        .find(|m| {
            wanted(&m.key)
                && m.value.starts_with(|c: char| c == '-' || c.is_ascii_digit())
                && integer_literal(m.value).is_none()
                && serde_json::from_str::<Number>(m.value)
                    .ok()
                    .as_ref()
                    .and_then(integer)
                    .is_some()
        })
        .map(|m| m.key.into_owned())
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

    #[test]
    fn a_fraction_is_not_an_integer_even_when_its_double_is() {
        // The parsed f64 of each is integral; the number is not.
        for text in [
            "0.99999999999999999",
            "2.9999999999999999",
            "1e-400",
            "-1e-400",
            "1.0000000000000000001",
            "9007199254740993.0",
            "4503599627370495.5",
            "1.8000000000000000001e12",
            "12345e-2",
            "4.9999999999999999e0",
        ] {
            assert_eq!(integer_literal(text), None, "{text}");
            assert_eq!(integer_text(text), None, "{text}");
        }
        for (text, n) in [
            ("0", 0),
            ("-0", 0),
            ("0.000", 0),
            ("0e-400", 0),
            ("3.0", 3),
            ("1e3", 1000),
            ("1E+3", 1000),
            ("3.6e3", 3600),
            ("1.8e12", 1_800_000_000_000),
            ("100e-2", 1),
            ("-25.00e1", -250),
            ("0.5e1", 5),
            ("100000000000000000000e-20", 1),
            ("9007199254740992.0", 9_007_199_254_740_992),
            ("9223372036854775807", i64::MAX),
            ("-9223372036854775808", i64::MIN),
        ] {
            assert_eq!(integer_literal(text), Some(n), "{text}");
        }
        for text in [
            "",
            "-",
            "+1",
            "01",
            "1.",
            ".5",
            "1e",
            "1e+",
            "0x10",
            "inf",
            " 1",
            "1 ",
            "1e16",
            "9223372036854775808",
            "9007199254740993e0",
            "1e1000000000000000000000",
        ] {
            assert_eq!(integer_literal(text), None, "{text}");
        }
    }

    #[test]
    fn a_hidden_fraction_is_found_at_the_top_level_only() {
        for (text, key) in [
            (r#"{"a":1,"ttl":0.99999999999999999}"#, Some("ttl")),
            (r#"{"snoozeUntil" : 1e-400 }"#, Some("snoozeUntil")),
            (r#"{"a\u0062":2.9999999999999999}"#, Some("ab")),
            (
                r#"{"a":1.5,"b":3.0,"c":1e3,"d":-0,"e":1e16,"f":"0.99999999999999999"}"#,
                None,
            ),
            (r#"{"m":{"x":0.99999999999999999},"n":[1e-400]}"#, None),
            (r#"[0.99999999999999999]"#, None),
            (r#"{"a":0.99999999999999999"#, None),
        ] {
            assert_eq!(hidden_fraction(text).as_deref(), key, "{text}");
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
