//! The shared state every handler and session gets: cheap to clone.

use std::sync::Arc;

use metrics_exporter_prometheus::PrometheusHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::auth::Auth;
use crate::config::Config;
use crate::fanout::Hub;
use crate::limits::Limits;
use crate::store::Store;
use crate::writer::Writers;

/// Everything a request or a session needs.
#[derive(Debug, Clone)]
pub struct AppState {
    /// Settings in force.
    pub config: Arc<Config>,
    /// The database.
    pub store: Store,
    /// Live sessions of this node.
    pub hub: Arc<Hub>,
    /// The group-commit writers.
    pub writers: Writers,
    /// Token verification and minting.
    pub auth: Arc<Auth>,
    /// Renders `/metrics`.
    pub metrics: PrometheusHandle,
    /// Cancelled when the server starts shutting down.
    pub shutdown: CancellationToken,
    /// Tracks live WebSocket sessions so shutdown can wait for them.
    pub sessions: TaskTracker,
    /// Connection counts and frame rates.
    pub limits: Arc<Limits>,
}
