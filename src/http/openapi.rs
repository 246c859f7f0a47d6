//! The OpenAPI 3.1 document of the HTTP API, served at `GET /v1/openapi.json`
//! (the route and the document built from the routes are in `routes.rs`).
//!
//! Generated from the route definitions: every route is registered through
//! [`utoipa_axum::router::OpenApiRouter::routes`] (see `super::routes::api_routes`),
//! which adds the handler's `#[utoipa::path]` annotation to the document and
//! the handler to the router in one call, so a route cannot be served without
//! being documented. The shapes here are the ones the handlers build as JSON
//! values (`serde_json::json!`) and so have no Rust type of their own; the
//! tests below compare each with what the code really sends.

use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{IntoParams, Modify, OpenApi, ToSchema};

/// The error shape of every refusal: `{"error": {"code", "message"}}`.
#[derive(Debug, ToSchema)]
#[allow(dead_code)] // a schema: the body itself is built by `ApiError`.
pub struct ErrorBody {
    error: ErrorDetail,
}

/// What went wrong.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct ErrorDetail {
    /// Stable, machine-readable: `bad_request`, `invalid_field`,
    /// `unauthorized`, `forbidden`, `not_found`, `conflict`, `unavailable`,
    /// `rate_limited`, `internal` (protocol.md §4).
    code: String,
    /// For people; may change between versions.
    message: String,
}

/// A log entry as the history route returns it: a MSG_RECV object,
/// render-ready (`docs/protocol.md` §8): each `message` entry with its current
/// state (`editedAt`, `deleted`, `reactions`), edits, deletes and reactions
/// with their `targetId` (and `emoji`, `op`, `noop`).
#[derive(Debug, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct HistoryMessage {
    /// Always `MSG_RECV`.
    #[serde(rename = "type")]
    #[schema(pattern = "^MSG_RECV$")]
    frame_type: String,
    /// Server-assigned UUIDv7, lower-case hyphenated.
    #[schema(format = "uuid")]
    message_id: String,
    channel_id: String,
    sender_id: String,
    /// Position in the channel, 1-based and gapless.
    #[schema(minimum = 1)]
    seq: i64,
    /// A message's text (its latest edit's; `""` once deleted), an edit's
    /// new text, `""` for a delete or a reaction.
    body: String,
    /// Stored time, ms since the Unix epoch.
    ts: i64,
    /// The sender's idempotency key; absent on an entry made through an
    /// HTTP route (the backend post, the delete route).
    client_msg_id: Option<String>,
    /// Present (`true`) when the entry was made with the admin token.
    by_admin: Option<bool>,
    /// The entry's kind.
    kind: EntryKindSchema,
    /// `edit`, `delete`, `reaction`: the target message's id.
    #[schema(format = "uuid")]
    target_id: Option<String>,
    /// `reaction`: the emoji.
    emoji: Option<String>,
    /// `reaction`: `add` or `remove`.
    op: Option<ReactOpSchema>,
    /// `reaction`: present (`true`) when the entry changed nothing.
    noop: Option<bool>,
    /// `message` entries that were edited: ts of the latest edit, ms since
    /// the Unix epoch.
    edited_at: Option<i64>,
    /// Present (`true`) when the message is deleted (`body` is then `""`).
    deleted: Option<bool>,
    /// Present (`true`, with `deleted`) when the retention sweep erased the
    /// message (§19): no delete entry names it.
    expired: Option<bool>,
    /// `message` entries: the reactions it holds now, by first use; at most
    /// `max_reactions_per_message` (default 50) of them.
    reactions: Option<Vec<ReactionCountSchema>>,
    /// `message` entries that mention users (§16): those that were members
    /// when it was stored, in byte order.
    mentions: Option<Vec<String>>,
    /// Present (`true`) when the message mentions all (§16).
    mention_all: Option<bool>,
}

/// The kind of a log entry.
#[derive(Debug, ToSchema)]
#[schema(as = EntryKind)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum EntryKindSchema {
    /// A MSG_SEND.
    Message,
    /// A MSG_EDIT.
    Edit,
    /// A MSG_DELETE.
    Delete,
    /// A MSG_REACT.
    Reaction,
}

/// A reaction entry's operation.
#[derive(Debug, ToSchema)]
#[schema(as = ReactOp)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
pub enum ReactOpSchema {
    /// The sender adds the emoji.
    Add,
    /// The sender removes it.
    Remove,
}

