//! The second decoding step: [`ClientFrame::validate`] checks each field's
//! grammar and range and yields a [`Command`] with validated ids; the
//! checks the server also applies to HTTP requests (pages, seqs, emoji,
//! counts).

use serde_json::Value;

use super::*;
use crate::ids::{self, ChannelId, ClientMsgId, UserId, MAX_SEQ};

/// A validated client request, ready for the session to act on.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// MSG_SEND with every field in its grammar and the body within the limit.
    Send {
        channel_id: ChannelId,
        client_msg_id: ClientMsgId,
        body: String,
        /// The quoted message (`replyTo`, §14).
        reply_to: Option<uuid::Uuid>,
        /// The thread's root (`threadId`, §14).
        thread_id: Option<uuid::Uuid>,
        /// The mentioned users (§16), in the `userId` grammar, repeats
        /// removed (first kept); their number is the server's to check.
        mentions: Vec<UserId>,
        /// `mentionAll: true` (§16).
        mention_all: bool,
        /// The uploads it carries (§15), in order, each once; their number
        /// is the server's to check.
        attachments: Vec<uuid::Uuid>,
    },
    /// MSG_DELIVERED (`read == false`) or MSG_READ (`read == true`).
    Receipt { message_id: uuid::Uuid, read: bool },
    /// SYNC with its position checked ([`Page`]) and `limit` in 1..=500.
    Sync {
        channel_id: ChannelId,
        page: Page,
        limit: u32,
        /// Only this root's thread (`threadId`, §14).
        thread_id: Option<uuid::Uuid>,
    },
    /// MSG_EDIT, MSG_DELETE or MSG_REACT with every field in its grammar.
    Entry {
        client_msg_id: ClientMsgId,
        /// The target message (`messageId`).
        target: uuid::Uuid,
        /// What the entry does to its target.
        change: EntryChange,
    },
    /// TYPING: `start == true` for `"start"`, false for `"stop"`.
    Typing { channel_id: ChannelId, start: bool },
    /// PRESENCE_SUB with every id in the `userId` grammar, repeats removed
    /// (first occurrence kept). The count limit (`max_presence_subscriptions`)
    /// is the server's to check: [`check_presence_count`].
    PresenceSub { user_ids: Vec<UserId> },
}

/// What a MSG_EDIT, MSG_DELETE or MSG_REACT does to its target message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryChange {
    /// The new text (the grammar of a MSG_SEND body).
    Edit { body: String },
    /// Delete the message and erase its text.
    Delete,
    /// Add (`add == true`) or remove the user's reaction `emoji`.
    React { emoji: String, add: bool },
}

/// Checks an `emoji`: 1 to [`MAX_EMOJI_BYTES`] bytes, no control
/// characters, no whitespace, and none of the invisible characters that
/// make a reaction show as another or as nothing: bidirectional controls
/// ([`crate::text::is_bidi_override`], [`crate::text::is_bidi_mark`]) and
/// U+200B ZERO WIDTH SPACE; and it must show something, holding other
/// invisible characters only where emoji sequences need them
/// ([`crate::text::emoji_refusal`]: the joiner U+200D, the variation
/// selectors, a flag's tags).
///
/// # Errors
/// A reason safe to show to the client.
pub fn check_emoji(emoji: &str) -> Result<(), &'static str> {
    if emoji.is_empty() || emoji.len() > MAX_EMOJI_BYTES {
        return Err("must be 1 to 64 bytes of UTF-8");
    }
    if emoji.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err("must not contain control characters or whitespace");
    }
    if emoji
        .chars()
        .any(|c| crate::text::is_bidi_override(c) || crate::text::is_bidi_mark(c) || c == '\u{200b}')
    {
        return Err("must not contain bidirectional controls or U+200B");
    }
    match crate::text::emoji_refusal(emoji) {
        Some(reason) => Err(reason),
        None => Ok(()),
    }
}

/// Checks a body (MSG_SEND, MSG_EDIT): not empty, at most `max_body_bytes`
/// bytes, no U+0000. `echo` is the frame's valid `clientMsgId`.
fn check_body(body: &str, max_body_bytes: usize, echo: Option<String>) -> Result<(), FrameError> {
    if body.is_empty() {
        return Err(invalid("body", "must not be empty", echo));
    }
    if body.len() > max_body_bytes {
        return Err(FrameError::BodyTooLarge {
            len: body.len(),
            max: max_body_bytes,
            client_msg_id: echo,
        });
    }
    if body.contains('\0') {
        return Err(invalid("body", "must not contain U+0000", echo));
    }
    Ok(())
}

