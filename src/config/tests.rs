//! Unit tests of loading and validating the settings.

use std::path::{Path, PathBuf};
use std::time::Duration;

use figment::providers::{Format, Serialized, Toml};
use figment::Figment;

use super::*;
use crate::database_url::database_url_problem;

#[test]
fn the_shipped_config_file_holds_exactly_the_defaults() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_CONFIG_FILE);
    let from_file: Config = Figment::from(Serialized::defaults(Config::default()))
        .merge(Toml::file_exact(&path))
        .extract()
        .unwrap();
    assert_eq!(
        serde_json::to_value(&from_file).unwrap(),
        serde_json::to_value(Config::default()).unwrap()
    );
    assert!(
        from_file.jwt_secret.is_none() && from_file.admin_token.is_none(),
        "no secret is shipped"
    );
    // Every key is written out (commented keys count for the unset ones).
    let text = std::fs::read_to_string(&path).unwrap();
    for key in serde_json::to_value(Config::default())
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
    {
        assert!(text.contains(&format!("{key} =")), "config/chatd.toml lacks {key}");
    }
}

#[test]
fn debug_output_hides_secrets() {
    let config = Config {
        jwt_secret: Some("j".repeat(40)),
        admin_token: Some("a".repeat(40)),
        database_url: Some("postgres://chatd:db-password@db1:5432,db2:5432/chatd".into()),
        database_replica_url: Some("postgres://chatd@db2/chatd?password=replica-password".into()),
        nats_url: Some("nats://n:nats-password@n1:4222,nats://n:nats-password@n2:4222".into()),
        webhook_url: Some("https://hook:hook-password@example.com/in".into()),
        ..Config::default()
    };
    let shown = format!("{config:?}");
    assert!(shown.contains("max_body_bytes"));
    assert!(!shown.contains(&"j".repeat(40)) && !shown.contains(&"a".repeat(40)));
    for password in ["db-password", "replica-password", "nats-password", "hook-password"] {
        assert!(!shown.contains(password), "{password} shown in {shown}");
    }
    assert!(
        shown.contains("postgres://chatd:***@db1:5432,db2:5432/chatd"),
        "{shown}"
    );
}

#[test]
fn a_webhook_url_needs_http_and_a_secret() {
    let with = |url: &str, secret: Option<&str>| Config {
        webhook_url: Some(url.into()),
        webhook_secret: secret.map(Into::into),
        ..Config::default()
    };
    assert!(with("http://127.0.0.1:9000/hook", Some("s")).validate().is_ok());
    assert!(with("https://example.com/hook", Some("s")).validate().is_ok());
    assert!(with("https://example.com/hook", None).validate().is_err());
    assert!(with("ftp://example.com/hook", Some("s")).validate().is_err());
    assert!(with("http://exa mple.com", Some("s")).validate().is_err());
    let batch = |n| Config {
        webhook_batch_max: n,
        ..Config::default()
    };
    assert!(batch(0).validate().is_err());
    assert!(batch(1000).validate().is_ok());
    assert!(batch(1001).validate().is_err());
    let shown = format!("{:?}", with("http://h/x", Some("very-secret-webhook-key")));
    assert!(!shown.contains("very-secret-webhook-key"));
}

#[test]
fn database_urls_are_files_or_postgres() {
    for good in [
        "postgres://u@h/db",
        "postgresql://h/db?sslmode=require",
        "sqlite://data/chatd.db",
        "sqlite:///var/lib/chatd/chatd.db",
        "sqlite://./data/chatd.db",
    ] {
        assert_eq!(database_url_problem(good), None, "{good}");
    }
    for bad in [
        "sqlite://",
        "sqlite:",
        "sqlite::memory:",
        "sqlite://:memory:",
        "sqlite://x.db?mode=memory",
        "sqlite://x.db?mode=%6Demory",
        "sqlite://x.db?m%6Fde=memory",
        "sqlite://file::memory:",
        "sqlite://file:x3.db%3Fmode=memory",
        "sqlite://%3Amemory%3A",
        "sqlite://x.db?vfs=memdb",
        "sqlite://x.db?mode=rwc",
        "sqlite://x.db#frag",
        "sqlite://sqlite::memory:",
        "sqlite:sqlite::memory:",
        "sqlite:sqlite:file::memory:",
        "sqlite://sqlite://file:x.db?mode=memory",
        "mysql://h/db",
    ] {
        assert!(database_url_problem(bad).is_some(), "{bad}");
        let config = Config {
            database_url: Some(bad.into()),
            ..Config::default()
        };
        assert!(matches!(config.validate(), Err(ConfigError::Invalid(_))), "{bad}");
    }
}

