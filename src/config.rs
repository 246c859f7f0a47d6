//! Settings: defaults, then `config/chatd.toml`, then `CHATD_*` environment
//! variables, then command-line flags, each overriding the one before
//! (`docs/configuration.md` lists every key). Secrets that are not configured
//! are generated on first start into `<data_dir>/secrets.toml` (mode 0600).

use std::path::{Path, PathBuf};
use std::time::Duration;

use figment::providers::{Env, Format, Serialized, Toml};
use figment::Figment;
use serde::{Deserialize, Serialize};

/// The config file read when neither `--config` nor `CHATD_CONFIG` names one.
pub const DEFAULT_CONFIG_FILE: &str = "config/chatd.toml";

/// Settings that are text even when they look like numbers.
const TEXT_KEYS: &[&str] = &[
    "listen",
    "database_url",
    "data_dir",
    "jwt_secret",
    "admin_token",
    "jwt_issuer",
    "jwt_audience",
    "nats_url",
    "nats_subject_prefix",
    "log",
];

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines (the default).
    #[default]
    Pretty,
    /// One JSON object per line, for log shippers.
    Json,
}

/// Every setting of the server. Field names are the TOML keys; the environment
/// variable is `CHATD_` + the key in upper case (`listen` → `CHATD_LISTEN`).
#[derive(Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// HTTP and WebSocket listen address, `host:port`.
    #[serde(deserialize_with = "lenient::string")]
    pub listen: String,
    /// `postgres://…` or `sqlite://path`; unset: `sqlite://<data_dir>/chatd.db`.
    #[serde(deserialize_with = "lenient::opt_string")]
    pub database_url: Option<String>,
    /// Where the embedded database and generated secrets live.
    pub data_dir: PathBuf,
    /// HS256 secret for user tokens (UTF-8 bytes used as they are); unset: generated.
    #[serde(deserialize_with = "lenient::opt_string", skip_serializing)]
    pub jwt_secret: Option<String>,
    /// Bearer token of the admin API; unset: generated.
    #[serde(deserialize_with = "lenient::opt_string", skip_serializing)]
    pub admin_token: Option<String>,
    /// When set, user tokens must carry this `iss`.
    #[serde(deserialize_with = "lenient::opt_string")]
    pub jwt_issuer: Option<String>,
    /// When set, user tokens must carry this `aud`.
    #[serde(deserialize_with = "lenient::opt_string")]
    pub jwt_audience: Option<String>,
    /// Clock leeway for `exp` and `nbf`, seconds (at most 60).
    pub jwt_leeway_secs: u64,
    /// Lifetime of tokens minted by `chatd token` and `POST /v1/tokens` without a TTL, seconds.
    pub token_ttl_secs: u64,
    /// NATS server(s) for fan-out across several nodes, comma-separated
    /// (`nats://host:4222,nats://other:4222`); unset: single node, in-process fan-out.
    #[serde(deserialize_with = "lenient::opt_string")]
    pub nats_url: Option<String>,
    /// First token(s) of every NATS subject this node uses (`<prefix>.c.…`,
    /// `<prefix>.u.…`); nodes of one cluster must share it.
    #[serde(deserialize_with = "lenient::string")]
    pub nats_subject_prefix: String,
    /// How long a node holds a channel's message whose lower `seq` has not
    /// arrived yet before reading the missing ones from the database, ms.
    pub cluster_gap_wait_ms: u64,
    /// Log filter in `tracing` `EnvFilter` syntax.
    #[serde(deserialize_with = "lenient::string")]
    pub log: String,
    /// `pretty` or `json`.
    pub log_format: LogFormat,
    /// Largest WebSocket message after reassembly, bytes; larger closes with 1009.
    pub max_frame_bytes: usize,
    /// Largest MSG_SEND body, bytes of UTF-8; larger gets `body_too_large`.
    pub max_body_bytes: usize,
    /// Frames queued per session, beyond room for its in-flight sends' ACKs,
    /// before it counts as too slow and is closed with 1013.
    pub outbound_queue: usize,
    /// Bytes of encoded frames queued per session before it counts as too
    /// slow and is closed with 1013 (the frame bound alone let a session that
    /// does not read hold 1024 SYNC_BATCH frames of megabytes each).
    pub outbound_queue_bytes: usize,
    /// Most bytes of messages one SYNC_BATCH or one history page
    /// (`GET /v1/channels/{channelId}/messages`) carries, bytes of JSON (an
    /// upper bound of their encoding): a page stops early, with `hasMore:
    /// true`, once the next message would pass it (it always carries at least
    /// one), so a page of 500 large messages does not become one frame or
    /// response of tens of MB. The default, 1 MiB, is also the largest
    /// message common WebSocket clients take by default (Python `websockets`).
    pub max_page_bytes: usize,
    /// Largest HTTP request body, bytes; past it the answer is 413 (at once
    /// when `Content-Length` declares more).
    pub max_request_bytes: usize,
    /// Most `members` one `POST /v1/channels` may name; more get 400
    /// `invalid_field` (more join with `PUT`). A 2 MiB body holds about
    /// 300,000 short ids, which PostgreSQL takes longer than the default
    /// `db_timeout_ms` to insert: a clear refusal beats a 503 that no retry
    /// can fix.
    pub max_members_per_request: usize,
    /// Largest channel `metadata` (`PATCH /v1/channels/{channelId}`), bytes
    /// of its serialized JSON; more gets 400 `invalid_field`.
    pub max_channel_metadata_bytes: usize,
    /// Sends a connection may have waiting for their ACK; past it the server stops reading.
    pub max_sends_in_flight: usize,
    /// Longest time a client may take to send its HTTP request head (the
    /// WebSocket handshake included), ms; slower connections are closed.
    pub handshake_timeout_ms: u64,
    /// Most WebSocket sessions on this node; past it the upgrade gets 503.
    pub max_connections: usize,
    /// Most WebSocket sessions of one user on this node; past it the upgrade gets 429.
    pub max_connections_per_user: usize,
    /// Frames per second one connection may send on average; 0 switches the limit off.
    pub rate_limit_per_sec: u32,
    /// Frames one connection may send at once above its average rate.
    pub rate_limit_burst: u32,
    /// Frames per second one user may send across its connections on this node; 0: off.
    pub user_rate_limit_per_sec: u32,
    /// Frames one user may send at once above its average rate.
    pub user_rate_limit_burst: u32,
    /// Rate-limited frames in a row a connection may send; the next one closes it with 1008.
    pub max_rate_limited: u32,
    /// Bad frames in a row a connection may send; the next one is answered and
    /// the connection closed with 1008.
    pub max_bad_frames: u32,
    /// Seconds sessions get to finish on SIGTERM/SIGINT before they are dropped.
    pub shutdown_grace: u64,
    /// Seconds between WebSocket pings; a peer silent for three intervals is closed.
    pub ping_interval_secs: u64,
    /// Largest number of database connections in the pool.
    pub db_max_connections: u32,
    /// Milliseconds any one database call may take (getting a connection, every
    /// statement, the commit), and within which a send is answered: past it the
    /// answer is `unavailable` (nothing stored), or `internal` when a commit was
    /// in flight (outcome unknown).
    pub db_timeout_ms: u64,
    /// Number of group-commit writer tasks; each channel is always served by
    /// the same one. Each has one transaction in flight at a time.
    pub writer_shards: usize,
    /// Most sends written in one transaction.
    pub max_batch: usize,
    /// WebSocket read buffer per connection, bytes: allocated when the
    /// connection opens and held while it is open, so it is most of what an
    /// idle connection costs. Frames larger than it are read in several
    /// chunks (the frame limit is `max_frame_bytes`, not this).
    pub ws_read_buffer_bytes: usize,
    /// WebSocket write buffer per connection, bytes (writes are flushed past it).
    pub ws_write_buffer_bytes: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".into(),
            database_url: None,
            data_dir: PathBuf::from("./data"),
            jwt_secret: None,
            admin_token: None,
            jwt_issuer: None,
            jwt_audience: None,
            jwt_leeway_secs: 30,
            token_ttl_secs: 86_400,
            nats_url: None,
            nats_subject_prefix: "chatd".into(),
            cluster_gap_wait_ms: 100,
            log: "info".into(),
            log_format: LogFormat::Pretty,
            max_frame_bytes: 65_536,
            max_body_bytes: 16_384,
            outbound_queue: 1_024,
            outbound_queue_bytes: 16 * 1024 * 1024,
            max_page_bytes: 1024 * 1024,
            max_request_bytes: 2 * 1024 * 1024,
            max_members_per_request: 100_000,
            max_channel_metadata_bytes: 16_384,
            max_sends_in_flight: 1_024,
            max_bad_frames: 100,
            handshake_timeout_ms: 10_000,
            max_connections: 10_000,
            max_connections_per_user: 100,
            rate_limit_per_sec: 200,
            rate_limit_burst: 2_000,
            user_rate_limit_per_sec: 1_000,
            user_rate_limit_burst: 10_000,
            max_rate_limited: 100,
            shutdown_grace: 10,
            ping_interval_secs: 30,
            db_max_connections: 16,
            db_timeout_ms: 5_000,
            writer_shards: 2,
            max_batch: 256,
            ws_read_buffer_bytes: 4 * 1024,
            ws_write_buffer_bytes: 8 * 1024,
        }
    }
}