/// Which page of a channel's log a SYNC or a history request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    /// The first `limit` entries with `seq > n` (`afterSeq`, 0..=2^53−1).
    After(i64),
    /// The last `limit` entries with `seq < n` (`beforeSeq`, 1..=2^53−1;
    /// `latest` is `Before(i64::MAX)`), returned in increasing `seq`.
    Before(i64),
}

impl Page {
    /// The page that `afterSeq`, `beforeSeq` and `latest` ask for, checked:
    /// `beforeSeq` wins over `afterSeq`; `latest` may not be combined with
    /// `beforeSeq`; without either, `afterSeq` is required when
    /// `after_required` (SYNC), else it defaults to 0 (the history route).
    ///
    /// # Errors
    /// The offending field's wire name and a reason safe to show the client.
    pub fn from_fields(
        after_seq: Option<i64>,
        before_seq: Option<i64>,
        latest: Option<bool>,
        after_required: bool,
    ) -> Result<Self, (&'static str, &'static str)> {
        let latest = latest.unwrap_or(false);
        if let Some(before) = before_seq {
            if latest {
                return Err(("latest", "cannot be combined with beforeSeq"));
            }
            return check_before_seq(before).map(Page::Before).map_err(|r| ("beforeSeq", r));
        }
        if latest {
            return Ok(Page::Before(i64::MAX));
        }
        match after_seq {
            Some(after) => check_after_seq(after).map(Page::After).map_err(|r| ("afterSeq", r)),
            None if after_required => Err(("afterSeq", "is required (or beforeSeq, or latest: true)")),
            None => Ok(Page::After(0)),
        }
    }
}

/// Checks a `beforeSeq` value: 1 to 2^53 − 1.
///
/// # Errors
/// A reason safe to show to the client.
pub fn check_before_seq(before_seq: i64) -> Result<i64, &'static str> {
    if (1..=MAX_SEQ).contains(&before_seq) {
        Ok(before_seq)
    } else {
        Err("must be between 1 and 2^53-1")
    }
}

/// Checks the number of ids of a PRESENCE_SUB against `max`.
///
/// # Errors
/// [`FrameError::InvalidField`] naming `userIds`.
pub fn check_presence_count(count: usize, max: usize) -> Result<(), FrameError> {
    if count > max {
        return Err(invalid(
            "userIds",
            format!("holds {count} ids, the limit is {max}"),
            None,
        ));
    }
    Ok(())
}