/// The default database URL, from `data_dir`, reads back as that file,
/// whatever characters the directory's name holds.
#[test]
fn the_default_sqlite_url_names_the_data_dir_file() {
    use std::str::FromStr;
    for dir in [
        "/tmp/x-50%41",
        "/tmp/q?x",
        "/tmp/h#1",
        "rel dir",
        "file:x",
        ":memory:",
        "./a",
        "/tmp/ü ö",
    ] {
        let config = Config {
            data_dir: PathBuf::from(dir),
            ..Config::default()
        };
        let url = config.database_url();
        let options = sqlx::sqlite::SqliteConnectOptions::from_str(&url).expect("parses");
        let expected = PathBuf::from(dir).join("chatd.db");
        let got = options.get_filename();
        assert!(
            got == expected || got == Path::new(".").join(&expected),
            "{dir}: {url} opens {got:?}"
        );
    }
}

/// Each of these, if it passed validation, would panic the writers or
/// sessions, abort on allocation, get the server killed for memory, or
/// fail in the database driver after start: refused at load instead.
#[test]
fn values_that_would_panic_or_abort_later_are_refused_up_front() {
    type Case = (&'static str, fn(&mut Config));
    let cases: [Case; 5] = [
        ("max_batch", |c| c.max_batch = usize::MAX),
        ("max_batch", |c| c.max_batch = 100_000_000_000),
        ("writer_shards", |c| c.writer_shards = 100_000_000),
        ("ping_interval_secs", |c| c.ping_interval_secs = u64::MAX),
        ("db_timeout_ms", |c| c.db_timeout_ms = 2_147_483_648),
    ];
    for (key, set) in cases {
        let mut config = Config::default();
        set(&mut config);
        match config.validate() {
            Err(ConfigError::Invalid(message)) => assert!(message.starts_with(key), "{key}: {message}"),
            other => panic!("{key}: {other:?}"),
        }
    }
    // Each bound itself is allowed.
    let mut config = Config::default();
    for (key, _, most) in config.upper_bounds() {
        let most = usize::try_from(most).unwrap();
        match key {
            "max_frame_bytes" => config.max_frame_bytes = most,
            "max_body_bytes" => config.max_body_bytes = most,
            "ws_read_buffer_bytes" => config.ws_read_buffer_bytes = most,
            "ws_write_buffer_bytes" => config.ws_write_buffer_bytes = most,
            "outbound_queue" => config.outbound_queue = most,
            "max_page_bytes" => config.max_page_bytes = most,
            "max_sends_in_flight" => config.max_sends_in_flight = most,
            "max_connections" => config.max_connections = most,
            "max_connections_per_user" => config.max_connections_per_user = most,
            "writer_shards" => config.writer_shards = most,
            "max_batch" => config.max_batch = most,
            "db_max_connections" => config.db_max_connections = u32::try_from(most).unwrap(),
            "db_timeout_ms" => config.db_timeout_ms = most as u64,
            "handshake_timeout_ms" => config.handshake_timeout_ms = most as u64,
            "ping_interval_secs" => config.ping_interval_secs = most as u64,
            "shutdown_grace" => config.shutdown_grace = most as u64,
            other => panic!("no case for {other}"),
        }
    }
    config.outbound_queue_bytes = config.least_outbound_queue_bytes();
    assert!(config.validate().is_ok(), "{:?}", config.validate());
}

/// The queue's floor counts the largest message as well as the largest
/// page: with `max_page_bytes = 2048` and `outbound_queue_bytes = 4096`
/// ("twice max_page_bytes"), every 16 KB message would close its
/// recipients with 1013, again after every reconnect.
#[test]
fn the_outbound_queue_takes_the_largest_frame_twice() {
    let defaults = Config::default();
    assert_eq!(defaults.least_outbound_queue_bytes(), 2 * 1024 * 1024);
    let config = Config {
        max_page_bytes: 2048,
        outbound_queue_bytes: 4096,
        ..Config::default()
    };
    assert!(matches!(config.validate(), Err(ConfigError::Invalid(m)) if m.starts_with("outbound_queue_bytes")));
    let config = Config {
        max_body_bytes: 1024 * 1024,
        outbound_queue_bytes: 4 * 1024 * 1024,
        ..Config::default()
    };
    assert_eq!(config.least_outbound_queue_bytes(), 2 * (6 * 1024 * 1024 + 1024));
    assert!(config.validate().is_err());
}

/// `CHATD_CORS_ALLOWED_ORIGINS` arrives as one text (a text key): it is
/// split on commas; a TOML list is taken as it is; origins are checked.
#[test]
fn allowed_origins_are_a_list_or_comma_separated_text() {
    let load = |value: serde_json::Value| -> Config {
        Figment::from(Serialized::defaults(Config::default()))
            .merge(Serialized::defaults(
                serde_json::json!({ "cors_allowed_origins": value }),
            ))
            .extract()
            .unwrap()
    };
    let both = vec!["https://app.example.com".to_owned(), "http://localhost:3000".to_owned()];
    assert_eq!(
        load(serde_json::json!("https://app.example.com, http://localhost:3000")).cors_allowed_origins,
        both
    );
    assert_eq!(
        load(serde_json::json!(["https://app.example.com", "http://localhost:3000"])).cors_allowed_origins,
        both
    );
    assert!(load(serde_json::json!("")).cors_allowed_origins.is_empty());
    for bad in [
        "app.example.com",
        "https://app.example.com/",
        "ftp://x",
        "https://a b",
        "*",
    ] {
        let config = Config {
            cors_allowed_origins: vec![bad.into()],
            ..Config::default()
        };
        assert!(config.validate().is_err(), "{bad}");
    }
    assert!(load(serde_json::json!(both)).validate().is_ok());
}

#[test]
fn public_keys_need_distinct_kids() {
    let key = |kid: &str| PublicKeyFile {
        kid: kid.into(),
        alg: PublicKeyAlg::ES256,
        path: PathBuf::from("k.pem"),
    };
    let with = |keys: Vec<PublicKeyFile>| Config {
        jwt_public_keys: keys,
        ..Config::default()
    };
    assert!(with(vec![key("a"), key("b")]).validate().is_ok());
    assert!(with(vec![key("a"), key("a")]).validate().is_err());
    assert!(with(vec![key("")]).validate().is_err());
    // The inline form of CHATD_JWT_PUBLIC_KEYS, parsed as figment parses
    // an environment value.
    let value: figment::value::Value = r#"[{kid="idp-1",alg="RS256",path="/etc/chatd/idp-1.pem"}]"#.parse().unwrap();
    let from_env: Config = Figment::from(Serialized::defaults(Config::default()))
        .merge(Serialized::default("jwt_public_keys", value))
        .extract()
        .unwrap();
    assert_eq!(
        from_env.jwt_public_keys,
        [PublicKeyFile {
            kid: "idp-1".into(),
            alg: PublicKeyAlg::RS256,
            path: PathBuf::from("/etc/chatd/idp-1.pem"),
        }]
    );
}

#[test]
fn nats_settings_are_checked() {
    let with = |f: fn(&mut Config)| {
        let mut config = Config::default();
        f(&mut config);
        config.validate()
    };
    assert!(with(|_| {}).is_ok(), "NATS unset by default");
    assert!(with(|c| {
        c.nats_url = Some("nats://127.0.0.1:4222,nats://b:4222".into());
        c.database_url = Some("postgres://chatd@db/chatd".into());
    })
    .is_ok());
    // Several nodes need one shared database: SQLite is refused.
    assert!(with(|c| c.nats_url = Some("nats://127.0.0.1:4222".into())).is_err());
    assert!(with(|c| c.nats_url = Some(",".into())).is_err());
    assert!(with(|c| c.nats_subject_prefix = "prod.chatd".into()).is_ok());
    for bad in ["", "a.", "a.*", "a b", "x.>"] {
        let mut config = Config {
            nats_subject_prefix: bad.into(),
            ..Config::default()
        };
        assert!(config.validate().is_err(), "{bad:?}");
        config.nats_subject_prefix = "chatd".into();
        assert!(config.validate().is_ok());
    }
    assert!(with(|c| c.cluster_gap_wait_ms = 0).is_err());
    assert!(with(|c| c.cluster_gap_wait_ms = 60_001).is_err());
    assert!(with(|c| c.cluster_gap_wait_ms = 1).is_ok());
}

#[test]
fn typing_and_presence_settings_are_checked() {
    let with = |f: fn(&mut Config)| {
        let mut config = Config::default();
        f(&mut config);
        config.validate()
    };
    let defaults = Config::default();
    assert_eq!(
        (
            defaults.typing_ttl_ms,
            defaults.typing_throttle_ms,
            defaults.typing_max_members,
            defaults.max_presence_subscriptions,
            defaults.presence_grace_ms,
            defaults.presence_ttl_ms
        ),
        (6000, 2000, 1000, 500, 5000, 30_000)
    );
    assert!(with(|c| c.typing_ttl_ms = 0).is_err());
    assert!(with(|c| c.typing_throttle_ms = 0).is_ok(), "no throttle");
    assert!(with(|c| c.presence_grace_ms = 86_400_001).is_err());
    assert!(with(|c| c.presence_ttl_ms = 299).is_err());
    assert!(with(|c| c.presence_ttl_ms = 300).is_ok());
    assert!(with(|c| c.max_presence_subscriptions = 100_001).is_err());
    let settings = crate::delivery::ephemeral::Settings::from_config(&defaults);
    assert_eq!(settings.presence_ttl, Duration::from_secs(30));
    assert_eq!(settings.heartbeat_every(), Duration::from_secs(10));
    assert!(settings.remote_lifetime() + settings.tick() <= settings.presence_ttl);
}

/// Retention (§19): `retention_secs` 0 (forever, the default) to 100
/// years, `retention_sweep_secs` 1 to 86400 (default 3600); a negative or
/// non-numeric value is refused when loading, as any number setting.
#[test]
fn retention_settings_are_checked() {
    let with = |f: fn(&mut Config)| {
        let mut config = Config::default();
        f(&mut config);
        config.validate()
    };
    let defaults = Config::default();
    assert_eq!((defaults.retention_secs, defaults.retention_sweep_secs), (0, 3600));
    assert!(with(|c| c.retention_secs = 86_400).is_ok());
    assert!(with(|c| c.retention_secs = super::MAX_RETENTION_SECS).is_ok());
    assert!(with(|c| c.retention_secs = super::MAX_RETENTION_SECS + 1).is_err());
    assert!(with(|c| c.retention_sweep_secs = 0).is_err());
    assert!(with(|c| c.retention_sweep_secs = 1).is_ok());
    assert!(with(|c| c.retention_sweep_secs = 86_401).is_err());
    for bad in [serde_json::json!(-1), serde_json::json!("soon")] {
        let loaded: Result<Config, _> = Figment::from(Serialized::defaults(Config::default()))
            .merge(Serialized::defaults(serde_json::json!({ "retention_secs": bad })))
            .extract();
        assert!(loaded.is_err(), "{bad}");
    }
}

/// `max_reactions_per_message` (§8): 1 … 10000, default 50.
#[test]
fn the_reaction_bound_is_checked() {
    let with = |f: fn(&mut Config)| {
        let mut config = Config::default();
        f(&mut config);
        config.validate()
    };
    assert_eq!(Config::default().max_reactions_per_message, 50);
    assert!(with(|c| c.max_reactions_per_message = 0).is_err());
    assert!(with(|c| c.max_reactions_per_message = 1).is_ok());
    assert!(with(|c| c.max_reactions_per_message = 10_000).is_ok());
    assert!(with(|c| c.max_reactions_per_message = 10_001).is_err());
}

/// `max_uploads_in_flight_per_user` (1 … 10000, default 4) and
/// `upload_timeout_secs` (1 … 86400, default 900).
#[test]
fn the_upload_bounds_are_checked() {
    let with = |f: fn(&mut Config)| {
        let mut config = Config::default();
        f(&mut config);
        config.validate()
    };
    let defaults = Config::default();
    assert_eq!(
        (defaults.max_uploads_in_flight_per_user, defaults.upload_timeout_secs),
        (4, 900)
    );
    assert!(with(|c| c.max_uploads_in_flight_per_user = 0).is_err());
    assert!(with(|c| c.max_uploads_in_flight_per_user = 1).is_ok());
    assert!(with(|c| c.max_uploads_in_flight_per_user = 10_000).is_ok());
    assert!(with(|c| c.max_uploads_in_flight_per_user = 10_001).is_err());
    assert!(with(|c| c.upload_timeout_secs = 0).is_err());
    assert!(with(|c| c.upload_timeout_secs = 1).is_ok());
    assert!(with(|c| c.upload_timeout_secs = 86_400).is_ok());
    assert!(with(|c| c.upload_timeout_secs = 86_401).is_err());
}

/// `listen` and `admin_listen` must look like `host:port`: anything else is
/// a configuration error (exit 2) at load, not a failure to bind (exit 1).
#[test]
fn listen_addresses_are_checked() {
    let with = |listen: &str, admin: Option<&str>| {
        let config = Config {
            listen: listen.to_owned(),
            admin_listen: admin.map(str::to_owned),
            ..Config::default()
        };
        config.validate()
    };
    for good in [
        "127.0.0.1:8080",
        "0.0.0.0:0",
        "[::1]:8080",
        "localhost:8080",
        "chat-1.internal:443",
    ] {
        assert!(with(good, None).is_ok(), "{good}");
        assert!(with("127.0.0.1:8080", Some(good)).is_ok(), "admin {good}");
    }
    for bad in [
        "garbage",
        "",
        ":8080",
        "127.0.0.1",
        "127.0.0.1:http",
        "127.0.0.1:70000",
        "a b:80",
        "[::1:80",
    ] {
        assert!(with(bad, None).is_err(), "{bad}");
        assert!(with("127.0.0.1:8080", Some(bad)).is_err(), "admin {bad}");
    }
}

#[test]
fn a_replica_url_is_one_postgres_host_next_to_a_postgres_database() {
    use crate::database_url::database_replica_url_problem;
    let primary = "postgres://chatd@db1/chatd";
    assert_eq!(
        database_replica_url_problem("postgres://chatd@db2:5432/chatd", primary),
        None
    );
    for bad in [
        "postgres://chatd@db2,db3/chatd",
        "sqlite://replica.db",
        "mysql://db2/chatd",
        "postgres://chatd@db2/chatd?target_session_attrs=read-only",
    ] {
        assert!(database_replica_url_problem(bad, primary).is_some(), "{bad}");
    }
    let on_sqlite = database_replica_url_problem("postgres://chatd@db2/chatd", "sqlite://./data/chatd.db");
    assert!(on_sqlite.is_some_and(|m| m.contains("SQLite")));
}

#[test]
fn the_listen_backlog_is_checked() {
    let with = |backlog: u32| {
        Config {
            listen_backlog: backlog,
            ..Config::default()
        }
        .validate()
    };
    assert_eq!(Config::default().listen_backlog, 4096);
    assert!(with(1).is_ok() && with(65_535).is_ok());
    for bad in [0, 65_536, u32::MAX] {
        let error = with(bad).expect_err("refused").to_string();
        assert!(error.contains("listen_backlog"), "{bad}: {error}");
    }
}
