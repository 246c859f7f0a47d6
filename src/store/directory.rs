//! The directory of public channels (`GET /v1/directory`): keyset pages in
//! byte order of the id, filtered by a case-insensitive substring of the
//! name or id. Private and direct channels never appear.

use super::dialect::{Columns, Dialect, Executes, Kind, Params, Sql};
use super::error::StoreError;
use super::handle::{dispatch, Store};
use super::sql_store::SqlStore;
use crate::ids::ChannelId;

/// Up to `$3` public group channels with an id above `$1` (`NULL`: from the
/// first) whose id or name holds `$2` (`NULL`: all), in byte order of the
/// id, each with its name, last seq and member count (from the members'
/// primary key). PostgreSQL: the partial index `channels_public_by_id`
/// serves the order; `strpos(lower(…))` is a substring test, not a pattern
/// (a `%` or `_` in the text is itself). SQLite: `instr`, the primary key;
/// its `lower` folds ASCII only, so a `$2` beyond ASCII is matched in Rust
/// ([`SqlStore::directory_folded`]), and an ASCII `$2` against a name whose
/// `İ` (`char(304)`, U+0130) and Kelvin sign (`char(8490)`, U+212A) are
/// first replaced by `i` and `k`, the only characters beyond ASCII whose
/// lower case (PostgreSQL's) is ASCII. (Channel ids are ASCII.)
static DIRECTORY: Sql = Sql::each(
    "SELECT c.channel_id, c.name, c.last_seq, (SELECT count(*) FROM members m WHERE m.channel_id = c.channel_id) \
     FROM channels c WHERE c.visibility = 'public' AND c.kind = 'group' \
     AND c.channel_id COLLATE \"C\" > COALESCE($1::text, '') COLLATE \"C\" \
     AND ($2::text IS NULL OR strpos(lower(c.channel_id), lower($2::text)) > 0 \
          OR strpos(lower(COALESCE(c.name, '')), lower($2::text)) > 0) \
     ORDER BY c.channel_id COLLATE \"C\" LIMIT $3",
    "SELECT c.channel_id, c.name, c.last_seq, (SELECT count(*) FROM members m WHERE m.channel_id = c.channel_id) \
     FROM channels c WHERE c.visibility = 'public' AND c.kind = 'group' \
     AND c.channel_id > COALESCE($1, '') \
     AND ($2 IS NULL OR instr(lower(c.channel_id), lower($2)) > 0 \
          OR instr(lower(replace(replace(COALESCE(c.name, ''), char(304), 'i'), char(8490), 'k')), lower($2)) > 0) \
     ORDER BY c.channel_id LIMIT $3",
);

/// A public channel as the directory lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectoryEntry {
    pub channel_id: ChannelId,
    /// Display name, `None` when unset.
    pub name: Option<String>,
    /// Highest stored `seq` (0 when empty).
    pub last_seq: i64,
    pub member_count: i64,
}

impl Store {
    /// Up to `limit` public channels with an id above `after`, whose id or
    /// name holds `query` (case-insensitively; every one when `None`), in
    /// byte order of the id, and whether more follow.
    pub async fn directory(
        &self,
        query: Option<&str>,
        after: Option<&ChannelId>,
        limit: u32,
    ) -> Result<(Vec<DirectoryEntry>, bool), StoreError> {
        self.read(async { dispatch!(self.directory(query, after, limit)) })
            .await
    }
}

/// Rows read per round when SQLite filters in Rust (a `q` beyond ASCII).
const FOLD_PAGE: u32 = 500;

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn directory(
        &self,
        query: Option<&str>,
        after: Option<&ChannelId>,
        limit: u32,
    ) -> Result<(Vec<DirectoryEntry>, bool), StoreError> {
        // SQLite's lower() folds ASCII only: "äöü" would never find "ÄÖÜ".
        // Such a query reads the public channels in pages and matches them
        // here, with Unicode lower case, as PostgreSQL's lower() does.
        if let (Kind::Sqlite, Some(q)) = (D::KIND, query) {
            if !q.is_ascii() {
                return self.directory_folded(q, after, limit).await;
            }
        }
        let mut entries = self.directory_page(query, after, limit + 1).await?;
        let has_more = entries.len() > limit as usize;
        entries.truncate(limit as usize);
        Ok((entries, has_more))
    }

    /// Up to `limit` rows of [`DIRECTORY`], as entries.
    async fn directory_page(
        &self,
        query: Option<&str>,
        after: Option<&ChannelId>,
        limit: u32,
    ) -> Result<Vec<DirectoryEntry>, StoreError> {
        let rows = sqlx::query::<D>(D::sql(&DIRECTORY))
            .param(after.map(ChannelId::as_str))
            .param(query)
            .param(i64::from(limit))
            .fetch_all(self.reader().await?.ex())
            .await?;
        let entries = rows
            .iter()
            .map(|row| {
                Ok(DirectoryEntry {
                    channel_id: ChannelId::from_trusted(row.value(0)?),
                    name: row.value(1)?,
                    last_seq: row.value(2)?,
                    member_count: row.value(3)?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()?;
        Ok(entries)
    }

    /// [`Self::directory`] matching `query` in Rust: pages of every public
    /// channel after `after`, kept when the id or name holds `query` in
    /// Unicode lower case ([`lower`]), until `limit + 1` are kept or none
    /// are left.
    async fn directory_folded(
        &self,
        query: &str,
        after: Option<&ChannelId>,
        limit: u32,
    ) -> Result<(Vec<DirectoryEntry>, bool), StoreError> {
        let folded = lower(query);
        let holds = |entry: &DirectoryEntry| {
            lower(entry.channel_id.as_str()).contains(&folded)
                || entry.name.as_deref().is_some_and(|name| lower(name).contains(&folded))
        };
        let mut kept = Vec::new();
        let mut cursor = after.cloned();
        loop {
            let page = self.directory_page(None, cursor.as_ref(), FOLD_PAGE).await?;
            let full = page.len() == FOLD_PAGE as usize;
            cursor = page.last().map(|entry| entry.channel_id.clone());
            kept.extend(page.into_iter().filter(|entry| holds(entry)));
            if kept.len() > limit as usize || !full {
                break;
            }
        }
        let has_more = kept.len() > limit as usize;
        kept.truncate(limit as usize);
        Ok((kept, has_more))
    }
}

/// `text` in lower case as PostgreSQL's `lower()` makes it (under
/// `C.UTF-8`): each character to the first character of its Unicode lower
/// case, one for one and whatever its neighbours (`İ` to `i`, `Σ` to `σ`
/// at the end of a word too), where `str::to_lowercase` makes `İ` two
/// characters (`i` + U+0307) and a final `Σ` `ς`.
fn lower(text: &str) -> String {
    text.chars().map(|c| c.to_lowercase().next().unwrap_or(c)).collect()
}
