//! Every route of the API, each with its OpenAPI description, and the
//! OpenAPI document they make, served at `GET /v1/openapi.json`.

use std::sync::OnceLock;

use axum::http::header;
use axum::response::{IntoResponse, Response};
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{
    asyncapi, attachment_get, attachments, blocks, channel_patch, channels, export, flags, health, me, members,
    message_delete, messages, moderation, openapi, search, settings, tokens, users, ws,
};
use crate::state::AppState;

/// Every route, each with its OpenAPI description. A route is added here
/// with one line, `.routes(routes!(module::handler))` (handlers of one path
/// together: `routes!(a::get_x, a::delete_x)`), for a handler annotated with
/// `#[utoipa::path(...)]`: the path and method come from the annotation, so
/// the router and `/v1/openapi.json` cannot disagree.
pub(crate) fn api_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(ws::ws_handler))
        .routes(routes!(channels::create_channel, channels::list_channels))
        .routes(routes!(
            channels::get_channel,
            channel_patch::patch_channel,
            channels::delete_channel
        ))
        .routes(routes!(me::my_channels, me::create_my_channel))
        .routes(routes!(me::join_channel, me::leave_channel))
        .routes(routes!(me::directory))
        .routes(routes!(settings::put_settings))
        .routes(routes!(search::search))
        .routes(routes!(me::open_direct))
        .routes(routes!(members::list_members))
        .routes(routes!(members::add_member, members::remove_member))
        .routes(routes!(moderation::list_bans))
        .routes(routes!(moderation::lift_ban))
        .routes(routes!(message_delete::delete_message))
        .routes(routes!(blocks::block, blocks::unblock))
        .routes(routes!(blocks::list_blocks))
        .routes(routes!(flags::flag_message))
        .routes(routes!(flags::list_flags))
        .routes(routes!(messages::history, messages::post_message))
        .routes(routes!(attachments::upload))
        .routes(routes!(attachment_get::download))
        .routes(routes!(attachment_get::thumbnail))
        .routes(routes!(tokens::create_token))
        .routes(routes!(export::export_user))
        .routes(routes!(users::erase_user))
        .routes(routes!(health::healthz))
        .routes(routes!(health::readyz))
        .routes(routes!(health::metrics))
        .routes(routes!(openapi_json))
        .routes(routes!(asyncapi::asyncapi_json))
}

/// The document, rendered once.
static DOCUMENT: OnceLock<String> = OnceLock::new();

/// The OpenAPI document of every route [`super::router`] serves.
pub fn document() -> utoipa::openapi::OpenApi {
    api_routes().split_for_parts().1
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
