//! Every metric chatd exports, with its `# HELP` text and kind, and the
//! series registered at zero when the recorder is installed, so that a
//! scrape of a fresh server already shows them (a dashboard and an alert on
//! `rate()` or `absent()` work before the first event).
//!
//! A metric added to [`super`] is added to [`METRICS`] too: the test
//! `tests/api/metrics.rs` scrapes a fresh server and fails on a name
//! without `# HELP` and `# TYPE`.

use crate::protocol::ServerFrame;

use crate::close_code;

/// The kind of a metric (its `# TYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only goes up.
    Counter,
    /// Goes up and down.
    Gauge,
    /// Buckets, `_sum` and `_count`.
    Histogram,
}

/// When a metric's series exist: always, or only while a feature is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// On every server.
    Always,
    /// With `nats_url`.
    Nats,
    /// With `webhook_url`.
    Webhooks,
    /// With a PostgreSQL URL of several hosts (or `target_session_attrs`).
    DbHosts,
    /// With `database_replica_url`.
    ReplicaReads,
}

/// One metric: its name, kind, `# HELP` text, and when its series exist.
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    /// The full name (`chatd_…`).
    pub name: &'static str,
    /// Its `# TYPE`.
    pub kind: Kind,
    /// Its `# HELP` text.
    pub help: &'static str,
    /// When its series exist.
    pub when: When,
}

const fn m(name: &'static str, kind: Kind, when: When, help: &'static str) -> Metric {
    Metric { name, kind, help, when }
}

use Kind::{Counter, Gauge, Histogram};
use When::{Always, DbHosts, Nats, ReplicaReads, Webhooks};

