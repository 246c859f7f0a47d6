//! Checks of the settings that serde cannot express: ranges, bounds,
//! combinations and grammars, each refused with the key it names.

use super::load::ConfigError;
use super::settings::{AttachmentsStore, Config, MAX_RETENTION_SECS, MAX_TOKEN_TTL_SECS};
use crate::database_url::{database_replica_url_problem, database_url_problem};
use crate::nats_addr::{parse_nats_urls, valid_subject_prefix};

/// Largest `listen_backlog` taken, connections: the kernel caps it at
/// `net.core.somaxconn` anyway, and a larger figure is a typo.
const MAX_LISTEN_BACKLOG: u32 = 65_535;

impl Config {
    /// Checks ranges that serde cannot express.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: &str| Err(ConfigError::Invalid(m.to_owned()));
        for (key, addr) in [
            ("listen", Some(&self.listen)),
            ("admin_listen", self.admin_listen.as_ref()),
        ] {
            if let Some(addr) = addr {
                if !valid_listen_address(addr) {
                    return bad(&format!(
                        "{key}: {addr:?} is not a listen address (host:port, e.g. 127.0.0.1:8080 or [::1]:8080)"
                    ));
                }
            }
        }
        if self.jwt_leeway_secs > 60 {
            return bad("jwt_leeway_secs must be at most 60");
        }
        let mut kids = std::collections::HashSet::new();
        for key in &self.jwt_public_keys {
            if key.kid.is_empty() || key.kid.len() > 256 || !kids.insert(key.kid.as_str()) {
                return bad("jwt_public_keys: each kid must be 1 to 256 characters and appear once");
            }
        }
        for origin in &self.cors_allowed_origins {
            if !valid_origin(origin) {
                return bad(&format!(
                    "cors_allowed_origins: {origin:?} is not an origin (scheme://host[:port], no path)"
                ));
            }
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
        if self.listen_backlog == 0 || self.listen_backlog > MAX_LISTEN_BACKLOG {
            return bad("listen_backlog must be between 1 and 65535");
        }
        if self.max_connections == 0 || self.max_connections_per_user == 0 || self.handshake_timeout_ms == 0 {
            return bad("max_connections, max_connections_per_user and handshake_timeout_ms must be positive");
        }
        if self.token_ttl_secs == 0 || self.token_ttl_secs > MAX_TOKEN_TTL_SECS {
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
            if parse_nats_urls(url).is_err() {
                return bad("nats_url must be one or more NATS URLs, comma-separated (e.g. nats://localhost:4222)");
            }
            // Nodes share one database; an SQLite file is one node's.
            if self.database_url().starts_with("sqlite:") {
                return bad("nats_url (several nodes) needs a PostgreSQL database_url (postgres://...); SQLite serves one node only");
            }
        }
        if !valid_subject_prefix(&self.nats_subject_prefix) {
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
        if let Some(url) = &self.database_replica_url {
            if let Some(message) = database_replica_url_problem(url, &self.database_url()) {
                return bad(&message);
            }
        }
        // Upper bounds: past them a value allocates, overflows a time or
        // passes a database's own limit, and the server would panic or abort
        // after it started, so such a value is refused here, at load.
        for (key, value, most) in self.upper_bounds() {
            if value > most {
                return Err(ConfigError::Invalid(format!("{key} must be at most {most}")));
            }
        }
        // Typing and presence: timers that must fire, within a day.
        for (key, value) in [
            ("typing_ttl_ms", self.typing_ttl_ms),
            ("typing_throttle_ms", self.typing_throttle_ms),
            ("presence_grace_ms", self.presence_grace_ms),
        ] {
            if value > 86_400_000 {
                return Err(ConfigError::Invalid(format!("{key} must be at most 86400000")));
            }
        }
        if self.typing_ttl_ms == 0 {
            return bad("typing_ttl_ms must be positive");
        }
        if !(300..=86_400_000).contains(&self.presence_ttl_ms) {
            return bad("presence_ttl_ms must be between 300 and 86400000");
        }
        if self.max_mentions > 10_000 {
            return bad("max_mentions must be at most 10000");
        }
        if !(1..=10_000).contains(&self.max_reactions_per_message) {
            return bad("max_reactions_per_message must be between 1 and 10000");
        }
        self.validate_attachments()?;
        if self.retention_secs > MAX_RETENTION_SECS {
            return bad("retention_secs must be between 0 (forever) and 3155760000");
        }
        if !(1..=86_400).contains(&self.retention_sweep_secs) {
            return bad("retention_sweep_secs must be between 1 and 86400");
        }
        if self.max_presence_subscriptions > 100_000 {
            return bad("max_presence_subscriptions must be at most 100000");
        }
        if let Some(url) = &self.webhook_url {
            let scheme_ok = url.starts_with("http://") || url.starts_with("https://");
            if !scheme_ok || url.contains(char::is_whitespace) {
                return bad("webhook_url must be an http:// or https:// URL");
            }
            if self.webhook_secret.is_none() {
                return bad("webhook_url needs webhook_secret: receivers check Chatd-Signature with it");
            }
        }
        if !(1..=1_000).contains(&self.webhook_batch_max) {
            return bad("webhook_batch_max must be between 1 and 1000");
        }
        if !(1..=600_000).contains(&self.webhook_timeout_ms) {
            return bad("webhook_timeout_ms must be between 1 and 600000");
        }
        if !(1..=10_000).contains(&self.webhook_concurrency) {
            return bad("webhook_concurrency must be between 1 and 10000");
        }
        if self.webhook_max_retry_secs > MAX_TOKEN_TTL_SECS {
            return bad("webhook_max_retry_secs must be at most 315360000");
        }
        // Secrets have no length floor: a configured one is used as it is
        // (the wire contract), with a warning at start when it is short
        // (`Secrets::warnings`, in `crate::secrets`); an empty value counts as unset.
        Ok(())
    }

    /// The smallest `outbound_queue_bytes` that can always take the largest
    /// frame twice: 2 MiB, or twice the larger of a SYNC_BATCH page
    /// (`max_page_bytes`; a page holds at least one message, however large)
    /// and one message of `max_body_bytes` in the worst JSON escaping (6
    /// bytes per byte, `\u00XX`, plus 1 KiB of ids and field names). Below it
    /// a session is closed with 1013 on every large message, however fast it
    /// reads, and again after every reconnect.
    pub fn least_outbound_queue_bytes(&self) -> usize {
        let message = self.max_body_bytes.saturating_mul(6).saturating_add(1024);
        self.max_page_bytes.max(message).saturating_mul(2).max(2 * 1024 * 1024)
    }

    /// Each numeric setting with an upper bound: (key, value, most).
    /// Documented in docs/configuration.md, "Validation".
    pub(super) fn upper_bounds(&self) -> [(&'static str, u64, u64); 16] {
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
}

/// Whether `origin` is a serialized origin as browsers send it in `Origin`:
/// `http` or `https`, a host, an optional port, nothing after.
fn valid_origin(origin: &str) -> bool {
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    matches!(scheme, "http" | "https")
        && !rest.is_empty()
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
}

impl Config {
    /// The attachment settings (§15): positive sizes, a thumbnail side and
    /// URL lifetime in range, media types of the form `type/subtype`, a
    /// bucket with `s3`.
    fn validate_attachments(&self) -> Result<(), ConfigError> {
        let bad = |m: &str| Err(ConfigError::Invalid(m.to_owned()));
        if self.max_attachment_bytes == 0 || self.max_attachment_bytes > 1 << 40 {
            return bad("max_attachment_bytes must be between 1 and 1099511627776");
        }
        if self.max_image_pixels == 0 || self.max_image_pixels > 1_000_000_000 {
            return bad("max_image_pixels must be between 1 and 1000000000");
        }
        if !(16..=4_096).contains(&self.attachment_thumbnail_px) {
            return bad("attachment_thumbnail_px must be between 16 and 4096");
        }
        if !(1..=100).contains(&self.max_attachments_per_message) {
            return bad("max_attachments_per_message must be between 1 and 100");
        }
        if !(1..=7 * 86_400).contains(&self.attachment_url_ttl_secs) {
            return bad("attachment_url_ttl_secs must be between 1 and 604800");
        }
        if self.attachment_orphan_ttl_secs == 0 || self.attachment_orphan_ttl_secs > 365 * 86_400 {
            return bad("attachment_orphan_ttl_secs must be between 1 and 31536000");
        }
        if self.max_unclaimed_upload_bytes == 0 || self.max_unclaimed_upload_bytes > 1 << 50 {
            return bad("max_unclaimed_upload_bytes must be between 1 and 1125899906842624");
        }
        if !(1..=10_000).contains(&self.max_uploads_in_flight_per_user) {
            return bad("max_uploads_in_flight_per_user must be between 1 and 10000");
        }
        if !(1..=86_400).contains(&self.upload_timeout_secs) {
            return bad("upload_timeout_secs must be between 1 and 86400");
        }
        if !(1..=10_000).contains(&self.erasure_batch) {
            return bad("erasure_batch must be between 1 and 10000");
        }
        for kind in &self.attachment_types {
            let ok = kind.split_once('/').is_some_and(|(a, b)| {
                let token = |t: &str| {
                    !t.is_empty()
                        && t.bytes()
                            .all(|c| c.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&c))
                };
                token(a) && token(b)
            });
            if !ok {
                return bad(&format!(
                    "attachment_types: {kind:?} is not a media type (type/subtype)"
                ));
            }
        }
        if self.attachments_store == AttachmentsStore::S3 && self.attachments_s3_bucket.is_none() {
            return bad("attachments_store = \"s3\" needs attachments_s3_bucket");
        }
        if let Some(url) = &self.attachments_s3_endpoint {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return bad("attachments_s3_endpoint must be an http:// or https:// URL");
            }
        }
        Ok(())
    }
}

/// Whether `addr` has the shape of a listen address: `host:port` with a
/// port number (0 … 65535) and a host that is an IP address (IPv6 in
/// brackets) or a name; whether it can be bound is known only at start.
fn valid_listen_address(addr: &str) -> bool {
    if addr.parse::<std::net::SocketAddr>().is_ok() {
        return true;
    }
    let Some((host, port)) = addr.rsplit_once(':') else {
        return false;
    };
    let host_ok = !host.is_empty()
        && host.len() <= 253
        && host
            .split('.')
            .all(|label| !label.is_empty() && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    host_ok && port.parse::<u16>().is_ok()
}
