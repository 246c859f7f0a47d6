//! A JSON object read member by member without recursion ([`object_members`]):
//! for the decoder's fallback, when serde_json refuses a whole frame for a
//! reason that lies in a value the frame may not even have (a number beyond
//! f64, nesting past its recursion limit of 128). Values are checked for JSON
//! syntax (RFC 8259) but not evaluated; nesting is followed with a heap stack,
//! so any depth a frame can hold (64 KiB: ~32k levels) is skipped safely.

use std::borrow::Cow;

/// Why a text is not JSON: serde_json's category names, as the decoder
/// words its `bad_frame` refusals ("not valid JSON (syntax error)").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotJson {
    /// The text ends inside a value.
    Eof,
    /// Anything else that breaks the grammar.
    Syntax,
}

impl NotJson {
    /// The category as serde_json's `classify` names it in a refusal.
    pub(super) fn name(self) -> &'static str {
        match self {
            NotJson::Eof => "unexpected end of input",
            NotJson::Syntax => "syntax error",
        }
    }
}

/// One member of a JSON object: its key (escapes decoded) and its value's
/// text, exactly as given (no surrounding whitespace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member<'t> {
    pub key: Cow<'t, str>,
    pub value: &'t str,
}

/// The members of the JSON object `text`, in order, repeated keys included.
///
/// # Errors
/// [`NotJson`] when `text` (whole) is not one JSON object.
pub(crate) fn object_members(text: &str) -> Result<Vec<Member<'_>>, NotJson> {
    let b = text.as_bytes();
    let mut pos = expect(b, ws(b, 0), b'{')?;
    let mut members = Vec::new();
    pos = ws(b, pos);
    if b.get(pos) == Some(&b'}') {
        return end(b, pos + 1).map(|()| members);
    }
    loop {
        let key_end = string(b, pos)?;
        let key = key_of(&text[pos..key_end])?;
        let start = ws(b, expect(b, ws(b, key_end), b':')?);
        let value_end = skip_value(text, start)?;
        members.push(Member {
            key,
            value: &text[start..value_end],
        });
        pos = ws(b, value_end);
        match b.get(pos) {
            Some(b',') => pos = ws(b, pos + 1),
            Some(b'}') => return end(b, pos + 1).map(|()| members),
            Some(_) => return Err(NotJson::Syntax),
            None => return Err(NotJson::Eof),
        }
    }
}

/// Whether `text` (whole) is one JSON value of any depth.
pub(super) fn is_json(text: &str) -> bool {
    skip_value(text, ws(text.as_bytes(), 0)).is_ok_and(|pos| end(text.as_bytes(), pos).is_ok())
}

/// Offset just past the JSON value that starts at `pos`, its syntax checked.
/// Iterative: `stack` holds one flag per open container (`true`: object).
fn skip_value(text: &str, mut pos: usize) -> Result<usize, NotJson> {
    let b = text.as_bytes();
    let mut stack: Vec<bool> = Vec::new();
    loop {
        // A value starts at `pos` (whitespace already skipped).
        match b.get(pos) {
            Some(b'{') => {
                pos = ws(b, pos + 1);
                if b.get(pos) == Some(&b'}') {
                    pos += 1;
                } else {
                    stack.push(true);
                    pos = member_key(text, pos)?;
                    continue;
                }
            }
            Some(b'[') => {
                pos = ws(b, pos + 1);
                if b.get(pos) == Some(&b']') {
                    pos += 1;
                } else {
                    stack.push(false);
                    continue;
                }
            }
            Some(b'"') => {
                let string_end = string(b, pos)?;
                check_string(&text[pos..string_end])?;
                pos = string_end;
            }
            Some(b't') => pos = literal(b, pos, b"true")?,
            Some(b'f') => pos = literal(b, pos, b"false")?,
            Some(b'n') => pos = literal(b, pos, b"null")?,
            Some(b'-' | b'0'..=b'9') => pos = number(b, pos)?,
            Some(_) => return Err(NotJson::Syntax),
            None => return Err(NotJson::Eof),
        }
        // After a value: close containers until one goes on with a `,`.
        loop {
            let Some(&in_object) = stack.last() else {
                return Ok(pos);
            };
            pos = ws(b, pos);
            match (b.get(pos), in_object) {
                (Some(b','), true) => {
                    pos = member_key(text, ws(b, pos + 1))?;
                    break;
                }
                (Some(b','), false) => {
                    pos = ws(b, pos + 1);
                    break;
                }
                (Some(b'}'), true) | (Some(b']'), false) => {
                    stack.pop();
                    pos += 1;
                }
                (Some(_), _) => return Err(NotJson::Syntax),
                (None, _) => return Err(NotJson::Eof),
            }
        }
    }
}

