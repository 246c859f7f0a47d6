//! What the [`Client`](super::Client) handles ask of the task, and the
//! message state both share.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use super::types::{Ack, EntryRequest, SendError, SendOptions};
use crate::log::ChannelMessages;
use crate::thread::Thread;

/// A command from a handle to the task.
pub(super) enum Command {
    Send {
        channel_id: String,
        client_msg_id: String,
        body: String,
        options: SendOptions,
        entry: Option<EntryRequest>,
        reply: oneshot::Sender<Result<Ack, SendError>>,
    },
    Receipt {
        message_id: uuid::Uuid,
        read: bool,
    },
    Typing {
        channel_id: String,
        on: bool,
    },
    PresenceSub(Vec<String>),
    SetToken(String),
    Reconnect,
    Close,
    /// Read a thread's newest page (`older` false) or the page before the
    /// oldest read one.
    ReadThread {
        channel_id: String,
        root_id: uuid::Uuid,
        older: bool,
        reply: oneshot::Sender<Result<(), SendError>>,
    },
    /// A snapshot of a thread as the task holds it.
    Thread {
        channel_id: String,
        root_id: uuid::Uuid,
        reply: oneshot::Sender<Option<Thread>>,
    },
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Command")
    }
}

/// Every channel's folded message state, shared by the task and the handles.
pub(super) type SharedStates = Arc<Mutex<HashMap<String, ChannelMessages>>>;
