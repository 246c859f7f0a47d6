//! Waiting on what a `chatd-client` [`Client`] holds, for the tests that
//! drive the client library against a real server.

use std::time::Duration;

use chatd_client::{Client, Event, Thread};
use tokio::sync::mpsc;

/// Waits until `check` holds for the thread of `root` in `channel` as
/// `client` holds it, reading (and dropping) the client's `events`
/// meanwhile so the client's task is not held up; returns that thread.
///
/// # Panics
/// When the thread was not opened, or `check` does not hold within 20 s
/// (the message names `what` and shows the thread).
pub async fn thread_until(
    client: &Client,
    events: &mut mpsc::Receiver<Event>,
    channel: &str,
    root: uuid::Uuid,
    what: &str,
    check: impl Fn(&Thread) -> bool,
) -> Thread {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let thread = client.thread(channel, root).await.expect("the thread was opened");
        if check(&thread) {
            return thread;
        }
        assert!(tokio::time::Instant::now() < deadline, "{what}: {thread:#?}");
        let _ = tokio::time::timeout(Duration::from_millis(50), events.recv()).await;
    }
}
