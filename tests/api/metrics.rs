//! `/metrics` as an operator scrapes it: `# HELP` and `# TYPE` for every
//! metric, every known series present (at zero) before any event, the
//! build info, the HTTP request and database pool metrics. Each test runs
//! the real binary, a process of its own, so that counts are exact.

use std::collections::{HashMap, HashSet};

use chatd::telemetry::catalog::{self, Kind, When};
use chatd_testkit::{chatd, on_both_stores, Backend, ServerProcess, TestDb, ADMIN_TOKEN, JWT_SECRET};

on_both_stores!(
    a_fresh_server_describes_every_metric_and_shows_every_known_series,
    http_requests_and_database_pools_are_measured,
);

/// One scrape, parsed: the `# HELP` and `# TYPE` lines, and each sample's
/// series (name and labels as written) with its value.
pub struct Scrape {
    pub help: HashSet<String>,
    pub types: HashMap<String, String>,
    pub samples: HashMap<String, f64>,
}

impl Scrape {
    pub fn parse(text: &str) -> Self {
        let mut scrape = Scrape {
            help: HashSet::new(),
            types: HashMap::new(),
            samples: HashMap::new(),
        };
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                let (name, help) = rest.split_once(' ').expect("HELP text");
                assert!(!help.trim().is_empty(), "empty HELP for {name}");
                scrape.help.insert(name.to_owned());
            } else if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').expect("TYPE kind");
                scrape.types.insert(name.to_owned(), kind.to_owned());
            } else {
                assert!(!line.starts_with('#'), "unexpected comment: {line}");
                let (series, value) = line.rsplit_once(' ').expect("sample");
                let value: f64 = value.parse().expect("value");
                scrape.samples.insert(series.to_owned(), value);
            }
        }
        scrape
    }

    /// The metric (family) a sample's series belongs to: its name without
    /// labels, and without `_bucket`, `_sum`, `_count` for a histogram.
    pub fn family(&self, series: &str) -> String {
        let name = series.split('{').next().unwrap_or(series);
        for suffix in ["_bucket", "_sum", "_count"] {
            if let Some(base) = name.strip_suffix(suffix) {
                if self.types.get(base).map(String::as_str) == Some("histogram") {
                    return base.to_owned();
                }
            }
        }
        name.to_owned()
    }

    /// The value of exactly `series` (e.g. `chatd_x{a="b"}`), if present.
    pub fn value(&self, series: &str) -> Option<f64> {
        self.samples.get(series).copied()
    }

    /// Every metric name that has at least one sample.
    pub fn families(&self) -> HashSet<String> {
        self.samples.keys().map(|s| self.family(s)).collect()
    }
}

/// Starts the binary on `db` (a fresh database of its own).
pub fn start(db: &TestDb) -> ServerProcess {
    let mut cmd = chatd!(db.dir.path());
    cmd.env("CHATD_DATABASE_URL", &db.url)
        .env("CHATD_DATA_DIR", db.dir.path())
        .env("CHATD_ADMIN_TOKEN", ADMIN_TOKEN)
        .env("CHATD_JWT_SECRET", JWT_SECRET);
    ServerProcess::start(cmd)
}

pub async fn scrape(server: &ServerProcess) -> Scrape {
    let res = reqwest::get(server.url("/metrics")).await.expect("http");
    assert_eq!(res.status(), 200);
    Scrape::parse(&res.text().await.expect("text"))
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Counter => "counter",
        Kind::Gauge => "gauge",
        Kind::Histogram => "histogram",
    }
}

async fn a_fresh_server_describes_every_metric_and_shows_every_known_series(backend: Backend) {
    let db = TestDb::new(backend).await;
    let server = start(&db);
    // The first request the server answers.
    let scrape = scrape(&server).await;
    for family in scrape.families() {
        assert!(scrape.help.contains(&family), "no # HELP for {family}");
        assert!(scrape.types.contains_key(&family), "no # TYPE for {family}");
    }
    for metric in catalog::METRICS.iter().filter(|m| m.when == When::Always) {
        assert_eq!(
            scrape.types.get(metric.name).map(String::as_str),
            Some(kind_name(metric.kind)),
            "{} is not in a fresh scrape as a {:?}",
            metric.name,
            metric.kind
        );
        assert!(scrape.help.contains(metric.name), "no # HELP for {}", metric.name);
    }
    // Without NATS, webhooks or a host list, their metrics are absent.
    for metric in catalog::METRICS.iter().filter(|m| m.when != When::Always) {
        assert!(
            !scrape.types.contains_key(metric.name),
            "{} without its feature",
            metric.name
        );
    }
    // Series at zero before any event.
    for series in [
        "chatd_connections_open",
        r#"chatd_frames_in_total{type="MSG_SEND"}"#,
        r#"chatd_frames_in_total{type="invalid"}"#,
        r#"chatd_frames_out_total{type="MSG_ACK"}"#,
        r#"chatd_frames_out_total{type="HELLO"}"#,
        r#"chatd_sends_total{result="stored",code=""}"#,
        r#"chatd_sends_total{result="duplicate",code=""}"#,
        r#"chatd_sessions_closed_total{code="1000"}"#,
        r#"chatd_sessions_closed_total{code="1008"}"#,
        r#"chatd_ephemeral_dropped_total{type="TYPING"}"#,
        "chatd_send_ack_seconds_count",
        "chatd_batch_size_count",
        "chatd_db_in_doubt_commits_total",
        "chatd_retention_erased_total",
        "chatd_retention_sweep_seconds_count",
        r#"chatd_http_requests_total{route="/v1/channels",status="2xx"}"#,
        r#"chatd_http_requests_total{route="/v1/channels/{channelId}",status="4xx"}"#,
        r#"chatd_http_requests_total{route="/v1/ws",status="5xx"}"#,
        r#"chatd_http_requests_total{route="/metrics",status="2xx"}"#,
        r#"chatd_http_requests_total{route="unmatched",status="4xx"}"#,
        r#"chatd_http_request_duration_seconds_count{route="/v1/channels/{channelId}/messages"}"#,
    ] {
        assert_eq!(scrape.value(series), Some(0.0), "{series} in a fresh scrape");
    }
    let version = env!("CARGO_PKG_VERSION");
    let build = scrape
        .samples
        .iter()
        .find(|(series, _)| series.starts_with(&format!("chatd_build_info{{version=\"{version}\",git=\"")))
        .unwrap_or_else(|| panic!("no chatd_build_info for {version}"));
    assert_eq!(*build.1, 1.0);
    server.signal("TERM");
    assert_eq!(server.wait(), 0);
}

