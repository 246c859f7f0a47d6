//! The first decoding step of a client frame ([`decode_client_frame`]):
//! JSON, the `type` tag, each field's JSON type, with the spec's code and
//! field for a refusal. The frames themselves are `client.rs`.

use serde_json::{Map, Value};

use super::client::{Kind, CLIENT_TYPES};
use super::scan;
use super::*;
use crate::ids::ClientMsgId;

/// Decodes one text frame into a [`ClientFrame`].
///
/// # Errors
/// [`FrameError::BadFrame`] when the text is not a JSON object with a string
/// `type`; [`FrameError::UnknownType`]; [`FrameError::InvalidField`] naming the
/// first required field that is missing or of the wrong JSON type.
pub fn decode_client_frame(text: &str) -> Result<ClientFrame, FrameError> {
    // Fast path: one pass straight into the typed frame. Only a refusal takes
    // the slower path below, which finds the spec's code and the field. serde
    // reads a tagged enum from a JSON array too (`["MSG_SEND","room","k","hi"]`
    // would be taken as a send), and a frame is an object (the spec), so the
    // fast path takes objects only.
    // serde's tagged enum takes the last of two `type` keys without a word,
    // so a text naming `"type"` more than once (rare: the name can also be
    // a key inside a field's value) takes the slow path, which checks.
    let typed = match is_json_object(text).then(|| serde_json::from_str::<ClientFrame>(text)) {
        Some(Ok(frame)) if text.matches("\"type\"").nth(1).is_none() => return Ok(frame),
        Some(Ok(_)) => None,
        Some(Err(e)) => Some(e),
        None => return Err(FrameError::BadFrame(not_an_object(text))),
    };
    let (map, repeated) = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => (map, None),
        Ok(_) => return Err(FrameError::BadFrame("not a JSON object".into())),
        Err(e) => known_fields(text, &e)?,
    };
    // Which `type` counts must not depend on the parser either (`Map` keeps
    // the last value, a proxy may take the first).
    if type_given_twice(text) {
        return Err(FrameError::InvalidField {
            field: "type",
            reason: "appears more than once".into(),
            client_msg_id: valid_client_msg_id(&map),
        });
    }
    let Some(typed) = typed else {
        // Decoded, with one top-level `type`: the other `"type"`s are inside values.
        return serde_json::from_value(Value::Object(map))
            .map_err(|e| FrameError::BadFrame(format!("cannot decode frame ({})", e.classify_name())));
    };
    let Some(Value::String(ty)) = map.get("type") else {
        return Err(FrameError::BadFrame("no string field \"type\"".into()));
    };
    let Some((_, fields)) = CLIENT_TYPES.iter().find(|(name, _)| name == ty) else {
        return Err(FrameError::UnknownType);
    };
    let mut map = map;
    integral_numbers_as_integers(text, &mut map, fields);
    if let Some(err) = check_field_kinds(&map, fields) {
        return Err(err);
    }
    // The typed decoder refuses a field given twice, where `Map` keeps the
    // last value: refuse it here too, so which value counts never depends on
    // the parser (RFC 8259 §4 leaves repeated names unspecified). Read from
    // the keys, not from the typed decoder's error, which names another
    // fault when one comes first (`"body":1,"body":"b"`).
    let repeated = repeated.or_else(|| {
        repeated_field(&typed, fields).or_else(|| {
            scan::object_members(text)
                .ok()
                .and_then(|members| first_repeated(&members, fields))
        })
    });
    if let Some(field) = repeated {
        return Err(FrameError::InvalidField {
            field,
            reason: "appears more than once".into(),
            client_msg_id: valid_client_msg_id(&map),
        });
    }
    serde_json::from_value(Value::Object(map))
        .map_err(|e| FrameError::BadFrame(format!("cannot decode frame ({})", e.classify_name())))
}

