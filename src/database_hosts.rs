//! The host list of a PostgreSQL URL in libpq's multi-host form,
//! `postgres://user@h1:5432,h2:5433/db?target_session_attrs=read-write`.
//!
//! sqlx's `PgConnectOptions` takes one host only, so chatd splits such a URL
//! into one single-host URL per host (same user, password, database and
//! parameters) and finds the primary itself ([`crate::store`], `pg_hosts.rs`).
//! A leaf: it imports nothing of the crate, so settings validation
//! ([`crate::database_url`]) can use it.

/// A PostgreSQL URL taken apart by host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgHostList {
    /// One `postgres://` URL per host, in the order written, each naming that
    /// host alone, without `target_session_attrs` (sqlx does not know it).
    pub urls: Vec<String>,
    /// `host:port` of each entry of [`PgHostList::urls`], as written (for logs
    /// and metrics; no user or password).
    pub labels: Vec<String>,
    /// Whether chatd must look for the primary among the hosts: more than one
    /// host, or `target_session_attrs=read-write` / `primary` given. A single
    /// host without it is opened as before, with no check at all.
    pub find_primary: bool,
}

/// Why a PostgreSQL URL's host list cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostListError {
    /// Not `postgres://` or `postgresql://`.
    #[error("not a postgres:// URL")]
    Scheme,
    /// An empty entry in the host list (`h1,,h2`, a trailing comma).
    #[error("database_url: an empty host in the host list")]
    EmptyHost,
    /// A port that is not a number from 1 to 65535.
    #[error("database_url: the port of host {0:?} is not a number from 1 to 65535")]
    BadPort(String),
    /// `target_session_attrs` other than `any`, `read-write` or `primary`:
    /// chatd writes, so it can only use a primary.
    #[error(
        "database_url: target_session_attrs={0:?} is not supported (chatd writes: use read-write, primary or any)"
    )]
    SessionAttrs(String),
}

/// The parameter chatd reads itself and removes before sqlx sees the URL.
const SESSION_ATTRS: &str = "target_session_attrs";

/// Splits `url` by host. A URL without a comma in its host part comes back
/// as itself (minus `target_session_attrs`), one entry.
///
/// # Errors
/// [`HostListError`]: not PostgreSQL, an empty host, a bad port, or a
/// `target_session_attrs` asking for something other than a primary.
pub fn pg_host_list(url: &str) -> Result<PgHostList, HostListError> {
    let (scheme, rest) = url.split_once("://").ok_or(HostListError::Scheme)?;
    if scheme != "postgres" && scheme != "postgresql" {
        return Err(HostListError::Scheme);
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let (userinfo, hosts) = match authority.rfind('@') {
        Some(at) => (Some(&authority[..at]), &authority[at + 1..]),
        None => (None, authority),
    };
    let (path, query) = match tail.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (tail, None),
    };
    let mut explicit_primary = false;
    let mut kept = Vec::new();
    for pair in query.unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if key == SESSION_ATTRS {
            match value {
                "any" => {}
                "read-write" | "primary" => explicit_primary = true,
                other => return Err(HostListError::SessionAttrs(other.to_owned())),
            }
        } else {
            kept.push(pair);
        }
    }
    let query = if kept.is_empty() {
        String::new()
    } else {
        format!("?{}", kept.join("&"))
    };
    let entries: Vec<&str> = hosts.split(',').collect();
    if entries.len() > 1 && entries.iter().any(|h| h.is_empty()) {
        return Err(HostListError::EmptyHost);
    }
    let mut urls = Vec::with_capacity(entries.len());
    let mut labels = Vec::with_capacity(entries.len());
    for host in &entries {
        check_port(host)?;
        let user = userinfo.map(|u| format!("{u}@")).unwrap_or_default();
        urls.push(format!("{scheme}://{user}{host}{path}{query}"));
        labels.push((*host).to_owned());
    }
    Ok(PgHostList {
        urls,
        labels,
        find_primary: entries.len() > 1 || explicit_primary,
    })
}

/// A host entry's port, if any, is a number from 1 to 65535
/// (`name`, `name:port`, `[v6]`, `[v6]:port`).
fn check_port(host: &str) -> Result<(), HostListError> {
    let port = match host.strip_prefix('[') {
        Some(v6) => v6.split_once(']').and_then(|(_, rest)| rest.strip_prefix(':')),
        None => host.rsplit_once(':').map(|(_, port)| port),
    };
    match port {
        None => Ok(()),
        Some(port) if port.parse::<u16>().is_ok_and(|p| p > 0) => Ok(()),
        Some(_) => Err(HostListError::BadPort(host.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_hosts_give_one_url_each_with_the_rest_of_the_url() {
        let list = pg_host_list(
            "postgres://chat:s%40cret@db1:5432,db2:5433/chatd?target_session_attrs=read-write&sslmode=prefer",
        )
        .unwrap();
        assert_eq!(
            list.urls,
            [
                "postgres://chat:s%40cret@db1:5432/chatd?sslmode=prefer",
                "postgres://chat:s%40cret@db2:5433/chatd?sslmode=prefer"
            ]
        );
        assert_eq!(list.labels, ["db1:5432", "db2:5433"]);
        assert!(list.find_primary);
    }

    #[test]
    fn one_host_is_left_as_it_is() {
        let url = "postgresql://postgres@127.0.0.1:5432/postgres";
        let list = pg_host_list(url).unwrap();
        assert_eq!(list.urls, [url]);
        assert!(!list.find_primary);
        // Asking for a primary on one host turns the check on.
        let list = pg_host_list("postgres://db/x?target_session_attrs=primary").unwrap();
        assert_eq!(list.urls, ["postgres://db/x"]);
        assert!(list.find_primary);
        // A socket directory in the query, no host at all.
        let list = pg_host_list("postgres:///chatd?host=/run/postgresql").unwrap();
        assert_eq!(list.urls, ["postgres:///chatd?host=/run/postgresql"]);
    }

    #[test]
    fn several_hosts_without_session_attrs_still_need_a_primary() {
        let list = pg_host_list("postgres://a,[::1]:5433,b:7/db").unwrap();
        assert_eq!(
            list.urls,
            ["postgres://a/db", "postgres://[::1]:5433/db", "postgres://b:7/db"]
        );
        assert!(list.find_primary);
    }

    #[test]
    fn bad_lists_are_refused() {
        assert_eq!(pg_host_list("postgres://a,,b/db"), Err(HostListError::EmptyHost));
        assert_eq!(pg_host_list("postgres://a,b,/db"), Err(HostListError::EmptyHost));
        assert_eq!(
            pg_host_list("postgres://a:5432,b:70000/db"),
            Err(HostListError::BadPort("b:70000".into()))
        );
        assert_eq!(
            pg_host_list("postgres://a,b/db?target_session_attrs=standby"),
            Err(HostListError::SessionAttrs("standby".into()))
        );
        assert_eq!(pg_host_list("mysql://a/db"), Err(HostListError::Scheme));
    }
}