/// A member's `"key" :` at `pos`: the offset of its value (whitespace skipped).
fn member_key(text: &str, pos: usize) -> Result<usize, NotJson> {
    let b = text.as_bytes();
    let key_end = string(b, pos)?;
    check_string(&text[pos..key_end])?;
    Ok(ws(b, expect(b, ws(b, key_end), b':')?))
}

/// Offset just past the string token at `pos` (its escapes checked by
/// [`check_string`] or [`key_of`], not here).
fn string(b: &[u8], pos: usize) -> Result<usize, NotJson> {
    if pos >= b.len() {
        return Err(NotJson::Eof);
    }
    if b[pos] != b'"' {
        return Err(NotJson::Syntax);
    }
    let mut i = pos + 1;
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => return Ok(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    Err(NotJson::Eof)
}

/// Checks a string token as serde_json reads one: control characters,
/// escapes, lone surrogates (the main path refuses those too).
fn check_string(token: &str) -> Result<(), NotJson> {
    struct Checked;
    impl<'de> serde::Deserialize<'de> for Checked {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct V;
            impl serde::de::Visitor<'_> for V {
                type Value = Checked;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("a string")
                }
                fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Checked, E> {
                    Ok(Checked)
                }
            }
            deserializer.deserialize_str(V)
        }
    }
    serde_json::from_str::<Checked>(token)
        .map(|_| ())
        .map_err(|_| NotJson::Syntax)
}

