//! Timed reads for the read scenarios (`directory`, `big-channel`): a few
//! kinds of request, each measured in blocks of back-to-back requests, the
//! kinds' blocks in turn and their order rotating every round (so no kind
//! always runs first, on a colder cache or a quieter machine). Per kind:
//! latency percentiles, the answer's size, and the CPU the server, the
//! generator and the server's PostgreSQL backends used per request over
//! the kind's blocks (from `/proc`, as the load scenarios report it), which
//! tells whether the generator could be the limit.

use std::time::Duration;

use hdrhistogram::Histogram;
use serde_json::json;

use crate::stats::{histogram, record, CpuSample, CpuSplit, Percentiles};

/// Where the CPU counters come from.
#[derive(Debug, Clone)]
pub struct Meter {
    /// The server's pid.
    pub server: Option<u32>,
    /// The server's PostgreSQL database (its backends' CPU).
    pub database: Option<String>,
}

impl Meter {
    /// Reads the counters now.
    pub fn sample(&self) -> CpuSample {
        CpuSample::take(self.server, self.database.as_deref())
    }
}

/// One kind of request and what its blocks measured.
#[derive(Debug)]
pub struct Series {
    /// Its name in the report.
    pub name: String,
    latency: Histogram<u64>,
    /// Smallest and largest answer, bytes.
    bytes: Option<(usize, usize)>,
    /// Wall time of its blocks, seconds.
    secs: f64,
    /// CPU seconds over its blocks: server, generator, PostgreSQL backends.
    cpu: [Option<f64>; 3],
    /// How busy the machine was over its blocks (time-weighted percent).
    machine_pct_secs: Option<f64>,
}

impl Series {
    /// An empty series named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            latency: histogram(),
            bytes: None,
            secs: 0.0,
            cpu: [Some(0.0); 3],
            machine_pct_secs: Some(0.0),
        }
    }

    /// One request took `elapsed` and its answer had `bytes` bytes.
    pub fn record(&mut self, elapsed: Duration, bytes: usize) {
        record(&mut self.latency, elapsed);
        self.bytes = Some(match self.bytes {
            None => (bytes, bytes),
            Some((lo, hi)) => (lo.min(bytes), hi.max(bytes)),
        });
    }

    /// Adds the CPU used between `before` and `after`, a block of this kind.
    pub fn add_block(&mut self, before: &CpuSample, after: &CpuSample, secs: f64) {
        let split = CpuSplit::between(before, after);
        let used = |pct: Option<f64>| pct.map(|p| p / 100.0 * secs);
        let add = |acc: Option<f64>, v: Option<f64>| Some(acc? + v?);
        self.cpu[0] = add(self.cpu[0], used(split.server_core_pct));
        self.cpu[1] = add(self.cpu[1], used(split.generator_core_pct));
        self.cpu[2] = add(self.cpu[2], used(split.database_core_pct));
        self.machine_pct_secs = add(self.machine_pct_secs, split.machine_busy_pct.map(|p| p * secs));
        self.secs += secs;
    }

    /// Latency percentiles (ms).
    pub fn percentiles(&self) -> Percentiles {
        Percentiles::of(&self.latency)
    }

    /// The series as a JSON object: requests, latency (ms), answer bytes,
    /// requests per second over its blocks, and µs of CPU per request of
    /// the server, the generator and the PostgreSQL backends (`null` when
    /// not measured), and how busy the machine was.
    pub fn summary(&self) -> serde_json::Value {
        let n = self.latency.len().max(1) as f64;
        let per_request = |cpu: Option<f64>| cpu.map(|s| (s * 1e6 / n * 10.0).round() / 10.0);
        json!({
            "requests": self.latency.len(),
            "latencyMs": self.percentiles(),
            "answerBytes": self.bytes.map(|(lo, hi)| if lo == hi { json!(lo) } else { json!([lo, hi]) }),
            "requestsPerSec": (self.latency.len() as f64 / self.secs.max(1e-9)).round(),
            "serverUsPerRequest": per_request(self.cpu[0]),
            "generatorUsPerRequest": per_request(self.cpu[1]),
            "databaseUsPerRequest": per_request(self.cpu[2]),
            "machineBusyPct": self.machine_pct_secs.map(|p| (p / self.secs.max(1e-9)).round()),
        })
    }
}

/// The order of the kinds in round `round`: `0..kinds` rotated by the
/// round, so each kind goes first once every `kinds` rounds.
pub fn rotation(kinds: usize, round: usize) -> impl Iterator<Item = usize> {
    (0..kinds).map(move |i| (i + round) % kinds.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_goes_first_once_per_cycle() {
        let firsts: Vec<usize> = (0..4).map(|r| rotation(4, r).next().unwrap()).collect();
        assert_eq!(firsts, vec![0, 1, 2, 3]);
        let mut round: Vec<usize> = rotation(4, 3).collect();
        round.sort_unstable();
        assert_eq!(round, vec![0, 1, 2, 3]);
    }

    #[test]
    fn a_series_keeps_the_range_of_its_answer_sizes() {
        let mut s = Series::new("x");
        s.record(Duration::from_millis(2), 300);
        s.record(Duration::from_millis(4), 310);
        assert_eq!(s.summary()["answerBytes"], json!([300, 310]));
        assert_eq!(s.summary()["requests"], json!(2));
    }
}