impl ClientFrame {
    /// Checks every field's grammar and range (`docs/protocol.md` §1, §5).
    ///
    /// `max_body_bytes` is the configured body limit in bytes of UTF-8.
    ///
    /// # Errors
    /// [`FrameError::InvalidField`] naming the field, or
    /// [`FrameError::BodyTooLarge`]. Errors about a send carry its
    /// `clientMsgId` when that id was itself valid.
    pub fn validate(self, max_body_bytes: usize) -> Result<Command, FrameError> {
        match self {
            ClientFrame::MsgSend {
                channel_id,
                client_msg_id,
                body,
                reply_to,
                thread_id,
                mentions,
                mention_all,
                attachments,
            } => {
                let client_msg_id = ClientMsgId::parse(&client_msg_id).map_err(|e| invalid("clientMsgId", e, None))?;
                let echo = || Some(client_msg_id.as_str().to_owned());
                let channel_id = ChannelId::parse(&channel_id).map_err(|e| invalid("channelId", e, echo()))?;
                let attachments = attachment_list(attachments.as_deref().unwrap_or_default(), echo())?;
                // With attachments, the body may be empty (§15).
                if !body.is_empty() || attachments.is_empty() {
                    check_body(&body, max_body_bytes, echo())?;
                }
                let reply_to = reference("replyTo", reply_to.as_deref(), echo())?;
                let thread_id = reference("threadId", thread_id.as_deref(), echo())?;
                let mentions = user_list("mentions", mentions.as_deref().unwrap_or_default(), echo())?;
                Ok(Command::Send {
                    channel_id,
                    client_msg_id,
                    body,
                    reply_to,
                    thread_id,
                    mentions,
                    mention_all: mention_all.unwrap_or(false),
                    attachments,
                })
            }
            ClientFrame::MsgDelivered { message_id } => Ok(Command::Receipt {
                message_id: ids::parse_message_id(&message_id)
                    .map_err(|_| invalid("messageId", "must be a lower-case hyphenated UUID", None))?,
                read: false,
            }),
            ClientFrame::MsgRead { message_id } => Ok(Command::Receipt {
                message_id: ids::parse_message_id(&message_id)
                    .map_err(|_| invalid("messageId", "must be a lower-case hyphenated UUID", None))?,
                read: true,
            }),
            ClientFrame::Sync {
                channel_id,
                after_seq,
                limit,
                before_seq,
                latest,
                thread_id,
            } => {
                let channel_id = ChannelId::parse(&channel_id).map_err(|e| invalid("channelId", e, None))?;
                let page = Page::from_fields(after_seq, before_seq, latest, true)
                    .map_err(|(field, reason)| invalid(field, reason, None))?;
                let limit = check_limit(limit).map_err(|r| invalid("limit", r, None))?;
                let thread_id = reference("threadId", thread_id.as_deref(), None)?;
                Ok(Command::Sync {
                    channel_id,
                    page,
                    limit,
                    thread_id,
                })
            }
            ClientFrame::MsgEdit {
                client_msg_id,
                message_id,
                body,
            } => {
                let (client_msg_id, target) = entry_ids(&client_msg_id, &message_id)?;
                // An empty body is judged with the target (§15: allowed for
                // a message that carries attachments, as on MSG_SEND).
                if !body.is_empty() {
                    check_body(&body, max_body_bytes, Some(client_msg_id.as_str().to_owned()))?;
                }
                Ok(Command::Entry {
                    client_msg_id,
                    target,
                    change: EntryChange::Edit { body },
                })
            }
            ClientFrame::MsgDelete {
                client_msg_id,
                message_id,
            } => {
                let (client_msg_id, target) = entry_ids(&client_msg_id, &message_id)?;
                Ok(Command::Entry {
                    client_msg_id,
                    target,
                    change: EntryChange::Delete,
                })
            }
            ClientFrame::MsgReact {
                client_msg_id,
                message_id,
                emoji,
                op,
            } => {
                let (client_msg_id, target) = entry_ids(&client_msg_id, &message_id)?;
                let echo = || Some(client_msg_id.as_str().to_owned());
                check_emoji(&emoji).map_err(|r| invalid("emoji", r, echo()))?;
                let add = match op.as_str() {
                    "add" => true,
                    "remove" => false,
                    _ => return Err(invalid("op", "must be \"add\" or \"remove\"", echo())),
                };
                Ok(Command::Entry {
                    client_msg_id,
                    target,
                    change: EntryChange::React { emoji, add },
                })
            }
            ClientFrame::Typing { channel_id, state } => {
                let channel_id = ChannelId::parse(&channel_id).map_err(|e| invalid("channelId", e, None))?;
                let start = match state.as_str() {
                    "start" => true,
                    "stop" => false,
                    _ => return Err(invalid("state", "must be \"start\" or \"stop\"", None)),
                };
                Ok(Command::Typing { channel_id, start })
            }
            ClientFrame::PresenceSub { user_ids } => Ok(Command::PresenceSub {
                user_ids: user_list("userIds", &user_ids, None)?,
            }),
        }
    }
}

/// A list of user ids (`userIds`, `mentions`) checked: every element a
/// string in the `userId` grammar; repeats removed, the first kept.
fn user_list(field: &'static str, values: &[Value], echo: Option<String>) -> Result<Vec<UserId>, FrameError> {
    let mut seen = std::collections::HashSet::with_capacity(values.len());
    let mut ids = Vec::with_capacity(values.len());
    for value in values {
        let Value::String(text) = value else {
            return Err(invalid(field, "every element must be a string", echo));
        };
        let id = UserId::parse(text).map_err(|e| invalid(field, format!("an element {e}"), echo.clone()))?;
        if seen.insert(text.as_str()) {
            ids.push(id);
        }
    }
    Ok(ids)
}

/// Checks the number of distinct users a MSG_SEND mentions against
/// `max_mentions` (§16). `echo`: the send's `clientMsgId`.
///
/// # Errors
/// [`FrameError::InvalidField`] naming `mentions`.
pub fn check_mentions_count(count: usize, max: usize, echo: Option<String>) -> Result<(), FrameError> {
    if count > max {
        return Err(invalid(
            "mentions",
            format!("holds {count} users, the limit is {max}"),
            echo,
        ));
    }
    Ok(())
}

