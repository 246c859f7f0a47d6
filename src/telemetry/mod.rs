//! Logs (tracing) and metrics (Prometheus text format through the `metrics`
//! facade). Every metric, with its `# HELP` text, is in [`catalog::METRICS`];
//! the series whose labels are known in advance are registered at zero when
//! the recorder is installed ([`catalog::register`]). Metric names, all
//! prefixed `chatd_` (more in the catalog and docs/deployment.md):
//!
//! | name | kind | labels |
//! | --- | --- | --- |
//! | `chatd_build_info` | gauge | `version`, `git`: always 1 |
//! | `chatd_http_requests_total` | counter | `route` (the route's template, or `unmatched`), `status` (`2xx`, `3xx`, `4xx`, `5xx`) |
//! | `chatd_http_request_duration_seconds` | histogram | `route` |
//! | `chatd_db_pool_size`, `_idle`, `_in_use`, `_max` | gauge | `pool` (`write`, `read`) |
//! | `chatd_nats_peers` | gauge | other nodes heard from within `presence_ttl_ms` (only with `nats_url`) |
//! | `chatd_connections_open` | gauge | |
//! | `chatd_frames_in_total` | counter | `type` (a client frame type, or `invalid`) |
//! | `chatd_frames_out_total` | counter | `type` (a server frame type) |
//! | `chatd_sends_total` | counter | `result` (`stored`, `duplicate`, `refused`), `code` (error code when refused) |
//! | `chatd_send_ack_seconds` | histogram | |
//! | `chatd_batch_size` | histogram | messages per group commit |
//! | `chatd_sessions_closed_total` | counter | `code` (WebSocket close code) |
//! | `chatd_nats_connected` | gauge | 1 while the NATS connection is up, 0 while down (only with `nats_url`) |
//! | `chatd_nats_subscriptions` | gauge | `kind` (`channel`, `user`): NATS subscriptions of this node |
//! | `chatd_nats_publish_failures_total` | counter | `reason` (`queue_full`: dropped while NATS was away too long; `error`) |
//! | `chatd_nats_slow_consumer_total` | counter | NATS dropped messages for a subscription that fell behind |
//! | `chatd_cluster_held_total` | counter | messages held because a lower `seq` of their channel had not arrived |
//! | `chatd_cluster_filled_total` | counter | `reason` (`gap`, `catch_up`): messages read from the database instead of NATS |
//! | `chatd_cluster_stale_total` | counter | messages that arrived after their `seq` was handed out (dropped) |
//! | `chatd_db_in_doubt_commits_total` | counter | store writes whose commit was sent and whose outcome is unknown (connection lost, time ran out) |
//! | `chatd_db_primary_known` | gauge | 1 while a PostgreSQL primary is known among the URL's hosts, 0 while looking (several hosts only) |
//! | `chatd_db_primary_switches_total` | counter | times the store followed the primary to another host |
//! | `chatd_db_replication_lag_bytes` | gauge | WAL bytes the primary's slowest standby has not replayed (several hosts; needs `pg_monitor`) |
//! | `chatd_db_replica_reads_total` | counter | history, SYNC and search reads served by the standby (with `database_replica_url`) |
//! | `chatd_db_replica_fallbacks_total` | counter | `reason` (`behind`: not caught up within 50 ms; `error`): such reads served by the primary instead |
//! | `chatd_db_sync_standbys` | gauge | standbys the primary counts as synchronous now (several hosts) |
//! | `chatd_retention_erased_total` | counter | messages the retention sweep erased (§19) |
//! | `chatd_retention_channels_left` | gauge | channels the running retention sweep has still to do (its progress) |
//! | `chatd_retention_sweep_seconds` | histogram | how long a whole retention sweep took |
//! | `chatd_retention_last_complete_seconds` | gauge | unix time at which the last retention sweep that finished without an error started; `time() -` it is the sweep's lag |

pub mod catalog;

