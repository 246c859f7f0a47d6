//! A session's gate of channel frames (protocol.md §13.3): the channels the
//! session has been told of (its HELLO, plus each `CHANNEL_ADDED`, minus
//! each `CHANNEL_REMOVED`), and what that means for a frame of a channel
//! (`MSG_RECV`, `MEMBER`, `RECEIPT`, `CHANNEL_UPDATED`, `CHANNEL_SETTINGS`,
//! `TYPING`) on its way to the session:
//!
//! - the session was told of the channel: the frame goes out;
//! - the session was not told of the channel yet, or was told it left it
//!   (`CHANNEL_REMOVED`): the frame is held (at most [`HOLD_FRAMES`], for
//!   at most [`HOLD_FOR`]) until a `CHANNEL_ADDED` of the channel (a join,
//!   a rejoin) comes, then goes out right after it, in arrival order; what
//!   is not released in time is dropped (the client reads it by `SYNC` once
//!   it knows the channel). So nothing of a channel reaches the session
//!   after its `CHANNEL_REMOVED` unless it is added again. `TYPING` is never
//!   held, only dropped.
//! - a `CHANNEL_REMOVED` drops what was held for its channel (it came
//!   before the removal); one of a channel the session was never told of
//!   is dropped too (nothing to remove);
//! - a `CHANNEL_ADDED` of a channel the session has (and has not been told
//!   it left) told it nothing new and is dropped: a repeat, or the rejoin's
//!   own frame after the correction a node sends for a stale
//!   `CHANNEL_REMOVED` (`delivery/nats/membership.rs`).
//!
//! Before the HELLO snapshot is read every channel frame is held, in order
//! (at most [`PRE_HELLO_FRAMES`]); [`ChannelGate::hello`] replays them
//! against the snapshot: a `CHANNEL_ADDED` of a channel the HELLO already
//! has, or a `CHANNEL_REMOVED` of one it does not have, told the session
//! nothing new and is dropped with what it would have let through.
//!
//! On one node the commit task already gives this order; across nodes
//! (NATS) a channel's messages and a user's membership frames travel on
//! different subjects, and the gate restores the order per session.
//!
//! The HELLO's channels are kept as sorted 64-bit hashes (8 bytes per
//! channel: a user in 25,000 channels costs 200 kB per session, not its
//! HELLO). Two ids of one user with the same hash (odds about n²/2⁶⁴) would
//! let a frame of the one through while the other is still announced: the
//! behaviour without the gate.

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::ids::ChannelId;

/// Longest a frame of a channel not yet announced is held for its
/// `CHANNEL_ADDED`.
pub const HOLD_FOR: Duration = Duration::from_secs(10);
/// Most frames held per session for channels not yet announced; more are
/// dropped.
pub const HOLD_FRAMES: usize = 256;
/// Most channel frames held per session before its HELLO is read; more and
/// the session is too slow to start ([`Offer::Overflow`]).
pub const PRE_HELLO_FRAMES: usize = 4096;

/// What a frame is to the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `CHANNEL_ADDED`: opens the channel, releases what was held for it.
    Added,
    /// `CHANNEL_REMOVED`: closes the channel.
    Removed,
    /// Any other frame of the channel.
    Of,
    /// A lossy frame of the channel (`TYPING`): out when the channel is
    /// open, else dropped, never held.
    Ephemeral,
}

impl Kind {
    /// The kind of a frame of a channel by its `type`.
    pub fn of_frame(type_name: &str) -> Self {
        match type_name {
            "CHANNEL_ADDED" => Kind::Added,
            "CHANNEL_REMOVED" => Kind::Removed,
            "TYPING" => Kind::Ephemeral,
            _ => Kind::Of,
        }
    }
}

/// The outcome of [`ChannelGate::offer`] for the frame offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// Handed to `emit` (after the frames it released, if any).
    Out,
    /// Held for the channel's `CHANNEL_ADDED` or the HELLO.
    Held,
    /// Dropped.
    Dropped,
    /// Held frames before the HELLO passed [`PRE_HELLO_FRAMES`]: the frame
    /// is dropped and the session should close (1013).
    Overflow,
}

/// What the session was told of one channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Told {
    /// In its HELLO or a later `CHANNEL_ADDED`, not removed since.
    Open,
    /// `CHANNEL_REMOVED` (or absent from the HELLO after a removal before it).
    Removed,
    /// Nothing yet.
    Unknown,
}

struct Held<F> {
    channel: ChannelId,
    kind: Kind,
    at: Instant,
    frame: F,
}

/// One session's gate; `F` is the frame as queued (see the module).
pub struct ChannelGate<F> {
    /// The HELLO's channels, sorted hashes; `None` until it is read.
    hello: Option<Box<[u64]>>,
    /// What changed since the HELLO (`true`: added, `false`: removed).
    changed: HashMap<ChannelId, bool>,
    /// Frames waiting, oldest first.
    held: VecDeque<Held<F>>,
}

