//! Where NATS traffic goes: the server list of `nats_url` and the subject
//! prefix `nats_subject_prefix`. A leaf: settings validation
//! ([`crate::config`]) refuses a bad value at load, and the cluster
//! ([`crate::delivery::nats`]) connects with the parsed list; neither has to import
//! the other.

use std::str::FromStr;

/// Longest `nats_subject_prefix`, bytes: every subject this node uses starts
/// with it, and NATS subjects are best kept short.
const MAX_SUBJECT_PREFIX_BYTES: usize = 64;

/// Whether `prefix` is one or more dot-separated tokens of ASCII letters,
/// digits, `_` and `-` (no wildcard, no empty token, no whitespace), at most
/// 64 bytes.
pub fn valid_subject_prefix(prefix: &str) -> bool {
    !prefix.is_empty()
        && prefix.len() <= MAX_SUBJECT_PREFIX_BYTES
        && prefix.split('.').all(|token| {
            !token.is_empty()
                && token
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
}

/// Parses `nats_url`: one or more NATS server URLs, comma-separated.
///
/// # Errors
/// The text of the first URL that does not parse.
pub fn parse_nats_urls(text: &str) -> Result<Vec<async_nats::ServerAddr>, String> {
    let urls: Vec<&str> = text.split(',').map(str::trim).filter(|u| !u.is_empty()).collect();
    if urls.is_empty() {
        return Err("no URL".into());
    }
    urls.into_iter()
        .map(|url| async_nats::ServerAddr::from_str(url).map_err(|e| format!("{url}: {e}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        for good in ["chatd", "prod.chatd", "t-1_x", "a.b.c"] {
            assert!(valid_subject_prefix(good), "{good}");
        }
        for bad in ["", ".", "a.", ".a", "a..b", "a b", "a.*", ">", "a.>", "ä"] {
            assert!(!valid_subject_prefix(bad), "{bad}");
        }
    }

    #[test]
    fn urls() {
        assert_eq!(parse_nats_urls("nats://127.0.0.1:4222").unwrap().len(), 1);
        assert_eq!(parse_nats_urls("nats://a:4222, nats://b:4222").unwrap().len(), 2);
        assert!(parse_nats_urls("").is_err());
        assert!(parse_nats_urls("http://[::1").is_err());
    }
}