use std::sync::OnceLock;
use std::time::Duration;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Installs the global tracing subscriber writing to stdout. A second call
/// (tests start many servers in one process) keeps the first subscriber.
///
/// # Errors
/// When `filter` is not valid `EnvFilter` syntax.
pub fn init_tracing(filter: &str, format: LogFormat) -> Result<(), tracing_subscriber::filter::ParseError> {
    let filter = quiet_database_notices(filter, EnvFilter::try_new(filter)?)?;
    // tungstenite logs whole frames (message bodies) at TRACE: never keep those,
    // whatever the filter says.
    let no_frame_dumps = tracing_subscriber::filter::filter_fn(|meta| {
        !(*meta.level() == tracing::Level::TRACE
            && (meta.target().starts_with("tungstenite") || meta.target().starts_with("tokio_tungstenite")))
    });
    let registry = tracing_subscriber::registry().with(filter).with(no_frame_dumps);
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let _ = match format {
        LogFormat::Pretty => registry
            .with(tracing_subscriber::fmt::layer().with_ansi(ansi))
            .try_init(),
        LogFormat::Json => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .flatten_event(true)
                    .with_span_list(false),
            )
            .try_init(),
    };
    Ok(())
}

/// PostgreSQL's notices (`relation "…" already exists, skipping`, from the
/// migrations' `IF NOT EXISTS`, on every start) are harmless, and sqlx logs
/// them at `info`: unless `text` (the configured filter) names `sqlx` or
/// sets `debug` or `trace` as the level of everything, they are kept out,
/// as a `debug` line would be.
fn quiet_database_notices(text: &str, filter: EnvFilter) -> Result<EnvFilter, tracing_subscriber::filter::ParseError> {
    let verbose = text
        .split(',')
        .any(|directive| matches!(directive.trim().to_ascii_lowercase().as_str(), "debug" | "trace"));
    if text.contains("sqlx") || verbose {
        return Ok(filter);
    }
    Ok(filter.add_directive(format!("{NOTICE_TARGET}=warn").parse()?))
}

/// The target sqlx logs PostgreSQL's notices under.
const NOTICE_TARGET: &str = "sqlx::postgres::notice";

static PROMETHEUS: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the process-wide metrics recorder once and returns its handle.
/// Histograms are exported with buckets (seconds), not as summaries.
pub fn metrics_handle() -> PrometheusHandle {
    PROMETHEUS
        .get_or_init(|| {
            let buckets = [
                0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
            ];
            let sizes = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0];
            let builder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &buckets)
                .and_then(|b| b.set_buckets_for_metric(Matcher::Full("chatd_batch_size".into()), &sizes));
            match builder {
                Ok(builder) => {
                    let recorder = builder.build_recorder();
                    let handle = recorder.handle();
                    // Another recorder may already be installed (a host
                    // application); then ours renders nothing, which is harmless.
                    if metrics::set_global_recorder(recorder).is_ok() {
                        catalog::describe();
                        catalog::register(catalog::When::Always);
                        build_info();
                    }
                    handle
                }
                Err(_) => PrometheusBuilder::new().build_recorder().handle(),
            }
        })
        .clone()
}

/// The commit chatd was built from (`CHATD_GIT_COMMIT` at build time, else
/// what `git` said when the build script ran), or `unknown`.
pub const GIT_COMMIT: &str = match option_env!("CHATD_GIT_COMMIT") {
    Some(commit) => commit,
    None => "unknown",
};

/// Sets `chatd_build_info{version, git}` to 1.
fn build_info() {
    metrics::gauge!("chatd_build_info", "version" => env!("CARGO_PKG_VERSION"), "git" => GIT_COMMIT).set(1.0);
}

/// Registers at zero the series of a feature that is on
/// ([`catalog::When`]): called where the feature starts.
pub fn feature_on(when: catalog::When) {
    catalog::register(when);
}