/// Every metric of `/metrics` (docs/deployment.md, "Metrics", lists them for operators).
pub const METRICS: &[Metric] = &[
    m(
        "chatd_build_info",
        Gauge,
        Always,
        "Always 1; labels version (the crate version) and git (the commit, or unknown).",
    ),
    m(
        "chatd_connections_open",
        Gauge,
        Always,
        "WebSocket sessions open on this node.",
    ),
    m(
        "chatd_frames_in_total",
        Counter,
        Always,
        "Client frames read, by type (invalid: not a frame).",
    ),
    m(
        "chatd_frames_out_total",
        Counter,
        Always,
        "Server frames queued for sessions, by type.",
    ),
    m(
        "chatd_sends_total",
        Counter,
        Always,
        "Sends finished, by result (stored, duplicate, refused) and error code when refused.",
    ),
    m(
        "chatd_send_ack_seconds",
        Histogram,
        Always,
        "Time from reading a MSG_SEND to queueing its MSG_ACK, seconds.",
    ),
    m("chatd_batch_size", Histogram, Always, "Sends written per group commit."),
    m(
        "chatd_sessions_closed_total",
        Counter,
        Always,
        "Sessions ended, by WebSocket close code.",
    ),
    m(
        "chatd_ephemeral_dropped_total",
        Counter,
        Always,
        "TYPING and PRESENCE frames dropped for a session that was behind, by type.",
    ),
    m(
        "chatd_http_requests_total",
        Counter,
        Always,
        "HTTP requests answered, by route template and status class (2xx, 3xx, 4xx, 5xx).",
    ),
    m(
        "chatd_http_request_duration_seconds",
        Histogram,
        Always,
        "Time to answer an HTTP request (to the response head), by route template, seconds.",
    ),
    m(
        "chatd_db_pool_size",
        Gauge,
        Always,
        "Connections open in a database pool (pool: write, read).",
    ),
    m(
        "chatd_db_pool_idle",
        Gauge,
        Always,
        "Open connections idle in a database pool.",
    ),
    m(
        "chatd_db_pool_in_use",
        Gauge,
        Always,
        "Connections of a database pool in use.",
    ),
    m(
        "chatd_db_pool_max",
        Gauge,
        Always,
        "Most connections a database pool may open.",
    ),
    m(
        "chatd_db_in_doubt_commits_total",
        Counter,
        Always,
        "Store writes whose commit was sent and whose outcome is unknown.",
    ),
    m(
        "chatd_retention_erased_total",
        Counter,
        Always,
        "Messages the retention sweep erased.",
    ),
    m(
        "chatd_retention_channels_left",
        Gauge,
        Always,
        "Channels the running retention sweep has still to do.",
    ),
    m(
        "chatd_retention_sweep_seconds",
        Histogram,
        Always,
        "How long a whole retention sweep took, seconds.",
    ),
    m(
        "chatd_retention_last_complete_seconds",
        Gauge,
        Always,
        "Unix time at which the last retention sweep that finished without an error started (0: none yet).",
    ),
    m(
        "chatd_nats_connected",
        Gauge,
        Nats,
        "1 while the NATS connection is up, 0 while down.",
    ),
    m(
        "chatd_nats_peers",
        Gauge,
        Nats,
        "Other chatd nodes heard from over NATS within presence_ttl_ms.",
    ),
    m(
        "chatd_nats_subscriptions",
        Gauge,
        Nats,
        "NATS subscriptions of this node, by kind (channel, user).",
    ),
    m(
        "chatd_nats_publish_failures_total",
        Counter,
        Nats,
        "Publications to NATS dropped (queue_full) or failed (error).",
    ),
    m(
        "chatd_nats_slow_consumer_total",
        Counter,
        Nats,
        "Times NATS dropped messages for a subscription that fell behind.",
    ),
    m(
        "chatd_cluster_held_total",
        Counter,
        Nats,
        "Messages held until a lower seq of their channel arrived.",
    ),
    m(
        "chatd_cluster_filled_total",
        Counter,
        Nats,
        "Messages read from the database instead of NATS, by reason (gap, catch_up).",
    ),
    m(
        "chatd_cluster_stale_total",
        Counter,
        Nats,
        "Messages from NATS that arrived after their seq was handed out (dropped).",
    ),
    m(
        "chatd_webhook_deliveries_total",
        Counter,
        Webhooks,
        "Webhook requests answered 2xx.",
    ),
    m(
        "chatd_webhook_delivered_entries_total",
        Counter,
        Webhooks,
        "Entries carried by webhook requests answered 2xx.",
    ),
    m(
        "chatd_webhook_failures_total",
        Counter,
        Webhooks,
        "Webhook attempts that failed, by status (an HTTP status, timeout, connect, request).",
    ),
    m(
        "chatd_webhook_skipped_entries_total",
        Counter,
        Webhooks,
        "Entries skipped after webhook_max_retry_secs of failures.",
    ),
    m(
        "chatd_webhook_lag_entries",
        Gauge,
        Webhooks,
        "Entries of the channels this node drives not yet delivered.",
    ),
    m(
        "chatd_webhook_lag_seconds",
        Gauge,
        Webhooks,
        "Age of the oldest entry not yet delivered, seconds (0: none).",
    ),
    m(
        "chatd_webhook_leases_held",
        Gauge,
        Webhooks,
        "Webhook lease buckets this node holds (of 64).",
    ),
    m(
        "chatd_db_primary_known",
        Gauge,
        DbHosts,
        "1 while a PostgreSQL primary is known among the URL's hosts, 0 while looking.",
    ),
    m(
        "chatd_db_primary_switches_total",
        Counter,
        DbHosts,
        "Times the store followed the primary to another host.",
    ),
    m(
        "chatd_db_replication_lag_bytes",
        Gauge,
        DbHosts,
        "WAL bytes the primary's slowest standby has not replayed.",
    ),
    m(
        "chatd_db_sync_standbys",
        Gauge,
        DbHosts,
        "Standbys the primary counts as synchronous now.",
    ),
    m(
        "chatd_db_replica_reads_total",
        Counter,
        ReplicaReads,
        "History, SYNC and search reads served by the standby (database_replica_url).",
    ),
    m(
        "chatd_db_replica_fallbacks_total",
        Counter,
        ReplicaReads,
        "Reads that went to the primary instead of the standby; reason behind (not caught up within 50 ms) or error.",
    ),
];