/// One emoji's reactions on a message.
#[derive(Debug, ToSchema)]
#[schema(as = ReactionCount)]
#[allow(dead_code)]
pub struct ReactionCountSchema {
    emoji: String,
    /// How many users hold it.
    #[schema(minimum = 1)]
    count: i64,
    /// Whether the reader holds it (never for the admin).
    me: bool,
}

/// One page of a channel's history, in increasing `seq`.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct HistoryPage {
    messages: Vec<HistoryMessage>,
    /// Whether more entries follow the last one of this page (after it; with
    /// `beforeSeq` or `latest`, before its first).
    has_more: bool,
    /// The channel's highest stored `seq` (0 when empty).
    #[schema(minimum = 0)]
    last_seq: i64,
}

/// The query of the history route.
#[derive(Debug, IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
#[allow(dead_code)]
pub struct HistoryQuery {
    /// Entries after this seq (exclusive); default 0. Ignored with
    /// `beforeSeq` or `latest=true`.
    #[param(minimum = 0, maximum = 9_007_199_254_740_991_i64)]
    after_seq: Option<i64>,
    /// Entries before this seq (exclusive), the newest `limit` of them.
    #[param(minimum = 1, maximum = 9_007_199_254_740_991_i64)]
    before_seq: Option<i64>,
    /// `true`: the newest `limit` entries.
    latest: Option<bool>,
    /// Page size, 1 to 500; default 100.
    #[param(minimum = 1, maximum = 500)]
    limit: Option<i64>,
    /// A user JWT, for browsers that cannot set a header (the header wins).
    #[param(rename = "access_token")]
    access_token: Option<String>,
}

/// The query of `GET /v1/channels`.
#[derive(Debug, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct ChannelsQuery {
    /// Channels after this channel id (exclusive), in byte order.
    after: Option<String>,
    /// Page size, 1 to 500; default 100.
    #[param(minimum = 1, maximum = 500)]
    limit: Option<i64>,
}

/// One of the caller's channels, as HELLO lists it.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct MyChannel {
    channel_id: String,
    /// Highest stored `seq` (0 when empty).
    #[schema(minimum = 0)]
    last_seq: i64,
    /// The caller's delivered watermark.
    #[schema(minimum = 0)]
    delivered_seq: i64,
    /// The caller's read watermark.
    #[schema(minimum = 0)]
    read_seq: i64,
    /// `message` entries after `readSeq`, not deleted, not the caller's.
    #[schema(minimum = 0)]
    unread: i64,
    /// The display name, `null` when unset.
    name: Option<String>,
    /// The metadata (a JSON object), `null` when unset.
    metadata: Option<serde_json::Value>,
    /// `group` or `direct`.
    kind: String,
    /// `private` or `public`.
    visibility: String,
    /// How many members the channel has.
    #[schema(minimum = 0)]
    member_count: i64,
    /// The caller's role: `member`, `moderator` or `owner`.
    role: String,
    /// Those of `unread` that mention the caller or mention all (§16).
    #[schema(minimum = 0)]
    unread_mentions: i64,
    /// The caller's notification setting: `all`, `mentions` or `none`.
    notify: String,
    /// The caller's snooze, ms since the epoch (`null`: none).
    snooze_until: Option<i64>,
    /// Who may post (§17): `member` or `moderator`.
    posting_role: String,
    /// Slow mode (§17): ms a member waits between two messages; 0: off.
    #[schema(minimum = 0, maximum = 3600000)]
    slow_mode_ms: i64,
    /// The channel's own retention (§19), seconds (0: forever); absent when
    /// unset (the server's `retention_secs` applies).
    #[schema(minimum = 0, maximum = 3155760000_i64)]
    retention_secs: Option<i64>,
}

/// `GET /v1/me/channels`'s answer.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct MyChannels {
    /// By channel id.
    channels: Vec<MyChannel>,
}

/// The `POST /v1/channels/{channelId}/messages` body.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct PostMessageBody {
    /// The user the message is sent as (a member of the channel).
    sender_id: String,
    /// The idempotency key, as MSG_SEND's.
    client_msg_id: String,
    /// The text, at most `max_body_bytes`.
    body: String,
    /// Users the message mentions (§16; at most `max_mentions`).
    mentions: Option<Vec<String>>,
    /// `true`: the message mentions all (the sender must be a moderator).
    mention_all: Option<bool>,
}

