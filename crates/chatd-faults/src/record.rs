//! What the devices of a run record (the checker's input, [`crate::check`]):
//! each intent the workload made, and per device its ACKs, refusals, the
//! entries handed to the application, receipts, HELLO watermarks and the
//! folded message states at the end. A leaf: the Rust devices (`main.rs`),
//! the TypeScript SDK's reports (`sdk.rs`), the expected-state model
//! (`model.rs`) and the checker all build on it.

use std::collections::HashMap;

use chatd_client::chatd_proto::protocol::{ErrorCode, ReceiptKind, RecvMessage, ThreadSummary};
use chatd_client::{Ack, MessageState};

/// What one intent asked for (`docs/protocol.md` §8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Intent {
    /// MSG_SEND of `Sent::body`.
    Message,
    /// MSG_SEND of `Sent::body` quoting `reply_to` and/or answering in the
    /// thread of the root `thread_id` (§14); stored as a `message`.
    Reply {
        reply_to: Option<uuid::Uuid>,
        thread_id: Option<uuid::Uuid>,
    },
    /// MSG_EDIT of `target` to `Sent::body`.
    Edit { target: uuid::Uuid },
    /// MSG_DELETE of `target`.
    Delete { target: uuid::Uuid },
    /// MSG_REACT `add` (or `remove`) of `emoji` on `target`.
    React {
        target: uuid::Uuid,
        emoji: String,
        add: bool,
    },
}

/// One send or entry the workload made (the intent).
#[derive(Debug, Clone)]
pub struct Sent {
    /// Its `clientMsgId`.
    pub key: String,
    /// The channel (for an entry: its target's channel).
    pub channel: String,
    /// The message's text, or the edit's new text; `""` otherwise.
    pub body: String,
    pub intent: Intent,
}

/// Everything one client device recorded.
#[derive(Debug, Default)]
pub struct ClientLog {
    /// `user/device`.
    pub name: String,
    pub user: String,
    /// Channels the user is a member of.
    pub channels: Vec<String>,
    pub sent: Vec<Sent>,
    pub acks: Vec<Ack>,
    /// Sends and entries the server refused for good: (key, code).
    pub refused: Vec<(String, ErrorCode)>,
    /// Sends that ended without an ACK or a refusal: (key, why).
    pub failed: Vec<(String, String)>,
    /// Entries handed to the application, per channel, in arrival order.
    pub delivered: HashMap<String, Vec<(i64, uuid::Uuid)>>,
    /// RECEIPT frames seen: (channel, user, kind, seq), in arrival order.
    pub receipts: Vec<(String, String, ReceiptKind, i64)>,
    /// HELLO watermarks at each (re)connect: channel → (deliveredSeq, readSeq).
    pub hellos: Vec<HashMap<String, (i64, i64)>>,
    /// Sessions started (1 + reconnects).
    pub sessions: usize,
    /// At the end: the client library's folded state of every `message`
    /// entry it handed over, per channel (`None`: it has no state for it).
    pub folded: HashMap<String, Vec<(uuid::Uuid, Option<Folded>)>>,
}

/// A message's state as a client library folded it (Rust or TypeScript).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folded {
    pub body: String,
    /// ms since the Unix epoch.
    pub edited_at: Option<i64>,
    pub deleted: bool,
    /// (emoji, count, me) by first use.
    pub reactions: Vec<(String, i64, bool)>,
    /// `replyTo` and `threadId` (§14).
    pub reply_to: Option<uuid::Uuid>,
    pub thread_id: Option<uuid::Uuid>,
    /// A root's thread summary: (replyCount, lastReplyAt, lastReplySeq,
    /// participants), folded as replies and their deletes arrived.
    pub thread: Option<(i64, i64, i64, Vec<String>)>,
}

/// A thread summary as a tuple (see [`Folded::thread`]).
pub fn summary_tuple(t: &ThreadSummary) -> (i64, i64, i64, Vec<String>) {
    (t.reply_count, t.last_reply_at, t.last_reply_seq, t.participants.clone())
}

impl From<&MessageState> for Folded {
    fn from(state: &MessageState) -> Self {
        Self {
            body: state.body.clone(),
            edited_at: state.edited_at,
            deleted: state.deleted,
            reactions: state
                .reactions
                .iter()
                .map(|r| (r.emoji.clone(), r.count, r.me))
                .collect(),
            reply_to: state.reply_to,
            thread_id: state.thread_id,
            thread: state.thread.as_ref().map(summary_tuple),
        }
    }
}

/// Reads as each user: user → channel → the channel's entries read with
/// that user's token (so `reactions[].me` is that user's).
pub type UserReads = HashMap<String, HashMap<String, Vec<RecvMessage>>>;
