//! What a device of the workload does next: how often it acts, and which
//! of the messages it was handed it edits, deletes, reacts to or replies to
//! ([`Targets`]). Only messages handed over (or its own ACKed ones) are
//! targets, so every intent names something the device has seen.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

use chatd_client::chatd_proto::protocol::{EntryKind, RecvMessage};
use rand::seq::IndexedRandom;
use rand::Rng;

use crate::record::{Intent, Sent};

/// How a device loads the server.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Workload {
    /// Mean time between two actions.
    pub(crate) every: Duration,
    /// Sends and entries in flight at most.
    pub(crate) max_in_flight: usize,
    /// Share of actions that are entries (edit, delete, react).
    pub(crate) entries: f64,
    /// Share of messages that are replies.
    pub(crate) replies: f64,
}

/// Emojis the workload reacts with: few, so that users and devices contend
/// for the same (message, emoji) and many reactions are no-ops.
const EMOJIS: [&str; 3] = ["👍", "🎉", "👀"];

/// What a device may act on next.
#[derive(Debug, Default)]
pub(crate) struct Targets {
    /// This device's own ACKed messages not deleted by it: (channel, id).
    own: VecDeque<(String, uuid::Uuid)>,
    /// The latest `message` entries handed over per channel (any sender).
    recent: HashMap<String, VecDeque<uuid::Uuid>>,
    /// Every `message` entry handed over, per channel, in order.
    pub(crate) messages: HashMap<String, Vec<uuid::Uuid>>,
    /// Messages known to be deleted (or whose delete this device sent).
    deleted: HashSet<uuid::Uuid>,
    /// Messages handed over that are replies in a thread (not roots).
    in_thread: HashSet<uuid::Uuid>,
}

impl Targets {
    const RECENT: usize = 8;
    const OWN: usize = 16;

    /// The next action: an entry about a message when a target exists
    /// (channel, body, intent), else `None` (send a message).
    pub(crate) fn pick_entry(&mut self, channel: &str, key: &str) -> Option<(String, String, Intent)> {
        let mut rng = rand::rng();
        let roll: f64 = rng.random();
        if roll < 0.6 {
            let live: Vec<uuid::Uuid> = self
                .recent
                .get(channel)?
                .iter()
                .filter(|id| !self.deleted.contains(id))
                .copied()
                .collect();
            let target = *live.choose(&mut rng)?;
            let emoji = (*EMOJIS.choose(&mut rng)?).to_owned();
            let add = rng.random_bool(0.6);
            return Some((channel.to_owned(), String::new(), Intent::React { target, emoji, add }));
        }
        self.own.retain(|(_, id)| !self.deleted.contains(id));
        let (target_channel, target) = self
            .own
            .iter()
            .collect::<Vec<_>>()
            .choose(&mut rng)
            .map(|(c, id)| (c.clone(), *id))?;
        if roll < 0.9 {
            let body = format!("{key} edit {}", "y".repeat(rng.random_range(1..100)));
            Some((target_channel, body, Intent::Edit { target }))
        } else {
            self.deleted.insert(target);
            Some((target_channel, String::new(), Intent::Delete { target }))
        }
    }

    /// A reply to a recent message of `channel` not known deleted, or
    /// `None` when none was handed over: in its thread (when it is a root)
    /// or quoting it.
    pub(crate) fn pick_reply(&self, channel: &str) -> Option<Intent> {
        let mut rng = rand::rng();
        let live: Vec<uuid::Uuid> = self
            .recent
            .get(channel)?
            .iter()
            .filter(|id| !self.deleted.contains(id))
            .copied()
            .collect();
        let target = *live.choose(&mut rng)?;
        if !self.in_thread.contains(&target) && rng.random_bool(0.5) {
            let quote = rng.random_bool(1.0 / 3.0);
            return Some(Intent::Reply {
                reply_to: quote.then_some(target),
                thread_id: Some(target),
            });
        }
        Some(Intent::Reply {
            reply_to: Some(target),
            thread_id: None,
        })
    }

    /// Notes an ACKed intent of this device.
    pub(crate) fn acked(&mut self, sent: &Sent, message_id: uuid::Uuid) {
        if matches!(sent.intent, Intent::Message | Intent::Reply { .. }) {
            self.own.push_back((sent.channel.clone(), message_id));
            if self.own.len() > Self::OWN {
                self.own.pop_front();
            }
        }
    }

    /// Notes an entry handed to the application.
    pub(crate) fn delivered(&mut self, channel: &str, m: &RecvMessage) {
        let (kind, message_id, target) = (m.kind, m.message_id, m.target_id);
        match kind {
            EntryKind::Message => {
                if m.thread_id.is_some() {
                    self.in_thread.insert(message_id);
                }
                self.messages.entry(channel.to_owned()).or_default().push(message_id);
                let recent = self.recent.entry(channel.to_owned()).or_default();
                recent.push_back(message_id);
                if recent.len() > Self::RECENT {
                    recent.pop_front();
                }
            }
            EntryKind::Delete => {
                if let Some(target) = target {
                    self.deleted.insert(target);
                }
            }
            EntryKind::Edit | EntryKind::Reaction => {}
        }
    }
}
