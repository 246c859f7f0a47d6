//! chatd's replica-read counters, read from its `GET /metrics` (Prometheus
//! text): `chatd_db_replica_reads_total` (history, `SYNC` and search reads
//! the standby served) and `chatd_db_replica_fallbacks_total{reason}`
//! (`behind`, `error`: such reads served by the primary instead). A chatd
//! process starts them at 0, so the harness reads them before each kill or
//! termination and at the end, and sums.

use serde::Serialize;

/// Replica reads counted by chatd processes (summed over restarts).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaCounts {
    /// Reads the standby served.
    pub standby: u64,
    /// Reads that went to the primary: the standby had not replayed the
    /// primary's position within 50 ms, or recently had not.
    pub behind: u64,
    /// Reads that went to the primary: the standby failed (or had failed
    /// within the last second).
    pub error: u64,
}

impl ReplicaCounts {
    /// The counters in a `/metrics` text (0 for one not there: the
    /// counter is created by its first increment).
    pub fn parse(text: &str) -> Self {
        let mut counts = Self::default();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let Some((name, value)) = line.rsplit_once(' ') else {
                continue;
            };
            let Ok(value) = value.trim().parse::<f64>() else {
                continue;
            };
            // Counters as whole numbers (Prometheus prints them as floats).
            let value = value.max(0.0) as u64;
            let name = name.trim();
            if name == "chatd_db_replica_reads_total" {
                counts.standby += value;
            } else if name.starts_with("chatd_db_replica_fallbacks_total{") {
                if name.contains("reason=\"behind\"") {
                    counts.behind += value;
                } else if name.contains("reason=\"error\"") {
                    counts.error += value;
                }
            }
        }
        counts
    }

    /// Adds `other`.
    pub fn add(&mut self, other: Self) {
        self.standby += other.standby;
        self.behind += other.behind;
        self.error += other.error;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counters_are_read_from_a_metrics_text() {
        let text = "# HELP chatd_db_replica_reads_total History, SYNC and search reads served by the standby.\n\
                    # TYPE chatd_db_replica_reads_total counter\n\
                    chatd_db_replica_reads_total 1234\n\
                    chatd_db_replica_fallbacks_total{reason=\"behind\"} 56\n\
                    chatd_db_replica_fallbacks_total{reason=\"error\"} 7\n\
                    chatd_db_replica_reads_totalx 99\n\
                    chatd_sends_total 10\n";
        assert_eq!(
            ReplicaCounts::parse(text),
            ReplicaCounts {
                standby: 1234,
                behind: 56,
                error: 7
            }
        );
        assert_eq!(ReplicaCounts::parse("chatd_up 1\n"), ReplicaCounts::default());
    }
}