impl Command {
    /// This command, unless it is a send that mentions more than `max`
    /// distinct users (`max_mentions`, §16).
    ///
    /// # Errors
    /// [`FrameError::InvalidField`] naming `mentions`, echoing the send's
    /// `clientMsgId`.
    pub fn with_mentions_within(self, max: usize) -> Result<Self, FrameError> {
        if let Command::Send {
            mentions,
            client_msg_id,
            ..
        } = &self
        {
            check_mentions_count(mentions.len(), max, Some(client_msg_id.as_str().to_owned()))?;
        }
        Ok(self)
    }

    /// This command, unless it is a send with more than `max` attachments
    /// (`max_attachments_per_message`, §15).
    ///
    /// # Errors
    /// [`FrameError::InvalidField`] naming `attachments`, echoing the
    /// send's `clientMsgId`.
    pub fn with_attachments_within(self, max: usize) -> Result<Self, FrameError> {
        if let Command::Send {
            attachments,
            client_msg_id,
            ..
        } = &self
        {
            check_attachments_count(attachments.len(), max, Some(client_msg_id.as_str().to_owned()))?;
        }
        Ok(self)
    }
}

/// The `clientMsgId` and target `messageId` of a log entry frame, checked.
fn entry_ids(client_msg_id: &str, message_id: &str) -> Result<(ClientMsgId, uuid::Uuid), FrameError> {
    let client_msg_id = ClientMsgId::parse(client_msg_id).map_err(|e| invalid("clientMsgId", e, None))?;
    let target = ids::parse_message_id(message_id).map_err(|_| {
        invalid(
            "messageId",
            "must be a lower-case hyphenated UUID",
            Some(client_msg_id.as_str().to_owned()),
        )
    })?;
    Ok((client_msg_id, target))
}

/// A `replyTo` or `threadId` (`field`), checked: absent, or a `messageId`.
///
/// # Errors
/// [`FrameError::InvalidField`] naming `field`, echoing `echo`.
fn reference(field: &'static str, id: Option<&str>, echo: Option<String>) -> Result<Option<uuid::Uuid>, FrameError> {
    id.map(|id| ids::parse_message_id(id).map_err(|_| invalid(field, "must be a lower-case hyphenated UUID", echo)))
        .transpose()
}

/// A send's `attachments` checked (§15): every element an attachment id (a
/// lower-case hyphenated UUID), none repeated.
fn attachment_list(values: &[Value], echo: Option<String>) -> Result<Vec<uuid::Uuid>, FrameError> {
    let mut ids: Vec<uuid::Uuid> = Vec::with_capacity(values.len());
    for value in values {
        let id = value
            .as_str()
            .and_then(|text| ids::parse_message_id(text).ok())
            .ok_or_else(|| invalid("attachments", "every element must be an attachmentId", echo.clone()))?;
        if ids.contains(&id) {
            return Err(invalid("attachments", "an attachmentId is repeated", echo));
        }
        ids.push(id);
    }
    Ok(ids)
}

/// Checks the number of attachments of a MSG_SEND against
/// `max_attachments_per_message` (§15). `echo`: the send's `clientMsgId`.
///
/// # Errors
/// [`FrameError::InvalidField`] naming `attachments`.
pub fn check_attachments_count(count: usize, max: usize, echo: Option<String>) -> Result<(), FrameError> {
    if count > max {
        return Err(invalid(
            "attachments",
            format!("holds {count} attachments, the limit is {max}"),
            echo,
        ));
    }
    Ok(())
}

fn invalid(field: &'static str, reason: impl ToString, client_msg_id: Option<String>) -> FrameError {
    FrameError::InvalidField {
        field,
        reason: reason.to_string(),
        client_msg_id,
    }
}

/// Checks an `afterSeq` value: 0 to 2^53 − 1.
///
/// # Errors
/// A reason safe to show to the client.
pub fn check_after_seq(after_seq: i64) -> Result<i64, &'static str> {
    if (0..=MAX_SEQ).contains(&after_seq) {
        Ok(after_seq)
    } else {
        Err("must be between 0 and 2^53-1")
    }
}

/// Checks a page `limit`: absent means [`DEFAULT_PAGE`], else 1 to [`MAX_PAGE`].
///
/// # Errors
/// A reason safe to show to the client.
pub fn check_limit(limit: Option<i64>) -> Result<u32, &'static str> {
    match limit {
        None => Ok(DEFAULT_PAGE),
        Some(n) if (1..=i64::from(MAX_PAGE)).contains(&n) => u32::try_from(n).map_err(|_| "out of range"),
        Some(_) => Err("must be between 1 and 500"),
    }
}
