//! The AsyncAPI document against the frame types of `chatd-proto`: its
//! messages are exactly the frame types, and its examples and schemas are
//! what the codec decodes and encodes (see the module's comment).

use serde_json::Value;

use chatd_proto::protocol::{decode_client_frame, ClientFrame, ServerFrame};

use super::*;

/// Which side sends a frame: chatd receives the client frames
/// (`receiveClientFrame`) and sends the server frames (`sendServerFrame`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Side {
    Client,
    Server,
}

impl Side {
    const BOTH: [Side; 2] = [Side::Client, Side::Server];

    fn operation(self) -> &'static str {
        match self {
            Side::Client => "receiveClientFrame",
            Side::Server => "sendServerFrame",
        }
    }

    fn type_names(self) -> &'static [&'static str] {
        match self {
            Side::Client => ClientFrame::TYPE_NAMES,
            Side::Server => ServerFrame::TYPE_NAMES,
        }
    }

    /// The frame as the codec of this side reads it and writes it back;
    /// `None` when the codec refuses it.
    fn round_trip(self, frame: &Value) -> Option<Value> {
        let text = frame.to_string();
        match self {
            Side::Client => decode_client_frame(&text)
                .ok()
                .map(|f| serde_json::to_value(f).expect("a client frame encodes")),
            Side::Server => ServerFrame::decode(&text)
                .ok()
                .map(|f| serde_json::from_str(&f.encode()).expect("a server frame encodes")),
        }
    }
}

fn document() -> Value {
    serde_json::from_str(DOCUMENT).expect("the document is JSON")
}

/// `#/a/b` read in `doc`.
fn pointer<'a>(doc: &'a Value, reference: &str) -> &'a Value {
    let path = reference
        .strip_prefix('#')
        .unwrap_or_else(|| panic!("{reference}: only references inside the document"));
    doc.pointer(path)
        .unwrap_or_else(|| panic!("{reference}: nothing there"))
}

/// `value`, or what it refers to when it is a `{"$ref"}`.
fn resolve<'a>(doc: &'a Value, value: &'a Value) -> &'a Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(reference) => pointer(doc, reference),
        None => value,
    }
}

/// The messages of one side's operation: (message id, message).
fn messages(doc: &Value, side: Side) -> Vec<(String, &Value)> {
    let operation = &doc["operations"][side.operation()];
    assert_eq!(
        operation["action"],
        if side == Side::Client { "receive" } else { "send" }
    );
    operation["messages"]
        .as_array()
        .expect("the operation's messages")
        .iter()
        .map(|m| {
            let reference = m["$ref"].as_str().expect("a reference to a channel's message");
            let id = reference.rsplit('/').next().expect("an id").to_owned();
            (id, resolve(doc, pointer(doc, reference)))
        })
        .collect()
}

/// The frame type a message describes: its payload's `type` constant.
fn frame_type(doc: &Value, message: &Value) -> String {
    let payload = resolve(doc, &message["payload"]);
    let name = payload["properties"]["type"]["const"]
        .as_str()
        .expect("the payload's `type` is a constant")
        .to_owned();
    assert_eq!(message["name"], name.as_str(), "a message is named by its frame type");
    name
}

/// A message's examples: (`full`, `minimal`); `minimal` is `full` when the
/// frame has no optional field.
fn examples(message: &Value) -> (&Value, &Value) {
    let named = |name: &str| {
        message["examples"]
            .as_array()
            .expect("examples")
            .iter()
            .find(|e| e["name"] == name)
            .map(|e| &e["payload"])
    };
    let full = named("full").expect("a `full` example");
    (full, named("minimal").unwrap_or(full))
}

fn sorted(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut names: Vec<String> = names.into_iter().collect();
    names.sort();
    names
}

/// The JSON Schema type of a value (`integer` for whole numbers).
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether an example is to hold every property (`full`) or only the
/// required ones (`minimal`) of each object in it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Example {
    Full,
    Minimal,
}