/// Shows every setting but the secrets (they are `skip_serializing`), so a
/// `Debug` print never leaks them.
impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match serde_json::to_string(self) {
            Ok(json) => write!(f, "Config {json}"),
            Err(_) => f.write_str("Config { .. }"),
        }
    }
}

/// Command-line overrides; `None` leaves the value from file and environment.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Overrides {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listen: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
}

/// A configuration that could not be loaded or is out of range.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("configuration: {0}")]
    Load(#[from] Box<figment::Error>),
    #[error("configuration: {0}")]
    Invalid(String),
    #[error("secrets file {path}: {source}")]
    Secrets {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("secrets file {path}: {message}")]
    SecretsFormat { path: PathBuf, message: String },
}

impl Config {
    /// Loads the layered configuration.
    ///
    /// `file` is the config file to read (it must exist); `None` reads
    /// `CHATD_CONFIG` or else [`DEFAULT_CONFIG_FILE`] when it exists.
    ///
    /// # Errors
    /// [`ConfigError::Load`] naming the source and key of a bad value, or
    /// [`ConfigError::Invalid`] for a value out of range.
    pub fn load(file: Option<&Path>, overrides: &Overrides) -> Result<Self, ConfigError> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        let env_file = std::env::var_os("CHATD_CONFIG").map(PathBuf::from);
        match file.map(Path::to_path_buf).or(env_file) {
            Some(path) => {
                if !path.is_file() {
                    let what = if path.is_dir() {
                        "is a directory, not a file"
                    } else if path.exists() {
                        "is not a regular file"
                    } else {
                        "not found"
                    };
                    return Err(ConfigError::Invalid(format!("config file {} {what}", path.display())));
                }
                figment = figment.merge(Toml::file_exact(path));
            }
            // Only the working directory's file, not a parent's; absent is fine.
            None if Path::new(DEFAULT_CONFIG_FILE).is_file() => {
                figment = figment.merge(Toml::file_exact(DEFAULT_CONFIG_FILE))
            }
            None => {}
        }
        // figment parses env values ("1.50" becomes 1.5); text settings are
        // taken verbatim instead.
        let text_from_env: std::collections::BTreeMap<&str, String> = TEXT_KEYS
            .iter()
            .filter_map(|key| {
                std::env::var(format!("CHATD_{}", key.to_uppercase()))
                    .ok()
                    .map(|v| (*key, v))
            })
            .collect();
        let config: Config = figment
            .merge(
                Env::prefixed("CHATD_")
                    .ignore(&["config"])
                    .filter(|key| !TEXT_KEYS.contains(&key.as_str())),
            )
            .merge(Serialized::defaults(text_from_env))
            .merge(Serialized::defaults(overrides))
            .extract()
            .map_err(Box::new)?;
        config.validate()?;
        Ok(config)
    }

    /// Checks ranges that serde cannot express.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: &str| Err(ConfigError::Invalid(m.to_owned()));
        if self.jwt_leeway_secs > 60 {
            return bad("jwt_leeway_secs must be at most 60");
        }
        if self.max_body_bytes == 0 || self.max_frame_bytes < 1024 {
            return bad("max_body_bytes must be positive and max_frame_bytes at least 1024");
        }
        if self.outbound_queue == 0 || self.max_sends_in_flight == 0 {
            return bad("outbound_queue and max_sends_in_flight must be positive");
        }
        if self.max_page_bytes == 0 || self.max_request_bytes == 0 || self.max_members_per_request == 0 {
            return bad("max_page_bytes, max_request_bytes and max_members_per_request must be positive");
        }
        let least = self.least_outbound_queue_bytes();
        if self.outbound_queue_bytes < least {
            return bad(&format!(
                "outbound_queue_bytes must be at least {least}: 2 MiB, and two of the largest frame \
                 (a SYNC_BATCH page of max_page_bytes, or one MSG_RECV of max_body_bytes)"
            ));
        }
        if self.writer_shards == 0 || self.max_batch == 0 || self.db_max_connections == 0 {
            return bad("writer_shards, max_batch and db_max_connections must be positive");
        }
        if self.max_connections == 0 || self.max_connections_per_user == 0 || self.handshake_timeout_ms == 0 {
            return bad("max_connections, max_connections_per_user and handshake_timeout_ms must be positive");
        }
        if self.token_ttl_secs == 0 || self.token_ttl_secs > crate::auth::MAX_TOKEN_TTL_SECS {
            return bad("token_ttl_secs must be between 1 and 315360000");
        }
        if self.db_timeout_ms == 0 {
            return bad("db_timeout_ms must be positive");
        }
        if tracing_subscriber::EnvFilter::try_new(&self.log).is_err() {
            return bad("log is not a valid tracing filter (e.g. \"info\" or \"chatd=debug,info\")");
        }
        if self.ping_interval_secs == 0 {
            return bad("ping_interval_secs must be positive");
        }
        if let Some(url) = &self.nats_url {
            if crate::cluster::parse_nats_urls(url).is_err() {
                return bad("nats_url must be one or more NATS URLs, comma-separated (e.g. nats://localhost:4222)");
            }
            // Nodes share one database; an SQLite file is one node's.
            if self.database_url().starts_with("sqlite:") {
                return bad("nats_url (several nodes) needs a PostgreSQL database_url (postgres://...); SQLite serves one node only");
            }
        }
        if !crate::cluster::valid_subject_prefix(&self.nats_subject_prefix) {
            return bad(
                "nats_subject_prefix must be dot-separated tokens of letters, digits, '_' and '-' (e.g. \"chatd\")",
            );
        }
        if self.cluster_gap_wait_ms == 0 || self.cluster_gap_wait_ms > 60_000 {
            return bad("cluster_gap_wait_ms must be between 1 and 60000");
        }
        if self.data_dir.exists() && !self.data_dir.is_dir() {
            return bad(&format!("data_dir {} is not a directory", self.data_dir.display()));
        }
        if let Some(url) = &self.database_url {
            if let Some(message) = database_url_problem(url) {
                return bad(&message);
            }
        }
        // Upper bounds: past them a value allocates, overflows a time or
        // passes a database's own limit, and the server would panic or abort
        // after it started (a breaker helper found each one).
        for (key, value, most) in self.upper_bounds() {
            if value > most {
                return Err(ConfigError::Invalid(format!("{key} must be at most {most}")));
            }
        }
        // Secrets have no length floor: a configured one is used as it is
        // (the wire contract), with a warning at start when it is short
        // ([`Secrets::warnings`]); an empty value counts as unset.
        Ok(())
    }

    /// The smallest `outbound_queue_bytes` that can always take the largest
    /// frame twice: 2 MiB, or twice the larger of a SYNC_BATCH page
    /// (`max_page_bytes`; a page holds at least one message, however large)
    /// and one message of `max_body_bytes` in the worst JSON escaping (6
    /// bytes per byte, `\u00XX`, plus 1 KiB of ids and field names). Below it
    /// a session is closed with 1013 on every large message, however fast it
    /// reads (found by a breaker helper with a 4 KiB queue).
    pub fn least_outbound_queue_bytes(&self) -> usize {
        let message = self.max_body_bytes.saturating_mul(6).saturating_add(1024);
        self.max_page_bytes.max(message).saturating_mul(2).max(2 * 1024 * 1024)
    }

    /// Each numeric setting with an upper bound: (key, value, most).
    /// Documented in docs/configuration.md, "Validation".
    fn upper_bounds(&self) -> [(&'static str, u64, u64); 16] {
        const MIB: u64 = 1024 * 1024;
        let n = |v: usize| u64::try_from(v).unwrap_or(u64::MAX);
        [
            ("max_frame_bytes", n(self.max_frame_bytes), 64 * MIB),
            ("max_body_bytes", n(self.max_body_bytes), 64 * MIB),
            ("ws_read_buffer_bytes", n(self.ws_read_buffer_bytes), 64 * MIB),
            ("ws_write_buffer_bytes", n(self.ws_write_buffer_bytes), 64 * MIB),
            ("outbound_queue", n(self.outbound_queue), 1_000_000),
            ("max_page_bytes", n(self.max_page_bytes), 64 * MIB),
            ("max_sends_in_flight", n(self.max_sends_in_flight), 1_000_000),
            ("max_connections", n(self.max_connections), 10_000_000),
            ("max_connections_per_user", n(self.max_connections_per_user), 10_000_000),
            ("writer_shards", n(self.writer_shards), 256),
            ("max_batch", n(self.max_batch), 10_000),
            ("db_max_connections", u64::from(self.db_max_connections), 10_000),
            ("db_timeout_ms", self.db_timeout_ms, 3_600_000),
            ("handshake_timeout_ms", self.handshake_timeout_ms, 3_600_000),
            ("ping_interval_secs", self.ping_interval_secs, 86_400),
            ("shutdown_grace", self.shutdown_grace, 86_400),
        ]
    }

    /// The database URL in force: the configured one, or the embedded SQLite file.
    pub fn database_url(&self) -> String {
        match &self.database_url {
            Some(url) => url.clone(),
            None => sqlite_file_url(&self.data_dir.join("chatd.db")),
        }
    }

    /// See `handshake_timeout_ms`.
    pub fn handshake_timeout(&self) -> Duration {
        Duration::from_millis(self.handshake_timeout_ms)
    }

    /// See `cluster_gap_wait_ms`.
    pub fn cluster_gap_wait(&self) -> Duration {
        Duration::from_millis(self.cluster_gap_wait_ms)
    }

    /// See `db_timeout_ms`.
    pub fn db_timeout(&self) -> Duration {
        Duration::from_millis(self.db_timeout_ms)
    }
}

