//! SQLite: no 3-character fragment of deleted or edited-away text left in the
//! b-tree separators of the search index (`message_search`,
//! `migrations/sqlite/0015_search.sql`).
//!
//! # What FTS5 keeps, and why it is repaired here
//!
//! FTS5 stores its index in segments of leaf pages (`message_search_data`)
//! and keeps, per leaf page, one row of `message_search_idx`: the segment,
//! the page number and a separator `term`, the shortest byte prefix of the
//! page's first term that sorts after the previous page's last term. A term
//! is `0` (the main index) followed by a trigram, case folded, so a
//! separator holds up to 3 characters of some text. `secure-delete` (which
//! the index is created with) rewrites a page at once when a deleted text's
//! trigram leaves it, but it drops the page's separator only when the page
//! is left with no term at all (`fts5SecureDeleteIdxEntry` in
//! `fts5_index.c`). When the removed term was the page's first and other
//! terms remain, the old separator stays as a live row, in the database
//! file and the WAL, until FTS5 happens to rewrite the segment (found by
//! the ninth hostile run, finding 2; `docs/known-issues.md`).
//!
//! # The repair
//!
//! Every transaction that takes text out of the index (a delete, the
//! retention sweep and a user's erasure through deletes, an edit, a
//! channel's deletion) notes the texts that leave ([`GoneTexts`], read
//! before the statement that changes the row) and, after its last deleting
//! statement and before its commit, runs [`repair`]:
//!
//! 1. `INSERT INTO message_search(message_search) VALUES ('flush')`: the
//!    pending deletes are applied to the pages now (the work the commit
//!    would do anyway), so the pages are as they will be committed.
//! 2. The `message_search_idx` rows whose `term` is a byte prefix of `0` +
//!    a trigram of a gone text ([`GoneTexts`] holds every such prefix of
//!    2 bytes or more) are the only separators that can hold a fragment of
//!    it. For each, the leaf page is read and its first term decoded
//!    ([`first_term`]).
//! 3. A separator that is no longer a prefix of its page's first term is set
//!    to that first term; one whose page is gone (an incremental merge
//!    deletes the leaves of its input segments it has merged, not their
//!    separators, until the merge ends) is dropped, as FTS5 reads it no
//!    more. The first term is a live term: it sorts after
//!    every term of the earlier pages and not after any term of its own
//!    page, so it separates the pages as well as the old separator did and
//!    every lookup reaches the same page (FTS5's `integrity-check` accepts
//!    it, and searches answer the same; see the tests below and
//!    `tests/api/search_separators.rs`). A separator that still is a prefix
//!    of the first term holds only what a live text holds.
//!
//! At every start, after the migrations, [`repair_all`] checks every
//! separator once (`SqlStore::repair_all_search_separators`, in
//! `separator_notes.rs`): an index
//! written before this repair existed is repaired too.
//!
//! It writes FTS5's shadow tables and reads its leaf format, which is not a
//! documented interface (`fts5_index.c` of the SQLite that `libsqlite3-sys`
//! bundles): the unit tests here fail if the format or the separators'
//! behaviour changes. SQLite refuses such writes under
//! `SQLITE_DBCONFIG_DEFENSIVE`, which chatd does not set. Nothing is done
//! on PostgreSQL, whose search index is a GIN index of `pg_trgm` trigrams
//! that `VACUUM` cleans ([`GoneTexts`] notes nothing there).
//!
//! # Cost
//!
//! One statement reading the text before it is erased, the flush (which
//! the commit would otherwise do), one scan of `message_search_idx` (about
//! 18 rows per 1,000 indexed messages) per chunk of candidates, and one
//! page read per candidate separator (a few per deleted text). Measured by
//! `cargo bench --bench search_separators` (`benches/search_separators.rs`;
//! the figures are in `docs/known-issues.md`).

use sqlx::{Row, SqliteConnection};
use std::collections::HashSet;

use super::error::StoreError;
use super::fts5_fold::fts5_fold_char;

