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

/// Characters that show as nothing (or as a blank) without being
/// whitespace: Unicode's format characters (soft hyphen, the zero-width
/// space, joiners and marks, bidirectional controls, word joiner and
/// invisible operators, BOM, interlinear annotations, tags), variation
/// selectors, the combining grapheme joiner, and the Hangul and Braille
/// blanks. Some are needed inside text (the joiners in Indic and Persian
/// scripts and emoji, variation selectors, tags in flag emoji): callers
/// decide which they allow where.
pub fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}'
            | '\u{034f}'
            | '\u{061c}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{2800}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

/// The invisible characters no script needs inside a name: the zero-width
/// space, the word joiner and invisible operators (U+2060 to U+2064), the
/// byte order mark and the soft hyphen. With one, `\u{feff}admin` shows as
/// `admin`.
pub fn is_zero_width_filler(c: char) -> bool {
    matches!(c, '\u{00ad}' | '\u{200b}' | '\u{2060}'..='\u{2064}' | '\u{feff}')
}

/// Whether `c` shows something on its own: not whitespace, not
/// [`is_invisible`], not a combining mark (Unicode's general category M:
/// U+0301, U+20DD, the Thai vowel sign U+0E31, U+1D16D, which only change
/// the character before them), and not a placeholder that stands for
/// nothing (U+FFFC, the object replacement character; U+1D159, the musical
/// null notehead).
pub fn shows_alone(c: char) -> bool {
    !(c.is_whitespace()
        || is_invisible(c)
        || unicode_normalization::char::is_combining_mark(c)
        || matches!(c, '\u{fffc}' | '\u{1d159}'))
}

/// Whether `text` is not empty and shows nothing: no character
/// [`shows_alone`] (`"\u{a0}"`, `"\u{3164}"`, `"   "`, a lone `"\u{301}"`).
pub fn shows_nothing(text: &str) -> bool {
    !text.is_empty() && !text.chars().any(shows_alone)
}

/// Why `emoji` would show as another reaction or as nothing, if it would:
/// it must show something (a character that [`shows_alone`]), and of the [`is_invisible`] characters it may
/// hold only those emoji sequences are made of, where they belong: the
/// joiner U+200D between two characters, the variation selectors U+FE0E
/// and U+FE0F after one, and tags (U+E0020 to U+E007F) in a flag's tag
/// sequence (U+1F3F4, tags, U+E007F).
pub fn emoji_refusal(emoji: &str) -> Option<&'static str> {
    if !emoji.chars().any(shows_alone) {
        return Some("must show something");
    }
    let chars: Vec<char> = emoji.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !is_invisible(c) {
            continue;
        }
        let allowed = match c {
            '\u{200d}' => i > 0 && i + 1 < chars.len(),
            '\u{fe0e}' | '\u{fe0f}' => i > 0,
            '\u{e0020}'..='\u{e007f}' => {
                let tags = |c: &char| ('\u{e0020}'..='\u{e007f}').contains(c);
                let start = chars[..i].iter().rposition(|c| !tags(c));
                let end = chars[i..].iter().position(|c| !tags(c)).map_or(chars.len(), |n| i + n);
                start.is_some_and(|s| chars[s] == '\u{1f3f4}') && chars[end - 1] == '\u{e007f}'
            }
            _ => false,
        };
        if !allowed {
            return Some("must not contain invisible characters outside an emoji sequence");
        }
    }
    None
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

    #[test]
    fn emoji_show_something_and_hold_invisible_characters_only_where_sequences_need_them() {
        for ok in [
            "👍",
            "❤️",
            "❤️‍🔥",
            "👨‍👩‍👧",
            "👍🏽",
            "1️⃣",
            ":+1:",
            "\u{1f3f4}\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}",
        ] {
            assert_eq!(emoji_refusal(ok), None, "{ok:?}");
        }
        for bad in [
            "👍\u{2060}",
            "👍\u{e0020}",
            "\u{2060}",
            "\u{feff}",
            "\u{ad}",
            "\u{115f}",
            "\u{3164}",
            "\u{2800}",
            "\u{200c}",
            "\u{180e}",
            "\u{34f}",
            "\u{206a}",
            "\u{200d}",
            "\u{fe0f}",
            "\u{200d}👍",
            "👍\u{200d}",
            "\u{fe0f}👍",
            "\u{e0067}\u{e007f}",
            "\u{1f3f4}\u{e0067}",
            "\u{301}",
            "\u{20e3}",
            "\u{fffc}",
        ] {
            assert!(emoji_refusal(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn lone_combining_marks_and_placeholders_show_nothing() {
        for blank in [
            "\u{301}",
            "\u{20dd}",
            "\u{e31}",
            "\u{1d16d}\u{1d17b}",
            " \u{301} ",
            "\u{1d159}",
            "\u{fffc}",
            "\u{200b}\u{301}",
        ] {
            assert!(shows_nothing(blank), "{blank:?}");
        }
        for shown in ["e\u{301}", "ภาษาไทย", "क्षि", "1\u{fe0f}\u{20e3}", "a", "\u{fffc}x"] {
            assert!(!shows_nothing(shown), "{shown:?}");
        }
        assert!(!shows_nothing(""));
    }

    #[test]
    fn blank_texts_and_fillers_are_told_apart_from_text() {
        for blank in [" ", "\u{a0}", "   ", "\u{3164}", "\u{2028}", "\u{200b}\u{feff}"] {
            assert!(shows_nothing(blank), "{blank:?}");
        }
        for text in ["", "a", " a ", "\u{feff}admin", "می\u{200c}خواهم"] {
            assert!(!shows_nothing(text), "{text:?}");
        }
        for c in ['\u{200b}', '\u{2060}', '\u{feff}', '\u{ad}'] {
            assert!(is_zero_width_filler(c), "{c:?}");
        }
        for c in ['\u{200c}', '\u{200d}', '\u{fe0f}', 'a'] {
            assert!(!is_zero_width_filler(c), "{c:?}");
        }
    }
}
