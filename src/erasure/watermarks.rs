//! Other nodes' erasures: on PostgreSQL every node reads the erasure
//! watermarks again every [`REFRESH`], so each refuses an erased user's
//! earlier tokens soon after any node stored the watermark, and closes
//! this node's live sessions of such tokens with 1008 (§19). The erasing
//! node also tells the others over NATS at once; this read is what closes
//! them when that message was lost (NATS down during the erasure).

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
            Ok(rows) => {
                let erased = state.auth.erased();
                for user in erased.record_all(&rows) {
                    let closed = state.hub.kick_erased(&user, erased);
                    if closed > 0 {
                        tracing::info!(user = %user, closed, "closed the sessions of a user erased on another node");
                    }
                }
            }
            Err(error) => tracing::warn!(%error, "cannot read the erasure watermarks"),
        }
    }
}
