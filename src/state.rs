//! The shared state every handler and session gets: cheap to clone.

use std::sync::Arc;

use metrics_exporter_prometheus::PrometheusHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::auth::Auth;
use crate::commit::GroupCommit;
use crate::config::{Config, WebhookStart};
use crate::delivery::{Delivery, Hub};
use crate::limits::Limits;
use crate::store::Store;
use crate::webhook::{self, Feed};

/// Why the state could not be assembled.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error(transparent)]
    Cluster(#[from] crate::delivery::nats::ClusterError),
    #[error(transparent)]
    Webhook(#[from] webhook::SenderError),
    #[error(transparent)]
    Attachments(#[from] crate::attachments::StorageError),
    /// The webhook feed's first start (`webhook_start`) could not be stored.
    #[error("webhook feed start")]
    WebhookStart(#[source] crate::store::StoreError),
}

/// Everything a request or a session needs.
#[derive(Debug, Clone)]
pub struct AppState {
    /// Settings in force.
    pub config: Arc<Config>,
    /// The database.
    pub store: Store,
    /// This node's live sessions (a session registers here; frames reach it
    /// through [`Self::delivery`]).
    pub hub: Arc<Hub>,
    /// How frames reach sessions, on this node or every node.
    pub delivery: Delivery,
    /// The group-commit tasks.
    pub commits: GroupCommit,
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
    /// The webhook feed, when `webhook_url` is set.
    pub webhooks: Option<Arc<Feed>>,
    /// The attachment storage (§15).
    pub attachments: Arc<crate::attachments::Attachments>,
    /// The user erasures running on this node (§19).
    pub erasures: Arc<crate::erasures::Erasures>,
}

impl AppState {
    /// The state over an open, migrated `store`: the delivery `config` asks
    /// for (NATS when `nats_url` is set), the commit tasks (spawned on
    /// `commit_tasks`), and the limits.
    ///
    /// # Errors
    /// [`StateError`] when the NATS bridge or the webhook client cannot be set up.
    pub async fn new(
        config: Config,
        store: Store,
        auth: Auth,
        metrics: PrometheusHandle,
        commit_tasks: &TaskTracker,
    ) -> Result<Self, StateError> {
        let hub = Arc::new(Hub::new(crate::delivery::ephemeral::Settings::from_config(&config)));
        let webhooks = match webhook::Settings::from_config(&config) {
            Some(settings) => {
                // Before any entry can be sent: on a database no feed ran
                // on, `webhook_start` says where each channel's cursor is.
                let from_now = settings.start == WebhookStart::Now;
                let first = store
                    .start_webhook_feed(from_now, crate::ids::now_ms())
                    .await
                    .map_err(StateError::WebhookStart)?;
                if first {
                    tracing::info!(start = ?settings.start, "webhook feed: first start on this database");
                }
                Some(Arc::new(Feed::start(settings, store.clone())?))
            }
            None => None,
        };
        let webhook = webhooks.as_ref().map(|feed| feed.signal());
        let delivery = Delivery::start(&config, store.clone(), hub.clone()).await?;
        let commits = GroupCommit::spawn(
            store.clone(),
            delivery.clone(),
            config.writer_shards,
            config.max_batch,
            webhook.clone(),
            commit_tasks,
        );
        let limits = Arc::new(Limits::new(&config));
        let attachments = Arc::new(crate::attachments::Attachments::from_config(&config)?);
        let shutdown = CancellationToken::new();
        attachments.spawn_sweeper(store.clone(), &config, shutdown.clone());
        let state = Self {
            config: Arc::new(config),
            store,
            hub,
            delivery,
            commits,
            auth: Arc::new(auth),
            metrics,
            shutdown,
            sessions: TaskTracker::new(),
            limits,
            webhooks,
            attachments,
            erasures: Arc::default(),
        };
        Ok(state)
    }
}
