//! A send's answer, typed. The commit path decides what became of each send
//! or entry ([`SendAnswer`]); a WebSocket session gets it as its `MSG_ACK` or
//! `ERROR` ([`to_session`], queued by the commit task in batch order, before
//! the fan-out of later sends), an HTTP route turns it into its status and
//! JSON. The checks before the commit path answer the same way, and a send
//! whose idempotency key is already stored is answered by
//! [`by_stored_key`], the one place that applies guarantee 2 to a stored key.
//! Every answer counts in `chatd_sends_total`.

use std::time::Instant;

use crate::outbound::SessionHandle;
use crate::protocol::{ErrorCode, ErrorFrame, ServerFrame};
use crate::store::{Entry, EntryOutcome, NewEntry, StoreError};
use crate::telemetry;
use crate::view;

/// What became of one send or entry.
// An answer is made once per send and moved to its session, never kept in
// bulk: boxing the entry would add an allocation to every ACK to save bytes
// on refusals only.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum SendAnswer {
    /// Stored now (`duplicate: false`), or earlier under the same key and
    /// this is a retry of it (`duplicate: true`).
    Acked {
        /// The stored entry.
        entry: Entry,
        /// A retry of an entry stored before.
        duplicate: bool,
    },
    /// Refused; nothing was stored. The frame holds the code, the message
    /// and (`invalid_field`) the field; what it echoes of the request is
    /// added where it is rendered for a session ([`Echo`]).
    Refused(ErrorFrame),
}

impl SendAnswer {
    /// A refusal with `code` and `message`.
    pub fn refused(code: ErrorCode, message: &str) -> Self {
        Self::Refused(ErrorFrame::new(code, message))
    }

    /// The answer when a store call failed: `unavailable` (nothing was
    /// stored) or `internal` (the details go to the log), both retryable.
    pub fn store_failed(error: &StoreError) -> Self {
        Self::Refused(view::store_error(error))
    }

    /// The answer to one send of a committed batch.
    pub fn of_outcome(outcome: EntryOutcome) -> Self {
        match outcome {
            EntryOutcome::Stored(entry) => Self::Acked {
                entry,
                duplicate: false,
            },
            EntryOutcome::Duplicate(entry) => Self::Acked { entry, duplicate: true },
            EntryOutcome::Conflict => Self::refused(ErrorCode::IdempotencyConflict, view::KEY_USED_FOR_ANOTHER_MESSAGE),
            EntryOutcome::Forbidden => Self::refused(ErrorCode::Forbidden, "not a member of this channel"),
            EntryOutcome::TargetNotFound => Self::refused(ErrorCode::NotFound, "unknown or deleted message"),
            EntryOutcome::TargetNotAMessage => target_not_a_message(),
            EntryOutcome::NotTheSender => Self::refused(ErrorCode::Forbidden, "only the message's sender may do this"),
            EntryOutcome::ReferenceNotFound(reference) => Self::Refused(view::reference_refused(reference, None)),
            EntryOutcome::ReferenceInvalid(reference, why) => {
                Self::Refused(view::reference_refused(reference, Some(why)))
            }
            EntryOutcome::Muted { retry_after_ms } => moderated(
                ErrorCode::Forbidden,
                "you are muted in this channel",
                "muted",
                Some(retry_after_ms),
            ),
            EntryOutcome::Blocked => moderated(ErrorCode::Forbidden, "the other member blocks you", "blocked", None),
            EntryOutcome::ReadOnly => moderated(
                ErrorCode::Forbidden,
                "only moderators post in this channel",
                "read_only",
                None,
            ),
            EntryOutcome::MentionAllForbidden => {
                let mut frame = ErrorFrame::new(ErrorCode::Forbidden, "only moderators may mention all");
                frame.field = Some("mentionAll".into());
                Self::Refused(frame)
            }
            EntryOutcome::InvalidAttachments(why) => {
                let mut frame = ErrorFrame::new(ErrorCode::InvalidField, format!("attachments: {why}"));
                frame.field = Some("attachments".into());
                Self::Refused(frame)
            }
            EntryOutcome::EmptyBody => {
                let mut frame = ErrorFrame::new(
                    ErrorCode::InvalidField,
                    "invalid field body: must not be empty for a message without attachments",
                );
                frame.field = Some("body".into());
                Self::Refused(frame)
            }
            EntryOutcome::SlowMode { retry_after_ms } => moderated(
                ErrorCode::RateLimited,
                "slow mode: wait before sending again",
                "slow_mode",
                Some(retry_after_ms),
            ),
            EntryOutcome::TooManyReactions { most } => {
                let mut frame = ErrorFrame::new(
                    ErrorCode::InvalidField,
                    format!("emoji: this message already holds {most} distinct emoji, the most it may hold"),
                );
                frame.field = Some("emoji".into());
                frame.reason = Some(TOO_MANY_REACTIONS.into());
                Self::Refused(frame)
            }
        }
    }

