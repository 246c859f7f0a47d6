//! Latency histograms, counters, the order of compared phases, and the
//! report (table or JSON).

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

/// Which phase of a same-run comparison goes first in `round` (0-based):
/// `[baseline, treatment]` in even rounds, `[treatment, baseline]` in odd
/// ones (`false` is the baseline). The order alternates because the later
/// phase of a pair runs on a bigger database and a warmer (or more loaded)
/// machine: two identical `send` phases in a fixed order differed by 15 %
/// on PostgreSQL, a bias an ABBA order cancels over each pair of rounds.
pub fn phase_order(round: usize) -> [bool; 2] {
    if round % 2 == 0 {
        [false, true]
    } else {
        [true, false]
    }
}

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
    /// CPU used during the measured window by the server, the generator and
    /// the machine as a whole (None when not measured).
    pub cpu: Option<CpuSplit>,
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
        if let Some(cpu) = &self.cpu {
            let pct = |v: Option<f64>| v.map_or("?".to_owned(), |v| format!("{v:.0}%"));
            line(
                "CPU (measured window)",
                format!(
                    "server {}, generator {}, its PostgreSQL backends {} (of one core); machine {} busy ({} cores)",
                    pct(cpu.server_core_pct),
                    pct(cpu.generator_core_pct),
                    pct(cpu.database_core_pct),
                    pct(cpu.machine_busy_pct),
                    cpu.cores
                ),
            );
            if cpu.generator_may_be_limit == Some(true) {
                line(
                    "note",
                    "the machine was saturated and the generator used as much CPU as the server: \
                     these figures may be the generator's limit, not the server's"
                        .into(),
                );
            }
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
            } else if v.ok && v.stored == 0 && v.acked == 0 {
                format!("ok: {} channels, every answer as expected", v.channels)
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

/// CPU time a process has used so far (user + system), in clock ticks of
/// `/proc/<pid>/stat` (USER_HZ, 100 per second on Linux).
fn process_ticks(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; fields after it are plain.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 here.
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// CPU ticks of the PostgreSQL backends serving `database` (processes whose
/// command line reads `postgres: … <database> …`), summed.
fn backend_ticks(database: &str) -> Option<u64> {
    let mut sum = 0;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().filter(|s| s.bytes().all(|b| b.is_ascii_digit())) else {
            continue;
        };
        let Ok(cmdline) = std::fs::read_to_string(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if cmdline.starts_with("postgres:")
            && cmdline
                .split(|c: char| c.is_whitespace() || c == '\0')
                .any(|w| w == database)
        {
            sum += process_ticks(pid).unwrap_or(0);
        }
    }
    Some(sum)
}

/// Busy and total ticks of the whole machine, from the `cpu` line of `/proc/stat`.
fn machine_ticks() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().next()?.strip_prefix("cpu ")?;
    let v: Vec<u64> = line.split_whitespace().filter_map(|f| f.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal (guest time is inside user).
    let total: u64 = v.iter().take(8).sum();
    let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
    Some((total.saturating_sub(idle), total))
}

/// One reading of the CPU counters.
#[derive(Debug, Clone, Copy)]
pub struct CpuSample {
    at: std::time::Instant,
    server: Option<u64>,
    generator: Option<u64>,
    database: Option<u64>,
    machine: Option<(u64, u64)>,
}

impl CpuSample {
    /// Reads the counters now (`server`: the server's pid, if known;
    /// `database`: the PostgreSQL database whose backends to count).
    pub fn take(server: Option<u32>, database: Option<&str>) -> Self {
        Self {
            at: std::time::Instant::now(),
            server: server.and_then(|p| process_ticks(&p.to_string())),
            generator: process_ticks("self"),
            database: database.and_then(backend_ticks),
            machine: machine_ticks(),
        }
    }
}

/// Where the CPU went between two samples: percent of one core for the
/// server, the generator and the PostgreSQL backends of the server's
/// database (200 = two cores busy), and how busy the whole machine was, in
/// percent of all its cores (the rest is PostgreSQL's shared processes, such
/// as the WAL writer, the kernel, and whatever else runs).
#[derive(Debug, Clone, Serialize, Default)]
pub struct CpuSplit {
    pub server_core_pct: Option<f64>,
    pub generator_core_pct: Option<f64>,
    pub database_core_pct: Option<f64>,
    pub machine_busy_pct: Option<f64>,
    pub cores: usize,
    /// True when the machine was at least 90% busy and the generator used at
    /// least as much CPU as the server: the figures may show the generator's
    /// limit rather than the server's (they share the machine's cores).
    pub generator_may_be_limit: Option<bool>,
}

impl CpuSplit {
    /// See [`CpuSplit::generator_may_be_limit`].
    fn generator_limit(&self) -> Option<bool> {
        let (machine, generator, server) = (self.machine_busy_pct?, self.generator_core_pct?, self.server_core_pct?);
        Some(machine >= 90.0 && generator >= server)
    }
}

impl CpuSplit {
    /// The split between `a` and a later `b`.
    pub fn between(a: &CpuSample, b: &CpuSample) -> Self {
        let secs = b.at.duration_since(a.at).as_secs_f64().max(1e-9);
        let pct = |x: Option<u64>, y: Option<u64>| match (x, y) {
            (Some(x), Some(y)) => Some(((y.saturating_sub(x)) as f64 / 100.0 / secs * 100.0 * 10.0).round() / 10.0),
            _ => None,
        };
        let machine = match (a.machine, b.machine) {
            (Some((b0, t0)), Some((b1, t1))) if t1 > t0 => {
                Some(((b1 - b0) as f64 / (t1 - t0) as f64 * 1000.0).round() / 10.0)
            }
            _ => None,
        };
        let mut split = Self {
            server_core_pct: pct(a.server, b.server),
            generator_core_pct: pct(a.generator, b.generator),
            database_core_pct: pct(a.database, b.database),
            machine_busy_pct: machine,
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            generator_may_be_limit: None,
        };
        split.generator_may_be_limit = split.generator_limit();
        split
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_phase_goes_first_in_half_of_an_even_number_of_rounds() {
        let rounds: Vec<[bool; 2]> = (0..4).map(phase_order).collect();
        for pair in &rounds {
            assert_ne!(pair[0], pair[1], "a round runs both phases: {pair:?}");
        }
        let treatment_first = rounds.iter().filter(|pair| pair[0]).count();
        assert_eq!(treatment_first, 2, "{rounds:?}");
        assert_eq!(rounds[0], [false, true], "the baseline goes first in round 0");
    }

    fn split(server: f64, generator: f64, machine: f64) -> CpuSplit {
        let mut s = CpuSplit {
            server_core_pct: Some(server),
            generator_core_pct: Some(generator),
            database_core_pct: None,
            machine_busy_pct: Some(machine),
            cores: 2,
            generator_may_be_limit: None,
        };
        s.generator_may_be_limit = s.generator_limit();
        s
    }

    #[test]
    fn a_saturated_machine_with_a_busy_generator_is_flagged() {
        // session 4's fanout at 110 sends/s: server 85%, generator 92%, machine 96%.
        assert_eq!(split(85.0, 92.0, 96.0).generator_may_be_limit, Some(true));
        // send at half rate: the machine is not saturated.
        assert_eq!(split(48.0, 48.0, 84.0).generator_may_be_limit, Some(false));
        // saturated, but the server is the bigger user.
        assert_eq!(split(120.0, 60.0, 95.0).generator_may_be_limit, Some(false));
        let unknown = CpuSplit::default();
        assert_eq!(unknown.generator_limit(), None);
        let report = Report {
            cpu: Some(split(85.0, 92.0, 96.0)),
            ..Report::default()
        };
        assert!(report.table().contains("may be the generator's limit"));
    }
}
