//! Typing and presence across nodes (`docs/deployment.md`, "Presence").
//!
//! Core NATS only, nothing kept by the broker: a dead node is noticed by the
//! silence of its heartbeats, so no one has to clean up after it.
//! - TYPING frames go to `<prefix>.c.<channel>`, the channel's own subject,
//!   with the channel's members, behind the messages they follow; the
//!   channel's task on each node carrying it hands them to its sessions
//!   ([`super::channel`]).
//! - Every node publishes on `<prefix>.p` the users it holds: at once when
//!   it takes one, when a user's last session there closes (its grace
//!   period starts: still online, no session) and when it lets go of one,
//!   and all of them every third of
//!   `presence_ttl_ms` (the heartbeat). The others keep each (node, user)
//!   entry until it is not refreshed within `presence_ttl_ms`
//!   ([`crate::delivery::ephemeral::Ephemeral::expire`]).

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use futures_util::StreamExt;

use super::inner::Inner;
use super::peers::Peers;
use super::wire::{presence_subject, PresenceEnvelope};
use crate::delivery::ephemeral::NodeId;
use crate::delivery::hub::Hub;
use crate::ids::UserId;

/// Users per heartbeat message (about 130 bytes each at most: well within
/// NATS's default 1 MB payload).
const HEARTBEAT_CHUNK: usize = 2000;

/// Presence between nodes: subscribes to `<prefix>.p`, applies what other
/// nodes say, and sends this node's heartbeat every third of
/// `presence_ttl_ms`.
pub(super) async fn run_presence(inner: Arc<Inner>) {
    let mut inbound = inner.subscribe(presence_subject(&inner.prefix)).await;
    let ephemeral = inner.hub.ephemeral();
    let mut heartbeat = tokio::time::interval(ephemeral.settings().heartbeat_every());
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let node = ephemeral.node().to_string();
    let mut peers = Peers::new(ephemeral.settings().presence_ttl);
    loop {
        tokio::select! {
            _ = inner.stop.cancelled() => return,
            _ = heartbeat.tick() => {
                peers.expire(Instant::now());
                let users = ephemeral.held_users();
                // At least one heartbeat, empty when no user is held here:
                // the other nodes know this one is alive ([`Peers`]).
                let chunks: Vec<&[_]> = if users.is_empty() {
                    vec![&[]]
                } else {
                    users.chunks(HEARTBEAT_CHUNK).collect()
                };
                for chunk in chunks {
                    let envelope = PresenceEnvelope::Heartbeat {
                        node: node.clone(),
                        users: chunk.iter().map(|(u, _)| u.as_str().to_owned()).collect(),
                        idle: chunk
                            .iter()
                            .filter(|(_, sessions)| !sessions)
                            .map(|(u, _)| u.as_str().to_owned())
                            .collect(),
                    };
                    if let Ok(payload) = serde_json::to_vec(&envelope) {
                        inner.publish(presence_subject(&inner.prefix), Bytes::from(payload));
                    }
                }
            }
            payload = inbound.next() => match payload {
                Some(payload) => on_presence(&inner.hub, &mut peers, &payload),
                None => inbound = futures_util::stream::pending().boxed(),
            },
        }
    }
}

fn on_presence(hub: &Hub, peers: &mut Peers, payload: &[u8]) {
    let ephemeral = hub.ephemeral();
    let ids = |users: Vec<String>| -> Vec<UserId> { users.iter().filter_map(|u| UserId::parse(u).ok()).collect() };
    let envelope = serde_json::from_slice::<PresenceEnvelope>(payload);
    match &envelope {
        Ok(PresenceEnvelope::Leaving { node }) => peers.left(node),
        Ok(
            PresenceEnvelope::Heartbeat { node, .. }
            | PresenceEnvelope::Held { node, .. }
            | PresenceEnvelope::Idle { node, .. }
            | PresenceEnvelope::Released { node, .. },
        ) if node.as_str() != ephemeral.node().as_ref() => peers.heard(node, Instant::now()),
        _ => {}
    }
    match envelope {
        Ok(PresenceEnvelope::Heartbeat { node, users, idle }) => {
            let node = NodeId::from(node);
            let idle: std::collections::HashSet<String> = idle.into_iter().collect();
            let (idle, held): (Vec<String>, Vec<String>) = users.into_iter().partition(|u| idle.contains(u));
            ephemeral.remote_held(&node, &ids(held));
            ephemeral.remote_idle(&node, &ids(idle));
        }
        Ok(PresenceEnvelope::Held { node, user }) => ephemeral.remote_held(&NodeId::from(node), &ids(vec![user])),
        Ok(PresenceEnvelope::Idle { node, user }) => ephemeral.remote_idle(&NodeId::from(node), &ids(vec![user])),
        Ok(PresenceEnvelope::Released {
            node,
            user,
            last_seen_at,
        }) => match UserId::parse(&user) {
            Ok(user) => ephemeral.remote_released(&NodeId::from(node), &user, last_seen_at),
            Err(error) => tracing::warn!(%error, "bad user id in presence from NATS"),
        },
        Ok(PresenceEnvelope::Leaving { node }) => ephemeral.remote_leaving(&NodeId::from(node)),
        // The sender noted its own sessions when it published.
        Ok(PresenceEnvelope::Unshared { node, users }) if node.as_str() != ephemeral.node().as_ref() => {
            ephemeral.sharing_may_have_ended(&ids(users));
        }
        Ok(PresenceEnvelope::Shared { node, users }) if node.as_str() != ephemeral.node().as_ref() => {
            ephemeral.sharing_may_have_started(&ids(users));
        }
        Ok(PresenceEnvelope::Unshared { .. } | PresenceEnvelope::Shared { .. }) => {}
        Err(error) => tracing::debug!(%error, "undecodable presence from NATS"),
    }
}
