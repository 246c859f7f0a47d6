//! Search (protocol.md §18): the `message` entries of a user's current
//! channels (or of one of them) whose current text holds every term,
//! newest first, render-ready, a page at a time.
//!
//! Each database answers from its trigram index (migration 0015). A
//! deleted or edited-away text is never found once its entry is committed:
//! PostgreSQL keeps its index in the transaction that changes a message;
//! SQLite takes a text out of its index in that transaction too, but adds
//! a new message's text after the send's commit (`search_indexer.rs`,
//! migration 0025), so it also reads the rows above the indexer's
//! watermark from `messages`, matched as the index would match them
//! ([`holds_indexed_term`]):
//!
//! - PostgreSQL: `lower(COALESCE(edited_body, body)) LIKE lower('%term%')`
//!   per term, served by the `pg_trgm` GIN index `messages_search` (or, for
//!   a word so common that the newest matches are near, by a backward scan
//!   of the primary key: the planner chooses), ordered by `message_id`
//!   (UUIDv7: the order the messages were stored). The cursor is the last
//!   result's `messageId`.
//! - SQLite: the FTS5 `trigram` table `message_search` (its rowids are
//!   `messages`' rowids), walked newest first (`ORDER BY rowid DESC` is the
//!   index's own order, so a page stops after `limit` matches whatever the
//!   number of matches), after the rows not indexed yet (newer than every
//!   indexed row, read newest first until the page is full); the cursor is
//!   a rowid. A query of short terms
//!   only (fewer than 3 characters, which hold no trigram) scans at most
//!   [`SCAN_WINDOW`] rows of `messages` per page, newest first; a page may
//!   then hold fewer than `limit` results and still have a `next`.
//!
//! Membership is read in the same statement as the matches, from the same
//! snapshot: a result is of a channel the user is a member of at the read.

use super::dialect::{Columns, Dialect, Executes, Kind, Params};
use super::entries::Reading;
use super::entry_row::{entry_from_row, id_text, message_columns, ENTRY_COLUMNS};
use super::entry_types::Entry;
use super::error::StoreError;
use super::handle::{dispatch, Store};
use super::search_indexer::WATERMARK;
use super::search_terms::{fts_query, holds_indexed_term, is_indexed, like_folds, like_pattern, short_term_variants};
use super::sql_store::{fresh_read, SqlStore};
use crate::ids::{ChannelId, UserId};
use futures_util::TryStreamExt;

/// The most rows of `messages` one page of a short-terms-only query scans
/// (SQLite: rowids; PostgreSQL: rows by `message_id`; a page then covers
/// this many stored entries).
pub const SCAN_WINDOW: i64 = 100_000;

/// The newest rows below the cursor that a PostgreSQL page with an
/// indexed term reads by the primary key before it asks the trigram index.
pub const PG_RECENT_WINDOW: i64 = 5_000;

/// Entry columns as PostgreSQL selects them (SQLite: without `::text`).
const PG_COLUMNS: &str = message_columns!("message_id::text", "target_id::text");

/// What to search.
#[derive(Debug, Clone, Copy)]
pub struct SearchRequest<'a> {
    /// Whose channels (current memberships at the read).
    pub user: &'a UserId,
    /// The terms ([`super::search_terms::parse_terms`]), at least one.
    pub terms: &'a [String],
    /// Only this channel (the caller checks membership first, for its
    /// answer; the search checks it again).
    pub channel: Option<&'a ChannelId>,
    /// The `next` of the previous page, as given.
    pub before: Option<&'a str>,
    /// Results per page, 1 to 100.
    pub limit: u32,
}

/// One page of results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchPage {
    /// Newest first; each a `message` entry in its current state, with
    /// reactions (`me` for the searching user) and reply previews.
    pub entries: Vec<Entry>,
    /// The cursor of the next page (`before`), `None` when none is left.
    pub next: Option<String>,
}

/// A `before` that this store never gives as `next`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a cursor this server gave")]
pub struct BadCursor;

impl Store {
    /// One page of `request`'s results, or `Ok(Err(BadCursor))` for a
    /// `before` that is no cursor of this store.
    ///
    /// # Errors
    /// The store's error.
    pub async fn search(&self, request: SearchRequest<'_>) -> Result<Result<SearchPage, BadCursor>, StoreError> {
        self.read(async { dispatch!(self.search(request)) }).await
    }
}

/// A statement's text and its parameters, numbered as written.
struct Statement {
    kind: Kind,
    sql: String,
    params: Vec<Param>,
}