/// The secrets in force once generated ones are filled in.
#[derive(Clone)]
pub struct Secrets {
    /// HS256 key bytes.
    pub jwt_secret: String,
    /// Admin bearer token.
    pub admin_token: String,
    /// The secrets file, when any secret came from it.
    pub file: Option<PathBuf>,
}

/// Shortest `jwt_secret` that is not warned about, bytes: RFC 7518 §3.2 asks
/// for an HS256 key at least as long as the hash output (256 bits).
pub const JWT_SECRET_RECOMMENDED_BYTES: usize = 32;

/// Shortest `admin_token` that is not warned about, bytes (128 bits).
pub const ADMIN_TOKEN_RECOMMENDED_BYTES: usize = 16;

impl Secrets {
    /// What is weak about these secrets, one sentence each (never the
    /// secrets themselves): a `jwt_secret` shorter than
    /// [`JWT_SECRET_RECOMMENDED_BYTES`] or an `admin_token` shorter than
    /// [`ADMIN_TOKEN_RECOMMENDED_BYTES`]. They are still used as they are (the
    /// wire contract says a configured secret is used as it is); `chatd serve`
    /// logs each as a warning and `chatd token` prints it on stderr.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if self.jwt_secret.len() < JWT_SECRET_RECOMMENDED_BYTES {
            warnings.push(format!(
                "jwt_secret is {} bytes; RFC 7518 §3.2 asks for at least {JWT_SECRET_RECOMMENDED_BYTES} for HS256, \
                 and a short one can be guessed offline from any token",
                self.jwt_secret.len()
            ));
        }
        if self.admin_token.len() < ADMIN_TOKEN_RECOMMENDED_BYTES {
            warnings.push(format!(
                "admin_token is {} bytes; use at least {ADMIN_TOKEN_RECOMMENDED_BYTES} random bytes",
                self.admin_token.len()
            ));
        }
        warnings
    }
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secrets")
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct SecretsFile {
    #[serde(skip_serializing_if = "Option::is_none")]
    jwt_secret: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    admin_token: Option<String>,
}

