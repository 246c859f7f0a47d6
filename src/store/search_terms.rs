//! The terms of a search (`GET /v1/me/search`, protocol.md §18) and how
//! each database matches one: pure text work, no I/O.
//!
//! A query is split at white space (Unicode's, so the ideographic space
//! too) into terms; a message matches when its current text contains every
//! term as a case-insensitive substring. A term of [`INDEXED_CHARS`]
//! characters or more is answered by the trigram index of either database;
//! a shorter one (`東京`, `ok`) holds no trigram and is matched by a
//! condition on the text itself (see [`short_term_variants`]).
//!
//! SQLite's case folding is FTS5's ([`fold`], [`super::fts5_fold`]), for
//! the terms its index serves and for those matched in Rust or by `instr`
//! alike, so that an answer does not change when the indexer reaches a
//! message; PostgreSQL folds with `lower()` (Unicode's lower case).

use super::fts5_fold::{fts5_fold_char, FTS5_FOLDS};

/// The longest `q`, in bytes.
pub const MAX_QUERY_BYTES: usize = 256;
/// The fewest characters a term has for the trigram index to serve it.
pub const INDEXED_CHARS: usize = 3;

/// Why a `q` is refused (the `reason` of its `invalid_field`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BadQuery {
    /// No term: empty or only white space.
    #[error("must hold at least one term")]
    Empty,
    /// Over [`MAX_QUERY_BYTES`].
    #[error("at most 256 bytes")]
    TooLong,
    /// A control character that is not white space (U+0000 included).
    #[error("no control characters")]
    Control,
}

/// The terms of `q`, each once, in the order first written.
///
/// # Errors
/// [`BadQuery`] for an empty, too long or control-holding `q`.
pub fn parse_terms(q: &str) -> Result<Vec<String>, BadQuery> {
    if q.len() > MAX_QUERY_BYTES {
        return Err(BadQuery::TooLong);
    }
    if q.chars().any(|c| c.is_control() && !c.is_whitespace()) {
        return Err(BadQuery::Control);
    }
    let mut terms: Vec<String> = Vec::new();
    for term in q.split_whitespace() {
        if !terms.iter().any(|t| t == term) {
            terms.push(term.to_owned());
        }
    }
    if terms.is_empty() {
        return Err(BadQuery::Empty);
    }
    Ok(terms)
}

/// Whether the trigram index serves `term` (at least [`INDEXED_CHARS`]
/// characters).
pub fn is_indexed(term: &str) -> bool {
    term.chars().nth(INDEXED_CHARS - 1).is_some()
}