    /// The entry newly stored by this answer (not a retry's), to fan out.
    pub fn stored(&self) -> Option<&Entry> {
        match self {
            Self::Acked {
                entry,
                duplicate: false,
            } => Some(entry),
            _ => None,
        }
    }
}

/// The `reason` of a reaction `add` refused by `max_reactions_per_message`
/// (§8): the message holds that many distinct emoji already.
pub const TOO_MANY_REACTIONS: &str = "too_many_reactions";

/// A refusal of the moderation rules (§17): `code` with its `reason` and,
/// for one that ends by itself, `retryAfterMs` (at least 1).
fn moderated(code: ErrorCode, message: &str, reason: &str, retry_after_ms: Option<i64>) -> SendAnswer {
    let mut frame = ErrorFrame::new(code, message);
    frame.reason = Some(reason.to_owned());
    frame.retry_after_ms = retry_after_ms.map(|ms| u64::try_from(ms).unwrap_or(0).max(1));
    SendAnswer::Refused(frame)
}

/// `invalid_field` (`messageId`): the target is not a `message` entry.
pub fn target_not_a_message() -> SendAnswer {
    let mut frame = ErrorFrame::new(ErrorCode::InvalidField, "messageId must name a message entry");
    frame.field = Some("messageId".into());
    SendAnswer::Refused(frame)
}

/// The answer to a send or entry whose idempotency key is already stored
/// (guarantee 2, "looked up before anything else about the send"): the
/// stored entry's ACK with `duplicate: true` when `retry` (the request is a
/// retry of it: [`Entry::is_retried_by`] / [`Entry::is_retried_as`]),
/// else `idempotency_conflict`.
pub fn by_stored_key(stored: Entry, retry: bool) -> SendAnswer {
    if retry {
        SendAnswer::Acked {
            entry: stored,
            duplicate: true,
        }
    } else {
        SendAnswer::refused(ErrorCode::IdempotencyConflict, view::KEY_USED_FOR_ANOTHER_MESSAGE)
    }
}

/// What an ERROR about a send echoes of its request: the send's
/// `clientMsgId` and `channelId`; an entry's `clientMsgId` and the target's
/// `messageId` (not the channel, which came from the target: a non-member
/// must not learn it). Each only when it was a valid id.
#[derive(Debug, Clone, Copy, Default)]
pub struct Echo<'a> {
    /// The request's `clientMsgId`.
    pub client_msg_id: Option<&'a str>,
    /// A send's `channelId`.
    pub channel_id: Option<&'a str>,
    /// An entry's target `messageId`.
    pub message_id: Option<uuid::Uuid>,
}

impl<'a> Echo<'a> {
    /// What an ERROR about `request` echoes.
    pub fn of(request: &'a NewEntry) -> Self {
        let client_msg_id = Some(request.client_msg_id.as_str());
        match request.change.target() {
            None => Self {
                client_msg_id,
                channel_id: Some(request.channel_id.as_str()),
                message_id: None,
            },
            Some(target) => Self {
                client_msg_id,
                channel_id: None,
                message_id: Some(target),
            },
        }
    }

    /// `frame` with these echoes added.
    pub fn apply(&self, mut frame: ErrorFrame) -> ErrorFrame {
        frame.client_msg_id = self.client_msg_id.map(str::to_owned);
        frame.channel_id = self.channel_id.map(str::to_owned);
        if let Some(target) = self.message_id {
            frame.message_id = Some(target.hyphenated().to_string());
        }
        frame
    }
}

/// Queues `answer` to `session`: the `MSG_ACK`, or the `ERROR` with what
/// `echo` names; `received` (when the frame was read) gives the
/// send-to-ACK latency.
pub fn to_session(session: &SessionHandle, answer: &SendAnswer, echo: Echo<'_>, received: Option<Instant>) {
    match answer {
        SendAnswer::Acked { entry, duplicate } => {
            session.send(&ServerFrame::MsgAck(view::ack(entry, *duplicate)));
            count(answer, received);
        }
        SendAnswer::Refused(frame) => refused(session, echo.apply(frame.clone())),
    }
}

/// Counts `answer` in `chatd_sends_total` (and, when stored, the
/// send-to-ACK latency from `received`) without queueing it anywhere: for
/// an answer that an HTTP route renders.
pub fn count(answer: &SendAnswer, received: Option<Instant>) {
    match answer {
        SendAnswer::Acked { duplicate, .. } => {
            let result = if *duplicate { "duplicate" } else { "stored" };
            telemetry::send_result(result, "", received.map(|r| r.elapsed()));
        }
        SendAnswer::Refused(frame) => telemetry::send_result("refused", frame.code.as_str(), None),
    }
}

/// Queues `frame`, a refusal of a frame (a send, or any other), to `session`.
pub fn refused(session: &SessionHandle, frame: ErrorFrame) {
    telemetry::send_result("refused", frame.code.as_str(), None);
    session.send(&ServerFrame::Error(frame));
}