/// An HTTP request to `route` (its template, e.g.
/// `/v1/channels/{channelId}`, or `unmatched`) was answered with `status`
/// after `took`.
pub fn http_request(route: &str, status: u16, took: Duration) {
    let class = match status {
        100..=199 => "1xx",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    };
    metrics::counter!("chatd_http_requests_total", "route" => route.to_owned(), "status" => class).increment(1);
    metrics::histogram!("chatd_http_request_duration_seconds", "route" => route.to_owned()).record(took.as_secs_f64());
}

/// The state of one database pool (`pool`: `write` or `read`): open
/// connections, those idle, and the most it may open.
pub fn db_pool(pool: &'static str, size: u32, idle: usize, max: u32) {
    let in_use = (size as usize).saturating_sub(idle);
    metrics::gauge!("chatd_db_pool_size", "pool" => pool).set(f64::from(size));
    metrics::gauge!("chatd_db_pool_idle", "pool" => pool).set(idle as f64);
    metrics::gauge!("chatd_db_pool_in_use", "pool" => pool).set(in_use as f64);
    metrics::gauge!("chatd_db_pool_max", "pool" => pool).set(f64::from(max));
}

/// Other nodes heard from over NATS.
pub fn nats_peers(count: usize) {
    metrics::gauge!("chatd_nats_peers").set(count as f64);
}

/// Runs the recorder's upkeep (histogram housekeeping) every `every` until `stop`.
pub async fn run_upkeep(handle: PrometheusHandle, every: Duration, stop: tokio_util::sync::CancellationToken) {
    let mut tick = tokio::time::interval(every);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tick.tick() => handle.run_upkeep(),
        }
    }
}

/// A connection opened (`+1`) or closed (`-1`).
pub fn connections(delta: f64) {
    metrics::gauge!("chatd_connections_open").increment(delta);
}

/// A client frame was read; `type_name` is its `type` or `invalid`.
pub fn frame_in(type_name: &'static str) {
    metrics::counter!("chatd_frames_in_total", "type" => type_name).increment(1);
}

/// A server frame was queued for a session.
pub fn frame_out(type_name: &'static str) {
    metrics::counter!("chatd_frames_out_total", "type" => type_name).increment(1);
}

/// A send finished: `stored`, `duplicate`, or `refused` with the error code.
pub fn send_result(result: &'static str, code: &'static str, ack_latency: Option<Duration>) {
    metrics::counter!("chatd_sends_total", "result" => result, "code" => code).increment(1);
    if let Some(latency) = ack_latency {
        metrics::histogram!("chatd_send_ack_seconds").record(latency.as_secs_f64());
    }
}

/// A store write's outcome became unknown: its commit was sent and then the
/// connection failed or the time ran out (`StoreError::InDoubt`).
pub fn db_in_doubt() {
    metrics::counter!("chatd_db_in_doubt_commits_total").increment(1);
}

/// Whether the store knows a PostgreSQL primary among the URL's hosts
/// (only with several hosts or `target_session_attrs`).
pub fn db_primary_known(known: bool) {
    metrics::gauge!("chatd_db_primary_known").set(if known { 1.0 } else { 0.0 });
}

/// The store followed the primary to another host.
pub fn db_primary_switched() {
    metrics::counter!("chatd_db_primary_switches_total").increment(1);
}

/// The replay lag of the primary's slowest standby, in bytes of WAL.
pub fn db_replication_lag(bytes: f64) {
    metrics::gauge!("chatd_db_replication_lag_bytes").set(bytes);
}

/// How many standbys the primary counts as synchronous now.
pub fn db_sync_standbys(count: i64) {
    metrics::gauge!("chatd_db_sync_standbys").set(count as f64);
}

/// A history, SYNC or search read was served by the standby.
pub fn db_replica_read() {
    metrics::counter!("chatd_db_replica_reads_total").increment(1);
}

/// A read that could have gone to the standby went to the primary:
/// `behind` (not caught up in time) or `error`.
pub fn db_replica_fallback(reason: &'static str) {
    metrics::counter!("chatd_db_replica_fallbacks_total", "reason" => reason).increment(1);
}

/// A group commit wrote `size` sends.
pub fn batch(size: usize) {
    metrics::histogram!("chatd_batch_size").record(size as f64);
}

