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
use crate::close_code;
use crate::config::{Config, ConfigError};
use crate::delivery::nats::ClusterError;
use crate::state::AppState;
use crate::store::{Store, StoreError, StoreOptions};
use crate::{http, listener, telemetry};

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    // The messages below name the part that failed and leave the cause to
    // the source chain (`main` prints it as "caused by:"), so no cause is
    // printed twice.
    #[error("database")]
    Store(#[from] StoreError),
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error(transparent)]
    Webhook(#[from] crate::webhook::SenderError),
    #[error(transparent)]
    Attachments(#[from] crate::attachments::StorageError),
    #[error("cannot listen on {addr}")]
    Bind {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    /// Another chatd holds the SQLite database's lock file.
    #[error(
        "another chatd is already serving the SQLite database {database} (it holds {lock}); \
         stop it first, or give this one its own data_dir (several nodes need PostgreSQL)"
    )]
    Locked {
        /// The database file.
        database: PathBuf,
        /// The lock file.
        lock: PathBuf,
    },
    /// The lock file could not be created or locked.
    #[error("cannot lock {path}")]
    Lock {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("server error")]
    Serve(#[source] std::io::Error),
}

/// For an SQLite `database_url`, takes an exclusive lock on `<file>.lock`
/// next to the database file (creating its directory, private, when
/// missing), held while the returned file is open: two servers on one SQLite
/// database would each deliver only their own sessions' messages. `None`
/// for PostgreSQL and in-memory databases. The lock is an advisory `flock`
/// the kernel drops when the process exits, however it ends.
///
/// # Errors
/// [`StartupError::Locked`] when another process holds it,
/// [`StartupError::Lock`] when it cannot be made.
pub fn lock_sqlite(database_url: &str) -> Result<Option<std::fs::File>, StartupError> {
    use std::str::FromStr;
    if !database_url.starts_with("sqlite:") {
        return Ok(None);
    }
    let Ok(options) = sqlx::sqlite::SqliteConnectOptions::from_str(database_url) else {
        return Ok(None);
    };
    let database = options.get_filename().to_path_buf();
    if database.as_os_str().is_empty() || database.to_str() == Some(":memory:") {
        return Ok(None);
    }
    let mut name = database.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    let lock = database.with_file_name(name);
    let failed = |source| StartupError::Lock {
        path: lock.clone(),
        source,
    };
    if let Some(dir) = lock.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::private_files::create_private_dir(dir).map_err(failed)?;
    }
    let mut open = std::fs::OpenOptions::new();
    open.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        open.mode(0o600);
    }
    let file = open.open(&lock).map_err(failed)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Err(StartupError::Locked { database, lock }),
        Err(std::fs::TryLockError::Error(e)) => Err(failed(e)),
    }
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
    .await?
    .with_max_reactions_per_message(config.max_reactions_per_message);
    let store = match &config.database_replica_url {
        Some(url) => store.with_read_replica(url, config.db_max_connections)?,
        None => store,
    };
    store.migrate().await?;
    Ok(store)
}

/// A server bound to its port, ready to run.
pub struct Application {
    listener: TcpListener,
    /// The `admin_listen` address's listener, when set.
    admin_listener: Option<TcpListener>,
    state: AppState,
    commit_tasks: TaskTracker,
    secrets_file: Option<PathBuf>,
    /// The SQLite database's lock ([`lock_sqlite`]), held until the server stops.
    sqlite_lock: Option<std::fs::File>,
}

impl Application {
    /// Binds the listener (`listen` may use port 0) and the admin listener
    /// (`admin_listen`, when set), then loads secrets,
    /// locks an SQLite database ([`lock_sqlite`]), opens and migrates the
    /// database, and starts delivery and the commit tasks. Binding comes
    /// first, so a taken port fails before anything is written to disk
    /// (data directory, secrets file, database).
    ///
    /// # Errors
    /// [`StartupError`] naming the part that failed.
    pub async fn build(config: Config) -> Result<Self, StartupError> {
        let listener = crate::listener::bind(&config.listen, config.listen_backlog)
            .await
            .map_err(|source| StartupError::Bind {
                addr: config.listen.clone(),
                source,
            })?;
        let admin_listener = match &config.admin_listen {
            Some(addr) => Some(TcpListener::bind(addr).await.map_err(|source| StartupError::Bind {
                addr: addr.clone(),
                source,
            })?),
            None => None,
        };
        let sqlite_lock = lock_sqlite(&config.database_url())?;
        let secrets = config.secrets()?;
        for warning in secrets.warnings() {
            tracing::warn!("weak secret: {warning}");
        }
        // The keys before the database: a bad key file stops the start
        // before the database is opened or migrated.
        let auth = Auth::from_config(&config, &secrets).map_err(|e| ConfigError::Invalid(format!("jwt keys: {e}")))?;
        // The recorder first, so every metric set while starting is kept.
        let metrics = telemetry::metrics_handle();
        let store = open_store(&config).await?;
        let commit_tasks = TaskTracker::new();
        let state = AppState::new(config, store, auth, metrics, &commit_tasks)
            .await
            .map_err(|e| match e {
                crate::state::StateError::Cluster(e) => StartupError::Cluster(e),
                crate::state::StateError::Webhook(e) => StartupError::Webhook(e),
                crate::state::StateError::Attachments(e) => StartupError::Attachments(e),
                crate::state::StateError::WebhookStart(e) => StartupError::Store(e),
            })?;
        // Erased users' tokens are refused from the first request on, and
        // erasures a stopped server left pending are resumed.
        crate::erasure::start_background(&state)
            .await
            .map_err(StartupError::Store)?;
        Ok(Self {
            listener,
            admin_listener,
            state,
            commit_tasks,
            secrets_file: secrets.file,
            sqlite_lock,
        })
    }

    /// The bound address (the real port when `listen` used port 0).
    ///
    /// # Errors
    /// The socket's error (not expected on a bound listener).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The bound address of `admin_listen` (the real port when it used
    /// port 0); `None` when unset.
    ///
    /// # Errors
    /// The socket's error (not expected on a bound listener).
    pub fn admin_addr(&self) -> std::io::Result<Option<SocketAddr>> {
        self.admin_listener.as_ref().map(TcpListener::local_addr).transpose()
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
            admin_listener,
            state,
            commit_tasks,
            secrets_file,
            sqlite_lock,
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
        if let Some(admin) = &admin_listener {
            let admin_addr = admin.local_addr().map_err(StartupError::Serve)?;
            tracing::info!(%admin_addr, "chatd serving the admin routes on admin_listen only");
        }
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
        // §19: the retention sweep, every `retention_sweep_secs`.
        crate::retention::spawn(state.store.clone(), &state.config, background.clone());
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
        let admin_http = admin_listener.map(|admin| {
            tokio::spawn(listener::serve(
                admin,
                http::admin_router(state.clone()),
                state.config.handshake_timeout(),
                token.clone(),
            ))
        });
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
        if let Some(admin_http) = admin_http {
            let _ = admin_http.await;
        }
        state.delivery.shutdown().await;
        // After the sessions: the commit tasks are done, so the feed stops
        // with nothing new to signal; what it did not send is sent after the
        // restart, or by another node, from the cursors.
        if let Some(feed) = &state.webhooks {
            feed.shutdown().await;
        }
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
        drop(sqlite_lock);
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