/// Checks `value` against `schema`: its JSON type, `const` and `enum`, and
/// for an object with `properties`, that its keys are all of them (`Full`)
/// or exactly the `required` ones (`Minimal`); then each property and array
/// element the same way. Pushes the JSON pointer of every such object.
fn walk(doc: &Value, schema: &Value, value: &Value, at: &str, example: Example, objects: &mut Vec<String>) {
    let schema = resolve(doc, schema);
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        other => panic!("{at}: a schema without a type ({other})"),
    };
    assert!(
        types.contains(&json_type(value)),
        "{at}: {value} is not of the schema's type {types:?}"
    );
    if let Some(constant) = schema.get("const") {
        assert_eq!(value, constant, "{at}");
    }
    if let Some(values) = schema["enum"].as_array() {
        assert!(values.contains(value), "{at}: {value} is not one of {values:?}");
    }
    match value {
        Value::Object(map) if schema.get("properties").is_some() => {
            let properties = sorted(schema["properties"].as_object().expect("properties").keys().cloned());
            let required = sorted(
                schema["required"]
                    .as_array()
                    .expect("required")
                    .iter()
                    .map(|r| r.as_str().expect("a name").to_owned()),
            );
            assert!(
                required.iter().all(|r| properties.contains(r)),
                "{at}: required names a property the schema does not have"
            );
            let keys = sorted(map.keys().cloned());
            match example {
                Example::Full => assert_eq!(keys, properties, "{at}: the full example has every property"),
                Example::Minimal => assert_eq!(keys, required, "{at}: the minimal example has the required ones"),
            }
            for (key, field) in map {
                walk(
                    doc,
                    &schema["properties"][key],
                    field,
                    &format!("{at}/{key}"),
                    example,
                    objects,
                );
            }
            objects.push(at.to_owned());
        }
        Value::Array(items) => {
            assert!(
                example == Example::Minimal || !items.is_empty(),
                "{at}: the full example fills every array"
            );
            for (i, item) in items.iter().enumerate() {
                walk(doc, &schema["items"], item, &format!("{at}/{i}"), example, objects);
            }
        }
        _ => {}
    }
}

/// Every frame type of `chatd-proto` has its message in the document, on
/// the side that sends it, and every message of the document is a frame
/// type: a frame added to `ClientFrame` or `ServerFrame` without its
/// description fails here.
#[test]
fn every_frame_type_has_a_message_and_every_message_is_a_frame_type() {
    let doc = document();
    let mut all = Vec::new();
    for side in Side::BOTH {
        let messages = messages(&doc, side);
        let documented = sorted(messages.iter().map(|(_, m)| frame_type(&doc, m)));
        let types = sorted(side.type_names().iter().map(|t| (*t).to_owned()));
        assert_eq!(
            documented, types,
            "{side:?} frames: the document's messages and chatd-proto's types"
        );
        all.extend(messages.into_iter().map(|(id, _)| id));
    }
    // The channel carries those messages and no other, and every message of
    // the components is one of them.
    let channel = doc["channels"]["gateway"]["messages"]
        .as_object()
        .expect("the channel's messages");
    assert_eq!(sorted(channel.keys().cloned()), sorted(all.clone()));
    let components = doc["components"]["messages"].as_object().expect("components.messages");
    assert_eq!(sorted(components.keys().cloned()), sorted(all));
    assert_eq!(doc["asyncapi"], "3.0.0");
    assert_eq!(doc["channels"]["gateway"]["address"], "/v1/ws");
}

/// Each example is a frame as chatd's codec reads and writes it: decoded by
/// the side's codec and encoded back to the same JSON (a field the codec
/// does not know would be dropped; one it always writes would be added).
#[test]
fn every_example_is_a_frame_the_codec_writes_as_it_is() {
    let doc = document();
    for side in Side::BOTH {
        for (id, message) in messages(&doc, side) {
            let (full, minimal) = examples(message);
            for example in [full, minimal] {
                assert_eq!(side.round_trip(example).as_ref(), Some(example), "{id}: {example}");
            }
        }
    }
}

/// Each payload schema names exactly the fields of the frame: the `full`
/// example has every property of every object in it (and is a real frame,
/// above), the `minimal` one exactly the required ones, each of the
/// schema's JSON type.
#[test]
fn every_schema_names_exactly_the_fields_of_its_frame() {
    let doc = document();
    for side in Side::BOTH {
        for (id, message) in messages(&doc, side) {
            let (full, minimal) = examples(message);
            let mut objects = Vec::new();
            walk(&doc, &message["payload"], full, &id, Example::Full, &mut objects);
            walk(&doc, &message["payload"], minimal, &id, Example::Minimal, &mut objects);
        }
    }
}

