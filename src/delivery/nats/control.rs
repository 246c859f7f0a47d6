//! The connection's events: `/readyz` and the gauge follow it, and after
//! every (re)connect every channel task catches up and every user's
//! channels are read again.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::channel::ChannelCmd;
use super::inner::Inner;
use super::tables::MembershipCmd;
use crate::telemetry;

/// Follows the connection: the `/readyz` detail and gauge, and after every
/// (re)connect a catch-up of every channel and a re-read of every user's
/// channels.
pub(super) async fn run_control(inner: Arc<Inner>, mut events: mpsc::UnboundedReceiver<async_nats::Event>) {
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            _ = inner.stop.cancelled() => None,
        };
        let Some(event) = event else { return };
        match event {
            async_nats::Event::Connected => {
                tracing::info!("NATS connected");
                inner.connected.send_replace(true);
                telemetry::nats_connected(true);
                // The client has re-sent our subscriptions; once the server
                // has them, read what was committed while they were away.
                inner.confirm().await;
                let (channels, users): (Vec<_>, Vec<_>) = {
                    let interest = inner.lock();
                    (
                        interest.channels.values().map(|c| c.commands.clone()).collect(),
                        interest.users.values().map(|u| u.memberships.clone()).collect(),
                    )
                };
                for channel in channels {
                    let _ = channel.send(ChannelCmd::CatchUp);
                }
                for user in users {
                    let _ = user.send(MembershipCmd::Reconcile);
                }
            }
            async_nats::Event::Disconnected => {
                tracing::warn!("NATS disconnected; storing and delivering locally until it is back");
                inner.connected.send_replace(false);
                telemetry::nats_connected(false);
            }
            async_nats::Event::SlowConsumer(_) => {
                tracing::warn!("NATS subscription too slow; messages dropped (filled from the database)");
                telemetry::nats_slow_consumer();
            }
            other => tracing::info!(event = %other, "NATS event"),
        }
    }
}