/// Name of the generated secrets file inside the data directory.
pub const SECRETS_FILE: &str = "secrets.toml";

impl Config {
    /// Returns the configured secrets, reading `<data_dir>/secrets.toml` for
    /// missing ones and generating (and saving, mode 0600) those still missing.
    /// A configured secret is used as it is and never written to the file.
    ///
    /// # Errors
    /// [`ConfigError::Secrets`] when the file cannot be read or written,
    /// [`ConfigError::SecretsFormat`] when it is not valid TOML.
    pub fn secrets(&self) -> Result<Secrets, ConfigError> {
        if let (Some(jwt_secret), Some(admin_token)) = (&self.jwt_secret, &self.admin_token) {
            return Ok(Secrets {
                jwt_secret: jwt_secret.clone(),
                admin_token: admin_token.clone(),
                file: None,
            });
        }
        let path = self.data_dir.join(SECRETS_FILE);
        let io = |source| ConfigError::Secrets {
            path: path.clone(),
            source,
        };
        let mut stored = match std::fs::read_to_string(&path) {
            Ok(text) => toml::from_str::<SecretsFile>(&text).map_err(|e| ConfigError::SecretsFormat {
                path: path.clone(),
                message: e.message().to_owned(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => SecretsFile::default(),
            Err(e) => return Err(io(e)),
        };
        let mut changed = false;
        if self.jwt_secret.is_none() && stored.jwt_secret.is_none() {
            stored.jwt_secret = Some(random_secret());
            changed = true;
        }
        if self.admin_token.is_none() && stored.admin_token.is_none() {
            stored.admin_token = Some(random_secret());
            changed = true;
        }
        if changed {
            write_private(&path, &toml::to_string(&stored).unwrap_or_default()).map_err(io)?;
        }
        let pick =
            |configured: &Option<String>, stored: Option<String>| configured.clone().or(stored).unwrap_or_default();
        let secrets = Secrets {
            jwt_secret: pick(&self.jwt_secret, stored.jwt_secret),
            admin_token: pick(&self.admin_token, stored.admin_token),
            file: Some(path.clone()),
        };
        // An empty line in a hand-edited file is a mistake, not a key (an
        // empty configured value counts as unset instead).
        if secrets.jwt_secret.is_empty() || secrets.admin_token.is_empty() {
            return Err(ConfigError::SecretsFormat {
                path,
                message: "jwt_secret and admin_token must not be empty (delete the line to have one generated)".into(),
            });
        }
        Ok(secrets)
    }
}

/// The `sqlite://` URL of the file at `path`, as sqlx reads it back: `%`,
/// `?` and `#` percent-escaped (sqlx decodes the path, and would take `?` for
/// a query), and a relative path led by `./` so it can never start like a
/// scheme, `file:` or `:memory:` (found by a breaker helper: a `data_dir` of
/// `/tmp/x-50%41` put the database in `/tmp/x-50A`).
pub fn sqlite_file_url(path: &Path) -> String {
    let text = path.display().to_string();
    let text = if path.is_absolute() || text.starts_with("./") || text.starts_with("../") {
        text
    } else {
        format!("./{text}")
    };
    let mut url = String::from("sqlite://");
    for c in text.chars() {
        match c {
            '%' => url.push_str("%25"),
            '?' => url.push_str("%3F"),
            '#' => url.push_str("%23"),
            c => url.push(c),
        }
    }
    url
}

/// Why `url` cannot be the database, or `None`. Only PostgreSQL, and SQLite
/// as a plain file path: `sqlite://relative/path` or `sqlite:///absolute/path`,
/// without a query string, percent-escapes or a `file:` URI (chatd sets every
/// SQLite option itself). A breaker helper found that an SQLite URL without
/// a path started a server whose sessions all failed, and that an in-memory
/// database (`sqlite::memory:`, `?mode=memory`, and spellings of them that
/// sqlx decodes: `%6Demory`, `file::memory:`, `vfs=memdb`, a repeated scheme
/// as in `sqlite://sqlite::memory:`) acknowledged messages a restart then
/// lost, against "persist before ACK". The path is taken the way sqlx takes
/// it (every leading `sqlite://`, then every `sqlite:`, removed), and only
/// the plain form is accepted, so no spelling can slip through.
fn database_url_problem(url: &str) -> Option<String> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return None;
    }
    if !url.starts_with("sqlite:") {
        return Some("database_url must be postgres://… or sqlite://path".into());
    }
    // As `SqliteConnectOptions::from_str` does.
    let path = url.trim_start_matches("sqlite://").trim_start_matches("sqlite:");
    let plain =
        !path.is_empty() && !path.contains(['?', '#', '%']) && !path.starts_with("file:") && !path.starts_with(':');
    if plain {
        return None;
    }
    Some(
        "database_url: an SQLite URL is a file path without query or escapes \
         (sqlite://relative/path or sqlite:///absolute/path); in-memory databases \
         would lose acknowledged messages"
            .into(),
    )
}

/// 32 random bytes as 64 hex characters.
fn random_secret() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Creates `dir` and its missing parents with mode 0700 (on Unix); existing
/// directories are left as they are. Used for `data_dir`, which holds the
/// secrets and the SQLite database.
///
/// # Errors
/// The file system's error.
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.as_os_str().is_empty() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Writes `text` to `path` with mode 0600 (created that way, never widened),
/// through a temporary file and a rename so a crash leaves the old file whole.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    let tmp = path.with_extension("toml.tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&tmp)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// Serde helpers that accept numbers and booleans where text is expected:
/// figment parses `CHATD_JWT_SECRET=1234…` as a number.
mod lenient {
    use serde::{Deserialize, Deserializer};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Scalar {
        S(String),
        I(i64),
        U(u64),
        F(f64),
        B(bool),
    }