/// The frame object `text` with `type` and its type's fields only, and the
/// first of those given more than once, for a text serde_json cannot read
/// whole as a [`Value`] (`parse_error`) for a reason that may lie in a field
/// the frame does not have, which is ignored like any unknown field (§5): a
/// number beyond f64 (`"extra": 1e400`) or nesting past serde_json's
/// recursion limit (128). The text is read member by member
/// ([`scan::object_members`], iterative, any depth): skipped values are
/// checked for syntax, not evaluated; only the kept ones must be readable.
///
/// # Errors
/// `bad_frame` "not valid JSON" when the text is not JSON at all;
/// `invalid_field` naming a field of the frame that holds such a number or
/// is nested past the limit (for a string, integer or boolean field, its
/// kind's refusal, as at any depth; for an array field, "is nested too deep").
fn known_fields(
    text: &str,
    parse_error: &serde_json::Error,
) -> Result<(Map<String, Value>, Option<&'static str>), FrameError> {
    // Only these are forgiven in a skipped field; anything else serde_json
    // refuses (a lone surrogate, bad syntax) stays `bad_frame`.
    if !(out_of_range(parse_error) || too_deep(parse_error)) {
        return Err(FrameError::BadFrame(format!(
            "not valid JSON ({})",
            parse_error.classify_name()
        )));
    }
    let members =
        scan::object_members(text).map_err(|e| FrameError::BadFrame(format!("not valid JSON ({})", e.name())))?;
    // The last `type` as a string (a repeated one is refused by the caller).
    let ty = members
        .iter()
        .rev()
        .find(|m| m.key == "type")
        .and_then(|m| serde_json::from_str::<String>(m.value).ok());
    let fields = ty
        .as_deref()
        .and_then(|ty| CLIENT_TYPES.iter().find(|(name, _)| *name == ty))
        .map_or(&[][..], |(_, fields)| *fields);
    let client_msg_id = || {
        members
            .iter()
            .rev()
            .find(|m| m.key == "clientMsgId")
            .and_then(|m| serde_json::from_str::<String>(m.value).ok())
            .filter(|id| ClientMsgId::parse(id).is_ok())
    };
    let mut kept = Map::new();
    for member in &members {
        if member.key == "type" {
            // Anything but a string is left out: "no string field type".
            if let Some(ty) = &ty {
                kept.insert("type".to_owned(), Value::String(ty.clone()));
            }
            continue;
        }
        let Some((field, kind, _)) = fields.iter().find(|(field, _, _)| *field == member.key) else {
            continue;
        };
        match serde_json::from_str::<Value>(member.value) {
            Ok(value) => {
                kept.insert((*field).to_owned(), value);
            }
            Err(e) => {
                let reason = match kind {
                    _ if !(out_of_range(&e) || too_deep(&e)) => {
                        return Err(FrameError::BadFrame(format!("not valid JSON ({})", e.classify_name())))
                    }
                    Kind::Str => "must be a string",
                    Kind::Bool => "must be true or false",
                    Kind::Int if too_deep(&e) => "must be an integer",
                    Kind::Array if too_deep(&e) => "is nested too deep",
                    Kind::Int | Kind::Array => "holds a number out of range",
                };
                return Err(FrameError::InvalidField {
                    field,
                    reason: reason.into(),
                    client_msg_id: client_msg_id(),
                });
            }
        }
    }
    Ok((kept, first_repeated(&members, fields)))
}

/// Whether serde_json refused a number beyond f64.
fn out_of_range(e: &serde_json::Error) -> bool {
    e.to_string().starts_with("number out of range")
}

/// Whether serde_json refused nesting past its recursion limit (128).
fn too_deep(e: &serde_json::Error) -> bool {
    e.to_string().starts_with("recursion limit exceeded")
}

/// The first of `type` and `fields` whose key comes a second time among
/// `members` (in the order of the second occurrences, as serde's typed
/// decoder meets them).
fn first_repeated(members: &[scan::Member<'_>], fields: &[(&'static str, Kind, bool)]) -> Option<&'static str> {
    let own = std::iter::once("type").chain(fields.iter().map(|(field, _, _)| *field));
    let mut seen: Vec<&str> = Vec::new();
    for member in members {
        if let Some(field) = own.clone().find(|field| *field == member.key) {
            if seen.contains(&field) {
                return Some(field);
            }
            seen.push(field);
        }
    }
    None
}

/// Whether the JSON object `text` has the top-level key `type` more than
/// once (read key by key, values skipped, any depth; `false` when it is
/// not an object).
fn type_given_twice(text: &str) -> bool {
    scan::object_members(text).is_ok_and(|members| members.iter().filter(|m| m.key == "type").count() > 1)
}

