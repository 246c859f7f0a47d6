//! What is not stored: this user's typing indicators (renewed while on),
//! others' (lapsing at `expiresAt`), and the presence subscription (sent
//! again until its snapshot is complete).

use std::collections::HashSet;

use chatd_proto::protocol::ClientFrame;
use tokio::time::Instant;

use super::{SessionEnd, Task};
use crate::client::types::Event;
use crate::config::Backoff;

/// The presence subscription sent on this connection whose snapshot is not
/// complete (no PRESENCE yet since it went out for some listed ids).
pub(super) struct PresencePending {
    /// Listed ids no PRESENCE came for since the PRESENCE_SUB was sent.
    pub(super) missing: HashSet<String>,
    /// Backoff of its retries.
    pub(super) backoff: Backoff,
    /// When it goes out again (after a refusal, see [`Task::on_error`]).
    pub(super) retry_at: Option<Instant>,
}

impl Task {
    /// Queues a TYPING `start` for every channel typed in whose last one is
    /// [`ClientConfig::typing_renew`] old (or was not sent on this connection).
    pub(super) fn typing_due(&mut self, out: &mut Vec<ClientFrame>) {
        let now = Instant::now();
        for (channel, last) in &mut self.typing_out {
            if last.is_none_or(|at| now.duration_since(at) >= self.config.typing_renew) {
                *last = Some(now);
                out.push(ClientFrame::Typing {
                    channel_id: channel.clone(),
                    state: "start".into(),
                });
            }
        }
    }

    /// Turns off (with an event each) the indicators whose `expiresAt` passed.
    pub(super) async fn expire_indicators(&mut self) -> Option<SessionEnd> {
        let now = chatd_proto::ids::now_ms();
        let lapsed: Vec<(String, String)> = self
            .indicators
            .iter()
            .filter(|(_, expires)| **expires <= now)
            .map(|(key, _)| key.clone())
            .collect();
        for key in lapsed {
            self.indicators.remove(&key);
            let (channel_id, user_id) = key;
            let event = Event::Typing {
                channel_id,
                user_id,
                typing: false,
                expires_at: None,
            };
            if let Some(end) = self.emit(event).await {
                return Some(end);
            }
        }
        None
    }

    /// Queues a PRESENCE_SUB of `ids`; it is pending until its snapshot is
    /// complete (none for an empty list). A retry keeps the backoff.
    pub(super) fn push_presence_sub(&mut self, ids: Vec<String>, out: &mut Vec<ClientFrame>) {
        let backoff = self.presence_pending.take().map_or_else(
            || Backoff::new(self.config.backoff_initial, self.config.backoff_max),
            |p| p.backoff,
        );
        if !ids.is_empty() {
            self.presence_pending = Some(PresencePending {
                missing: ids.iter().cloned().collect(),
                backoff,
                retry_at: None,
            });
        }
        out.push(ClientFrame::PresenceSub {
            user_ids: ids.into_iter().map(serde_json::Value::String).collect(),
        });
    }

    /// Sends the pending presence subscription again when its retry is due.
    pub(super) fn presence_retry_due(&mut self, now: Instant, out: &mut Vec<ClientFrame>) {
        let due = self
            .presence_pending
            .as_ref()
            .and_then(|p| p.retry_at)
            .is_some_and(|at| at <= now);
        if due {
            if let Some(ids) = self.presence_sub.clone() {
                self.push_presence_sub(ids, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use chatd_proto::protocol::ClientFrame;
    use tokio::sync::mpsc;
    use tokio::time::Instant;

    use super::super::testkit::task;
    use super::super::Task;
    use crate::client::types::Event;

    /// A task whose subscription to `ids` was just sent (pending until every
    /// id's PRESENCE came), as after `subscribe_presence` on an open session.
    fn subscribed(ids: &[&str]) -> (Task, mpsc::Receiver<Event>) {
        let (mut task, _commands, events) = task();
        let ids: Vec<String> = ids.iter().map(|id| (*id).to_owned()).collect();
        task.presence_sub = Some(ids.clone());
        task.push_presence_sub(ids, &mut Vec::new());
        (task, events)
    }

    fn error(extra: serde_json::Value) -> String {
        let mut frame = serde_json::json!({
            "type": "ERROR", "code": "unavailable", "message": "busy", "retryable": true
        });
        if let (Some(frame), Some(extra)) = (frame.as_object_mut(), extra.as_object()) {
            frame.extend(extra.clone());
        }
        frame.to_string()
    }

    fn presence(user: &str) -> String {
        serde_json::json!({"type": "PRESENCE", "userId": user, "status": "offline"}).to_string()
    }

    /// The PRESENCE_SUB frames a retry check long after now puts on the wire.
    fn retries_due(task: &mut Task) -> usize {
        let mut out = Vec::new();
        task.presence_retry_due(Instant::now() + Duration::from_secs(3600), &mut out);
        out.iter()
            .filter(|f| matches!(f, ClientFrame::PresenceSub { .. }))
            .count()
    }

    /// The control for the two tests below: a retryable ERROR naming nothing
    /// is taken for the pending subscription's, which goes out again.
    #[tokio::test]
    async fn an_error_naming_nothing_resends_a_pending_presence_sub() {
        let (mut task, _events) = subscribed(&["bob", "carol"]);
        task.on_frame(&error(serde_json::json!({})), &mut Vec::new()).await;
        assert_eq!(retries_due(&mut task), 1);
    }

    /// An ERROR that names a channel answers another frame (a SYNC, a
    /// TYPING): the pending subscription is not sent again for it.
    #[tokio::test]
    async fn an_error_naming_a_channel_does_not_resend_a_pending_presence_sub() {
        let (mut task, _events) = subscribed(&["bob", "carol"]);
        let refused = error(serde_json::json!({"channelId": "room"}));
        task.on_frame(&refused, &mut Vec::new()).await;
        assert!(task.presence_pending.is_some(), "still waiting for its snapshot");
        assert_eq!(retries_due(&mut task), 0);
    }

    /// Once every listed id's PRESENCE came, the subscription is complete:
    /// a later retryable ERROR naming nothing does not send it again.
    #[tokio::test]
    async fn a_completed_presence_snapshot_stops_the_retries() {
        let (mut task, _events) = subscribed(&["bob", "carol"]);
        task.on_frame(&presence("bob"), &mut Vec::new()).await;
        assert!(task.presence_pending.is_some(), "carol's PRESENCE is missing");
        task.on_frame(&presence("carol"), &mut Vec::new()).await;
        assert!(task.presence_pending.is_none());
        task.on_frame(&error(serde_json::json!({})), &mut Vec::new()).await;
        assert_eq!(retries_due(&mut task), 0);
    }
}