/// The text of a key token, escapes decoded (borrowed when it has none).
fn key_of(token: &str) -> Result<Cow<'_, str>, NotJson> {
    let inner = &token[1..token.len() - 1];
    if !inner.bytes().any(|c| c == b'\\' || c < 0x20) {
        return Ok(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(token)
        .map(Cow::Owned)
        .map_err(|_| NotJson::Syntax)
}

/// Offset past `word` at `pos`.
fn literal(b: &[u8], pos: usize, word: &[u8]) -> Result<usize, NotJson> {
    let got = &b[pos..(pos + word.len()).min(b.len())];
    if got == word {
        Ok(pos + word.len())
    } else if word.starts_with(got) {
        Err(NotJson::Eof)
    } else {
        Err(NotJson::Syntax)
    }
}

/// Offset past the number at `pos`: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`,
/// any magnitude.
fn number(b: &[u8], mut pos: usize) -> Result<usize, NotJson> {
    let digits = |mut i: usize| {
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        match b.get(i) {
            _ if i > start => Ok(i),
            None => Err(NotJson::Eof),
            Some(_) => Err(NotJson::Syntax),
        }
    };
    if b.get(pos) == Some(&b'-') {
        pos += 1;
    }
    pos = match b.get(pos) {
        Some(b'0') => pos + 1,
        _ => digits(pos)?,
    };
    if b.get(pos) == Some(&b'.') {
        pos = digits(pos + 1)?;
    }
    if matches!(b.get(pos), Some(b'e' | b'E')) {
        pos += 1;
        if matches!(b.get(pos), Some(b'+' | b'-')) {
            pos += 1;
        }
        pos = digits(pos)?;
    }
    Ok(pos)
}

/// Offset past `want` at `pos`.
fn expect(b: &[u8], pos: usize, want: u8) -> Result<usize, NotJson> {
    match b.get(pos) {
        Some(&c) if c == want => Ok(pos + 1),
        Some(_) => Err(NotJson::Syntax),
        None => Err(NotJson::Eof),
    }
}

/// Nothing but whitespace from `pos` on.
fn end(b: &[u8], pos: usize) -> Result<(), NotJson> {
    if ws(b, pos) == b.len() {
        Ok(())
    } else {
        Err(NotJson::Syntax)
    }
}

/// Offset of the first non-whitespace byte (RFC 8259 §2) from `pos`.
fn ws(b: &[u8], mut pos: usize) -> usize {
    while matches!(b.get(pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        pos += 1;
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_read_in_order_with_repeats_and_escaped_keys() {
        let text = r#" { "a" : 1 , "\u0062" : [ {"x": "}"} , -0.5e+3 ] , "a":"s\"" } "#;
        let members = object_members(text).unwrap();
        let pairs: Vec<(&str, &str)> = members.iter().map(|m| (&*m.key, m.value)).collect();
        assert_eq!(
            pairs,
            [("a", "1"), ("b", r#"[ {"x": "}"} , -0.5e+3 ]"#), ("a", r#""s\"""#)]
        );
        assert_eq!(object_members("{}").unwrap(), []);
    }

    #[test]
    fn any_depth_is_skipped_without_recursion() {
        let deep = format!(r#"{{"x":{}1{},"y":2}}"#, "[".repeat(30_000), "]".repeat(30_000));
        let members = object_members(&deep).unwrap();
        assert_eq!(members[1].value, "2");
        let objects = format!(r#"{{"x":{}null{}}}"#, r#"{"k":"#.repeat(30_000), "}".repeat(30_000));
        assert!(object_members(&objects).is_ok());
        // unclosed, or closed by the wrong bracket
        let open = format!(r#"{{"x":{}"#, "[".repeat(30_000));
        assert_eq!(object_members(&open), Err(NotJson::Eof));
        assert_eq!(object_members(r#"{"x":[1}}"#), Err(NotJson::Syntax));
    }

    #[test]
    fn what_serde_json_refuses_is_refused() {
        for text in [
            r#"{"x":01}"#,
            r#"{"x":1.}"#,
            r#"{"x":-}"#,
            r#"{"x":+1}"#,
            r#"{"x":.5}"#,
            r#"{"x":1e}"#,
            r#"{"x":tru}"#,
            r#"{"x":nul,"y":1}"#,
            r#"{"x":[1,]}"#,
            r#"{"x":{"a":1,}}"#,
            r#"{"x":{"a"}}"#,
            r#"{"x":"\ud800"}"#,
            "{\"x\":\"a\u{1}b\"}",
            r#"{"x":"\q"}"#,
            r#"{"x":1,}"#,
            r#"{"x":1} x"#,
            r#"{"x" 1}"#,
            r#"{1:1}"#,
            "",
        ] {
            assert!(object_members(text).is_err(), "{text}");
            assert!(serde_json::from_str::<serde_json::Value>(text).is_err(), "{text}");
        }
        assert!(object_members(r#"{"x":1e400,"y":-1E-999,"z":[true,false,null,"\u00e9"]}"#).is_ok());
        assert!(object_members(r#"["x"]"#).is_err());
        assert!(!is_json(&"[".repeat(100)));
        assert!(is_json(&format!("{}{}", "[".repeat(200), "]".repeat(200))));
    }

    proptest::proptest! {
        /// The scanner and serde_json agree on what is a JSON object, on
        /// texts made of JSON's own characters (serde_json within its depth
        /// and number range: the texts stay shallow and short).
        #[test]
        fn the_scanner_agrees_with_serde_json(text in r#"\{[ \[\]{}",:0-9eE.+\-a-z\\]{0,40}"#) {
            let serde = serde_json::from_str::<serde_json::Value>(&text);
            let agree = match &serde {
                Ok(value) => object_members(&text).is_ok() == value.is_object(),
                Err(e) if e.to_string().starts_with("number out of range") => object_members(&text).is_ok(),
                Err(_) => object_members(&text).is_err(),
            };
            proptest::prop_assert!(agree, "{text}: {serde:?} vs {:?}", object_members(&text));
        }

        /// The same near valid JSON: one character of a valid object
        /// deleted, replaced or inserted.
        #[test]
        fn the_scanner_agrees_with_serde_json_one_edit_away(
            at in 0usize..70,
            edit in 0u8..3,
            c in proptest::sample::select(r#"{}[]",:0-9eE.+-tfnul\ x"#.chars().collect::<Vec<_>>()),
        ) {
            let base = r#"{"a":[1,-2.5e3,{"b":"c\n"},[]],"d":true,"e":null,"f":"\u00e9x","g":{}}"#;
            let mut chars: Vec<char> = base.chars().collect();
            let at = at % chars.len();
            match edit {
                0 => { chars.remove(at); }
                1 => chars[at] = c,
                _ => chars.insert(at, c),
            }
            let text: String = chars.into_iter().collect();
            let serde = serde_json::from_str::<serde_json::Value>(&text);
            let agree = match &serde {
                Ok(value) => object_members(&text).is_ok() == value.is_object(),
                Err(e) if e.to_string().starts_with("number out of range") => object_members(&text).is_ok(),
                Err(_) => object_members(&text).is_err(),
            };
            proptest::prop_assert!(agree, "{text}: {serde:?} vs {:?}", object_members(&text));
        }
    }
}
