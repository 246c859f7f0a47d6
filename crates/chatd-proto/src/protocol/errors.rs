//! The error codes of the contract ([`ErrorCode`], §5) and the ERROR
//! frame ([`ErrorFrame`]).

use serde::{Deserialize, Serialize};

/// Error codes of the wire contract (`docs/protocol.md` §5), snake_case on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    BadFrame,
    UnknownType,
    InvalidField,
    BodyTooLarge,
    Forbidden,
    NotFound,
    IdempotencyConflict,
    RateLimited,
    Unavailable,
    Internal,
}

impl ErrorCode {
    /// Whether the client may retry the same request unchanged.
    pub fn retryable(self) -> bool {
        matches!(self, Self::RateLimited | Self::Unavailable | Self::Internal)
    }

    /// The code as it appears on the wire and in metrics labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BadFrame => "bad_frame",
            Self::UnknownType => "unknown_type",
            Self::InvalidField => "invalid_field",
            Self::BodyTooLarge => "body_too_large",
            Self::Forbidden => "forbidden",
            Self::NotFound => "not_found",
            Self::IdempotencyConflict => "idempotency_conflict",
            Self::RateLimited => "rate_limited",
            Self::Unavailable => "unavailable",
            Self::Internal => "internal",
        }
    }
}

/// The ERROR frame's fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorFrame {
    pub code: ErrorCode,
    pub message: String,
    pub retryable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_msg_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_id: Option<String>,
    /// With `rate_limited`, or a refusal that ends by itself (`muted`,
    /// `slow_mode`): milliseconds to wait before sending again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// Version 1.2: a lower-case word telling refusals of one code apart
    /// (`muted`, `banned`, `blocked`, `slow_mode`, `read_only`, `dm_policy`,
    /// `too_many_reactions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl ErrorFrame {
    /// An ERROR with `retryable` taken from the code.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retryable: code.retryable(),
            field: None,
            client_msg_id: None,
            message_id: None,
            channel_id: None,
            retry_after_ms: None,
            reason: None,
        }
    }
}
