use crate::http::routes::document;

/// The properties and required ones of a component schema.
fn schema_fields(doc: &serde_json::Value, name: &str) -> (Vec<String>, Vec<String>) {
    let schema = &doc["components"]["schemas"][name];
    let mut properties: Vec<String> = schema["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("no schema {name}"))
        .keys()
        .cloned()
        .collect();
    properties.sort();
    let mut required: Vec<String> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    required.sort();
    (properties, required)
}

fn keys(value: &serde_json::Value) -> Vec<String> {
    let mut keys: Vec<String> = value.as_object().expect("an object").keys().cloned().collect();
    keys.sort();
    keys
}

/// The history entry schema names exactly the fields a real MSG_RECV
/// can have (every optional field set), and requires exactly those of a
/// plain message (the optional ones are left out when unset).
#[test]
fn the_history_message_schema_is_the_wire_type() {
    use chatd_proto::protocol::{EntryKind, ReactOp, ReactionCount, RecvMessage, TaggedMessage};
    let doc = serde_json::to_value(document()).expect("document");
    let plain = RecvMessage {
        message_id: uuid::Uuid::now_v7(),
        channel_id: "c".into(),
        sender_id: "u".into(),
        seq: 1,
        body: "b".into(),
        ts: 1,
        ..RecvMessage::default()
    };
    let full = RecvMessage {
        client_msg_id: Some("m".into()),
        by_admin: true,
        kind: EntryKind::Reaction,
        target_id: Some(uuid::Uuid::now_v7()),
        emoji: Some("👍".into()),
        op: Some(ReactOp::Add),
        noop: true,
        edited_at: Some(2),
        deleted: true,
        expired: true,
        reactions: Some(vec![ReactionCount {
            emoji: "👍".into(),
            count: 1,
            me: true,
        }]),
        mentions: vec!["u".into()],
        mention_all: true,
        ..plain.clone()
    };
    let wire = |m: RecvMessage| keys(&serde_json::to_value(TaggedMessage::MsgRecv(m)).expect("json"));
    let (properties, required) = schema_fields(&doc, "HistoryMessage");
    assert_eq!(properties, wire(full));
    assert_eq!(required, wire(plain));
    let (properties, required) = schema_fields(&doc, "ReactionCount");
    assert_eq!(properties, ["count", "emoji", "me"]);
    assert_eq!(required, ["count", "emoji", "me"]);
    let (properties, required) = schema_fields(&doc, "HistoryPage");
    assert_eq!(properties, ["hasMore", "lastSeq", "messages"]);
    assert_eq!(required, ["hasMore", "lastSeq", "messages"]);
}

/// The MSG_ACK schema (the answer of the backend send) is the wire
/// frame, every field required.
#[test]
fn the_message_ack_schema_is_the_wire_type() {
    use chatd_proto::protocol::{AckFrame, ServerFrame};
    let doc = serde_json::to_value(document()).expect("document");
    let frame = ServerFrame::MsgAck(AckFrame {
        client_msg_id: "m".into(),
        message_id: uuid::Uuid::now_v7(),
        channel_id: "c".into(),
        seq: 1,
        ts: 1,
        duplicate: false,
    });
    let wire = keys(&serde_json::from_str(&frame.encode()).expect("json"));
    let (properties, required) = schema_fields(&doc, "MessageAck");
    assert_eq!(properties, wire);
    assert_eq!(required, wire);
}

/// The `GET /v1/me/channels` entry schema is HELLO's channel state.
#[test]
fn the_my_channel_schema_is_the_wire_type() {
    let doc = serde_json::to_value(document()).expect("document");
    let state = chatd_proto::protocol::ChannelState {
        channel_id: "c".into(),
        last_seq: 1,
        delivered_seq: 1,
        read_seq: 0,
        unread: 1,
        name: None,
        metadata: None,
        kind: chatd_proto::protocol::ChannelKind::Group,
        visibility: chatd_proto::protocol::Visibility::Private,
        member_count: 1,
        role: chatd_proto::protocol::Role::Member,
        unread_mentions: 0,
        notify: chatd_proto::protocol::Notify::All,
        snooze_until: None,
        posting_role: chatd_proto::protocol::Role::Member,
        slow_mode_ms: 0,
        retention_secs: Some(86_400),
    };
    let wire = keys(&serde_json::to_value(state).expect("json"));
    let (properties, _) = schema_fields(&doc, "MyChannel");
    assert_eq!(properties, wire);
}

#[test]
fn the_document_is_openapi_3_1_with_the_error_shape_and_security() {
    let doc = serde_json::to_value(document()).expect("document");
    assert_eq!(doc["openapi"], "3.1.0");
    let (properties, required) = schema_fields(&doc, "ErrorDetail");
    assert_eq!(properties, ["code", "message"]);
    assert_eq!(required, ["code", "message"]);
    for scheme in ["adminToken", "userJwt", "accessToken"] {
        assert!(doc["components"]["securitySchemes"][scheme].is_object(), "{scheme}");
    }
}
