//! Typing on this node: per (user, channel), when the last `start` was
//! forwarded (the throttle) and until when it lasts, so a `stop` goes out
//! when the user's message is stored or their last session here closes.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::time::Instant;

use super::Ephemeral;
use crate::ids::{now_ms, ChannelId, UserId};
use crate::protocol::TypingState;

/// What the typing throttle decided about one TYPING frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypingDecision {
    /// Forward it with this state (and `expiresAt` for a start).
    Forward(TypingState, Option<i64>),
    /// Drop it silently (throttled, or a stop with nothing to stop).
    Drop,
}

/// A typing state to end with a server `stop`: the channel and its members
/// as read when the typing started.
pub type TypingStop = (ChannelId, Arc<[UserId]>);

#[derive(Debug)]
pub(super) struct Typing {
    /// When the last `start` was forwarded (the throttle).
    pub(super) forwarded_at: Instant,
    /// Until when the forwarded `start` lasts; `None` once stopped.
    pub(super) until: Option<Instant>,
    pub(super) members: Arc<[UserId]>,
}

impl Ephemeral {
    // ----- typing -----

    /// Applies the throttle to a TYPING frame of `user` in `channel`
    /// (`members`: the channel's, for a later server `stop`).
    pub fn typing(&self, user: &UserId, channel: &ChannelId, start: bool, members: &Arc<[UserId]>) -> TypingDecision {
        let now = Instant::now();
        let mut state = self.lock();
        let key = (user.clone(), channel.clone());
        let decision = if start {
            let throttle = self.settings.typing_throttle;
            if state.typing.get(&key).is_some_and(|t| t.forwarded_at + throttle > now) {
                TypingDecision::Drop
            } else {
                let typing = Typing {
                    forwarded_at: now,
                    until: Some(now + self.settings.typing_ttl),
                    members: members.clone(),
                };
                state.typing.insert(key, typing);
                let ttl = i64::try_from(self.settings.typing_ttl.as_millis()).unwrap_or(i64::MAX);
                TypingDecision::Forward(TypingState::Start, Some(now_ms().saturating_add(ttl)))
            }
        } else {
            let active = state
                .typing
                .get_mut(&key)
                .and_then(|typing| typing.until.take())
                .is_some_and(|until| until > now);
            if active {
                TypingDecision::Forward(TypingState::Stop, None)
            } else {
                TypingDecision::Drop
            }
        };
        self.typing_entries.store(state.typing.len(), Ordering::Release);
        decision
    }

    /// A message from `user` was stored in `channel`: when the user is
    /// typing there (through this node), that typing ends; returns the
    /// members to send the `stop` to. The throttle ends with it: a user who
    /// starts typing again right after sending is shown typing at once,
    /// not after the rest of the throttle. Lock-free when nobody types.
    pub fn typing_ends_with_message(&self, user: &UserId, channel: &ChannelId) -> Option<Arc<[UserId]>> {
        if self.typing_entries.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut state = self.lock();
        let typing = state.typing.remove(&(user.clone(), channel.clone()))?;
        self.typing_entries.store(state.typing.len(), Ordering::Release);
        let now = Instant::now();
        typing.until.filter(|until| *until > now).map(|_| typing.members)
    }
}
