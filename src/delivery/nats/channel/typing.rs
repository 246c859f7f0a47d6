//! A channel's TYPING frames inside its task: each waits until the task has
//! handed out the channel's messages up to the seq it follows, so a member
//! never sees a message's `stop`, or the typer's next `start`, before the
//! message itself (`docs/protocol.md`, "Typing").
//!
//! Typing may be lost: a frame waits at most as long as a `start` lasts
//! (`typing_ttl_ms`), at most [`HELD_TYPING`] wait at once, and none of them
//! ever makes the task read the database.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::Utf8Bytes;
use tokio::time::Instant;

use crate::ids::UserId;

/// Most TYPING frames one channel's task holds; past it the oldest is
/// dropped.
pub(crate) const HELD_TYPING: usize = 64;

/// A TYPING frame of the channel on its way to this node's sessions.
#[derive(Debug, Clone)]
pub(crate) struct TypingFrame {
    /// The seq it follows: it goes out once the channel's messages up to
    /// this one were handed out (0: at once).
    pub after: i64,
    /// Who types (none of their sessions gets it).
    pub typer: UserId,
    /// The encoded TYPING frame.
    pub text: Utf8Bytes,
    /// The members to hand it to (but the typer).
    pub members: Arc<[UserId]>,
}

/// The TYPING frames waiting for messages, in arrival order.
#[derive(Debug)]
pub(crate) struct HeldTyping {
    held: VecDeque<(Instant, TypingFrame)>,
    /// How long a frame may wait.
    lifetime: Duration,
}

impl HeldTyping {
    /// Nothing held; a frame waits at most `lifetime`.
    pub fn new(lifetime: Duration) -> Self {
        Self {
            held: VecDeque::new(),
            lifetime,
        }
    }

    /// Frames waiting.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// A frame arrives while `next` is the next seq to hand out: returned
    /// when it may go now (what it follows is out, and no earlier frame of
    /// its typer waits), else held.
    pub fn offer(&mut self, frame: TypingFrame, next: i64, now: Instant) -> Option<TypingFrame> {
        self.expire(now);
        if frame.after < next && !self.held.iter().any(|(_, h)| h.typer == frame.typer) {
            return Some(frame);
        }
        if self.held.len() >= HELD_TYPING {
            self.held.pop_front();
        }
        self.held.push_back((now, frame));
        None
    }

    /// The held frames that may go now that `next` is the next seq to hand
    /// out, in arrival order (a typer's frames stay in their order).
    pub fn ready(&mut self, next: i64, now: Instant) -> Vec<TypingFrame> {
        self.expire(now);
        if self.held.is_empty() {
            return Vec::new();
        }
        let mut ready = Vec::new();
        let mut waiting: Vec<UserId> = Vec::new();
        let mut kept = VecDeque::with_capacity(self.held.len());
        for (at, frame) in self.held.drain(..) {
            if frame.after < next && !waiting.contains(&frame.typer) {
                ready.push(frame);
            } else {
                waiting.push(frame.typer.clone());
                kept.push_back((at, frame));
            }
        }
        self.held = kept;
        ready
    }

    /// Drops the frames held longer than the lifetime.
    fn expire(&mut self, now: Instant) {
        while self.held.front().is_some_and(|(at, _)| *at + self.lifetime <= now) {
            self.held.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(typer: &str, after: i64, text: &'static str) -> TypingFrame {
        TypingFrame {
            after,
            typer: UserId::parse(typer).unwrap(),
            text: Utf8Bytes::from_static(text),
            members: Arc::from(Vec::new()),
        }
    }

    fn texts(frames: Vec<TypingFrame>) -> Vec<String> {
        frames.into_iter().map(|f| f.text.to_string()).collect()
    }

    #[test]
    fn a_frame_goes_at_once_only_after_what_it_follows() {
        let mut held = HeldTyping::new(Duration::from_secs(6));
        let now = Instant::now();
        assert!(held.offer(frame("alice", 4, "now"), 5, now).is_some());
        assert!(held.offer(frame("alice", 5, "stop"), 5, now).is_none());
        // alice's next frame follows an older seq, but not her held stop.
        assert!(held.offer(frame("alice", 4, "start"), 5, now).is_none());
        // Another typer's frame is not held by alice's.
        assert!(held.offer(frame("bob", 4, "bob"), 5, now).is_some());
        assert!(held.ready(5, now).is_empty(), "seq 5 is not out yet");
        assert_eq!(texts(held.ready(6, now)), ["stop", "start"]);
        assert_eq!(held.len(), 0);
    }

    #[test]
    fn a_typers_frames_keep_their_order_when_released() {
        let mut held = HeldTyping::new(Duration::from_secs(6));
        let now = Instant::now();
        assert!(held.offer(frame("alice", 7, "a7"), 5, now).is_none());
        assert!(held.offer(frame("alice", 5, "a5"), 5, now).is_none());
        assert!(held.offer(frame("bob", 5, "b5"), 5, now).is_none());
        assert_eq!(texts(held.ready(6, now)), ["b5"], "alice's a5 waits behind her a7");
        assert_eq!(texts(held.ready(8, now)), ["a7", "a5"]);
    }

    #[test]
    fn frames_held_too_long_or_too_many_are_dropped() {
        let lifetime = Duration::from_secs(6);
        let mut held = HeldTyping::new(lifetime);
        let now = Instant::now();
        assert!(held.offer(frame("alice", 9, "old"), 1, now).is_none());
        assert!(held.ready(10, now + lifetime).is_empty(), "expired");
        for n in 0..HELD_TYPING + 1 {
            let typer = format!("u{n}");
            assert!(held.offer(frame(&typer, 9, "x"), 1, now).is_none());
        }
        assert_eq!(held.len(), HELD_TYPING);
        let ready = held.ready(10, now);
        assert_eq!(ready.len(), HELD_TYPING);
        assert_eq!(ready[0].typer.as_str(), "u1", "the oldest was dropped");
    }
}