    impl Scalar {
        fn into_string(self) -> String {
            match self {
                Scalar::S(s) => s,
                Scalar::I(n) => n.to_string(),
                Scalar::U(n) => n.to_string(),
                Scalar::F(n) => n.to_string(),
                Scalar::B(b) => b.to_string(),
            }
        }
    }

    pub fn string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        Scalar::deserialize(d).map(Scalar::into_string)
    }

    pub fn opt_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        Ok(Option::<Scalar>::deserialize(d)?
            .map(Scalar::into_string)
            .filter(|s| !s.is_empty()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_secrets_are_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            data_dir: dir.path().to_path_buf(),
            ..Config::default()
        };
        let first = config.secrets().unwrap();
        assert_eq!(first.jwt_secret.len(), 64);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let made = Config {
                data_dir: dir.path().join("new"),
                ..Config::default()
            };
            made.secrets().unwrap();
            let mode = std::fs::metadata(dir.path().join("new")).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "a data_dir chatd creates is private");
        }
        assert_ne!(first.jwt_secret, first.admin_token);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(SECRETS_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let second = config.secrets().unwrap();
        assert_eq!(first.jwt_secret, second.jwt_secret);
        assert_eq!(first.admin_token, second.admin_token);
    }

    #[test]
    fn configured_secrets_are_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            data_dir: dir.path().to_path_buf(),
            jwt_secret: Some("s".repeat(32)),
            ..Config::default()
        };
        let secrets = config.secrets().unwrap();
        assert_eq!(secrets.jwt_secret, "s".repeat(32));
        let text = std::fs::read_to_string(dir.path().join(SECRETS_FILE)).unwrap();
        assert!(!text.contains("jwt_secret"), "configured secret written: {text}");
        assert!(text.contains("admin_token"));
    }

    #[test]
    fn the_shipped_config_file_holds_exactly_the_defaults() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_CONFIG_FILE);
        let from_file: Config = Figment::from(Serialized::defaults(Config::default()))
            .merge(Toml::file_exact(&path))
            .extract()
            .unwrap();
        assert_eq!(
            serde_json::to_value(&from_file).unwrap(),
            serde_json::to_value(Config::default()).unwrap()
        );
        assert!(
            from_file.jwt_secret.is_none() && from_file.admin_token.is_none(),
            "no secret is shipped"
        );
        // Every key is written out (commented keys count for the unset ones).
        let text = std::fs::read_to_string(&path).unwrap();
        for key in serde_json::to_value(Config::default())
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
        {
            assert!(text.contains(&format!("{key} =")), "config/chatd.toml lacks {key}");
        }
    }

    #[test]
    fn debug_output_hides_secrets() {
        let config = Config {
            jwt_secret: Some("j".repeat(40)),
            admin_token: Some("a".repeat(40)),
            ..Config::default()
        };
        let shown = format!("{config:?}");
        assert!(shown.contains("max_body_bytes"));
        assert!(!shown.contains(&"j".repeat(40)) && !shown.contains(&"a".repeat(40)));
    }

    #[test]
    fn database_urls_are_files_or_postgres() {
        for good in [
            "postgres://u@h/db",
            "postgresql://h/db?sslmode=require",
            "sqlite://data/chatd.db",
            "sqlite:///var/lib/chatd/chatd.db",
            "sqlite://./data/chatd.db",
        ] {
            assert_eq!(database_url_problem(good), None, "{good}");
        }
        for bad in [
            "sqlite://",
            "sqlite:",
            "sqlite::memory:",
            "sqlite://:memory:",
            "sqlite://x.db?mode=memory",
            "sqlite://x.db?mode=%6Demory",
            "sqlite://x.db?m%6Fde=memory",
            "sqlite://file::memory:",
            "sqlite://file:x3.db%3Fmode=memory",
            "sqlite://%3Amemory%3A",
            "sqlite://x.db?vfs=memdb",
            "sqlite://x.db?mode=rwc",
            "sqlite://x.db#frag",
            "sqlite://sqlite::memory:",
            "sqlite:sqlite::memory:",
            "sqlite:sqlite:file::memory:",
            "sqlite://sqlite://file:x.db?mode=memory",
            "mysql://h/db",
        ] {
            assert!(database_url_problem(bad).is_some(), "{bad}");
            let config = Config {
                database_url: Some(bad.into()),
                ..Config::default()
            };
            assert!(matches!(config.validate(), Err(ConfigError::Invalid(_))), "{bad}");
        }
    }

    /// The default database URL, from `data_dir`, reads back as that file,
    /// whatever characters the directory's name holds.
    #[test]
    fn the_default_sqlite_url_names_the_data_dir_file() {
        use std::str::FromStr;
        for dir in [
            "/tmp/x-50%41",
            "/tmp/q?x",
            "/tmp/h#1",
            "rel dir",
            "file:x",
            ":memory:",
            "./a",
            "/tmp/ü ö",
        ] {
            let config = Config {
                data_dir: PathBuf::from(dir),
                ..Config::default()
            };
            let url = config.database_url();
            let options = sqlx::sqlite::SqliteConnectOptions::from_str(&url).expect("parses");
            let expected = PathBuf::from(dir).join("chatd.db");
            let got = options.get_filename();
            assert!(
                got == expected || got == Path::new(".").join(&expected),
                "{dir}: {url} opens {got:?}"
            );
        }
    }

    /// Found by a breaker helper: each of these passed validation, then
    /// panicked the writers or sessions, aborted on allocation, was killed
    /// for memory, or failed in the database driver after start.
    #[test]
    fn values_that_would_panic_or_abort_later_are_refused_up_front() {
        type Case = (&'static str, fn(&mut Config));
        let cases: [Case; 5] = [
            ("max_batch", |c| c.max_batch = usize::MAX),
            ("max_batch", |c| c.max_batch = 100_000_000_000),
            ("writer_shards", |c| c.writer_shards = 100_000_000),
            ("ping_interval_secs", |c| c.ping_interval_secs = u64::MAX),
            ("db_timeout_ms", |c| c.db_timeout_ms = 2_147_483_648),
        ];
        for (key, set) in cases {
            let mut config = Config::default();
            set(&mut config);
            match config.validate() {
                Err(ConfigError::Invalid(message)) => assert!(message.starts_with(key), "{key}: {message}"),
                other => panic!("{key}: {other:?}"),
            }
        }
        // Each bound itself is allowed.
        let mut config = Config::default();
        for (key, _, most) in config.upper_bounds() {
            let most = usize::try_from(most).unwrap();
            match key {
                "max_frame_bytes" => config.max_frame_bytes = most,
                "max_body_bytes" => config.max_body_bytes = most,
                "ws_read_buffer_bytes" => config.ws_read_buffer_bytes = most,
                "ws_write_buffer_bytes" => config.ws_write_buffer_bytes = most,
                "outbound_queue" => config.outbound_queue = most,
                "max_page_bytes" => config.max_page_bytes = most,
                "max_sends_in_flight" => config.max_sends_in_flight = most,
                "max_connections" => config.max_connections = most,
                "max_connections_per_user" => config.max_connections_per_user = most,
                "writer_shards" => config.writer_shards = most,
                "max_batch" => config.max_batch = most,
                "db_max_connections" => config.db_max_connections = u32::try_from(most).unwrap(),
                "db_timeout_ms" => config.db_timeout_ms = most as u64,
                "handshake_timeout_ms" => config.handshake_timeout_ms = most as u64,
                "ping_interval_secs" => config.ping_interval_secs = most as u64,
                "shutdown_grace" => config.shutdown_grace = most as u64,
                other => panic!("no case for {other}"),
            }
        }
        config.outbound_queue_bytes = config.least_outbound_queue_bytes();
        assert!(config.validate().is_ok(), "{:?}", config.validate());
    }

    /// Found by a breaker helper: `max_page_bytes = 2048` with
    /// `outbound_queue_bytes = 4096` passed ("twice max_page_bytes"), and
    /// every 16 KB message then closed its recipients with 1013, again after
    /// every reconnect.
    #[test]
    fn the_outbound_queue_takes_the_largest_frame_twice() {
        let defaults = Config::default();
        assert_eq!(defaults.least_outbound_queue_bytes(), 2 * 1024 * 1024);
        let config = Config {
            max_page_bytes: 2048,
            outbound_queue_bytes: 4096,
            ..Config::default()
        };
        assert!(matches!(config.validate(), Err(ConfigError::Invalid(m)) if m.starts_with("outbound_queue_bytes")));
        let config = Config {
            max_body_bytes: 1024 * 1024,
            outbound_queue_bytes: 4 * 1024 * 1024,
            ..Config::default()
        };
        assert_eq!(config.least_outbound_queue_bytes(), 2 * (6 * 1024 * 1024 + 1024));
        assert!(config.validate().is_err());
    }

    #[test]
    fn nats_settings_are_checked() {
        let with = |f: fn(&mut Config)| {
            let mut config = Config::default();
            f(&mut config);
            config.validate()
        };
        assert!(with(|_| {}).is_ok(), "NATS unset by default");
        assert!(with(|c| {
            c.nats_url = Some("nats://127.0.0.1:4222,nats://b:4222".into());
            c.database_url = Some("postgres://chatd@db/chatd".into());
        })
        .is_ok());
        // Several nodes need one shared database: SQLite is refused.
        assert!(with(|c| c.nats_url = Some("nats://127.0.0.1:4222".into())).is_err());
        assert!(with(|c| c.nats_url = Some(",".into())).is_err());
        assert!(with(|c| c.nats_subject_prefix = "prod.chatd".into()).is_ok());
        for bad in ["", "a.", "a.*", "a b", "x.>"] {
            let mut config = Config {
                nats_subject_prefix: bad.into(),
                ..Config::default()
            };
            assert!(config.validate().is_err(), "{bad:?}");
            config.nats_subject_prefix = "chatd".into();
            assert!(config.validate().is_ok());
        }
        assert!(with(|c| c.cluster_gap_wait_ms = 0).is_err());
        assert!(with(|c| c.cluster_gap_wait_ms = 60_001).is_err());
        assert!(with(|c| c.cluster_gap_wait_ms = 1).is_ok());
    }

    #[test]
    fn short_secrets_are_used_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            jwt_secret: Some("short".into()),
            admin_token: Some("adm".into()),
            data_dir: dir.path().to_path_buf(),
            ..Config::default()
        };
        assert!(config.validate().is_ok());
        let secrets = config.secrets().unwrap();
        assert_eq!(
            (secrets.jwt_secret.as_str(), secrets.admin_token.as_str()),
            ("short", "adm")
        );
        let warnings = secrets.warnings();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].starts_with("jwt_secret is 5 bytes"), "{warnings:?}");
        assert!(warnings[1].starts_with("admin_token is 3 bytes"), "{warnings:?}");
        let strong = Secrets {
            jwt_secret: "j".repeat(JWT_SECRET_RECOMMENDED_BYTES),
            admin_token: "a".repeat(ADMIN_TOKEN_RECOMMENDED_BYTES),
            file: None,
        };
        assert!(strong.warnings().is_empty());
    }
}