async fn http_requests_and_database_pools_are_measured(backend: Backend) {
    let db = TestDb::new(backend).await;
    let server = start(&db);
    let http = reqwest::Client::new();
    let admin = |path: &str| http.get(server.url(path)).bearer_auth(ADMIN_TOKEN);
    assert_eq!(admin("/v1/channels/nope").send().await.expect("http").status(), 404);
    assert_eq!(admin("/v1/channels/nope").send().await.expect("http").status(), 404);
    assert_eq!(admin("/v1/channels").send().await.expect("http").status(), 200);
    // A write: the write pool is used.
    server.admin(ADMIN_TOKEN).create_channel("room", &["alice"]).await;
    // No route: the template is `unmatched`, never the path.
    assert_eq!(admin("/no/such/thing").send().await.expect("http").status(), 404);
    // Refused credentials are 4xx of their route.
    let refused = http
        .get(server.url("/v1/channels"))
        .bearer_auth("wrong")
        .send()
        .await
        .expect("http");
    assert_eq!(refused.status(), 401);
    let scrape = scrape(&server).await;
    for (series, count) in [
        (
            r#"chatd_http_requests_total{route="/v1/channels/{channelId}",status="4xx"}"#,
            2.0,
        ),
        (
            r#"chatd_http_requests_total{route="/v1/channels/{channelId}",status="2xx"}"#,
            0.0,
        ),
        (r#"chatd_http_requests_total{route="/v1/channels",status="2xx"}"#, 2.0),
        (r#"chatd_http_requests_total{route="/v1/channels",status="4xx"}"#, 1.0),
        (r#"chatd_http_requests_total{route="unmatched",status="4xx"}"#, 1.0),
        (
            r#"chatd_http_request_duration_seconds_count{route="/v1/channels/{channelId}"}"#,
            2.0,
        ),
        (
            r#"chatd_http_request_duration_seconds_count{route="/v1/channels"}"#,
            3.0,
        ),
        (
            r#"chatd_http_request_duration_seconds_bucket{route="/v1/channels",le="+Inf"}"#,
            3.0,
        ),
    ] {
        assert_eq!(scrape.value(series), Some(count), "{series}");
    }
    assert!(
        !scrape.samples.keys().any(|s| s.contains("/no/such")),
        "a path no route matched is not a label"
    );
    let sum = scrape
        .value(r#"chatd_http_request_duration_seconds_sum{route="/v1/channels"}"#)
        .expect("sum");
    assert!(sum > 0.0, "durations recorded: {sum}");
    // The pools: the writer and the readers, each with its bound, open
    // connections split between idle and in use.
    for pool in ["write", "read"] {
        let get = |name: &str| {
            scrape
                .value(&format!("chatd_db_pool_{name}{{pool=\"{pool}\"}}"))
                .unwrap_or_else(|| panic!("chatd_db_pool_{name} of {pool}"))
        };
        let (size, idle, in_use, max) = (get("size"), get("idle"), get("in_use"), get("max"));
        assert!(max >= 1.0, "{pool}: max {max}");
        assert!(size <= max, "{pool}: size {size} max {max}");
        assert_eq!(idle + in_use, size, "{pool}");
    }
    // Both were used: each has a connection open.
    for pool in ["write", "read"] {
        let size = scrape.value(&format!("chatd_db_pool_size{{pool=\"{pool}\"}}"));
        assert!(size >= Some(1.0), "{pool}: {size:?}");
    }
    if backend == Backend::Sqlite {
        // One writer connection on SQLite.
        assert_eq!(scrape.value(r#"chatd_db_pool_max{pool="write"}"#), Some(1.0));
    }
    server.signal("TERM");
    assert_eq!(server.wait(), 0);
}

/// Every metric `deploy/grafana/chatd.json` queries is in a scrape of a
/// fresh server (a renamed metric fails here, not on an operator's screen).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_metric_the_grafana_dashboard_queries_exists() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/grafana/chatd.json");
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("dashboard")).expect("json");
    let mut queried = HashSet::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().expect("targets") {
            let expr = target["expr"].as_str().expect("expr");
            let mut rest = expr;
            while let Some(at) = rest.find("chatd_") {
                let name: String = rest[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                rest = &rest[at + name.len()..];
                queried.insert(name);
            }
        }
    }
    assert!(queried.len() >= 8, "the dashboard queries chatd's metrics: {queried:?}");
    let db = TestDb::new(Backend::Sqlite).await;
    let server = start(&db);
    let scrape = scrape(&server).await;
    let series: HashSet<String> = scrape
        .samples
        .keys()
        .map(|s| s.split('{').next().unwrap_or(s).to_owned())
        .collect();
    for name in &queried {
        assert!(
            series.contains(name),
            "{name} (queried by the dashboard) is not in a scrape"
        );
    }
    server.signal("TERM");
    assert_eq!(server.wait(), 0);
}
