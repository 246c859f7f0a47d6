//! The AsyncAPI 3.0 document of the WebSocket frames, served at
//! `GET /v1/asyncapi.json`: every client and server frame of `/v1/ws`
//! (`docs/protocol.md` §4, the contract's §5, §8, §9, §13 to §17) with its
//! payload schema and examples.
//!
//! The document is the file `asyncapi/asyncapi.json`, written by hand and
//! served as it is. It is checked against the frame types of `chatd-proto`
//! by the tests beside it (`asyncapi/tests.rs`): one message per type of
//! [`ClientFrame::TYPE_NAMES`](chatd_proto::protocol::ClientFrame::TYPE_NAMES)
//! and [`ServerFrame::TYPE_NAMES`](chatd_proto::protocol::ServerFrame::TYPE_NAMES)
//! and no other, every example a frame the codec decodes and encodes back
//! unchanged, each schema's properties and `required` exactly what the
//! codec reads and writes, and each `full` example with every field of its
//! frame type (built field by field in `asyncapi/samples.rs`), and each
//! `enum` that stands for one of `chatd-proto`'s enums exactly its wire
//! values, so a frame, a field or a value added to `chatd-proto` without its
//! description fails them. CI also validates the file with the
//! AsyncAPI project's parser (`tools/asyncapi-check`).

use axum::http::header;
use axum::response::{IntoResponse, Response};

/// The AsyncAPI 3.0 document (JSON text), as served.
pub const DOCUMENT: &str = include_str!("asyncapi/asyncapi.json");

/// `GET /v1/asyncapi.json` (no auth): the AsyncAPI 3.0 document of the
/// WebSocket frames.
#[utoipa::path(
    get,
    path = "/v1/asyncapi.json",
    tag = "operations",
    responses((
        status = 200,
        description = "The AsyncAPI 3.0 document of the WebSocket frames of /v1/ws",
        content_type = "application/json",
        body = Object
    )),
)]
pub async fn asyncapi_json() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], DOCUMENT).into_response()
}

#[cfg(test)]
mod samples;
#[cfg(test)]
mod tests;
