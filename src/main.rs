//! The `chatd` command: `serve` (the default), `migrate`, `token`.

use std::path::PathBuf;
use std::process::ExitCode;

use chatd::auth::Auth;
use chatd::config::{Config, ConfigError, Overrides};
use chatd::ids::UserId;
use chatd::startup::{self, Application, StartupError};
use chatd::telemetry;
use clap::{Args, Parser, Subcommand};

/// chatd: chat server daemon (WebSocket, idempotent sends, gapless order).
#[derive(Debug, Parser)]
#[command(name = "chatd", version, about)]
struct Cli {
    /// Config file (default: $CHATD_CONFIG, else config/chatd.toml when present).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    #[command(flatten)]
    overrides: OverrideArgs,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Args)]
struct OverrideArgs {
    /// Listen address, host:port (CHATD_LISTEN).
    #[arg(long, global = true)]
    listen: Option<String>,
    /// postgres://… or sqlite://path (CHATD_DATABASE_URL).
    #[arg(long, global = true)]
    database_url: Option<String>,
    /// Data directory for the embedded database and generated secrets (CHATD_DATA_DIR).
    #[arg(long, global = true)]
    data_dir: Option<PathBuf>,
    /// Log filter, tracing syntax (CHATD_LOG).
    #[arg(long, global = true)]
    log: Option<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the server (the default).
    Serve,
    /// Apply database migrations and exit.
    Migrate,
    /// Print a user JWT signed with the configured secret.
    Token {
        /// The user id (the token's `sub`).
        user_id: String,
        /// Lifetime in seconds (default: token_ttl_secs).
        #[arg(long)]
        ttl: Option<u64>,
    },
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let overrides = Overrides {
        listen: cli.overrides.listen,
        database_url: cli.overrides.database_url,
        data_dir: cli.overrides.data_dir,
        log: cli.overrides.log,
    };
    let config = match Config::load(cli.config.as_deref(), &overrides) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("chatd: {error}");
            return ExitCode::from(2);
        }
    };
    let result = match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(config).await,
        Command::Migrate => migrate(config).await,
        Command::Token { user_id, ttl } => token(&config, &user_id, ttl),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprint!("{}", report(error.as_ref()));
            // Configuration problems (secrets file included) exit 2, like a bad setting.
            let config_error = error.downcast_ref::<ConfigError>().is_some()
                || matches!(error.downcast_ref::<StartupError>(), Some(StartupError::Config(_)));
            if config_error {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

type AnyError = Box<dyn std::error::Error + Send + Sync>;

/// The error and its chain of causes, one line each (`chatd: X`, then
/// `  caused by: Y`), leaving out a cause whose text an earlier line already
/// holds: an error that shows its source in its own message (`{0}`) and
/// also returns it from `source()` would otherwise print it twice.
fn report(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = format!("chatd: {error}\n");
    let mut source = error.source();
    while let Some(cause) = source {
        let line = cause.to_string();
        if !text.contains(&line) {
            text.push_str(&format!("  caused by: {line}\n"));
        }
        source = cause.source();
    }
    text
}

/// Longest token lifetime `chatd token` and `POST /v1/tokens` mint: ten years.
const MAX_TOKEN_TTL_SECS: u64 = chatd::auth::MAX_TOKEN_TTL_SECS;

async fn serve(config: Config) -> Result<(), AnyError> {
    telemetry::init_tracing(&config.log, config.log_format)?;
    // One descriptor per session: the soft limit up to the hard one
    // (src/fd_limit.rs), before the listener opens.
    match chatd::fd_limit::raise_to_hard() {
        Ok(limit) => tracing::info!(
            soft = ?limit.soft,
            hard = ?limit.hard,
            soft_before = ?limit.soft_before,
            "open-file limit"
        ),
        Err(error) => tracing::warn!(%error, "cannot raise the open-file limit to its hard limit"),
    }
    // Installed before anything is announced (see `shutdown_signal`).
    let signal = startup::shutdown_signal();
    let app = Application::build(config).await?;
    app.run_until_stopped(signal).await?;
    Ok(())
}

async fn migrate(config: Config) -> Result<(), AnyError> {
    telemetry::init_tracing(&config.log, config.log_format)?;
    let store = startup::open_store(&config).await?;
    tracing::info!(database = store.backend_name(), "migrations applied");
    store.close().await;
    Ok(())
}

fn token(config: &Config, user_id: &str, ttl: Option<u64>) -> Result<(), AnyError> {
    let user = UserId::parse(user_id).map_err(|e| format!("invalid user id: {e}"))?;
    let secrets = config.secrets()?;
    for warning in secrets.warnings() {
        eprintln!("chatd: warning: weak secret: {warning}");
    }
    if let (true, Some(file)) = (secrets.jwt_secret_generated, &secrets.file) {
        eprintln!(
            "chatd: warning: there was no jwt_secret, so a new one was written to {}: only a server that reads it \
             accepts this token (run `chatd token` where the server runs, with its data directory or CHATD_JWT_SECRET)",
            file.display()
        );
    }
    let auth = Auth::from_config(config, &secrets).map_err(|e| format!("configuration: jwt keys: {e}"))?;
    let ttl = ttl.unwrap_or(config.token_ttl_secs);
    if ttl == 0 || ttl > MAX_TOKEN_TTL_SECS {
        return Err(format!("--ttl must be between 1 and {MAX_TOKEN_TTL_SECS} seconds").into());
    }
    let (token, _) = auth.mint(&user, ttl)?;
    println!("{token}");
    Ok(())
}
