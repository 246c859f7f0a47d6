//! Passwords taken out of the addresses a [`Config`](super::Config) holds,
//! for its `Debug` print: a URL's `user:password@` keeps its user, and a
//! query's `password=…` (libpq's spelling) keeps its name; the rest of the
//! address stays as it was, so a log still tells which server was meant.

/// Keys of the settings whose values are addresses that may carry a password.
pub(super) const ADDRESS_KEYS: &[&str] = &[
    "database_url",
    "database_replica_url",
    "nats_url",
    "webhook_url",
    "attachments_s3_endpoint",
];

/// What replaces a password.
const HIDDEN: &str = "***";

/// `text` with the password of every URL in it hidden. Takes a comma-separated
/// list of URLs too (`nats_url`), and PostgreSQL's several-host form
/// (`postgres://u:p@h1,h2/db`), whose authority holds commas.
pub(super) fn hide_passwords(text: &str) -> String {
    let starts = url_starts(text);
    let Some(&first) = starts.first() else {
        return text.to_owned();
    };
    let mut out = text[..first].to_owned();
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        out.push_str(&hide_in_one_url(&text[start..end]));
    }
    out
}

/// Where each URL of `text` begins: its scheme's first letter before a `://`.
fn url_starts(text: &str) -> Vec<usize> {
    text.match_indices("://")
        .map(|(at, _)| {
            let scheme_len = text[..at]
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                .count();
            at - scheme_len
        })
        .collect()
}

/// One URL (with what follows it up to the next URL) with its password hidden.
fn hide_in_one_url(url: &str) -> String {
    let Some(at) = url.find("://") else {
        return url.to_owned();
    };
    let (scheme, after) = url.split_at(at + 3);
    // The authority ends at the path, query or fragment.
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (authority, tail) = after.split_at(end);
    format!(
        "{scheme}{}{}",
        hide_userinfo_password(authority),
        hide_query_password(tail)
    )
}

/// `user:secret@host` → `user:***@host` (the last `@` ends the user info, so
/// a password holding `@` is hidden whole).
fn hide_userinfo_password(authority: &str) -> String {
    match authority.rfind('@') {
        Some(at) => {
            let (userinfo, host) = authority.split_at(at);
            match userinfo.find(':') {
                Some(colon) => format!("{}:{HIDDEN}{host}", &userinfo[..colon]),
                None => authority.to_owned(),
            }
        }
        None => authority.to_owned(),
    }
}

/// `?sslmode=require&password=secret` → `?sslmode=require&password=***`.
fn hide_query_password(part: &str) -> String {
    let Some(q) = part.find('?') else {
        return part.to_owned();
    };
    let (path, query) = part.split_at(q + 1);
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if name.eq_ignore_ascii_case("password") => format!("{name}={HIDDEN}"),
            _ => pair.to_owned(),
        })
        .collect();
    format!("{path}{}", pairs.join("&"))
}

#[cfg(test)]
mod tests {
    use super::hide_passwords;

    #[test]
    fn passwords_in_urls_are_hidden_and_the_rest_kept() {
        let cases = [
            (
                "postgres://chatd:s3cret@db:5432/chatd",
                "postgres://chatd:***@db:5432/chatd",
            ),
            (
                "postgres://chatd:s3cret@db1:5432,db2:5432/chatd?target_session_attrs=read-write",
                "postgres://chatd:***@db1:5432,db2:5432/chatd?target_session_attrs=read-write",
            ),
            (
                "postgres://chatd@db/chatd?sslmode=require&password=s3cret",
                "postgres://chatd@db/chatd?sslmode=require&password=***",
            ),
            ("postgres://chatd@db/chatd", "postgres://chatd@db/chatd"),
            ("sqlite://./data/chatd.db", "sqlite://./data/chatd.db"),
            (
                "nats://u:s3cret@n1:4222,nats://v:s3cret@n2:4222",
                "nats://u:***@n1:4222,nats://v:***@n2:4222",
            ),
            (
                "https://hooks:s3cret@example.com/hook?x=1",
                "https://hooks:***@example.com/hook?x=1",
            ),
            ("http://127.0.0.1:9000", "http://127.0.0.1:9000"),
            ("postgres://chatd:p@ss:w@rd@db/chatd", "postgres://chatd:***@db/chatd"),
        ];
        for (given, shown) in cases {
            assert_eq!(hide_passwords(given), shown, "{given}");
            assert!(!hide_passwords(given).contains("s3cret"), "{given}");
        }
    }
}