/// Whether `text` starts, after JSON whitespace (RFC 8259 §2), with `{`:
/// the only JSON value that can be a frame is an object.
pub(super) fn is_json_object(text: &str) -> bool {
    text.trim_start_matches([' ', '\t', '\n', '\r']).starts_with('{')
}

/// The refusal of a text that is not a JSON object: whether it is JSON at all.
fn not_an_object(text: &str) -> String {
    // Read iteratively: a JSON array nested past serde_json's limit is
    // still JSON, and still not an object.
    match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Ok(_) => "not a JSON object".into(),
        Err(_) if scan::is_json(text) => "not a JSON object".into(),
        Err(e) => format!("not valid JSON ({})", e.classify_name()),
    }
}

/// The frame's `clientMsgId` when it is a valid id, to echo in a refusal.
fn valid_client_msg_id(map: &Map<String, Value>) -> Option<String> {
    map.get("clientMsgId")
        .and_then(Value::as_str)
        .filter(|s| ClientMsgId::parse(s).is_ok())
        .map(str::to_owned)
}

/// The field of `fields` (or `type`) that serde's "duplicate field" error
/// names, if that is what `error` is.
fn repeated_field(error: &serde_json::Error, fields: &[(&'static str, Kind, bool)]) -> Option<&'static str> {
    let message = error.to_string();
    let name = message.strip_prefix("duplicate field `")?.split('`').next()?;
    std::iter::once("type")
        .chain(fields.iter().map(|(field, _, _)| *field))
        .find(|field| *field == name)
}

/// JSON has one kind of number: `-0`, `3.0` or `3e0` in an integer field
/// is the integer it equals, but serde_json reads them as floats, which the
/// typed decoder refuses. Rewritten as integers here by the shared rule,
/// decided from the number's text in the frame `text`
/// ([`crate::number::integer_literal`], which HTTP bodies use too: the
/// parsed `f64` of `0.99999999999999999` is 1.0); a fraction, or a float
/// past ±2^53 (where it no longer names one integer), is left for
/// [`check_field_kinds`] to refuse.
fn integral_numbers_as_integers(text: &str, map: &mut Map<String, Value>, fields: &[(&'static str, Kind, bool)]) {
    let mut members = None;
    for (field, kind, _) in fields {
        let Some(Value::Number(n)) = map.get(*field) else {
            continue;
        };
        if !(n.is_f64() && matches!(kind, Kind::Int)) {
            continue;
        }
        // `Map` keeps the last of a repeated key (refused below anyway).
        let members = members.get_or_insert_with(|| scan::object_members(text).unwrap_or_default());
        let written = members.iter().rev().find(|m| m.key == *field).map(|m| m.value);
        if let Some(i) = written.and_then(crate::number::integer_literal) {
            map.insert((*field).to_owned(), Value::from(i));
        }
    }
}

fn check_field_kinds(map: &Map<String, Value>, fields: &[(&'static str, Kind, bool)]) -> Option<FrameError> {
    let client_msg_id = valid_client_msg_id(map);
    for (field, kind, required) in fields {
        let reason = match (map.get(*field), kind) {
            (None | Some(Value::Null), _) if !required => continue,
            (None, _) => "is required",
            (Some(Value::String(_)), Kind::Str) => continue,
            (Some(Value::Number(n)), Kind::Int) if n.is_i64() => continue,
            (Some(Value::Number(n)), Kind::Int) if n.is_u64() => "is out of range",
            (Some(Value::Bool(_)), Kind::Bool) => continue,
            (Some(Value::Array(_)), Kind::Array) => continue,
            (Some(_), Kind::Str) => "must be a string",
            (Some(_), Kind::Int) => "must be an integer",
            (Some(_), Kind::Bool) => "must be true or false",
            (Some(_), Kind::Array) => "must be an array",
        };
        return Some(FrameError::InvalidField {
            field,
            reason: reason.into(),
            client_msg_id,
        });
    }
    None
}

trait ClassifyName {
    fn classify_name(&self) -> &'static str;
}

impl ClassifyName for serde_json::Error {
    fn classify_name(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "io",
            serde_json::error::Category::Syntax => "syntax error",
            serde_json::error::Category::Data => "unexpected data",
            serde_json::error::Category::Eof => "unexpected end of input",
        }
    }
}
