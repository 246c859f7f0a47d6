//! Signed attachment URLs (protocol.md §15): a path on the server that
//! serves one attachment's bytes (or thumbnail) without a token until it
//! expires. The signature is the hex HMAC-SHA256, with the attachment's own
//! random key (its `url_key`, never rendered, gone with its row), of
//! `"<attachmentId>.<part>.<exp>"`; it is checked in constant time. A URL
//! reaches only what it names: another id, part or expiry fails the check.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::store::AttachmentRow;

/// What a signed URL serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The bytes as uploaded.
    File,
    /// The image's thumbnail.
    Thumbnail,
}

impl Part {
    fn tag(self) -> &'static str {
        match self {
            Part::File => "file",
            Part::Thumbnail => "thumbnail",
        }
    }
}

fn mac(row: &AttachmentRow, part: Part, exp: i64) -> Option<Hmac<Sha256>> {
    let key = hex::decode(&row.url_key).ok()?;
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&key).ok()?;
    mac.update(format!("{}.{}.{exp}", row.attachment_id.hyphenated(), part.tag()).as_bytes());
    Some(mac)
}

/// The signed path of `row`'s `part`, valid until `now_secs +
/// row.url_ttl_secs` (unix seconds): `/v1/attachments/{id}?exp=…&sig=…`
/// (`/thumbnail` before the query for the thumbnail).
pub fn signed_path(row: &AttachmentRow, part: Part, now_secs: i64) -> String {
    let exp = now_secs.saturating_add(row.url_ttl_secs);
    let sig = mac(row, part, exp)
        .map(|m| hex::encode(m.finalize().into_bytes()))
        .unwrap_or_default();
    let suffix = match part {
        Part::File => "",
        Part::Thumbnail => "/thumbnail",
    };
    format!(
        "/v1/attachments/{}{suffix}?exp={exp}&sig={sig}",
        row.attachment_id.hyphenated()
    )
}

/// The `exp` of a signed URL, when written as [`signed_path`] writes it:
/// decimal digits without a sign or a leading zero. Another spelling of the
/// same number (`+1060`, `01060`) is not that URL (one URL, one spelling,
/// for caches and block lists alike), so it verifies nothing.
pub fn parse_exp(text: &str) -> Option<i64> {
    let canonical =
        !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) && (text == "0" || !text.starts_with('0'));
    canonical.then(|| text.parse().ok()).flatten()
}

/// Whether `sig` signs `row`'s `part` until `exp` and `exp` has not passed
/// at `now_secs`. `sig` must be spelled as [`signed_path`] writes it: 64
/// lower-case hex digits. Compared in constant time.
pub fn verify(row: &AttachmentRow, part: Part, exp: i64, sig: &str, now_secs: i64) -> bool {
    if exp < now_secs {
        return false;
    }
    let lower_hex = sig.len() == 64 && sig.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if !lower_hex {
        return false;
    }
    let Ok(sig) = hex::decode(sig) else {
        return false;
    };
    mac(row, part, exp).is_some_and(|m| m.verify_slice(&sig).is_ok())
}

/// Now, unix seconds.
pub fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{ChannelId, UserId};

    fn row() -> AttachmentRow {
        AttachmentRow {
            attachment_id: uuid::Uuid::now_v7(),
            channel_id: ChannelId::from_trusted("c".into()),
            uploader_id: UserId::from_trusted("u".into()),
            content_type: "image/png".into(),
            size: 1,
            sha256: String::new(),
            filename: None,
            width: None,
            height: None,
            created_at: 0,
            message_id: None,
            storage_key: "k".into(),
            thumbnail_key: None,
            url_key: hex::encode([7u8; 32]),
            url_ttl_secs: 60,
        }
    }

    fn query(path: &str) -> (i64, String) {
        let (_, q) = path.split_once('?').expect("query");
        let mut exp = 0;
        let mut sig = String::new();
        for pair in q.split('&') {
            match pair.split_once('=') {
                Some(("exp", v)) => exp = v.parse().expect("exp"),
                Some(("sig", v)) => sig = v.to_owned(),
                _ => {}
            }
        }
        (exp, sig)
    }

    #[test]
    fn a_signed_path_verifies_until_it_expires_and_only_for_what_it_names() {
        let row = row();
        let path = signed_path(&row, Part::File, 1_000);
        assert!(path.starts_with(&format!("/v1/attachments/{}?exp=1060&sig=", row.attachment_id)));
        let (exp, sig) = query(&path);
        assert!(verify(&row, Part::File, exp, &sig, 1_000));
        assert!(verify(&row, Part::File, exp, &sig, 1_060));
        assert!(!verify(&row, Part::File, exp, &sig, 1_061), "expired");
        assert!(!verify(&row, Part::Thumbnail, exp, &sig, 1_000), "another part");
        assert!(!verify(&row, Part::File, exp + 1, &sig, 1_000), "another expiry");
        let mut other = row.clone();
        other.attachment_id = uuid::Uuid::now_v7();
        assert!(!verify(&other, Part::File, exp, &sig, 1_000), "another attachment");
        let mut altered = sig.clone().into_bytes();
        altered[0] = if altered[0] == b'0' { b'1' } else { b'0' };
        assert!(!verify(
            &row,
            Part::File,
            exp,
            &String::from_utf8(altered).expect("hex"),
            1_000
        ));
        assert!(!verify(&row, Part::File, exp, "zz", 1_000));
    }

    /// Found by a hostile test: `sig` in upper case and `exp` as `+1060` or
    /// `01060` were served, so one signed URL had many spellings.
    #[test]
    fn a_signed_url_verifies_only_as_it_was_written() {
        let row = row();
        let (exp, sig) = query(&signed_path(&row, Part::File, 1_000));
        assert!(verify(&row, Part::File, exp, &sig, 1_000));
        assert!(!verify(&row, Part::File, exp, &sig.to_uppercase(), 1_000), "upper case");
        assert!(!verify(&row, Part::File, exp, &format!("{sig}00"), 1_000), "longer");
        assert_eq!(parse_exp("1060"), Some(1060));
        assert_eq!(parse_exp("0"), Some(0));
        for other in [
            "+1060",
            "01060",
            "-1060",
            " 1060",
            "1060 ",
            "",
            "1e3",
            "99999999999999999999",
        ] {
            assert_eq!(parse_exp(other), None, "{other:?}");
        }
    }
}