enum Param {
    Text(String),
    Int(i64),
}

impl Statement {
    fn new(kind: Kind) -> Self {
        Statement {
            kind,
            sql: String::with_capacity(1024),
            params: Vec::new(),
        }
    }

    /// Appends `sql`.
    fn push(&mut self, sql: &str) -> &mut Self {
        self.sql.push_str(sql);
        self
    }

    /// Appends the placeholder of a new parameter `value`.
    fn bind(&mut self, value: Param) -> &mut Self {
        self.params.push(value);
        let n = self.params.len();
        match self.kind {
            Kind::Postgres => self.sql.push_str(&format!("${n}")),
            Kind::Sqlite => self.sql.push_str(&format!("?{n}")),
        }
        self
    }

    fn text(&mut self, value: impl Into<String>) -> &mut Self {
        self.bind(Param::Text(value.into()))
    }

    /// The user's channels (or the one named, if the user is in it).
    fn channels(&mut self, request: &SearchRequest<'_>) -> &mut Self {
        self.push(" AND m.channel_id IN (SELECT channel_id FROM members WHERE user_id = ")
            .text(request.user.as_str());
        if let Some(channel) = request.channel {
            self.push(" AND channel_id = ").text(channel.as_str());
        }
        self.push(")")
    }

    async fn fetch<D: Dialect>(&self, tx: &mut D::Connection) -> Result<Vec<D::Row>, StoreError> {
        let mut query = sqlx::query::<D>(&self.sql);
        for param in &self.params {
            query = match param {
                Param::Text(text) => query.param(text.as_str()),
                Param::Int(n) => query.param(*n),
            };
        }
        Ok(query.fetch_all(tx.ex()).await?)
    }

    /// Reads the rows one by one while `keep` answers `true` for the last.
    async fn fetch_while<D: Dialect>(
        &self,
        tx: &mut D::Connection,
        mut keep: impl FnMut(&D::Row) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        let mut query = sqlx::query::<D>(&self.sql);
        for param in &self.params {
            query = match param {
                Param::Text(text) => query.param(text.as_str()),
                Param::Int(n) => query.param(*n),
            };
        }
        let mut rows = query.fetch(tx.ex());
        while let Some(row) = rows.try_next().await? {
            if !keep(&row)? {
                break;
            }
        }
        Ok(())
    }
}

impl<D: Dialect> SqlStore<D> {
    pub(super) async fn search(&self, request: SearchRequest<'_>) -> Result<Result<SearchPage, BadCursor>, StoreError> {
        let reading = Reading {
            reader: Some(request.user),
            most_reactions: self.max_reactions,
        };
        fresh_read!(self, |tx| Self::search_in(tx, &request, reading))
    }

    /// [`Self::search`] in `tx`.
    async fn search_in(
        tx: &mut D::Connection,
        request: &SearchRequest<'_>,
        reading: Reading<'_>,
    ) -> Result<Result<SearchPage, BadCursor>, StoreError> {
        let page = match D::KIND {
            Kind::Postgres => Self::search_postgres(tx, request).await?,
            Kind::Sqlite => Self::search_sqlite(tx, request).await?,
        };
        let Ok(mut page) = page else {
            return Ok(Err(BadCursor));
        };
        Self::attach_previews(tx, &mut page.entries).await?;
        Self::attach_attachments(tx, &mut page.entries).await?;
        Self::attach_reactions(tx, &mut page.entries, reading).await?;
        Ok(Ok(page))
    }

