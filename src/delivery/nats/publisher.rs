//! The publisher: envelopes queued by the commit path and the sessions go
//! out to NATS in order, held while NATS is down.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::inner::{Inner, Outbound};
use crate::telemetry;

/// Publishes queued envelopes in order; holds them while NATS is down (they
/// go out after the reconnect). At shutdown, sends what is left while
/// connected.
pub(super) async fn run_publisher(inner: Arc<Inner>, mut queue: mpsc::Receiver<Outbound>) {
    let mut connected = inner.connected.subscribe();
    let stop = inner.stop.clone();
    loop {
        let item = tokio::select! {
            item = queue.recv() => item,
            _ = stop.cancelled() => None,
        };
        let Some(item) = item else { break };
        if !*connected.borrow_and_update() {
            tokio::select! {
                up = connected.wait_for(|c| *c) => if up.is_err() { break },
                _ = stop.cancelled() => break,
            }
        }
        if let Err(error) = inner.client.publish(item.subject, item.payload).await {
            tracing::warn!(%error, "NATS publish failed");
            telemetry::nats_publish_failed("error");
        }
    }
    if *connected.borrow() {
        while let Ok(item) = queue.try_recv() {
            if inner.client.publish(item.subject, item.payload).await.is_err() {
                break;
            }
        }
        let _ = inner.client.flush().await;
    }
}
