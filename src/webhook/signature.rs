//! `Chatd-Signature` (protocol §12): `t=<unix ms>,v1=<hex HMAC-SHA256 of
//! "<t>.<body>" keyed with webhook_secret>`. The receiver recomputes it over
//! the raw body it got and compares in constant time, and refuses a `t` too
//! far from its clock (the tolerance window is in docs/protocol.md).

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The header's name.
pub const HEADER: &str = "Chatd-Signature";

/// The header's value for `body` sent at `t_ms` (ms since the Unix epoch),
/// signed with `secret` (its UTF-8 bytes, used as they are).
pub fn header_value(secret: &str, t_ms: i64, body: &[u8]) -> String {
    format!("t={t_ms},v1={}", hex::encode(mac(secret, t_ms, body)))
}

/// HMAC-SHA256 of `"<t_ms>.<body>"` keyed with `secret`.
fn mac(secret: &str, t_ms: i64, body: &[u8]) -> [u8; 32] {
    // HMAC takes a key of any length: `new_from_slice` cannot fail for it.
    let mut mac = match <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes()) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC accepts keys of every length"),
    };
    mac.update(t_ms.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.finalize().into_bytes().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a value computed independently (Python's `hmac`:
    /// `hmac.new(b"whsec", b"1700000000000.{}", hashlib.sha256).hexdigest()`).
    #[test]
    fn the_signature_is_hmac_sha256_of_t_dot_body() {
        assert_eq!(
            header_value("whsec", 1_700_000_000_000, b"{}"),
            format!("t=1700000000000,v1={}", EXPECTED)
        );
    }

    const EXPECTED: &str = "71011c6edce8264c896afc29ce5ce9f44b714748ae41f9e0fc451ca2e56627bd";
}