    /// Every term by `LIKE` on the folded text (the GIN index serves the
    /// terms of 3 characters or more), newest `message_id` first.
    async fn search_postgres(
        tx: &mut D::Connection,
        request: &SearchRequest<'_>,
    ) -> Result<Result<SearchPage, BadCursor>, StoreError> {
        let before = match request.before {
            None => None,
            Some(cursor) => match uuid::Uuid::try_parse(cursor) {
                Ok(id) if id_text(id) == cursor => Some(id_text(id)),
                _ => return Ok(Err(BadCursor)),
            },
        };
        // Planned for these terms each time: a generic plan (sqlx prepares
        // each statement once per connection) cannot tell a common term,
        // best read newest first by the primary key, from a rare one, best
        // read from the trigram index.
        sqlx::query::<D>("SET LOCAL plan_cache_mode = force_custom_plan")
            .execute(tx.ex())
            .await?;
        let limit = request.limit as usize;
        let indexed = request.terms.iter().any(|t| is_indexed(t));
        // The newest rows first, read by a backward scan of the primary
        // key that stops when the page is full: a common term fills it
        // within a few rows. The window bounds the scan when the term is
        // rare (or absent) among the newest rows.
        let window = if indexed { PG_RECENT_WINDOW } else { SCAN_WINDOW };
        let mut rows = Self::pg_statement(request, before.as_deref(), Some(window))
            .fetch::<D>(tx)
            .await?;
        let mut next = None;
        if rows.len() <= limit {
            if indexed {
                // Fewer than a page among the newest rows: the trigram
                // index finds the others (few, so sorting them is cheap),
                // whatever the planner estimates of the term.
                for setting in ["enable_seqscan", "enable_indexscan"] {
                    sqlx::query::<D>(&format!("SET LOCAL {setting} = off"))
                        .execute(tx.ex())
                        .await?;
                }
                rows = Self::pg_statement(request, before.as_deref(), None)
                    .fetch::<D>(tx)
                    .await?;
                for setting in ["enable_seqscan", "enable_indexscan"] {
                    sqlx::query::<D>(&format!("SET LOCAL {setting} = on"))
                        .execute(tx.ex())
                        .await?;
                }
            } else {
                // Short terms only: the window was read; the next page
                // starts below its oldest row, if the log goes on.
                let mut st = Statement::new(Kind::Postgres);
                st.push("SELECT message_id::text FROM messages");
                if let Some(before) = &before {
                    st.push(" WHERE message_id < ").text(before.clone()).push("::uuid");
                }
                st.push(" ORDER BY message_id DESC OFFSET ")
                    .bind(Param::Int(window - 1))
                    .push(" LIMIT 2");
                let edge = st.fetch::<D>(tx).await?;
                if edge.len() == 2 {
                    next = Some(edge[0].value::<String>(0)?);
                }
            }
        }
        let mut entries = rows.iter().map(entry_from_row).collect::<Result<Vec<_>, _>>()?;
        if entries.len() > limit {
            entries.truncate(limit);
            next = entries.last().map(|e| id_text(e.message_id));
        }
        Ok(Ok(SearchPage { entries, next }))
    }

    /// The statement of one PostgreSQL page: every term by `LIKE` on the
    /// folded text, the user's channels, below `before`, newest first;
    /// within the newest `window` rows below `before` when given (a
    /// subquery the primary key's backward scan serves).
    fn pg_statement(request: &SearchRequest<'_>, before: Option<&str>, window: Option<i64>) -> Statement {
        let mut st = Statement::new(Kind::Postgres);
        st.push("SELECT ").push(PG_COLUMNS).push(" FROM ");
        match window {
            Some(window) => {
                st.push("(SELECT * FROM messages");
                if let Some(before) = before {
                    st.push(" WHERE message_id < ").text(before).push("::uuid");
                }
                st.push(" ORDER BY message_id DESC LIMIT ")
                    .bind(Param::Int(window))
                    .push(") m");
            }
            None => {
                st.push("messages m");
            }
        }
        st.push(" WHERE m.kind = 'message' AND NOT m.deleted");
        for term in request.terms {
            st.push(" AND lower(COALESCE(m.edited_body, m.body)) LIKE lower(")
                .text(like_pattern(term))
                .push(")");
        }
        st.channels(request);
        if let (None, Some(before)) = (window, before) {
            st.push(" AND m.message_id < ").text(before).push("::uuid");
        }
        st.push(" ORDER BY m.message_id DESC LIMIT ")
            .bind(Param::Int(i64::from(request.limit) + 1));
        st
    }