/// Candidates per scan of `message_search_idx` (bound as one JSON array).
const CHUNK: usize = 10_000;

/// Above this many candidates (a channel's deletion, a big batch), every
/// separator is checked instead: one scan and one page read per row of
/// `message_search_idx`, which is then fewer than the scans by chunk.
const CHECK_ALL_ABOVE: usize = 20 * CHUNK;

/// The current text `$1`'s row has in the index: none unless it is a
/// message not deleted (the triggers of `0015_search.sql` index exactly
/// those, with this text).
const FLUSH: &str = "INSERT INTO message_search (message_search) VALUES ('flush')";
/// The separators that are one of the candidates `$1` (a JSON array of hex).
const CANDIDATE_SEPARATORS: &str = "SELECT segid, term, pgno FROM message_search_idx \
     WHERE term IN (SELECT unhex(value) FROM json_each($1))";
/// Every separator (the first page of a segment has an empty one).
const ALL_SEPARATORS: &str = "SELECT segid, term, pgno FROM message_search_idx WHERE length(term) > 0";
/// The leaf page `$1` (`segid << 37 | pgno`).
const LEAF: &str = "SELECT block FROM message_search_data WHERE id = $1";
/// Sets segment `$2`'s separator `$3` to `$1`.
const SET_SEPARATOR: &str = "UPDATE message_search_idx SET term = $1 WHERE segid = $2 AND term = $3";
/// Drops segment `$1`'s separator `$2` (of a page merged away).
const DROP_SEPARATOR: &str = "DELETE FROM message_search_idx WHERE segid = $1 AND term = $2";

/// Why the repair failed. The transaction it runs in is then rolled back:
/// the delete is refused rather than committed with a fragment left.
#[derive(Debug, thiserror::Error)]
pub enum SeparatorError {
    /// A statement failed.
    #[error("search index separators: {0}")]
    Sql(#[from] sqlx::Error),
    /// A leaf page that does not read as FTS5's format this module knows.
    #[error("search index: leaf page {pgno} of segment {segid} unreadable: {why}")]
    Leaf { segid: i64, pgno: i64, why: LeafError },
    /// A segment id or page number out of FTS5's ranges.
    #[error("search index: separator of segment {segid} names page {pgno}")]
    BadRow { segid: i64, pgno: i64 },
}

impl From<SeparatorError> for StoreError {
    fn from(e: SeparatorError) -> Self {
        match e {
            SeparatorError::Sql(e) => StoreError::from(e),
            other => StoreError::Corrupt(other.to_string()),
        }
    }
}

/// What is wrong with a leaf page ([`first_term`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LeafError {
    /// Shorter than its 4-byte header.
    #[error("shorter than its header")]
    Short,
    /// A varint or a term runs past the page's end.
    #[error("a varint or term past the page's end")]
    Truncated,
    /// The page index names a term offset outside the page's leaf data.
    #[error("first term offset {0} outside the leaf")]
    Offset(u64),
}

/// What one [`repair`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Repaired {
    /// Separators read with their page.
    pub checked: usize,
    /// Separators set to their page's first term.
    pub fixed: usize,
    /// Separators of pages an incremental merge took away, dropped.
    pub dropped: usize,
}

/// The texts a transaction takes out of the search index, kept as what
/// can be left of them in a separator: every byte prefix (2 bytes or more)
/// of `0` + each trigram, for every case variant the trigram tokenizer's
/// folding may have made of it. Only on SQLite; empty elsewhere.
#[derive(Debug, Default)]
pub struct GoneTexts {
    prefixes: HashSet<Vec<u8>>,
}

impl GoneTexts {
    /// Nothing noted yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether no text was noted.
    pub fn is_empty(&self) -> bool {
        self.prefixes.is_empty()
    }

    /// How many candidate separators the noted texts make.
    pub fn candidates(&self) -> usize {
        self.prefixes.len()
    }