/// A session ended with close `code`.
pub fn session_closed(code: u16) {
    metrics::counter!("chatd_sessions_closed_total", "code" => code.to_string()).increment(1);
}

/// The NATS connection went up (`true`) or down.
pub fn nats_connected(up: bool) {
    metrics::gauge!("chatd_nats_connected").set(if up { 1.0 } else { 0.0 });
}

/// A NATS subscription of `kind` (`channel` or `user`) was added (`+1`) or removed (`-1`).
pub fn nats_subscriptions(kind: &'static str, delta: f64) {
    metrics::gauge!("chatd_nats_subscriptions", "kind" => kind).increment(delta);
}

/// A publication to NATS was dropped (`queue_full`) or failed (`error`).
pub fn nats_publish_failed(reason: &'static str) {
    metrics::counter!("chatd_nats_publish_failures_total", "reason" => reason).increment(1);
}

/// NATS reported a subscription that could not keep up.
pub fn nats_slow_consumer() {
    metrics::counter!("chatd_nats_slow_consumer_total").increment(1);
}

/// A message waits for a lower `seq` of its channel.
pub fn cluster_held() {
    metrics::counter!("chatd_cluster_held_total").increment(1);
}

/// `count` messages were read from the database to fill a gap or catch up.
pub fn cluster_filled(reason: &'static str, count: usize) {
    metrics::counter!("chatd_cluster_filled_total", "reason" => reason).increment(count as u64);
}

/// A message arrived after its `seq` was handed out.
pub fn cluster_stale() {
    metrics::counter!("chatd_cluster_stale_total").increment(1);
}

/// An ephemeral frame (`TYPING`, `PRESENCE`) was dropped for a session that
/// is behind (its queue over half full).
pub fn ephemeral_dropped(type_name: &'static str) {
    metrics::counter!("chatd_ephemeral_dropped_total", "type" => type_name).increment(1);
}

/// Webhooks: a request answered 2xx, carrying `entries` entries.
pub fn webhook_delivered(entries: usize) {
    metrics::counter!("chatd_webhook_deliveries_total").increment(1);
    metrics::counter!("chatd_webhook_delivered_entries_total").increment(entries as u64);
}

/// Webhooks: an attempt failed (`status`: the HTTP status, or `timeout`,
/// `connect`, `request`).
pub fn webhook_failure(status: &str) {
    metrics::counter!("chatd_webhook_failures_total", "status" => status.to_owned()).increment(1);
}

/// Webhooks: `entries` entries skipped after `webhook_max_retry_secs` of failures.
pub fn webhook_skipped(entries: usize) {
    metrics::counter!("chatd_webhook_skipped_entries_total").increment(entries as u64);
}

/// Webhooks: the backlog of the channels this node drives, in entries, and
/// the age of its oldest entry, seconds (0 when none is waiting).
pub fn webhook_lag(entries: i64, seconds: f64) {
    metrics::gauge!("chatd_webhook_lag_entries").set(entries as f64);
    metrics::gauge!("chatd_webhook_lag_seconds").set(seconds);
}

/// Webhooks: lease buckets this node holds (of 64).
pub fn webhook_leases(buckets: usize) {
    metrics::gauge!("chatd_webhook_leases_held").set(buckets as f64);
}

/// The retention sweep erased `count` messages (§19).
pub fn retention_erased(count: u64) {
    metrics::counter!("chatd_retention_erased_total").increment(count);
}

/// Channels the running retention sweep has still to do.
pub fn retention_channels_left(count: usize) {
    metrics::gauge!("chatd_retention_channels_left").set(count as f64);
}

/// A retention sweep that started at `started` finished without an error
/// after `took`.
pub fn retention_sweep_done(took: Duration, started: std::time::SystemTime) {
    metrics::histogram!("chatd_retention_sweep_seconds").record(took.as_secs_f64());
    let unix = started
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    metrics::gauge!("chatd_retention_last_complete_seconds").set(unix);
}