impl<F> std::fmt::Debug for ChannelGate<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChannelGate")
            .field("hello", &self.hello.as_ref().map(|h| h.len()))
            .field("changed", &self.changed.len())
            .field("held", &self.held.len())
            .finish()
    }
}

impl<F> Default for ChannelGate<F> {
    fn default() -> Self {
        Self::new()
    }
}

fn key(channel: &ChannelId) -> u64 {
    static STATE: OnceLock<std::collections::hash_map::RandomState> = OnceLock::new();
    STATE.get_or_init(Default::default).hash_one(channel.as_str())
}

impl<F> ChannelGate<F> {
    /// A gate before its session's HELLO: every channel frame is held.
    pub fn new() -> Self {
        Self {
            hello: None,
            changed: HashMap::new(),
            held: VecDeque::new(),
        }
    }

    /// Frames held now.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    fn told(&self, channel: &ChannelId) -> Told {
        if let Some(&added) = self.changed.get(channel) {
            return if added { Told::Open } else { Told::Removed };
        }
        match &self.hello {
            Some(hello) if hello.binary_search(&key(channel)).is_ok() => Told::Open,
            _ => Told::Unknown,
        }
    }

    /// The session's HELLO listed `channels`: from now on the gate judges
    /// by them, starting with the frames held until now (in order, through
    /// `emit`; see the module for the two that are dropped).
    pub fn hello<'a>(&mut self, channels: impl IntoIterator<Item = &'a ChannelId>, now: Instant, emit: impl FnMut(F)) {
        let mut keys: Vec<u64> = channels.into_iter().map(key).collect();
        keys.sort_unstable();
        keys.dedup();
        self.hello = Some(keys.into_boxed_slice());
        let mut emit = emit;
        for held in std::mem::take(&mut self.held) {
            self.judge(&held.channel, held.kind, held.frame, &|| now, &mut emit);
        }
    }

    /// A frame of `channel` on its way to the session at `now`: handed to
    /// `emit` now (after the frames it releases), held, or dropped.
    /// `now` is read only when the gate holds something or is about to.
    pub fn offer(
        &mut self,
        channel: &ChannelId,
        kind: Kind,
        frame: F,
        now: impl Fn() -> Instant,
        mut emit: impl FnMut(F),
    ) -> Offer {
        if self.hello.is_none() {
            if kind == Kind::Ephemeral {
                return Offer::Dropped;
            }
            if self.held.len() >= PRE_HELLO_FRAMES {
                return Offer::Overflow;
            }
            self.held.push_back(Held {
                channel: channel.clone(),
                kind,
                at: now(),
                frame,
            });
            return Offer::Held;
        }
        if !self.held.is_empty() {
            self.expire(now());
        }
        self.judge(channel, kind, frame, &now, &mut emit)
    }

    /// Drops the held frames older than [`HOLD_FOR`].
    fn expire(&mut self, now: Instant) {
        while let Some(first) = self.held.front() {
            if now.saturating_duration_since(first.at) < HOLD_FOR {
                break;
            }
            self.held.pop_front();
        }
    }

    fn judge(
        &mut self,
        channel: &ChannelId,
        kind: Kind,
        frame: F,
        now: &impl Fn() -> Instant,
        emit: &mut impl FnMut(F),
    ) -> Offer {
        let told = self.told(channel);
        match (kind, told) {
            // The session has the channel already: the HELLO, read after
            // this was sent, or a `CHANNEL_ADDED` the node's membership
            // task sent after a stale `CHANNEL_REMOVED`
            // (`delivery/nats/membership.rs`) ahead of this one. Nothing is
            // held for an open channel, so nothing is released.
            (Kind::Added, Told::Open) => Offer::Dropped,
            (Kind::Added, _) => {
                emit(frame);
                let (release, keep): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut self.held)
                    .into_iter()
                    .partition(|h| &h.channel == channel);
                self.held = keep;
                self.changed.insert(channel.clone(), true);
                let now = if release.is_empty() { None } else { Some(now()) };
                for held in release {
                    if now.is_some_and(|now| now.saturating_duration_since(held.at) < HOLD_FOR) {
                        emit(held.frame);
                    }
                }
                Offer::Out
            }
            (Kind::Removed, told) => {
                self.held.retain(|h| &h.channel != channel);
                self.changed.insert(channel.clone(), false);
                if told == Told::Open {
                    emit(frame);
                    Offer::Out
                } else {
                    // Never told of it (or told it left): nothing to remove.
                    Offer::Dropped
                }
            }
            (Kind::Of | Kind::Ephemeral, Told::Open) => {
                emit(frame);
                Offer::Out
            }
            // Not announced yet, or removed (a rejoin's `CHANNEL_ADDED` may
            // be on its way): wait for it.
            (Kind::Of, Told::Unknown | Told::Removed) if self.held.len() < HOLD_FRAMES => {
                self.held.push_back(Held {
                    channel: channel.clone(),
                    kind,
                    at: now(),
                    frame,
                });
                Offer::Held
            }
            (Kind::Of | Kind::Ephemeral, _) => Offer::Dropped,
        }
    }
}

#[cfg(test)]
mod tests;
