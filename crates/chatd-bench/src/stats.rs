//! Latency histograms, counters and the report (table or JSON).

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

/// Latencies in microseconds, 1 µs to 10 min, 3 significant digits.
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 600_000_000, 3).expect("constant bounds are valid")
}

/// Records `latency` (saturating at the histogram's top).
pub fn record(h: &mut Histogram<u64>, latency: Duration) {
    let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX).max(1);
    h.saturating_record(micros);
}

/// Percentiles of one histogram, in milliseconds.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Percentiles {
    /// Samples recorded.
    pub count: u64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl Percentiles {
    /// Reads the percentiles off `h`.
    pub fn of(h: &Histogram<u64>) -> Self {
        let ms = |v: u64| v as f64 / 1000.0;
        if h.is_empty() {
            return Self::default();
        }
        Self {
            count: h.len(),
            p50: ms(h.value_at_quantile(0.50)),
            p90: ms(h.value_at_quantile(0.90)),
            p99: ms(h.value_at_quantile(0.99)),
            p999: ms(h.value_at_quantile(0.999)),
            max: ms(h.max()),
        }
    }
}

/// What the post-run check found.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Verification {
    /// Whether the check ran.
    pub ran: bool,
    /// No problem found.
    pub ok: bool,
    /// Channels checked.
    pub channels: usize,
    /// Messages found stored in them.
    pub stored: usize,
    /// ACKs the generator received.
    pub acked: usize,
    /// What is wrong (at most 20 lines).
    pub problems: Vec<String>,
}

/// The result of one run.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Report {
    pub scenario: String,
    /// The scenario's settings, as given.
    pub settings: serde_json::Value,
    /// Measured window (after warm-up), seconds.
    pub measured_secs: f64,
    /// Sends ACKed (not duplicate) in the window.
    pub acked: u64,
    pub acked_per_sec: f64,
    /// MSG_RECV received by the generator's connections in the window.
    pub delivered: u64,
    pub delivered_per_sec: f64,
    /// From the send's intended time (its slot in fixed-rate mode) to MSG_ACK.
    pub send_to_ack_ms: Percentiles,
    /// From the send's intended time to each MSG_RECV.
    pub send_to_recv_ms: Percentiles,
    /// Failed sends by code, and sends that needed more than one attempt.
    pub errors: BTreeMap<String, u64>,
    /// Sends that needed more than one attempt (retried by the client).
    pub retried: u64,
    /// Connections open during the run.
    pub connections: usize,
    /// The server's resident set, bytes (None when unreadable).
    pub server_rss_bytes: Option<u64>,
    /// Server RSS growth per connection, bytes (`idle`).
    pub rss_per_connection_bytes: Option<f64>,
    /// Scenario-specific figures (`sync`: catch-up rate, history page latency).
    pub extra: BTreeMap<String, serde_json::Value>,
    pub verification: Verification,
}

impl Report {
    /// The report as a readable table.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let mut line = |k: &str, v: String| out.push_str(&format!("{k:<26} {v}\n"));
        line("scenario", self.scenario.clone());
        line("settings", self.settings.to_string());
        line("connections", self.connections.to_string());
        line("measured", format!("{:.1} s", self.measured_secs));
        line(
            "acked sends",
            format!("{} ({:.0}/s), retried {}", self.acked, self.acked_per_sec, self.retried),
        );
        line(
            "delivered MSG_RECV",
            format!("{} ({:.0}/s)", self.delivered, self.delivered_per_sec),
        );
        let p = |p: &Percentiles| {
            format!(
                "p50 {:.2}  p90 {:.2}  p99 {:.2}  p99.9 {:.2}  max {:.2} ms  (n={})",
                p.p50, p.p90, p.p99, p.p999, p.max, p.count
            )
        };
        line("send→ACK", p(&self.send_to_ack_ms));
        line("send→RECV", p(&self.send_to_recv_ms));
        line(
            "errors",
            if self.errors.is_empty() {
                "none".into()
            } else {
                format!("{:?}", self.errors)
            },
        );
        if let Some(rss) = self.server_rss_bytes {
            line("server RSS", format!("{:.1} MiB", rss as f64 / (1 << 20) as f64));
        }
        if let Some(per) = self.rss_per_connection_bytes {
            line("server RSS / connection", format!("{:.1} KiB", per / 1024.0));
        }
        for (k, v) in &self.extra {
            line(k, v.to_string());
        }
        let v = &self.verification;
        line(
            "verification",
            if !v.ran {
                "skipped".into()
            } else if v.ok && v.channels == 0 {
                "ok: every connection stayed open".into()
            } else if v.ok {
                format!(
                    "ok: {} channels, {} stored, {} acked, each once, seqs gapless",
                    v.channels, v.stored, v.acked
                )
            } else {
                format!("FAILED: {}", v.problems.join("; "))
            },
        );
        out
    }
}

/// The server's resident set size in bytes, from `/proc/<pid>/status`.
pub fn rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The pid of the only running process named `chatd`, if exactly one runs.
pub fn find_server_pid() -> Option<u32> {
    let mut found = None;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "chatd") {
            if found.is_some() {
                return None;
            }
            found = Some(pid);
        }
    }
    found
}