    /// The terms of 3 characters or more by the FTS5 index (and, for the
    /// rows above the indexer's watermark, by the same rule on their text),
    /// the shorter ones by conditions on the text; newest rowid first.
    async fn search_sqlite(
        tx: &mut D::Connection,
        request: &SearchRequest<'_>,
    ) -> Result<Result<SearchPage, BadCursor>, StoreError> {
        let before = match request.before {
            None => i64::MAX,
            Some(cursor) => match cursor.parse::<i64>() {
                Ok(n) if n >= 1 && n.to_string() == cursor => n,
                _ => return Ok(Err(BadCursor)),
            },
        };
        let columns = PG_COLUMNS.replace("::text", "");
        let (indexed, short): (Vec<&String>, Vec<&String>) = request.terms.iter().partition(|t| is_indexed(t));
        let want = request.limit as usize + 1;
        // (entry, rowid), newest first.
        let mut found: Vec<(Entry, i64)> = Vec::with_capacity(want);
        // The scan's lowest rowid, for a query of short terms only.
        let mut floor = None;
        if indexed.is_empty() {
            let top: i64 = sqlx::query::<D>("SELECT COALESCE(MAX(rowid), 0) FROM messages")
                .fetch_one(tx.ex())
                .await?
                .value(0)?;
            let start = before.min(top.saturating_add(1));
            let low = start.saturating_sub(SCAN_WINDOW).max(1);
            floor = Some(low);
            let mut st = Statement::new(Kind::Sqlite);
            st.push("SELECT ").push(&columns).push(", m.rowid");
            st.push(" FROM messages m WHERE m.kind = 'message' AND NOT m.deleted AND m.rowid < ")
                .bind(Param::Int(start))
                .push(" AND m.rowid >= ")
                .bind(Param::Int(low));
            short_conditions(&mut st, &short);
            st.channels(request);
            st.push(" ORDER BY m.rowid DESC LIMIT ").bind(Param::Int(want as i64));
            for row in &st.fetch::<D>(tx).await? {
                found.push((entry_from_row(row)?, row.value::<i64>(ENTRY_COLUMNS)?));
            }
        } else {
            // The rows the indexer has not reached (`search_indexer.rs`):
            // newer than every indexed row, so first, matched on their text
            // as the index would match them, until the page is full.
            let upto: i64 = sqlx::query::<D>(WATERMARK).fetch_one(tx.ex()).await?.value(0)?;
            if before > upto.saturating_add(1) {
                let mut st = Statement::new(Kind::Sqlite);
                st.push("SELECT ")
                    .push(&columns)
                    .push(", m.rowid, COALESCE(m.edited_body, m.body)")
                    .push(" FROM messages m WHERE m.kind = 'message' AND NOT m.deleted AND m.rowid > ")
                    .bind(Param::Int(upto))
                    .push(" AND m.rowid < ")
                    .bind(Param::Int(before));
                short_conditions(&mut st, &short);
                st.channels(request);
                st.push(" ORDER BY m.rowid DESC");
                st.fetch_while::<D>(tx, |row| {
                    let text: String = row.value(ENTRY_COLUMNS + 1)?;
                    if indexed.iter().all(|term| holds_indexed_term(&text, term)) {
                        found.push((entry_from_row(row)?, row.value::<i64>(ENTRY_COLUMNS)?));
                    }
                    Ok(found.len() < want)
                })
                .await?;
            }
            if found.len() < want {
                // CROSS JOIN: the index drives, in its own (rowid) order.
                let mut st = Statement::new(Kind::Sqlite);
                st.push("SELECT ").push(&columns).push(", m.rowid");
                st.push(
                    " FROM message_search s CROSS JOIN messages m ON m.rowid = s.rowid WHERE message_search MATCH ",
                )
                .text(fts_query(indexed.iter().map(|t| t.as_str())))
                .push(" AND s.rowid < ")
                .bind(Param::Int(before.min(upto.saturating_add(1))));
                short_conditions(&mut st, &short);
                st.channels(request);
                st.push(" ORDER BY s.rowid DESC LIMIT ")
                    .bind(Param::Int((want - found.len()) as i64));
                for row in &st.fetch::<D>(tx).await? {
                    found.push((entry_from_row(row)?, row.value::<i64>(ENTRY_COLUMNS)?));
                }
            }
        }
        let next = if found.len() > request.limit as usize {
            found.truncate(request.limit as usize);
            found.last().map(|(_, rowid)| rowid.to_string())
        } else {
            // A short-terms scan that stopped at its window goes on below it.
            floor.filter(|low| *low > 1).map(|low| low.to_string())
        };
        let entries = found.into_iter().map(|(entry, _)| entry).collect();
        Ok(Ok(SearchPage { entries, next }))
    }
}

/// The conditions of the `short` terms (fewer than 3 characters) on the
/// text of `m`: `LIKE` for a term whose letters fold with ASCII letters
/// only (SQLite's folds ASCII), `instr` of each spelling for another.
fn short_conditions(st: &mut Statement, short: &[&String]) {
    for term in short {
        if like_folds(term) {
            st.push(" AND COALESCE(m.edited_body, m.body) LIKE ")
                .text(like_pattern(term))
                .push(" ESCAPE '\\'");
        } else {
            st.push(" AND (");
            for (i, variant) in short_term_variants(term).into_iter().enumerate() {
                if i > 0 {
                    st.push(" OR ");
                }
                st.push("instr(COALESCE(m.edited_body, m.body), ")
                    .text(variant)
                    .push(") > 0");
            }
            st.push(")");
        }
    }
}