/// A property is in `required` exactly when the codec needs it: at every
/// object of each `full` example, leaving out a required property makes the
/// codec refuse the frame or write the property back (a field it always
/// sends), and leaving out an optional one gives a frame it writes as it is.
#[test]
fn required_is_what_the_codec_needs_and_always_writes() {
    let doc = document();
    for side in Side::BOTH {
        for (id, message) in messages(&doc, side) {
            let (full, _) = examples(message);
            let mut objects = Vec::new();
            walk(&doc, &message["payload"], full, &id, Example::Full, &mut objects);
            for at in objects {
                let inside = at.strip_prefix(id.as_str()).expect("a pointer under the message");
                let schema = schema_at(&doc, &message["payload"], inside);
                let required: Vec<&str> = schema["required"]
                    .as_array()
                    .expect("required")
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                let object = full.pointer(inside).and_then(Value::as_object).expect("an object");
                for key in object.keys() {
                    let mut without = full.clone();
                    if let Some(Value::Object(o)) = without.pointer_mut(inside) {
                        o.remove(key);
                    }
                    let kept = side.round_trip(&without).as_ref() == Some(&without);
                    if required.contains(&key.as_str()) {
                        assert!(
                            !kept,
                            "{at}/{key} is required, but the codec reads and writes a frame without it"
                        );
                    } else {
                        assert!(
                            kept,
                            "{at}/{key} is optional, but a frame without it is refused or gets it back"
                        );
                    }
                }
            }
        }
    }
}

/// The schema of the object at `inside` (a JSON pointer into an example).
fn schema_at<'a>(doc: &'a Value, payload: &'a Value, inside: &str) -> &'a Value {
    let mut schema = resolve(doc, payload);
    for step in inside.split('/').filter(|s| !s.is_empty()) {
        schema = if step.parse::<usize>().is_ok() && schema.get("items").is_some() {
            resolve(doc, &schema["items"])
        } else {
            resolve(doc, &schema["properties"][step])
        };
    }
    schema
}

/// Every field of every frame type is in the document: each frame of
/// `samples.rs` (built with every field set, by struct literals a new field
/// does not compile without) has the field names, at every depth, of its
/// message's `full` example, whose schema the tests above tie to it.
#[test]
fn every_field_of_every_frame_type_is_in_its_full_example() {
    let doc = document();
    for side in Side::BOTH {
        let frames: Vec<(String, Value)> = match side {
            Side::Client => super::samples::client_frames()
                .into_iter()
                .map(|f| (f.type_name().to_owned(), serde_json::to_value(f).expect("json")))
                .collect(),
            Side::Server => super::samples::server_frames()
                .into_iter()
                .map(|f| {
                    (
                        f.type_name().to_owned(),
                        serde_json::from_str(&f.encode()).expect("json"),
                    )
                })
                .collect(),
        };
        let built = sorted(frames.iter().map(|(t, _)| t.clone()));
        let types = sorted(side.type_names().iter().map(|t| (*t).to_owned()));
        assert_eq!(built, types, "{side:?}: samples.rs builds one frame of each type");
        let messages = messages(&doc, side);
        for (type_name, frame) in frames {
            let (id, message) = messages
                .iter()
                .find(|(_, m)| frame_type(&doc, m) == type_name)
                .expect("a message for each type");
            let (full, _) = examples(message);
            assert_eq!(
                super::samples::shape(full),
                super::samples::shape(&frame),
                "{id}: the full example's fields and those of the frame type"
            );
        }
    }
}

/// Each schema `enum` that stands for an enum of `chatd-proto` lists exactly
/// its wire values (`samples::enums`: a new variant does not compile there
/// until it is listed, and then fails here until the document has it).
#[test]
fn every_enum_lists_exactly_the_values_of_its_type() {
    let doc = document();
    for (at, values) in super::samples::enums() {
        let documented = doc
            .pointer(at)
            .and_then(|p| p["enum"].as_array())
            .unwrap_or_else(|| panic!("{at}: no enum"));
        let text = |v: &[Value]| sorted(v.iter().map(Value::to_string));
        assert_eq!(text(documented), text(&values), "{at}");
    }
}

/// The route serves the file as it is, as JSON.
#[tokio::test]
async fn the_route_serves_the_document() {
    let response = asyncapi_json().await;
    assert_eq!(response.status(), axum::http::StatusCode::OK);
    assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("the body");
    assert_eq!(body, DOCUMENT.as_bytes());
}
