//! Every setting of the server ([`Config`]) and its default, and the bounds
//! and defaults other modules read from here.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::lenient;
use crate::database_url::sqlite_file_url;

/// Longest lifetime of a minted token, seconds (ten years): the bound of
/// `token_ttl_secs`, of `chatd token --ttl` and of `POST /v1/tokens`
/// (re-exported as `auth::MAX_TOKEN_TTL_SECS`).
pub const MAX_TOKEN_TTL_SECS: u64 = 10 * 365 * 86_400;

/// The longest retention, seconds (100 years of 365.25 days): the bound of
/// `retention_secs` and of a channel's `retentionSecs` (protocol.md §19;
/// the store and the channel route read it from here).
pub const MAX_RETENTION_SECS: u64 = 3_155_760_000;

/// The default of `max_reactions_per_message`: the most distinct emoji one
/// message may hold (§8), and the longest reaction list a read returns.
pub const DEFAULT_MAX_REACTIONS_PER_MESSAGE: usize = 50;

/// The config file read when neither `--config` nor `CHATD_CONFIG` names one.
pub const DEFAULT_CONFIG_FILE: &str = "config/chatd.toml";

/// The signature algorithm of an identity provider's public key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PublicKeyAlg {
    /// RSASSA-PKCS1-v1_5 with SHA-256 (an RSA public key).
    RS256,
    /// ECDSA on P-256 with SHA-256 (an EC public key).
    ES256,
}

/// One entry of `jwt_public_keys`: a PEM public key file and the `kid` and
/// `alg` of the tokens it verifies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublicKeyFile {
    /// The `kid` header value of the tokens this key signs (1 to 256 chars).
    pub kid: String,
    /// `RS256` or `ES256`; a token with this `kid` must carry this `alg`.
    pub alg: PublicKeyAlg,
    /// The PEM file (`-----BEGIN PUBLIC KEY-----`, or `BEGIN RSA PUBLIC KEY`).
    pub path: PathBuf,
}

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

/// Who may open a direct channel with whom (`PUT /v1/me/direct/{userId}`,
/// protocol.md §13.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DmPolicy {
    /// Any user with any other (the default).
    #[default]
    Anyone,
    /// Only users who share a group channel.
    SharedChannel,
    /// No one: every new direct channel is refused.
    Off,
}

/// Where the webhook feed starts on a database it has not run on before
/// (`webhook_start`, docs/protocol.md "Webhooks").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum WebhookStart {
    /// With the entries stored from the feed's first start on (the
    /// default): an existing history is not sent.
    #[default]
    Now,
    /// With every channel's first entry: the whole history is sent.
    Beginning,
}

/// Where attachment bytes are kept (`attachments_store`, protocol.md §15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum AttachmentsStore {
    /// Files under `<data_dir>/attachments` (the default; one node, or
    /// several sharing that directory).
    #[default]
    File,
    /// An S3-compatible bucket (`attachments_s3_*`, credentials from the
    /// standard AWS environment variables).
    S3,
}

/// The `attachment_types` every server accepts unless configured otherwise.
pub const DEFAULT_ATTACHMENT_TYPES: &[&str] = &[
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "application/pdf",
    "text/plain",
    "audio/mpeg",
    "audio/ogg",
    "video/mp4",
    "application/zip",
    "application/octet-stream",
];

