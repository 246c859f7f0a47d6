//! WebSocket close codes used by the server (RFC 6455 §7.4.1, IANA
//! registry): a leaf module, so the session code and the metrics' catalog
//! (which registers a series per code) both take them without a cycle.

/// Normal closure.
pub const NORMAL: u16 = 1000;
/// Server going away (shutdown).
pub const GOING_AWAY: u16 = 1001;
/// Protocol error (a frame that breaks RFC 6455).
pub const PROTOCOL_ERROR: u16 = 1002;
/// Invalid frame payload data (a text frame that is not UTF-8).
pub const INVALID_DATA: u16 = 1007;
/// Abnormal closure: the connection dropped without a close frame. Only
/// recorded (metrics); RFC 6455 forbids sending it.
pub const ABNORMAL: u16 = 1006;
/// Policy violation (token expired, too many bad frames).
pub const POLICY: u16 = 1008;
/// Message too big (over `max_frame_bytes`).
pub const TOO_BIG: u16 = 1009;
/// Internal error.
pub const INTERNAL: u16 = 1011;
/// Try again later: the session could not keep up with its frames.
pub const TRY_AGAIN_LATER: u16 = 1013;
/// Every code above (the labels of `chatd_sessions_closed_total`).
pub const ALL: [u16; 9] = [
    NORMAL,
    GOING_AWAY,
    PROTOCOL_ERROR,
    INVALID_DATA,
    ABNORMAL,
    POLICY,
    TOO_BIG,
    INTERNAL,
    TRY_AGAIN_LATER,
];
