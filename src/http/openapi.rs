//! The OpenAPI 3.1 document of the HTTP API, served at `GET /v1/openapi.json`.
//!
//! Generated from the route definitions: every route is registered through
//! [`utoipa_axum::router::OpenApiRouter::routes`] (see `super::api_routes`),
//! which adds the handler's `#[utoipa::path]` annotation to the document and
//! the handler to the router in one call, so a route cannot be served without
//! being documented. The shapes here are the ones the handlers build as JSON
//! values (`serde_json::json!`) and so have no Rust type of their own; the
//! tests below compare each with what the code really sends.

use std::sync::OnceLock;

use axum::http::header;
use axum::response::{IntoResponse, Response};
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

/// A stored message as the history route returns it (a MSG_RECV object).
#[derive(Debug, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct HistoryMessage {
    /// Always `MSG_RECV`.
    #[serde(rename = "type")]
    #[schema(pattern = "^MSG_RECV$")]
    kind: String,
    /// Server-assigned UUIDv7, lower-case hyphenated.
    #[schema(format = "uuid")]
    message_id: String,
    channel_id: String,
    sender_id: String,
    /// Position in the channel, 1-based and gapless.
    #[schema(minimum = 1)]
    seq: i64,
    body: String,
    /// Stored time, ms since the Unix epoch.
    ts: i64,
    /// The sender's idempotency key.
    client_msg_id: String,
}

/// One page of a channel's history, in increasing `seq`.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct HistoryPage {
    messages: Vec<HistoryMessage>,
    /// Whether more messages follow the last one of this page.
    has_more: bool,
}

/// The query of the history route.
#[derive(Debug, IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
#[allow(dead_code)]
pub struct HistoryQuery {
    /// Messages after this seq (exclusive); default 0.
    #[param(minimum = 0, maximum = 9_007_199_254_740_991_i64)]
    after_seq: Option<i64>,
    /// Page size, 1 to 500; default 100.
    #[param(minimum = 1, maximum = 500)]
    limit: Option<i64>,
    /// A user JWT, for browsers that cannot set a header (the header wins).
    #[param(rename = "access_token")]
    access_token: Option<String>,
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
        (name = "tokens", description = "User tokens"),
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

/// The document, rendered once.
static DOCUMENT: OnceLock<String> = OnceLock::new();

/// The OpenAPI document of every route [`super::router`] serves.
pub fn document() -> utoipa::openapi::OpenApi {
    super::api_routes().split_for_parts().1
}

/// `GET /v1/openapi.json` (no auth): the OpenAPI 3.1 document of this API.
#[utoipa::path(
    get,
    path = "/v1/openapi.json",
    tag = "operations",
    responses((status = 200, description = "The OpenAPI 3.1 document", content_type = "application/json", body = Object)),
)]
pub async fn openapi_json() -> Response {
    let text = DOCUMENT.get_or_init(|| document().to_json().unwrap_or_else(|_| "{}".to_owned()));
    ([(header::CONTENT_TYPE, "application/json")], text.as_str()).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The history message schema names exactly the fields a real MSG_RECV
    /// has, all required.
    #[test]
    fn the_history_message_schema_is_the_wire_type() {
        let doc = serde_json::to_value(document()).expect("document");
        let message = chatd_proto::protocol::TaggedMessage::MsgRecv(chatd_proto::protocol::RecvMessage {
            message_id: uuid::Uuid::now_v7(),
            channel_id: "c".into(),
            sender_id: "u".into(),
            seq: 1,
            body: "b".into(),
            ts: 1,
            client_msg_id: "m".into(),
        });
        let wire = keys(&serde_json::to_value(message).expect("json"));
        let (properties, required) = schema_fields(&doc, "HistoryMessage");
        assert_eq!(properties, wire);
        assert_eq!(required, wire);
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
}
