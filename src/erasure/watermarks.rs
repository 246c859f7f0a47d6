//! Other nodes' erasures: on PostgreSQL every node reads the erasure
//! watermarks again every [`REFRESH`], so each refuses an erased user's
//! earlier tokens soon after any node stored the watermark.

use std::time::Duration;

use crate::state::AppState;

/// How often a PostgreSQL node reads the erasure watermarks again (other
/// nodes erase users too). An erasure answers no sooner than twice this
/// after its watermark was stored, so every node refuses the old tokens by
/// then.
pub const REFRESH: Duration = Duration::from_secs(1);

/// Reads the watermarks again every [`REFRESH`] (other nodes' erasures).
pub(super) async fn refresh_watermarks(state: &AppState) {
    let mut tick = tokio::time::interval(REFRESH);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = state.shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        match state.store.erasure_watermarks().await {
            Ok(rows) => state.auth.erased().record_all(&rows),
            Err(error) => tracing::warn!(%error, "cannot read the erasure watermarks"),
        }
    }
}