/// Every setting of the server. Field names are the TOML keys; the environment
/// variable is `CHATD_` + the key in upper case (`listen` → `CHATD_LISTEN`).
#[derive(Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// HTTP and WebSocket listen address, `host:port`.
    #[serde(deserialize_with = "lenient::string")]
    pub listen: String,
    /// Length of the kernel's queue of connections not yet accepted on
    /// `listen` (the `backlog` of `listen(2)`), connections. Linux caps it at
    /// `net.core.somaxconn` (4096 by default since 5.4). A reconnect storm
    /// (every client of a restarted node at once) overflows a short queue:
    /// the kernel drops the SYNs past it and the clients retry after 1, 3,
    /// 7 s. Default 4096 (tokio's own is 1024).
    pub listen_backlog: u32,
    /// Where the admin routes are served, `host:port` (port 0 picks a free
    /// one). Unset: on `listen`, with everything else. Set: only here, and
    /// `listen` answers 404 for them and 401 for the admin token on the
    /// routes that also take a user token ([`crate::http::ADMIN_ROUTES`]).
    #[serde(deserialize_with = "lenient::opt_string")]
    pub admin_listen: Option<String>,
    /// `postgres://…` or `sqlite://path`; unset: `sqlite://<data_dir>/chatd.db`.
    #[serde(deserialize_with = "lenient::opt_string")]
    pub database_url: Option<String>,
    /// A PostgreSQL standby (one host) that history, `SYNC` and search may
    /// read from once it has replayed what the primary had committed when
    /// the read began; unset (the default): every read goes to the primary.
    #[serde(deserialize_with = "lenient::opt_string")]
    pub database_replica_url: Option<String>,
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
    /// Public keys of an identity provider (RS256 and ES256 PEM files), each
    /// named by the `kid` its tokens carry: `[{kid, alg, path}]`.
    pub jwt_public_keys: Vec<PublicKeyFile>,
    /// A JWKS document (RFC 7517) on disk whose keys verify tokens by `kid`,
    /// re-read when its modification time or length changes (checked at
    /// most once a second); unset: none.
    #[serde(deserialize_with = "lenient::opt_string")]
    pub jwt_jwks_file: Option<String>,
    /// Origins (`scheme://host[:port]`) whose browsers may call the user
    /// routes cross-origin (CORS); a TOML list, or comma-separated text in
    /// `CHATD_CORS_ALLOWED_ORIGINS`. Empty: no CORS headers at all.
    #[serde(deserialize_with = "lenient::list")]
    pub cors_allowed_origins: Vec<String>,
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
    /// Serve the web console at `/console` (files embedded in the binary);
    /// false: `/console` is 404.
    pub console_enabled: bool,
    /// Whether users may create group channels themselves
    /// (`POST /v1/me/channels`, protocol.md §13).
    pub user_channel_creation: bool,
    /// Who may open a direct channel with whom.
    pub dm_policy: DmPolicy,
    // Typing and presence (`docs/protocol.md`, "Typing and presence").
    /// How long a TYPING `start` lasts (its `expiresAt`), ms.
    pub typing_ttl_ms: u64,
    /// At most one `start` per (user, channel) is forwarded per this, ms.
    pub typing_throttle_ms: u64,
    /// Channels with more members than this get no TYPING fan-out.
    pub typing_max_members: usize,
    /// Most ids one PRESENCE_SUB may list; more get `invalid_field`.
    pub max_presence_subscriptions: usize,
    /// Most distinct users one message may mention (§16); more get
    /// `invalid_field` (`field`: `mentions`).
    pub max_mentions: usize,
    /// Most distinct emoji one message may hold (§8): a reaction `add` of
    /// an emoji no one holds on a message that holds this many gets
    /// `invalid_field` (`field`: `emoji`, `reason`: `too_many_reactions`),
    /// and reads return at most this many of a message's reactions (the
    /// first by first use). 1 … 10000.
    pub max_reactions_per_message: usize,
    /// How long after a user's last session closed `offline` is announced, ms.
    pub presence_grace_ms: u64,
    /// With NATS: a dead node's users go offline elsewhere within this, ms
    /// (nodes announce their online users every third of it).
    pub presence_ttl_ms: u64,
    // Webhooks (`docs/protocol.md`, "Webhooks").
    /// Where every stored log entry is POSTed (`http://` or `https://`);
    /// unset: webhooks off.
    #[serde(deserialize_with = "lenient::opt_string")]
    pub webhook_url: Option<String>,
    /// The HMAC-SHA256 key of `Chatd-Signature` (UTF-8 bytes used as they
    /// are); required with `webhook_url`.
    #[serde(deserialize_with = "lenient::opt_string", skip_serializing)]
    pub webhook_secret: Option<String>,
    /// How long a request without a 2xx answer is retried before its
    /// entries are skipped, seconds (0: never retried).
    pub webhook_max_retry_secs: u64,
    /// Most entries of one channel per request: 1 sends the `entry` body,
    /// more the `entries` body.
    pub webhook_batch_max: usize,
    /// Longest a webhook request may take, connecting included, ms.
    pub webhook_timeout_ms: u64,
    /// Channels whose webhook requests may be in flight at once, per node.
    pub webhook_concurrency: usize,
    /// Where the feed starts the first time it runs on a database: `now`
    /// (entries stored from then on) or `beginning` (every channel's whole
    /// log). Later starts go on from the cursors, whatever it says.
    pub webhook_start: WebhookStart,
    // Attachments (`docs/protocol.md`, "Attachments", §15).
    /// Largest attachment, bytes; larger gets 413 `body_too_large`.
    pub max_attachment_bytes: u64,
    /// The `Content-Type`s an upload may have (media types, compared without
    /// parameters, case-insensitively); others get 415. A TOML list, or
    /// comma-separated text in `CHATD_ATTACHMENT_TYPES`.
    #[serde(deserialize_with = "lenient::list")]
    pub attachment_types: Vec<String>,
    /// Most pixels (width × height) an image attachment may have; more gets
    /// 400 `invalid_field` before it is decoded.
    pub max_image_pixels: u64,
    /// Longer side of an image's thumbnail, pixels.
    pub attachment_thumbnail_px: u32,
    /// Most attachments one message may carry.
    pub max_attachments_per_message: usize,
    /// Lifetime of the signed `url` and `thumbnailUrl` of an attachment, seconds.
    pub attachment_url_ttl_secs: u64,
    /// `file` or `s3`.
    pub attachments_store: AttachmentsStore,
    /// With `s3`: the bucket.
    #[serde(deserialize_with = "lenient::opt_string")]
    pub attachments_s3_bucket: Option<String>,
    /// With `s3`: the endpoint URL of an S3-compatible store
    /// (`http://` allowed); unset: AWS.
    #[serde(deserialize_with = "lenient::opt_string")]
    pub attachments_s3_endpoint: Option<String>,
    /// With `s3`: the region (unset: `AWS_REGION`/`AWS_DEFAULT_REGION`, else `us-east-1`).
    #[serde(deserialize_with = "lenient::opt_string")]
    pub attachments_s3_region: Option<String>,
    /// An upload that is not part of a message this long after it was made
    /// is deleted, seconds.
    pub attachment_orphan_ttl_secs: u64,
    /// The most bytes of one user's uploads that are not part of a message
    /// (not sent yet, not expired), summed over all channels; an upload that
    /// would pass it is refused 429 `rate_limited`. The default, 256 MiB,
    /// holds a whole message's worth at the default limits
    /// (`max_attachments_per_message` × `max_attachment_bytes` = 250 MiB)
    /// while bounding what one member can pile up for
    /// `attachment_orphan_ttl_secs`.
    pub max_unclaimed_upload_bytes: u64,
    /// The most uploads one user may have in progress at once on this node
    /// (from the request's start to its answer); one more is refused 429
    /// `rate_limited` before its body is read.
    pub max_uploads_in_flight_per_user: usize,
    /// The longest one upload's body may take to arrive, seconds, however
    /// steadily it arrives; past it 408. The default, 900 (15 minutes),
    /// lets a 25 MiB file through at about 30 KB/s.
    pub upload_timeout_secs: u64,
    // Data lifecycle (`docs/protocol.md`, "Retention", §19).
    /// `message` entries older than this are erased by the retention sweep
    /// (as by a delete, with no new entry), seconds; 0 keeps them forever. A
    /// channel's `retentionSecs` overrides it. At most 3155760000 (100 years).
    pub retention_secs: u64,
    /// How often the retention sweep runs, seconds (1 to 86400).
    pub retention_sweep_secs: u64,
    /// Erasing a user (§19): at most this many of its entries (deletes,
    /// reaction removals), idempotency keys or memberships are in flight or
    /// in one transaction at a time, so other channels' sends are not held
    /// up behind a large erasure.
    pub erasure_batch: u32,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".into(),
            listen_backlog: 4096,
            admin_listen: None,
            database_url: None,
            database_replica_url: None,
            data_dir: PathBuf::from("./data"),
            jwt_secret: None,
            admin_token: None,
            jwt_issuer: None,
            jwt_audience: None,
            jwt_leeway_secs: 30,
            jwt_public_keys: Vec::new(),
            jwt_jwks_file: None,
            cors_allowed_origins: Vec::new(),
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
            console_enabled: true,
            user_channel_creation: true,
            dm_policy: DmPolicy::Anyone,
            typing_ttl_ms: 6_000,
            typing_throttle_ms: 2_000,
            typing_max_members: 1_000,
            max_presence_subscriptions: 500,
            max_mentions: 50,
            max_reactions_per_message: DEFAULT_MAX_REACTIONS_PER_MESSAGE,
            presence_grace_ms: 5_000,
            presence_ttl_ms: 30_000,
            webhook_url: None,
            webhook_secret: None,
            webhook_max_retry_secs: 86_400,
            webhook_batch_max: 1,
            webhook_timeout_ms: 10_000,
            webhook_concurrency: 16,
            webhook_start: WebhookStart::Now,
            max_attachment_bytes: 26_214_400,
            attachment_types: DEFAULT_ATTACHMENT_TYPES.iter().map(|t| (*t).to_owned()).collect(),
            max_image_pixels: 50_000_000,
            attachment_thumbnail_px: 320,
            max_attachments_per_message: 10,
            attachment_url_ttl_secs: 3_600,
            attachments_store: AttachmentsStore::File,
            attachments_s3_bucket: None,
            attachments_s3_endpoint: None,
            attachments_s3_region: None,
            attachment_orphan_ttl_secs: 86_400,
            max_unclaimed_upload_bytes: 268_435_456,
            max_uploads_in_flight_per_user: 4,
            upload_timeout_secs: 900,
            retention_secs: 0,
            retention_sweep_secs: 3_600,
            erasure_batch: 256,
        }
    }
}

/// Shows every setting but the secrets (they are `skip_serializing`), and
/// the addresses with their passwords hidden ([`super::redact`]), so a
/// `Debug` print never leaks them.
impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Ok(mut shown) = serde_json::to_value(self) else {
            return f.write_str("Config { .. }");
        };
        if let Some(settings) = shown.as_object_mut() {
            for key in super::redact::ADDRESS_KEYS {
                if let Some(serde_json::Value::String(address)) = settings.get_mut(*key) {
                    *address = super::redact::hide_passwords(address);
                }
            }
        }
        write!(f, "Config {shown}")
    }
}

impl Config {
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
