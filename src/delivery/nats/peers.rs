//! The other nodes this node hears over NATS (their presence traffic, at
//! least a heartbeat every third of `presence_ttl_ms`): each one logged when
//! it is first heard (`peer node joined`), when it says it leaves (`peer
//! node left`), and when it has been silent for `presence_ttl_ms` (`peer
//! node lost`, a warning: killed, frozen, or cut off from NATS), and counted
//! by `chatd_nats_peers`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::telemetry;

/// Node ids, each with when it was last heard.
#[derive(Debug)]
pub(super) struct Peers {
    ttl: Duration,
    heard: HashMap<String, Instant>,
}

impl Peers {
    /// No peer yet; one is lost after `ttl` of silence.
    pub(super) fn new(ttl: Duration) -> Self {
        telemetry::nats_peers(0);
        Self {
            ttl,
            heard: HashMap::new(),
        }
    }

    /// Node `node` said something at `now`.
    pub(super) fn heard(&mut self, node: &str, now: Instant) {
        if self.heard.insert(node.to_owned(), now).is_none() {
            tracing::info!(node, peers = self.heard.len(), "peer node joined");
            telemetry::nats_peers(self.heard.len());
        }
    }

    /// Node `node` said it is leaving (a clean shutdown).
    pub(super) fn left(&mut self, node: &str) {
        if self.heard.remove(node).is_some() {
            tracing::info!(node, peers = self.heard.len(), "peer node left");
            telemetry::nats_peers(self.heard.len());
        }
    }

    /// Forgets the nodes silent for longer than `ttl` at `now`; returns them.
    pub(super) fn expire(&mut self, now: Instant) -> Vec<String> {
        let ttl = self.ttl;
        let lost: Vec<String> = self
            .heard
            .iter()
            .filter(|(_, at)| now.saturating_duration_since(**at) > ttl)
            .map(|(node, _)| node.clone())
            .collect();
        for node in &lost {
            self.heard.remove(node);
            tracing::warn!(
                node = node.as_str(),
                peers = self.heard.len(),
                silent_ms = ttl.as_millis() as u64,
                "peer node lost: nothing heard from it within presence_ttl_ms"
            );
        }
        if !lost.is_empty() {
            telemetry::nats_peers(self.heard.len());
        }
        lost
    }

    /// How many peers are known.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.heard.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peers_join_leave_and_are_lost_after_silence() {
        let start = Instant::now();
        let mut peers = Peers::new(Duration::from_secs(3));
        peers.heard("a", start);
        peers.heard("b", start);
        peers.heard("a", start + Duration::from_secs(2));
        assert_eq!(peers.len(), 2);
        peers.left("b");
        assert_eq!(peers.len(), 1);
        assert!(
            peers.expire(start + Duration::from_secs(4)).is_empty(),
            "a was heard 2 s ago"
        );
        assert_eq!(peers.expire(start + Duration::from_secs(6)), vec!["a".to_owned()]);
        assert_eq!(peers.len(), 0);
    }
}
