//! The shared state every handler and session gets: cheap to clone.

use std::sync::Arc;

use axum::extract::ws::Utf8Bytes;
use metrics_exporter_prometheus::PrometheusHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::auth::Auth;
use crate::cluster::Cluster;
use crate::config::Config;
use crate::fanout::{Hub, SessionId};
use crate::ids::UserId;
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
    /// The NATS bridge, when `nats_url` is set.
    pub cluster: Option<Cluster>,
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

impl AppState {
    /// Queues an encoded RECEIPT for watermark `key` = (channel, owner,
    /// read?) at `seq` to every session of `user_id` on every node, except
    /// `except`; a session never gets one below a RECEIPT it already got for
    /// that watermark ([`Hub::send_receipt`]).
    pub fn send_receipt(
        &self,
        user_id: &UserId,
        key: &crate::fanout::WatermarkKey,
        seq: i64,
        text: &Utf8Bytes,
        except: Option<&SessionId>,
    ) {
        match &self.cluster {
            Some(cluster) => cluster.send_receipt(user_id, key, seq, text, except),
            None => self.hub.send_receipt(user_id, key, seq, text, except),
        }
    }

    /// Queues an encoded frame to every session of `user_id` on every node
    /// (this node's hub, and NATS when configured), except `except`.
    pub fn send_to_user(
        &self,
        user_id: &UserId,
        text: &Utf8Bytes,
        type_name: &'static str,
        except: Option<&SessionId>,
    ) {
        match &self.cluster {
            Some(cluster) => cluster.send_to_user(user_id, text, type_name, except),
            None => self.hub.send_to_user(user_id, text, type_name, except),
        }
    }
}
