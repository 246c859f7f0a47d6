//! `MSG_SEND`: a validated send goes to its channel's commit task
//! ([`crate::commit`]), which stores it, answers it and fans it out. A send
//! refused before that (its frame failed its checks) is first looked up by
//! its idempotency key ([`answer_by_stored_key`]).

use std::time::Instant;

use tokio::sync::oneshot;

use super::Context;
use crate::commit::answer::{self, Echo, SendAnswer};
use crate::commit::{ReplyTo, SendJob};
use crate::ids::{ChannelId, ClientMsgId};
use crate::protocol::{ErrorCode, ErrorFrame, SendKey};
use crate::store::{Mentions, NewEntry, References};

/// Queues a validated send on its channel's commit task. Returns the signal
/// that fires once the send is answered (its ACK or ERROR queued, its
/// fan-out done), or `None` when it was answered here (`unavailable`: the
/// server is shutting down).
/// `refs`: the message it quotes and the thread it answers in (§14);
/// `mentions`: whom it mentions (§16); `attachments`: the uploads it
/// carries (§15).
pub async fn submit(
    ctx: Context<'_>,
    channel_id: ChannelId,
    client_msg_id: ClientMsgId,
    body: String,
    refs: References,
    mentions: Mentions,
    attachments: Vec<uuid::Uuid>,
) -> Option<oneshot::Receiver<()>> {
    let message = NewEntry {
        sender_id: ctx.user.user_id.clone(),
        channel_id,
        client_msg_id,
        body,
        change: refs.change(),
        mentions,
        origin: crate::store::Origin::Frame,
        attachments,
    };
    submit_entry(ctx, message, |_| {}).await
}

/// Queues `message` (a send or another log entry, its sender the session's
/// user) on its channel's commit task: the one path of every entry kind.
/// Returns the signal that fires once it is answered, or `None` when it was
/// answered here (`unavailable`, the server shutting down; `about` adds what
/// the refusal names beyond the key, such as the target's `messageId`).
pub(super) async fn submit_entry(
    ctx: Context<'_>,
    message: NewEntry,
    about: impl FnOnce(&mut ErrorFrame),
) -> Option<oneshot::Receiver<()>> {
    let (done, finished) = oneshot::channel();
    let job = SendJob {
        message,
        reply_to: ReplyTo::Session {
            session: ctx.session.clone(),
            done,
        },
        received: Instant::now(),
    };
    match ctx.state.commits.submit(job).await {
        Ok(()) => Some(finished),
        Err(stopped) => {
            let mut frame = ErrorFrame::new(ErrorCode::Unavailable, "server is shutting down; retry");
            frame.client_msg_id = Some(stopped.0.message.client_msg_id.as_str().to_owned());
            about(&mut frame);
            answer::refused(ctx.session, frame);
            None
        }
    }
}

/// What [`answer_by_stored_key`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredKeyAnswer {
    /// The key is not stored: the frame's own refusal is the answer.
    NotStored,
    /// Answered: the stored send's MSG_ACK (`duplicate: true`), or
    /// `unavailable` when the lookup failed.
    Answered,
    /// Answered `idempotency_conflict`: the key holds another message. The
    /// caller counts it as a bad frame, like the refusal it stands for.
    Conflict,
}

/// A MSG_SEND that failed its checks, answered by its idempotency key when
/// that key is already stored (the wire contract's guarantee 2: the key "is
/// looked up before anything else about the send"): the stored send's
/// MSG_ACK with `duplicate: true` when the frame's `channelId` and `body` are
/// the stored ones (a retry of a long message after `max_body_bytes` was
/// lowered), else `idempotency_conflict`. When the lookup fails, the answer
/// is the store's error (`unavailable`, retryable): the frame's own refusal
/// would be final, and might be wrong for a send that is stored. The caller
/// first lets the session's earlier sends finish, so a key they stored is
/// found.
pub async fn answer_by_stored_key(ctx: Context<'_>, key: SendKey) -> StoredKeyAnswer {
    let client_msg_id = Some(key.client_msg_id.as_str());
    let stored = match ctx
        .state
        .store
        .message_by_key(&ctx.user.user_id, &key.client_msg_id)
        .await
    {
        Ok(Some(stored)) => stored,
        Ok(None) => return StoredKeyAnswer::NotStored,
        Err(error) => {
            tracing::warn!(%error, "idempotency key lookup for a refused send failed");
            let echo = Echo {
                client_msg_id,
                ..Echo::default()
            };
            answer::to_session(ctx.session, &SendAnswer::store_failed(&error), echo, None);
            return StoredKeyAnswer::Answered;
        }
    };
    let retry = match (key.channel_id.as_deref(), key.body.as_deref()) {
        (Some(channel_id), Some(body)) => {
            stored.is_retried_by_text(
                channel_id,
                body,
                key.reply_to.as_deref(),
                key.thread_id.as_deref(),
                &key.mentions,
            ) && stored.is_attaching_as(&key.attachments)
        }
        _ => false,
    };
    let answer = answer::by_stored_key(stored, retry);
    let echo = Echo {
        client_msg_id,
        channel_id: key.channel_id.as_deref().filter(|raw| ChannelId::parse(raw).is_ok()),
        message_id: None,
    };
    answer::to_session(ctx.session, &answer, echo, None);
    match answer {
        SendAnswer::Acked { .. } => StoredKeyAnswer::Answered,
        SendAnswer::Refused(_) => StoredKeyAnswer::Conflict,
    }
}
