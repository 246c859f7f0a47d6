//! The bridge's shared state ([`Inner`]): the NATS client, the tables of
//! what this node subscribes to, the queue of publications, and the tasks.
//! [`super::Cluster`] holds it; every task of the bridge gets a clone.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::tables::Interest;
use super::wire::ping_subject;
use crate::delivery::hub::Hub;
use crate::store::Store;
use crate::telemetry;

/// One envelope on its way to NATS.
pub(super) struct Outbound {
    pub(super) subject: String,
    pub(super) payload: Bytes,
}

/// The bridge's state, shared by [`super::Cluster`] and every task of the bridge.
pub(super) struct Inner {
    pub(super) client: async_nats::Client,
    pub(super) prefix: String,
    pub(super) store: Store,
    pub(super) hub: Arc<Hub>,
    pub(super) gap_wait: Duration,
    pub(super) interest: Mutex<Interest>,
    /// Publications on their way to NATS (see [`super::PUBLISH_QUEUE`]).
    pub(super) outbound: mpsc::Sender<Outbound>,
    pub(super) connected: watch::Sender<bool>,
    /// Every task of the bridge (channels, users, publisher, control).
    pub(super) tasks: TaskTracker,
    /// Cancelled at shutdown; every task holds a child of it.
    pub(super) stop: CancellationToken,
    /// With the test hooks: users' subjects' prefix and the queue that
    /// publishes on them late ([`super::TEST_NATS_USER_DELAY_ENV`]).
    #[cfg(feature = "test-hooks")]
    pub(super) user_delay: Option<(String, mpsc::UnboundedSender<(tokio::time::Instant, Outbound)>)>,
}

impl Inner {
    pub(super) fn lock(&self) -> MutexGuard<'_, Interest> {
        self.interest.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues a publication without waiting; a full queue drops it (counted).
    pub(super) fn publish(&self, subject: String, payload: Bytes) {
        #[cfg(feature = "test-hooks")]
        if let Some((users, delayed)) = &self.user_delay {
            if subject.starts_with(users.as_str()) {
                let _ = delayed.send((tokio::time::Instant::now(), Outbound { subject, payload }));
                return;
            }
        }
        if let Err(mpsc::error::TrySendError::Full(_)) = self.outbound.try_send(Outbound { subject, payload }) {
            telemetry::nats_publish_failed("queue_full");
        }
    }

    /// Subscribes and confirms the subscription by a round trip.
    pub(super) async fn subscribe(&self, subject: String) -> BoxStream<'static, Bytes> {
        match self.client.subscribe(subject.clone()).await {
            Ok(subscriber) => {
                self.confirm().await;
                subscriber.map(|message| message.payload).boxed()
            }
            Err(error) => {
                tracing::error!(%subject, %error, "cannot subscribe; this node delivers only its own messages there");
                futures_util::stream::pending().boxed()
            }
        }
    }

    /// A request nobody answers: the server's "no responders" reply comes
    /// after it has processed every earlier command of this connection, so
    /// our subscriptions are active once it is back. Skipped while
    /// disconnected (the catch-up after the reconnect covers that case).
    pub(super) async fn confirm(&self) {
        if !*self.connected.borrow() {
            return;
        }
        match self.client.request(ping_subject(&self.prefix), Bytes::new()).await {
            Ok(_) => {}
            Err(error) if error.kind() == async_nats::client::RequestErrorKind::NoResponders => {}
            Err(error) => tracing::debug!(%error, "subscriptions not confirmed"),
        }
    }
}

/// With the test hooks: when [`super::TEST_NATS_USER_DELAY_ENV`] is set,
/// the users' subjects' prefix and a queue whose task hands each
/// publication to `outbound` that many milliseconds after it was queued, in
/// order. The task ends when the queue's sender (in [`Inner`]) is dropped.
#[cfg(feature = "test-hooks")]
pub(super) fn test_user_delay(
    prefix: &str,
    outbound: &mpsc::Sender<Outbound>,
) -> Option<(String, mpsc::UnboundedSender<(tokio::time::Instant, Outbound)>)> {
    let ms: u64 = std::env::var(super::TEST_NATS_USER_DELAY_ENV).ok()?.parse().ok()?;
    let (delayed, mut queue) = mpsc::unbounded_channel::<(tokio::time::Instant, Outbound)>();
    let outbound = outbound.clone();
    tokio::spawn(async move {
        while let Some((at, item)) = queue.recv().await {
            tokio::time::sleep_until(at + Duration::from_millis(ms)).await;
            if outbound.send(item).await.is_err() {
                return;
            }
        }
    });
    Some((format!("{prefix}.u."), delayed))
}
