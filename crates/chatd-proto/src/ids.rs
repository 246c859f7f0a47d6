//! Validated identifiers and units of the wire contract (`docs/protocol.md` §1).
//!
//! Every id that comes from a client or an operator passes through one of the
//! `parse` functions here before it reaches the store, so the store and the
//! fan-out never see an id outside its grammar.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// Largest `seq` and `afterSeq` value: 2^53 − 1, the largest integer a JSON
/// number carries exactly in IEEE 754 doubles (RFC 8259 §6).
pub const MAX_SEQ: i64 = (1 << 53) - 1;

/// Longest `userId`, `channelId` and `clientMsgId`, in bytes (= characters, all ASCII).
pub const MAX_ID_LEN: usize = 128;

/// Why an id was refused. The message is safe to show to the client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// Empty or longer than [`MAX_ID_LEN`].
    #[error("must be 1 to 128 characters long")]
    Length,
    /// A character outside the id's grammar.
    #[error("contains a character outside its grammar")]
    Character,
    /// `.` and `..` are refused so ids are always safe in URL paths.
    #[error("may not be '.' or '..'")]
    Dot,
}

macro_rules! name_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Checks `s` against the grammar `[A-Za-z0-9._:@-]{1,128}`, not `.` or `..`.
            ///
            /// # Errors
            /// [`IdError`] naming what is wrong.
            pub fn parse(s: &str) -> Result<Self, IdError> {
                check_name(s).map(|()| Self(s.to_owned()))
            }

            /// Wraps a value already known to be valid (read back from the
            /// store, which only ever holds parsed ids). Never use it on input.
            #[doc(hidden)]
            pub fn from_trusted(s: String) -> Self {
                Self(s)
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        /// Compares the id's text.
        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    };
}

name_id!(
    /// An application user, the `sub` claim of the user's JWT.
    UserId
);
name_id!(
    /// A channel: a conversation with members and its own `seq` sequence.
    ChannelId
);

impl ChannelId {
    /// A fresh server-assigned channel id (UUIDv7 text, RFC 9562).
    pub fn generate() -> Self {
        Self(uuid::Uuid::now_v7().to_string())
    }
}

fn check_name(s: &str) -> Result<(), IdError> {
    if s.is_empty() || s.len() > MAX_ID_LEN {
        return Err(IdError::Length);
    }
    if !s
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'@' | b'-'))
    {
        return Err(IdError::Character);
    }
    if s == "." || s == ".." {
        return Err(IdError::Dot);
    }
    Ok(())
}

/// The sender's idempotency key for one message: 1 to 128 printable ASCII
/// characters (0x21..=0x7E), chosen once and reused on every retry.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct ClientMsgId(String);

impl ClientMsgId {
    /// # Errors
    /// [`IdError::Length`] or [`IdError::Character`].
    pub fn parse(s: &str) -> Result<Self, IdError> {
        if s.is_empty() || s.len() > MAX_ID_LEN {
            return Err(IdError::Length);
        }
        if !s.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
            return Err(IdError::Character);
        }
        Ok(Self(s.to_owned()))
    }

    /// Wraps a value already known to be valid (read back from the store).
    /// Never use it on input.
    #[doc(hidden)]
    pub fn from_trusted(s: String) -> Self {
        Self(s)
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Parses a `messageId`: a UUID in lower-case hyphenated text (36 chars).
///
/// # Errors
/// Anything else, including upper case, braces or URNs.
pub fn parse_message_id(s: &str) -> Result<uuid::Uuid, IdError> {
    let id = uuid::Uuid::try_parse(s).map_err(|_| IdError::Character)?;
    if id.hyphenated().to_string() != s {
        return Err(IdError::Character);
    }
    Ok(id)
}

/// Milliseconds since the Unix epoch, UTC (the unit of every `ts` on the wire).
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_grammar() {
        assert!(UserId::parse("alice@example.com").is_ok());
        assert!(UserId::parse("a:b_c-d.e").is_ok());
        assert_eq!(UserId::parse(""), Err(IdError::Length));
        assert_eq!(UserId::parse(&"a".repeat(129)), Err(IdError::Length));
        assert!(UserId::parse(&"a".repeat(128)).is_ok());
        assert_eq!(UserId::parse("a b"), Err(IdError::Character));
        assert_eq!(UserId::parse("a/b"), Err(IdError::Character));
        assert_eq!(UserId::parse("é"), Err(IdError::Character));
        assert_eq!(ChannelId::parse("."), Err(IdError::Dot));
        assert_eq!(ChannelId::parse(".."), Err(IdError::Dot));
        assert!(ChannelId::parse("...").is_ok());
    }

    #[test]
    fn client_msg_ids_are_printable_ascii() {
        assert!(ClientMsgId::parse("!~{}").is_ok());
        assert_eq!(ClientMsgId::parse("a b"), Err(IdError::Character));
        assert_eq!(ClientMsgId::parse("a\u{7f}"), Err(IdError::Character));
        assert_eq!(ClientMsgId::parse(""), Err(IdError::Length));
    }

    #[test]
    fn message_ids_are_lower_case_hyphenated() {
        let id = uuid::Uuid::now_v7();
        assert_eq!(parse_message_id(&id.to_string()), Ok(id));
        assert!(parse_message_id(&id.to_string().to_uppercase()).is_err());
        assert!(parse_message_id(&id.simple().to_string()).is_err());
    }
}