/// A stored send: the MSG_ACK frame.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct MessageAck {
    /// Always `MSG_ACK`.
    #[serde(rename = "type")]
    #[schema(pattern = "^MSG_ACK$")]
    frame_type: String,
    /// The idempotency key, as sent.
    client_msg_id: String,
    /// Server-assigned UUIDv7 of the stored message.
    #[schema(format = "uuid")]
    message_id: String,
    channel_id: String,
    /// Position in the channel, 1-based and gapless.
    #[schema(minimum = 1)]
    seq: i64,
    /// Stored time, ms since the Unix epoch.
    ts: i64,
    /// `true` when the key was already stored: this is the original message.
    duplicate: bool,
}

/// The `PATCH /v1/channels/{channelId}` body: an absent field is left as
/// it is, `null` clears it.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct ChannelPatchBody {
    /// 0 to 200 characters, no control characters.
    #[schema(max_length = 200)]
    name: Option<String>,
    /// A JSON object of at most `max_channel_metadata_bytes` serialized.
    #[schema(value_type = Option<Object>)]
    metadata: Option<serde_json::Value>,
    /// `private` or `public` (a group's; a direct channel stays private).
    visibility: Option<String>,
    /// `member` (anyone stores messages) or `moderator` (an announcement
    /// channel; §17).
    posting_role: Option<String>,
    /// Slow mode: 0 (off) to 3600000 ms between two messages of a `member` (§17).
    #[schema(minimum = 0, maximum = 3600000)]
    slow_mode_ms: Option<i64>,
    /// Retention (§19): 0 (forever) to 3155760000 seconds; its `message`
    /// entries older than this are erased by the retention sweep. `null`
    /// clears it: the server's `retention_secs` applies.
    #[schema(minimum = 0, maximum = 3155760000_i64)]
    retention_secs: Option<i64>,
}

/// The query of the WebSocket route.
#[derive(Debug, IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct WsQuery {
    /// A user JWT, for browsers that cannot set a header on a WebSocket.
    access_token: Option<String>,
}

/// `POST /v1/tokens`'s answer.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct TokenCreated {
    /// The user JWT (HS256).
    token: String,
    /// Its `exp`, ms since the Unix epoch.
    expires_at: i64,
}

/// `GET /healthz`'s answer.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct Health {
    /// `ok`.
    status: String,
}

/// `GET /readyz`'s answer when ready.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
pub struct Ready {
    /// `ready`.
    status: String,
    /// `postgres` or `sqlite`.
    database: String,
    /// Live WebSocket sessions on this node.
    #[schema(minimum = 0)]
    sessions: u64,
    /// With NATS configured: `connected` or `disconnected`.
    nats: Option<String>,
}

/// The document's frame: title, version, security schemes and the error schema.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "chatd",
        description = "chatd's HTTP API (docs/protocol.md). Errors are {\"error\": {\"code\", \"message\"}}.",
    ),
    modifiers(&SecuritySchemes),
    components(schemas(ErrorBody, ErrorDetail)),
    tags(
        (name = "channels", description = "Channels, members and history"),
        (name = "moderation", description = "Bans, moderators' deletes, blocks and flags (§17)"),
        (name = "tokens", description = "User tokens"),
        (name = "users", description = "Users' data: erasure and export (§19)"),
        (name = "attachments", description = "Files and images carried by messages (§15)"),
        (name = "websocket", description = "The WebSocket gateway"),
        (name = "operations", description = "Health, readiness, metrics and this document"),
    )
)]
pub struct ApiDoc;

/// `adminToken` (the admin bearer token), `userJwt` (a user JWT as a bearer
/// token) and `accessToken` (a user JWT in the `access_token` query parameter).
struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "adminToken",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("The admin token (admin_token), compared in constant time."))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "userJwt",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .description(Some(
                        "A user JWT: HS256 with jwt_secret, or RS256/ES256 from an identity provider by kid.",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "accessToken",
            SecurityScheme::ApiKey(ApiKey::Query(ApiKeyValue::new("access_token"))),
        );
    }
}

#[cfg(test)]
mod tests;