/// The `type` of every client frame (and `invalid`), labels of `chatd_frames_in_total`.
pub const CLIENT_FRAME_TYPES: &[&str] = &[
    "MSG_SEND",
    "MSG_DELIVERED",
    "MSG_READ",
    "SYNC",
    "MSG_EDIT",
    "MSG_DELETE",
    "MSG_REACT",
    "TYPING",
    "PRESENCE_SUB",
    "invalid",
];

/// The status classes of `chatd_http_requests_total` registered per route.
pub const STATUS_CLASSES: &[&str] = &["2xx", "4xx", "5xx"];

/// Gives every metric its `# HELP` text (the exporter writes `# TYPE`).
pub fn describe() {
    for metric in METRICS {
        match metric.kind {
            Counter => metrics::describe_counter!(metric.name, metric.help),
            Gauge => metrics::describe_gauge!(metric.name, metric.help),
            Histogram => metrics::describe_histogram!(metric.name, metric.help),
        }
    }
}

/// Registers at zero the series of `when`'s metrics whose labels are known
/// in advance. Adding zero keeps what a series already counts (tests start
/// several servers in one process).
pub fn register(when: When) {
    for metric in METRICS.iter().filter(|metric| metric.when == when) {
        match (metric.name, metric.kind) {
            ("chatd_build_info" | "chatd_http_requests_total" | "chatd_http_request_duration_seconds", _) => {}
            (name @ "chatd_frames_in_total", _) => {
                for ty in CLIENT_FRAME_TYPES {
                    metrics::counter!(name, "type" => *ty).increment(0);
                }
            }
            (name @ "chatd_frames_out_total", _) => {
                for ty in ServerFrame::TYPE_NAMES {
                    metrics::counter!(name, "type" => *ty).increment(0);
                }
            }
            (name @ "chatd_sends_total", _) => {
                for result in ["stored", "duplicate"] {
                    metrics::counter!(name, "result" => result, "code" => "").increment(0);
                }
            }
            (name @ "chatd_sessions_closed_total", _) => {
                for code in close_code::ALL {
                    metrics::counter!(name, "code" => code.to_string()).increment(0);
                }
            }
            (name @ "chatd_ephemeral_dropped_total", _) => {
                for ty in ["TYPING", "PRESENCE"] {
                    metrics::counter!(name, "type" => ty).increment(0);
                }
            }
            (name @ "chatd_nats_subscriptions", _) => {
                for kind in ["channel", "user"] {
                    metrics::gauge!(name, "kind" => kind).increment(0.0);
                }
            }
            (name @ "chatd_nats_publish_failures_total", _) => {
                for reason in ["queue_full", "error"] {
                    metrics::counter!(name, "reason" => reason).increment(0);
                }
            }
            (name @ "chatd_db_replica_fallbacks_total", _) => {
                for reason in ["behind", "error"] {
                    metrics::counter!(name, "reason" => reason).increment(0);
                }
            }
            (name @ "chatd_cluster_filled_total", _) => {
                for reason in ["gap", "catch_up"] {
                    metrics::counter!(name, "reason" => reason).increment(0);
                }
            }
            // Its label is whatever failed: no series until a failure.
            ("chatd_webhook_failures_total", _) => {}
            (
                name @ ("chatd_db_pool_size" | "chatd_db_pool_idle" | "chatd_db_pool_in_use" | "chatd_db_pool_max"),
                _,
            ) => {
                for pool in ["write", "read"] {
                    metrics::gauge!(name, "pool" => pool).increment(0.0);
                }
            }
            (name, Counter) => metrics::counter!(name).increment(0),
            (name, Gauge) => metrics::gauge!(name).increment(0.0),
            (name, Histogram) => {
                let _ = metrics::histogram!(name);
            }
        }
    }
}

/// Registers `chatd_http_requests_total` (each of [`STATUS_CLASSES`]) and
/// `chatd_http_request_duration_seconds` at zero for each route template.
pub fn register_routes<'a>(routes: impl IntoIterator<Item = &'a str>) {
    for route in routes {
        for class in STATUS_CLASSES {
            metrics::counter!("chatd_http_requests_total", "route" => route.to_owned(), "status" => *class)
                .increment(0);
        }
        let _ = metrics::histogram!("chatd_http_request_duration_seconds", "route" => route.to_owned());
    }
}
