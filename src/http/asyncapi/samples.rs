//! Every frame of `chatd-proto` built with every field set, by struct
//! literals without `..`: a field added to a frame type does not compile
//! here until it is set, and the test of `tests.rs` then fails until the
//! document's schema and `full` example have it too.

use serde_json::{json, Value};
use uuid::Uuid;

use chatd_proto::protocol::{
    AckFrame, AttachmentObject, ChannelKind, ChannelState, ClientFrame, EntryKind, ErrorCode, ErrorFrame, MemberFrame,
    MemberOp, Notify, PresenceStatus, ReactOp, ReactionCount, ReceiptKind, RecvMessage, RemovedReason, ReplyPreview,
    Role, ServerFrame, TaggedMessage, ThreadSummary, TypingState, Visibility,
};

fn id() -> String {
    Uuid::now_v7().to_string()
}

/// Every client frame, each field set.
pub(super) fn client_frames() -> Vec<ClientFrame> {
    vec![
        ClientFrame::MsgSend {
            channel_id: "room".into(),
            client_msg_id: "k".into(),
            body: "b".into(),
            reply_to: Some(id()),
            thread_id: Some(id()),
            mentions: Some(vec![json!("bob")]),
            mention_all: Some(true),
            attachments: Some(vec![json!(id())]),
        },
        ClientFrame::MsgDelivered { message_id: id() },
        ClientFrame::MsgRead { message_id: id() },
        ClientFrame::Sync {
            channel_id: "room".into(),
            after_seq: Some(0),
            limit: Some(1),
            before_seq: Some(2),
            latest: Some(true),
            thread_id: Some(id()),
        },
        ClientFrame::MsgEdit {
            client_msg_id: "k".into(),
            message_id: id(),
            body: "b".into(),
        },
        ClientFrame::MsgDelete {
            client_msg_id: "k".into(),
            message_id: id(),
        },
        ClientFrame::MsgReact {
            client_msg_id: "k".into(),
            message_id: id(),
            emoji: "👍".into(),
            op: "add".into(),
        },
        ClientFrame::Typing {
            channel_id: "room".into(),
            state: "start".into(),
        },
        ClientFrame::PresenceSub {
            user_ids: vec![json!("bob")],
        },
    ]
}

fn channel_state() -> ChannelState {
    ChannelState {
        channel_id: "room".into(),
        last_seq: 1,
        delivered_seq: 1,
        read_seq: 1,
        unread: 0,
        name: Some("n".into()),
        metadata: Some(json!({"topic": "launch"})),
        kind: ChannelKind::Group,
        visibility: Visibility::Private,
        member_count: 1,
        role: Role::Member,
        unread_mentions: 0,
        notify: Notify::All,
        snooze_until: Some(1),
        posting_role: Role::Member,
        slow_mode_ms: 0,
        retention_secs: Some(1),
    }
}

fn recv_message() -> RecvMessage {
    let attachment_id = Uuid::now_v7();
    RecvMessage {
        message_id: Uuid::now_v7(),
        channel_id: "room".into(),
        sender_id: "alice".into(),
        seq: 1,
        body: "b".into(),
        ts: 1,
        client_msg_id: Some("k".into()),
        by_admin: true,
        kind: EntryKind::Message,
        target_id: Some(Uuid::now_v7()),
        emoji: Some("👍".into()),
        op: Some(ReactOp::Add),
        noop: true,
        edited_at: Some(1),
        deleted: true,
        expired: true,
        reactions: Some(vec![ReactionCount {
            emoji: "👍".into(),
            count: 1,
            me: true,
        }]),
        reply_to: Some(Uuid::now_v7()),
        reply_preview: Some(ReplyPreview {
            sender_id: "bob".into(),
            body: String::new(),
            deleted: true,
        }),
        thread_id: Some(Uuid::now_v7()),
        thread: Some(ThreadSummary {
            reply_count: 1,
            last_reply_at: 1,
            last_reply_seq: 1,
            participants: vec!["bob".into()],
        }),
        mentions: vec!["bob".into()],
        mention_all: true,
        attachments: vec![AttachmentObject {
            attachment_id,
            content_type: "image/png".into(),
            size: 1,
            filename: Some("f".into()),
            width: Some(1),
            height: Some(1),
            url: format!("/v1/attachments/{attachment_id}"),
            thumbnail_url: Some(format!("/v1/attachments/{attachment_id}/thumbnail")),
        }],
    }
}