/// `term` as a `LIKE` pattern that matches it anywhere (`%term%`), with
/// `\`, `%` and `_` escaped by `\` (PostgreSQL's default escape; SQLite's
/// statements say `ESCAPE '\'`).
pub fn like_pattern(term: &str) -> String {
    let mut pattern = String::with_capacity(term.len() + 2);
    pattern.push('%');
    for c in term.chars() {
        if matches!(c, '\\' | '%' | '_') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// An FTS5 query that matches rows holding every one of `terms` (each a
/// phrase, quoted, its `"` doubled): with the `trigram` tokenizer a phrase
/// matches exactly where the text holds it as a substring, case folded.
pub fn fts_query<'a>(terms: impl IntoIterator<Item = &'a str>) -> String {
    terms
        .into_iter()
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// `text` case folded as SQLite's FTS5 `trigram` tokenizer
/// (`case_sensitive 0`) folds what it indexes and what it is asked: each
/// character by FTS5's own table, one for one ([`fts5_fold_char`]; not
/// Unicode's current lower case: `İ`, Cherokee and Georgian Mtavruli are
/// left as they are, and `ς` becomes `σ`). Only SQLite's search uses it;
/// PostgreSQL folds with its `lower()`.
pub fn fold(text: &str) -> String {
    text.chars().map(fts5_fold_char).collect()
}

/// Every character that [`fold`] makes the same as `c`'s fold, `c` among
/// them, sorted: `ǆ` gives `Ǆ`, `ǅ` (titlecase) and `ǆ`; `σ` gives `Σ`,
/// `ς` and `σ`; `k` gives `K`, `k` and the Kelvin sign U+212A; `i` gives
/// `I` and `i` only (FTS5 does not fold `İ`). Read from a table of the
/// characters some other character folds with (about 1,000 groups), built
/// once on first use from FTS5's table.
fn same_fold(c: char) -> Vec<char> {
    use std::collections::HashMap;
    use std::sync::OnceLock;
    static GROUPS: OnceLock<HashMap<char, Vec<char>>> = OnceLock::new();
    let groups = GROUPS.get_or_init(|| {
        let mut groups: HashMap<char, Vec<char>> = HashMap::new();
        let changed = ('A'..='Z').chain(FTS5_FOLDS.iter().map(|&(from, _)| from));
        for x in changed {
            groups.entry(fts5_fold_char(x)).or_default().push(x);
        }
        for (folded, members) in &mut groups {
            if fts5_fold_char(*folded) == *folded {
                members.push(*folded);
            }
            members.sort_unstable();
        }
        groups
    });
    groups.get(&fts5_fold_char(c)).cloned().unwrap_or_else(|| vec![c])
}

/// Whether SQLite's `LIKE` (which folds ASCII letters only) matches `term`
/// exactly as [`fold`] does: every character of it folds with ASCII
/// characters only (`iz`, `50%`), not with another (`k` folds with the
/// Kelvin sign, `s` with `ſ`).
pub fn like_folds(term: &str) -> bool {
    term.chars().all(|c| same_fold(c).iter().all(char::is_ascii))
}

/// Whether `text` holds the indexed `term` ([`is_indexed`]) as the FTS5
/// index finds it: the folded term within the folded text. Used for the
/// SQLite rows not indexed yet (`search_indexer.rs`), so that a message is
/// found the same before and after the indexer reaches it.
pub fn holds_indexed_term(text: &str, term: &str) -> bool {
    fold(text).contains(&fold(term))
}

/// Every spelling of the short `term` (fewer than [`INDEXED_CHARS`]
/// characters) that [`fold`] makes the same as the term: each character
/// replaced by each one it folds with ([`same_fold`]: upper, lower and
/// title case as FTS5 folds them, `ς` for `σ`, the Kelvin sign for `k`), in every combination
/// (at most 16 for two characters), each once. SQLite's `lower()` and
/// `LIKE` fold ASCII only, so a short term that is not [`like_folds`] is
/// matched by `instr` of each spelling; a term with no cased letter (CJK)
/// has one spelling.
pub fn short_term_variants(term: &str) -> Vec<String> {
    let mut variants = vec![String::new()];
    for c in term.chars() {
        let forms: Vec<String> = same_fold(c).into_iter().map(String::from).collect();
        variants = variants
            .iter()
            .flat_map(|prefix| forms.iter().map(move |f| format!("{prefix}{f}")))
            .collect();
    }
    variants.sort_unstable();
    variants.dedup();
    variants
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_split_at_any_white_space_once_each() {
        assert_eq!(
            parse_terms(" foo\tbar\u{3000}東京  foo ").unwrap(),
            vec!["foo", "bar", "東京"]
        );
        assert_eq!(parse_terms("a-b.c@d").unwrap(), vec!["a-b.c@d"]);
    }

    #[test]
    fn bad_queries_are_refused() {
        assert_eq!(parse_terms(""), Err(BadQuery::Empty));
        assert_eq!(parse_terms(" \n "), Err(BadQuery::Empty));
        assert_eq!(parse_terms(&"x".repeat(257)), Err(BadQuery::TooLong));
        assert!(parse_terms(&"x".repeat(256)).is_ok());
        assert_eq!(parse_terms("a\u{0}b"), Err(BadQuery::Control));
    }

    #[test]
    fn three_characters_are_indexed_whatever_their_bytes() {
        assert!(is_indexed("東京都"));
        assert!(!is_indexed("東京"));
        assert!(!is_indexed("ab"));
        assert!(is_indexed("abc"));
    }

    /// Found by a hostile test: a short term missed a titlecase letter
    /// (`ǅ`) and the Kelvin sign, which the index's folding finds. The
    /// twelfth hostile run: a short term must fold as the index does, no
    /// more (`i` found `İ`, which the index does not fold).
    #[test]
    fn short_terms_are_spelt_in_every_form_that_folds_the_same() {
        let mut variants = short_term_variants("ǆ");
        variants.sort();
        assert_eq!(variants, vec!["Ǆ", "ǅ", "ǆ"]);
        let is = short_term_variants("is");
        assert!(!is.iter().any(|v| v.starts_with('İ')), "{is:?}");
        assert!(is.iter().any(|v| v == "IS"), "{is:?}");
        assert_eq!(short_term_variants("İ"), vec!["İ"]);
        assert!(short_term_variants("ok").iter().any(|v| v == "o\u{212a}"));
        assert_eq!(short_term_variants("ς"), vec!["Σ", "ς", "σ"]);
        assert_eq!(short_term_variants("Ꮳ"), vec!["Ꮳ"], "Cherokee, not folded");
        assert_eq!(short_term_variants("東京"), vec!["東京"]);
        for term in ["ǆ", "is", "ok", "東京", "Ä", "σ", "İ", "Ꮳ"] {
            for variant in short_term_variants(term) {
                assert_eq!(fold(&variant), fold(term), "{term:?} {variant:?}");
            }
        }
        assert!(like_folds("50%") && like_folds("ab") && like_folds("iz"));
        assert!(
            !like_folds("ok") && !like_folds("is") && !like_folds("ä"),
            "the Kelvin sign, ſ"
        );
    }

    /// The twelfth hostile run: the rows the indexer has not reached are
    /// matched as FTS5 folds, not with Unicode's lower case.
    #[test]
    fn indexed_terms_fold_as_fts5_does() {
        assert!(!holds_indexed_term("İzmir'e gidiyoruz", "izmir"));
        assert!(holds_indexed_term("İzmir'e gidiyoruz", "İZMIR"));
        assert!(!holds_indexed_term("ᏣᎳᎩ", "ꮳꮃꭹ"));
        assert!(!holds_indexed_term("ԨԪԬԮ", "ԩԫԭԯ"));
        assert!(holds_indexed_term("ΣΊΣΥΦΟΣ", "σίσυφος"), "FTS5 folds ς to σ");
        assert!(holds_indexed_term("𐐀𐐁𐐂", "𐐨𐐩𐐪"), "Deseret is folded");
    }

    #[test]
    fn like_patterns_escape_their_wildcards() {
        assert_eq!(like_pattern("50%_a\\b"), "%50\\%\\_a\\\\b%");
    }

    #[test]
    fn fts_queries_quote_each_term() {
        assert_eq!(fts_query(["foo-bar", "say\"hi"]), "\"foo-bar\" AND \"say\"\"hi\"");
    }

    #[test]
    fn indexed_terms_match_the_folded_text() {
        assert!(holds_indexed_term("Der ÄRGER war groß", "ärger"));
        assert!(holds_indexed_term("ΟΔΌΣ Αθηνών", "οδόσ"));
        assert!(holds_indexed_term("明日は東京タワーに行きます", "東京タ"));
        assert!(holds_indexed_term("release build-42.rc3", "BUILD-42.RC"));
        assert!(!holds_indexed_term("release build-42.rc3", "build-43"));
    }

    #[test]
    fn short_terms_have_every_case_spelling() {
        assert_eq!(short_term_variants("東京"), vec!["東京"]);
        let mut want: Vec<String> = ["Äb", "ÄB", "äb", "äB"].map(String::from).to_vec();
        want.sort_unstable();
        assert_eq!(short_term_variants("äb"), want);
        // Ω, ω and the Ohm sign U+2126, which folds to ω.
        assert_eq!(short_term_variants("Ω").len(), 3);
    }
}