    /// Notes `text`, which leaves the index in this transaction.
    ///
    /// FTS5's `trigram` tokenizer (`case_sensitive 0`) folds each character
    /// with its own Unicode table (`sqlite3Fts5UnicodeFold`, mirrored by
    /// [`super::fts5_fold`]), which need not match Rust's for every
    /// character. A candidate that matches no separator costs nothing, a
    /// folding missed would leave a fragment, so each non-ASCII character
    /// stands for itself, its lower, upper and lower-of-upper forms (simple
    /// case folding is among them) and FTS5's fold of it (U+FFFE and U+FFFF
    /// are indexed as U+FFFD); ASCII is folded exactly as FTS5 does (`A`–`Z`
    /// to `a`–`z`).
    pub fn add_text(&mut self, text: &str) {
        let chars: Vec<Vec<char>> = text.chars().map(variants).collect();
        let mut bytes = Vec::with_capacity(16);
        for window in chars.windows(3) {
            for a in &window[0] {
                for b in &window[1] {
                    for c in &window[2] {
                        bytes.clear();
                        bytes.push(b'0');
                        for ch in [a, b, c] {
                            let mut buf = [0u8; 4];
                            bytes.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        for len in 2..=bytes.len() {
                            if !self.prefixes.contains(&bytes[..len]) {
                                self.prefixes.insert(bytes[..len].to_vec());
                            }
                        }
                    }
                }
            }
        }
    }

    /// The candidates as JSON arrays of hex, [`CHUNK`] at a time.
    fn chunks(&self) -> Vec<String> {
        let hex: Vec<String> = self.prefixes.iter().map(|p| hex(p)).collect();
        hex.chunks(CHUNK)
            .map(|chunk| serde_json::Value::from(chunk.to_vec()).to_string())
            .collect()
    }
}

/// `c` and the forms FTS5's folding may have made of it (see
/// [`GoneTexts::add_text`]).
fn variants(c: char) -> Vec<char> {
    if c.is_ascii() {
        return vec![c.to_ascii_lowercase()];
    }
    let mut out = vec![c];
    let mut push = |x: char| {
        if !out.contains(&x) {
            out.push(x);
        }
    };
    push(fts5_fold_char(c));
    c.to_lowercase().for_each(&mut push);
    for upper in c.to_uppercase() {
        push(upper);
        upper.to_lowercase().for_each(&mut push);
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Reads an SQLite varint (as FTS5 writes them) at `at`: its value and the
/// offset after it.
fn varint(page: &[u8], at: usize) -> Result<(u64, usize), LeafError> {
    let mut value: u64 = 0;
    for k in 0..9 {
        let byte = *page.get(at + k).ok_or(LeafError::Truncated)?;
        if k == 8 {
            return Ok(((value << 8) | u64::from(byte), at + 9));
        }
        value = (value << 7) | u64::from(byte & 0x7f);
        if byte < 0x80 {
            return Ok((value, at + k + 1));
        }
    }
    Err(LeafError::Truncated)
}

/// The first term of FTS5 leaf page `page`, or `None` when it holds none
/// (only a doclist continued from an earlier page).
///
/// The format (`fts5_index.c`): bytes 2–3 are `szLeaf`, the offset of the
/// page index that ends the page; the page index's first varint is the
/// offset of the page's first term, stored whole as a varint length and
/// its bytes (later terms are prefix-compressed against it).
pub fn first_term(page: &[u8]) -> Result<Option<&[u8]>, LeafError> {
    let header = page.get(..4).ok_or(LeafError::Short)?;
    let size_leaf = usize::from(u16::from_be_bytes([header[2], header[3]]));
    if size_leaf >= page.len() {
        return Ok(None);
    }
    let (offset, _) = varint(page, size_leaf)?;
    let start = usize::try_from(offset).map_err(|_| LeafError::Offset(offset))?;
    if start < 4 || start >= size_leaf {
        return Err(LeafError::Offset(offset));
    }
    let (len, at) = varint(page, start)?;
    let len = usize::try_from(len).map_err(|_| LeafError::Truncated)?;
    let end = at.checked_add(len).ok_or(LeafError::Truncated)?;
    if end > size_leaf {
        return Err(LeafError::Truncated);
    }
    Ok(Some(&page[at..end]))
}

/// The `message_search_data` id of leaf `pgno` of segment `segid`
/// (`FTS5_SEGMENT_ROWID`: `segid << 37 | pgno`; `segid` is at most 65,535
/// and `pgno` below 2^31).
fn leaf_id(segid: i64, pgno: i64) -> Option<i64> {
    if !(0..=0xffff).contains(&segid) || !(0..(1 << 31)).contains(&pgno) {
        return None;
    }
    Some((segid << 37) | pgno)
}

/// Runs the repair (see the module's documentation) for the texts `gone`
/// took out of the index in the transaction `conn` is in, after its last
/// deleting statement. Nothing when `gone` is empty.
///
/// # Errors
/// [`SeparatorError`]: a statement failed, or the index does not read as
/// the format this module knows; the transaction should be rolled back.
pub async fn repair(conn: &mut SqliteConnection, gone: &GoneTexts) -> Result<Repaired, SeparatorError> {
    if gone.is_empty() {
        return Ok(Repaired::default());
    }
    sqlx::query(FLUSH).execute(&mut *conn).await?;
    let mut rows: Vec<(i64, Vec<u8>, i64)> = Vec::new();
    if gone.candidates() > CHECK_ALL_ABOVE {
        for row in sqlx::query(ALL_SEPARATORS).fetch_all(&mut *conn).await? {
            rows.push((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?));
        }
    } else {
        for chunk in gone.chunks() {
            for row in sqlx::query(CANDIDATE_SEPARATORS)
                .bind(chunk)
                .fetch_all(&mut *conn)
                .await?
            {
                rows.push((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?));
            }
        }
    }
    fix_separators(conn, rows).await
}

/// Checks every separator of the index and repairs the stale ones, in
/// the transaction `conn` is in: for an index written before the repair
/// ran on every delete, or after a change of its format.
///
/// # Errors
/// As [`repair`].
pub async fn repair_all(conn: &mut SqliteConnection) -> Result<Repaired, SeparatorError> {
    sqlx::query(FLUSH).execute(&mut *conn).await?;
    let mut rows = Vec::new();
    for row in sqlx::query(ALL_SEPARATORS).fetch_all(&mut *conn).await? {
        rows.push((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?));
    }
    fix_separators(conn, rows).await
}

/// Step 3 of the repair for the separators `rows` (`segid`, `term`,
/// `pgno << 1 | has-doclist-index`).
async fn fix_separators(
    conn: &mut SqliteConnection,
    rows: Vec<(i64, Vec<u8>, i64)>,
) -> Result<Repaired, SeparatorError> {
    let mut done = Repaired::default();
    for (segid, separator, pgno) in rows {
        let pgno = pgno >> 1;
        let id = leaf_id(segid, pgno).ok_or(SeparatorError::BadRow { segid, pgno })?;
        let page: Option<Vec<u8>> = sqlx::query_scalar(LEAF).bind(id).fetch_optional(&mut *conn).await?;
        done.checked += 1;
        let Some(page) = page else {
            // An incremental merge (`fts5TrimSegments`) deletes the leaves
            // of its input segments it has merged, but not their rows of
            // `message_search_idx`, which stay until the merge ends: FTS5
            // no longer reads them (a lookup that lands below the
            // segment's first leaf starts at that leaf, and the
            // integrity-check skips them), so the separator goes.
            sqlx::query(DROP_SEPARATOR)
                .bind(segid)
                .bind(&separator)
                .execute(&mut *conn)
                .await?;
            done.dropped += 1;
            continue;
        };
        let first = first_term(&page).map_err(|why| SeparatorError::Leaf { segid, pgno, why })?;
        let Some(first) = first else { continue };
        if first.starts_with(&separator) {
            continue;
        }
        sqlx::query(SET_SEPARATOR)
            .bind(first)
            .bind(segid)
            .bind(&separator)
            .execute(&mut *conn)
            .await?;
        done.fixed += 1;
    }
    Ok(done)
}

#[cfg(test)]
mod tests;
