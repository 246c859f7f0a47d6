//! Building and running the server: the composition root shared by `main`
//! and the tests (which build an [`Application`] on port 0).

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::auth::Auth;
use crate::cluster::ClusterError;
use crate::config::{Config, ConfigError};
use crate::outbound::close_code;
use crate::state::AppState;
use crate::store::{Store, StoreError, StoreOptions};
use crate::{http, listener, telemetry};

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("database: {0}")]
    Store(#[from] StoreError),
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("server error: {0}")]
    Serve(#[source] std::io::Error),
}

/// Opens the configured database and applies migrations.
///
/// # Errors
/// [`StartupError::Store`].
pub async fn open_store(config: &Config) -> Result<Store, StartupError> {
    let store = Store::connect(&StoreOptions {
        url: config.database_url(),
        max_connections: config.db_max_connections,
        timeout: config.db_timeout(),
    })
    .await?;
    store.migrate().await?;
    Ok(store)
}

/// A server bound to its port, ready to run.
pub struct Application {
    listener: TcpListener,
    state: AppState,
    commit_tasks: TaskTracker,
    secrets_file: Option<PathBuf>,
}

impl Application {
    /// Loads secrets, opens and migrates the database, starts delivery and the
    /// commit tasks, and
    /// binds the listener (`listen` may use port 0).
    ///
    /// # Errors
    /// [`StartupError`] naming the part that failed.
    pub async fn build(config: Config) -> Result<Self, StartupError> {
        let secrets = config.secrets()?;
        for warning in secrets.warnings() {
            tracing::warn!("weak secret: {warning}");
        }
        // The keys before the database: a bad key file stops the start
        // before anything is created.
        let auth = Auth::from_config(&config, &secrets).map_err(|e| ConfigError::Invalid(format!("jwt keys: {e}")))?;
        // The recorder first, so every metric set while starting is kept.
        let metrics = telemetry::metrics_handle();
        let store = open_store(&config).await?;
        let listener = TcpListener::bind(&config.listen)
            .await
            .map_err(|source| StartupError::Bind {
                addr: config.listen.clone(),
                source,
            })?;
        let commit_tasks = TaskTracker::new();
        let state = AppState::new(config, store, auth, metrics, &commit_tasks).await?;
        Ok(Self {
            listener,
            state,
            commit_tasks,
            secrets_file: secrets.file,
        })
    }

    /// The bound address (the real port when `listen` used port 0).
    ///
    /// # Errors
    /// The socket's error (not expected on a bound listener).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Cancelling this token shuts the server down gracefully.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.state.shutdown.clone()
    }

    /// The shared state (tests use its store).
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Serves until `signal` resolves or the shutdown token is cancelled, then
    /// shuts down: stop accepting, let sessions finish their in-flight sends
    /// and close with 1001 (within `shutdown_grace`), stop the commit tasks, close
    /// the database.
    ///
    /// # Errors
    /// [`StartupError::Serve`] when the listener fails.
    pub async fn run_until_stopped(
        self,
        signal: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), StartupError> {
        let Self {
            listener,
            state,
            commit_tasks,
            secrets_file,
        } = self;
        let addr = listener.local_addr().map_err(StartupError::Serve)?;
        if let Some(file) = &secrets_file {
            tracing::info!(file = %file.display(), "secrets not configured are generated and kept in this file; the admin API token is its admin_token");
        }
        tracing::info!(
            %addr,
            database = state.store.backend_name(),
            fanout = state.delivery.kind(),
            "chatd listening"
        );
        let token = state.shutdown.clone();
        let background = CancellationToken::new();
        let upkeep = tokio::spawn(telemetry::run_upkeep(
            state.metrics.clone(),
            Duration::from_secs(5),
            background.clone(),
        ));
        let stop = token.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = signal => {},
                _ = stop.cancelled() => {},
            }
            stop.cancel();
            tracing::info!("shutting down: no new connections");
        });
        let limits = state.limits.clone();
        let housekeeping = background.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(60));
            loop {
                tokio::select! {
                    _ = housekeeping.cancelled() => return,
                    _ = tick.tick() => limits.retain_recent(),
                }
            }
        });
        let http = tokio::spawn(listener::serve(
            listener,
            http::router(state.clone()),
            state.config.handshake_timeout(),
            token.clone(),
        ));
        token.cancelled().await;

        // The grace period runs from the signal; HTTP connections drain
        // (at most 5 s, in `listener::serve`) while sessions finish.
        let grace = Duration::from_secs(state.config.shutdown_grace);
        state.sessions.close();
        if tokio::time::timeout(grace, state.sessions.wait()).await.is_err() {
            tracing::warn!(
                sessions = state.hub.session_count(),
                "shutdown grace elapsed; closing the remaining sessions"
            );
            for session in state.hub.all_sessions() {
                session.kick(close_code::GOING_AWAY, "server shutting down");
            }
            let _ = tokio::time::timeout(Duration::from_secs(1), state.sessions.wait()).await;
        }
        let _ = http.await;
        state.delivery.shutdown().await;
        let store = state.store.clone();
        drop(state);
        commit_tasks.close();
        // Commit tasks finish at once when every session has; sessions still
        // stuck on a peer past the grace period do not hold up the exit.
        if tokio::time::timeout(Duration::from_secs(1), commit_tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!("commit tasks did not stop in time");
        }
        let _ = tokio::time::timeout(Duration::from_secs(1), store.close()).await;
        background.cancel();
        let _ = upkeep.await;
        tracing::info!("chatd stopped");
        Ok(())
    }
}

/// A future that resolves on SIGINT (Ctrl-C) or, on Unix, SIGTERM.
///
/// The handlers are installed when this function is called, not when the
/// future is first polled: call it before the server announces that it is
/// listening, so a signal sent right after that announcement already stops
/// the server gracefully instead of killing the process.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        /// The first delivery of a signal whose handler is installed; never,
        /// when it could not be installed.
        async fn received(signal: std::io::Result<tokio::signal::unix::Signal>) {
            match signal {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        }
        let interrupt = signal(SignalKind::interrupt());
        let terminate = signal(SignalKind::terminate());
        async move {
            tokio::select! {
                _ = received(interrupt) => {},
                _ = received(terminate) => {},
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
