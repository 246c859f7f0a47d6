//! Liveness, readiness and metrics.

use std::time::Duration;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::error::ApiError;
use super::openapi::{ErrorBody, Health, Ready};
use crate::state::AppState;

/// How long `/readyz` waits for the database.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// `GET /healthz`: 200 while the process runs.
#[utoipa::path(get, path = "/healthz", tag = "operations", responses((status = 200, description = "Running", body = Health)))]
pub async fn healthz() -> Json<serde_json::Value> {
    Json(serde_json::json!({"status": "ok"}))
}

/// `GET /readyz`: 200 when the database answers within 2 s, is not a
/// PostgreSQL standby (`pg_is_in_recovery()`), and the server is not
/// shutting down, else 503 with the reason. With NATS configured the body
/// says `"nats": "connected"` or `"disconnected"`.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "operations",
    responses(
        (status = 200, description = "Ready", body = Ready),
        (status = 503, description = "Not ready (database unavailable or a standby, shutting down)", body = ErrorBody),
    ),
)]
pub async fn readyz(State(state): State<AppState>) -> Response {
    if state.shutdown.is_cancelled() {
        return not_ready("shutting down");
    }
    match tokio::time::timeout(READY_TIMEOUT, state.store.ping()).await {
        Ok(Ok(())) => {
            let mut body = serde_json::json!({
                "status": "ready",
                "database": state.store.backend_name(),
                "sessions": state.hub.session_count(),
            });
            // The database is the readiness criterion; NATS is a detail: a
            // node without it still stores, ACKs and delivers locally.
            if let Some(connected) = state.delivery.nats_connected() {
                body["nats"] = serde_json::json!(if connected { "connected" } else { "disconnected" });
            }
            Json(body).into_response()
        }
        Ok(Err(crate::store::StoreError::Standby)) => not_ready("database is a standby"),
        Ok(Err(_)) | Err(_) => not_ready("database unavailable"),
    }
}

fn not_ready(reason: &str) -> Response {
    ApiError::unavailable(reason).into_response()
}

/// `GET /metrics`: Prometheus text exposition format 0.0.4. The database
/// pools' gauges are read at each scrape.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    responses((status = 200, description = "Prometheus text format 0.0.4", content_type = "text/plain", body = String)),
)]
pub async fn metrics(State(state): State<AppState>) -> Response {
    for (pool, size, idle, max) in state.store.pool_stats() {
        crate::telemetry::db_pool(pool, size, idle, max);
    }
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
        .into_response()
}