/// Every server frame, each field set.
pub(super) fn server_frames() -> Vec<ServerFrame> {
    vec![
        ServerFrame::Hello {
            user_id: "alice".into(),
            session_id: id(),
            server_ts: 1,
            channels: vec![channel_state()],
        },
        ServerFrame::MsgAck(AckFrame {
            client_msg_id: "k".into(),
            message_id: Uuid::now_v7(),
            channel_id: "room".into(),
            seq: 1,
            ts: 1,
            duplicate: false,
        }),
        ServerFrame::MsgRecv(Box::new(recv_message())),
        ServerFrame::Receipt {
            channel_id: "room".into(),
            user_id: "bob".into(),
            kind: ReceiptKind::Read,
            message_id: Uuid::now_v7(),
            seq: 1,
            ts: 1,
        },
        ServerFrame::SyncBatch {
            channel_id: "room".into(),
            messages: vec![TaggedMessage::MsgRecv(recv_message())],
            has_more: false,
            last_seq: Some(1),
            thread_id: Some(Uuid::now_v7()),
        },
        ServerFrame::Error(ErrorFrame {
            code: ErrorCode::Forbidden,
            message: "m".into(),
            retryable: false,
            field: Some("channelId".into()),
            client_msg_id: Some("k".into()),
            message_id: Some(id()),
            channel_id: Some("room".into()),
            retry_after_ms: Some(1),
            reason: Some("muted".into()),
        }),
        ServerFrame::ChannelRemoved {
            channel_id: "room".into(),
            reason: Some(RemovedReason::Left),
        },
        ServerFrame::ChannelAdded {
            channel: channel_state(),
        },
        ServerFrame::ChannelSettings {
            channel_id: "room".into(),
            notify: Notify::Mentions,
            snooze_until: Some(1),
        },
        ServerFrame::ChannelUpdated {
            channel_id: "room".into(),
            name: Some("n".into()),
            metadata: Some(json!({"topic": "launch"})),
            visibility: Visibility::Public,
            posting_role: Role::Moderator,
            slow_mode_ms: 1,
            retention_secs: Some(1),
        },
        ServerFrame::Member(MemberFrame {
            channel_id: "room".into(),
            user_id: "bob".into(),
            op: MemberOp::Mute,
            role: Some(Role::Member),
            muted_until: Some(Some(1)),
            actor_id: Some("alice".into()),
            after_seq: 1,
            ts: 1,
        }),
        ServerFrame::Typing {
            channel_id: "room".into(),
            user_id: "bob".into(),
            state: TypingState::Start,
            expires_at: Some(1),
        },
        ServerFrame::Presence {
            user_id: "bob".into(),
            status: PresenceStatus::Offline,
            last_seen_at: Some(1),
        },
    ]
}

/// The field names of a frame at every depth: each scalar `null`, each
/// array its first element's shape.
pub(super) fn shape(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
        Value::Array(items) => Value::Array(items.first().map(shape).into_iter().collect()),
        _ => Value::Null,
    }
}

/// Every variant of an enum, as its wire values: the variants are listed once,
/// for an exhaustive `match` (a new variant does not compile until it is
/// listed) and for the list; those after `except` (a `#[serde(other)]`
/// catch-all chatd never sends) are matched but left out.
macro_rules! every {
    ($ty:ident: $($variant:ident),* $(; except $($other:ident),*)?) => {{
        let _exhaustive = |value: $ty| match value {
            $($ty::$variant => (),)*
            $($($ty::$other => (),)*)?
        };
        vec![$(serde_json::to_value($ty::$variant).expect("json")),*]
    }};
}

/// The `enum` of each schema property that carries one of `chatd-proto`'s
/// enums (a JSON pointer into the document), with every value the enum has
/// on the wire. (`postingRole` is a `Role` limited to two of its values, and
/// the client frames' `op` and `state` are strings the validator checks:
/// they are compared with the enums they are validated as.)
pub(super) fn enums() -> Vec<(&'static str, Vec<Value>)> {
    vec![
        (
            "/components/schemas/Error/properties/code",
            every!(ErrorCode: BadFrame, UnknownType, InvalidField, BodyTooLarge, Forbidden, NotFound, IdempotencyConflict, RateLimited, Unavailable, Internal),
        ),
        (
            "/components/schemas/MsgRecv/properties/kind",
            every!(EntryKind: Message, Edit, Delete, Reaction),
        ),
        (
            "/components/schemas/MsgRecv/properties/op",
            every!(ReactOp: Add, Remove),
        ),
        (
            "/components/schemas/MsgReact/properties/op",
            every!(ReactOp: Add, Remove),
        ),
        (
            "/components/schemas/Receipt/properties/kind",
            every!(ReceiptKind: Delivered, Read),
        ),
        (
            "/components/schemas/ServerTyping/properties/state",
            every!(TypingState: Start, Stop),
        ),
        (
            "/components/schemas/ClientTyping/properties/state",
            every!(TypingState: Start, Stop),
        ),
        (
            "/components/schemas/Presence/properties/status",
            every!(PresenceStatus: Online, Offline),
        ),
        (
            "/components/schemas/ChannelRemoved/properties/reason",
            every!(RemovedReason: Left, Removed, Banned, Deleted; except Other),
        ),
        (
            "/components/schemas/Member/properties/op",
            every!(MemberOp: Join, Leave, Role, Mute, Ban; except Other),
        ),
        (
            "/components/schemas/Member/properties/role",
            every!(Role: Member, Moderator, Owner),
        ),
        (
            "/components/schemas/ChannelState/properties/role",
            every!(Role: Member, Moderator, Owner),
        ),
        (
            "/components/schemas/ChannelState/properties/notify",
            every!(Notify: All, Mentions, None),
        ),
        (
            "/components/schemas/ChannelSettings/properties/notify",
            every!(Notify: All, Mentions, None),
        ),
        (
            "/components/schemas/ChannelState/properties/visibility",
            every!(Visibility: Private, Public),
        ),
        (
            "/components/schemas/ChannelUpdated/properties/visibility",
            every!(Visibility: Private, Public),
        ),
        (
            "/components/schemas/ChannelState/properties/kind",
            every!(ChannelKind: Group, Direct),
        ),
    ]
}
