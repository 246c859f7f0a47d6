//! `MSG_EDIT`, `MSG_DELETE`, `MSG_REACT` (`docs/protocol.md` §8): entries of
//! the target message's channel log. They go through the same commit task
//! and transaction as `MSG_SEND` ([`crate::commit`]): the channel is the
//! target's, read here to route the entry to that channel's commit task;
//! the idempotency key and then the target's checks (deleted, membership,
//! sender) are decided inside the batch's transaction, under the channel's
//! lock. An entry whose target cannot be routed (unknown, or not a message)
//! is answered here, by its key first.

use tokio::sync::oneshot;

use super::Context;
use crate::commit::answer::{self, Echo, SendAnswer};
use crate::ids::{ChannelId, ClientMsgId};
use crate::protocol::{EntryChange, ErrorCode, ErrorFrame};
use crate::store::{Change, EntryKind, NewEntry};
use crate::view;

/// Where an entry's target leads.
#[derive(Debug)]
pub enum Route {
    /// A message of this channel: the entry goes to its commit task.
    Channel(ChannelId),
    /// No stored entry has the target's id.
    Unknown,
    /// The target is an entry of another kind than `message`.
    NotAMessage,
}

/// The store's view of an entry frame: its change and body.
pub fn change_of(target: uuid::Uuid, change: EntryChange) -> (Change, String) {
    match change {
        EntryChange::Edit { body } => (Change::Edit { target }, body),
        EntryChange::Delete => (Change::Delete { target }, String::new()),
        EntryChange::React { emoji, add } => (Change::React { target, emoji, add }, String::new()),
    }
}

/// Finds the target's channel ([`crate::store::Store::route`]: from memory
/// for a message this node stored or routed before, else read).
///
/// # Errors
/// The store's ERROR (echoing `clientMsgId` and `messageId`) when the read fails.
pub async fn route(ctx: Context<'_>, client_msg_id: &ClientMsgId, target: uuid::Uuid) -> Result<Route, ErrorFrame> {
    match ctx.state.store.channel_of(target).await {
        Ok(Some((EntryKind::Message, channel_id))) => Ok(Route::Channel(channel_id)),
        Ok(Some(_)) => Ok(Route::NotAMessage),
        Ok(None) => Ok(Route::Unknown),
        Err(error) => {
            let mut frame = view::store_error(&error);
            frame.client_msg_id = Some(client_msg_id.as_str().to_owned());
            frame.message_id = Some(target.hyphenated().to_string());
            Err(frame)
        }
    }
}

/// Queues an entry whose target is a message of `channel_id` on that
/// channel's commit task. Returns the signal that fires once it is answered,
/// or `None` when it was answered here (`unavailable`: shutting down).
pub async fn submit(
    ctx: Context<'_>,
    channel_id: ChannelId,
    client_msg_id: ClientMsgId,
    target: uuid::Uuid,
    change: EntryChange,
) -> Option<oneshot::Receiver<()>> {
    let (change, body) = change_of(target, change);
    let message = NewEntry {
        sender_id: ctx.user.user_id.clone(),
        channel_id,
        client_msg_id,
        body,
        change,
        mentions: Default::default(),
        origin: crate::store::Origin::Frame,
        attachments: Vec::new(),
    };
    super::send::submit_entry(ctx, message, |frame| {
        frame.message_id = Some(target.hyphenated().to_string());
    })
    .await
}

/// Answers an entry whose target is unknown or not a message: by its
/// idempotency key when stored (the original ACK with `duplicate: true`, or
/// `idempotency_conflict`), else `not_found` or `invalid_field`
/// (`messageId`). The caller first lets the session's earlier sends finish,
/// so a key they stored is found.
pub async fn answer_unroutable(
    ctx: Context<'_>,
    client_msg_id: ClientMsgId,
    target: uuid::Uuid,
    change: EntryChange,
    route: Route,
) {
    let echo = Echo {
        client_msg_id: Some(client_msg_id.as_str()),
        channel_id: None,
        message_id: Some(target),
    };
    let stored = match ctx.state.store.message_by_key(&ctx.user.user_id, &client_msg_id).await {
        Ok(stored) => stored,
        Err(error) => return answer::to_session(ctx.session, &SendAnswer::store_failed(&error), echo, None),
    };
    let answer = match stored {
        Some(stored) => {
            let (change, body) = change_of(target, change);
            let new = NewEntry {
                sender_id: ctx.user.user_id.clone(),
                channel_id: stored.channel_id.clone(),
                client_msg_id: client_msg_id.clone(),
                body,
                change,
                mentions: Default::default(),
                origin: crate::store::Origin::Frame,
                attachments: Vec::new(),
            };
            let retry = stored.is_retried_as(&new);
            answer::by_stored_key(stored, retry)
        }
        None => match route {
            Route::NotAMessage => answer::target_not_a_message(),
            _ => SendAnswer::refused(ErrorCode::NotFound, "unknown or deleted message"),
        },
    };
    answer::to_session(ctx.session, &answer, echo, None);
}
