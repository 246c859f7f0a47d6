//! Which database URLs chatd accepts (`database_url`), and the URL of the
//! embedded SQLite file when none is configured. A leaf, used by settings
//! validation ([`crate::config`]); a PostgreSQL host list is read by
//! [`crate::database_hosts`].

use std::path::Path;

/// The `sqlite://` URL of the file at `path`, as sqlx reads it back: `%`,
/// `?` and `#` percent-escaped (sqlx decodes the path, and would take `?` for
/// a query), and a relative path led by `./` so it can never start like a
/// scheme, `file:` or `:memory:`. Unescaped, a `data_dir` such as
/// `/tmp/x-50%41` would put the database in `/tmp/x-50A`.
pub fn sqlite_file_url(path: &Path) -> String {
    let text = path.display().to_string();
    let text = if path.is_absolute() || text.starts_with("./") || text.starts_with("../") {
        text
    } else {
        format!("./{text}")
    };
    let mut url = String::from("sqlite://");
    for c in text.chars() {
        match c {
            '%' => url.push_str("%25"),
            '?' => url.push_str("%3F"),
            '#' => url.push_str("%23"),
            c => url.push(c),
        }
    }
    url
}

/// Why `url` cannot be the database, or `None`. Only PostgreSQL, and SQLite
/// as a plain file path: `sqlite://relative/path` or `sqlite:///absolute/path`,
/// without a query string, percent-escapes or a `file:` URI (chatd sets every
/// SQLite option itself). An SQLite URL without a path would start a server
/// whose sessions all fail, and an in-memory database (`sqlite::memory:`,
/// `?mode=memory`, and spellings of them that sqlx decodes: `%6Demory`,
/// `file::memory:`, `vfs=memdb`, a repeated scheme as in
/// `sqlite://sqlite::memory:`) would acknowledge messages a restart then
/// loses, against "persist before ACK". The path is taken the way sqlx takes
/// it (every leading `sqlite://`, then every `sqlite:`, removed), and only
/// the plain form is accepted, so no spelling can slip through.
pub(crate) fn database_url_problem(url: &str) -> Option<String> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        // One host, or libpq's host list (`h1:5432,h2:5433`).
        return crate::database_hosts::pg_host_list(url).err().map(|e| e.to_string());
    }
    if !url.starts_with("sqlite:") {
        return Some("database_url must be postgres://… or sqlite://path".into());
    }
    // As `SqliteConnectOptions::from_str` does.
    let path = url.trim_start_matches("sqlite://").trim_start_matches("sqlite:");
    let plain =
        !path.is_empty() && !path.contains(['?', '#', '%']) && !path.starts_with("file:") && !path.starts_with(':');
    if plain {
        return None;
    }
    Some(
        "database_url: an SQLite URL is a file path without query or escapes \
         (sqlite://relative/path or sqlite:///absolute/path); in-memory databases \
         would lose acknowledged messages"
            .into(),
    )
}

/// Why `url` cannot be `database_replica_url` next to `database_url`
/// `primary`, or `None`: it must be one PostgreSQL host (a standby of the
/// primary's), and the primary PostgreSQL too (SQLite has no standby).
pub(crate) fn database_replica_url_problem(url: &str, primary: &str) -> Option<String> {
    if !(primary.starts_with("postgres://") || primary.starts_with("postgresql://")) {
        return Some("database_replica_url needs a PostgreSQL database_url (SQLite has no standby)".into());
    }
    match crate::database_hosts::pg_host_list(url) {
        Ok(list) if list.urls.len() == 1 => None,
        Ok(_) => Some("database_replica_url names one PostgreSQL host (a standby)".into()),
        Err(_) => Some("database_replica_url must be postgres://… (one standby host)".into()),
    }
}
