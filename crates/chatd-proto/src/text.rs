//! Text rules shared by the frames' checks and the server's routes: cutting
//! UTF-8 at a byte bound, and the Unicode controls that make a short text
//! show as something else.

/// The longest start of `text` that is at most `max_bytes` bytes of UTF-8
/// and ends on a character boundary (`text` itself when it is that short).
/// `str::floor_char_boundary` does this from Rust 1.91, past this crate's
/// `rust-version`.
pub fn cut_to_bytes(text: &str, max_bytes: usize) -> &str {
    let mut end = text.len().min(max_bytes);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The Unicode bidirectional embeddings, overrides and isolates (U+202A to
/// U+202E, U+2066 to U+2069), which reorder the text after them: with one,
/// `\u{202e}nimda` shows as `admin`.
pub fn is_bidi_override(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// The invisible bidirectional marks (U+200E, U+200F, U+061C): right-to-left
/// text may need them, a file name or an emoji does not.
pub fn is_bidi_mark(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_to_bytes_keeps_whole_characters() {
        assert_eq!(cut_to_bytes("", 4), "");
        assert_eq!(cut_to_bytes("abc", 0), "");
        assert_eq!(cut_to_bytes("abc", 3), "abc");
        assert_eq!(cut_to_bytes("abc", 9), "abc");
        // '🙂' is four bytes: a cut inside it drops it whole.
        assert_eq!(cut_to_bytes("a🙂b", 4), "a");
        assert_eq!(cut_to_bytes("a🙂b", 5), "a🙂");
    }

    #[test]
    fn bidi_controls_are_told_apart_from_text() {
        for c in ['\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}'] {
            assert!(is_bidi_override(c) && !is_bidi_mark(c), "{:?}", c);
        }
        for c in ['\u{200e}', '\u{200f}', '\u{061c}'] {
            assert!(is_bidi_mark(c) && !is_bidi_override(c), "{:?}", c);
        }
        for c in ['a', 'ש', '\u{200d}', '\u{fe0f}', '\u{2065}', '\u{202f}'] {
            assert!(!is_bidi_override(c) && !is_bidi_mark(c), "{:?}", c);
        }
    }
}
