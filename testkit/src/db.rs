//! Which store a test runs on, and a database of the test's own.

use std::io::Write;
use std::sync::Once;
use std::time::Duration;

/// Which store a test runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The maintenance URL of the test PostgreSQL, from `CHATD_TEST_DATABASE_URL`.
/// Without it, PostgreSQL tests are skipped (said once on stderr), unless
/// `CHATD_REQUIRE_POSTGRES=1`, which makes them fail.
pub fn postgres_url() -> Option<String> {
    static NOTICE: Once = Once::new();
    match std::env::var("CHATD_TEST_DATABASE_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("CHATD_REQUIRE_POSTGRES").as_deref() != Ok("1"),
                "CHATD_REQUIRE_POSTGRES=1 but CHATD_TEST_DATABASE_URL is not set"
            );
            NOTICE.call_once(|| {
                // Straight to the stderr handle: the test harness captures eprintln!.
                let _ = writeln!(
                    std::io::stderr(),
                    "\n*** PostgreSQL tests SKIPPED: set CHATD_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres to run them ***\n"
                );
            });
            None
        }
    }
}

/// A connection to the test PostgreSQL's maintenance database.
pub async fn pg_admin() -> sqlx::PgConnection {
    let url = postgres_url().expect("postgres tests need CHATD_TEST_DATABASE_URL");
    <sqlx::PgConnection as sqlx::Connection>::connect(&url)
        .await
        .expect("cannot reach the test PostgreSQL (CHATD_TEST_DATABASE_URL)")
}

/// A pool on a test database, of the store's kind.
pub enum AnyPool {
    Postgres(sqlx::PgPool),
    Sqlite(sqlx::SqlitePool),
}

/// A database of the test's own, removed when dropped.
pub struct TestDb {
    pub url: String,
    pg: Option<(String, String)>,
    pub dir: tempfile::TempDir,
}

/// The migrations of the version 1 schema (before the channel log), in the
/// order the server applies them.
pub const V1_MIGRATIONS: [&str; 2] = ["0001_init.sql", "0002_member_joined_seq.sql"];

/// Whether test databases start on the version 1 schema, from
/// `CHATD_TEST_SCHEMA`: unset or `current`, an empty database the server
/// migrates from nothing; `v1`, the [`V1_MIGRATIONS`] already applied, so
/// that the server's start is an in-place upgrade. CI runs the version 1
/// conformance tests a second time with `v1` (issue 16, point 6: old clients
/// keep working on an upgraded database). Any other value panics.
fn start_on_v1_schema() -> bool {
    match std::env::var("CHATD_TEST_SCHEMA").as_deref() {
        Err(_) | Ok("") | Ok("current") => false,
        Ok("v1") => true,
        Ok(other) => panic!("CHATD_TEST_SCHEMA={other}: expected `v1` or `current`"),
    }
}

impl TestDb {
    /// An empty database of the test's own on `backend`; with
    /// `CHATD_TEST_SCHEMA=v1`, one on the version 1 schema.
    pub async fn new(backend: Backend) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = match backend {
            Backend::Sqlite => Self {
                url: format!("sqlite://{}", dir.path().join("chatd.db").display()),
                pg: None,
                dir,
            },
            Backend::Postgres => Self::postgres_with("").await,
        };
        if start_on_v1_schema() {
            db.apply_v1_schema(backend).await;
        }
        db
    }

    /// Applies only the [`V1_MIGRATIONS`] of `backend`, with the migrator the
    /// server uses (so that the server sees them as applied and runs the
    /// later ones at start). Returns a pool on the database for seeding rows.
    pub async fn apply_v1_schema(&self, backend: Backend) -> AnyPool {
        self.apply_migrations(backend, &V1_MIGRATIONS).await
    }

    /// Applies the migrations of `backend` numbered below `version` (the
    /// schema a release before `version` left), with the migrator the
    /// server uses; returns the pool for rows of that schema.
    pub async fn apply_schema_before(&self, backend: Backend, version: u32) -> AnyPool {
        let source = migrations_dir(backend);
        let mut files: Vec<String> = std::fs::read_dir(&source)
            .expect("migrations")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|name| {
                name.split('_')
                    .next()
                    .and_then(|n| n.parse::<u32>().ok())
                    .is_some_and(|n| n < version)
            })
            .collect();
        files.sort();
        let names: Vec<&str> = files.iter().map(String::as_str).collect();
        self.apply_migrations(backend, &names).await
    }

    /// Applies the named migration files of `backend` only.
    async fn apply_migrations(&self, backend: Backend, files: &[&str]) -> AnyPool {
        let dir = tempfile::tempdir().expect("tempdir");
        let source = migrations_dir(backend);
        for file in files {
            std::fs::copy(source.join(file), dir.path().join(file)).expect("copy migration");
        }
        let migrator = sqlx::migrate::Migrator::new(dir.path()).await.expect("migrator");
        assert_eq!(migrator.iter().count(), files.len());
        match backend {
            Backend::Postgres => {
                let pool = sqlx::PgPool::connect(&self.url).await.expect("pg");
                migrator.run(&pool).await.expect("v1 migrations");
                AnyPool::Postgres(pool)
            }
            Backend::Sqlite => {
                let options = <sqlx::sqlite::SqliteConnectOptions as std::str::FromStr>::from_str(&self.url)
                    .expect("url")
                    .create_if_missing(true);
                let pool = sqlx::SqlitePool::connect_with(options).await.expect("sqlite");
                migrator.run(&pool).await.expect("v1 migrations");
                AnyPool::Sqlite(pool)
            }
        }
    }

    /// A PostgreSQL database of the test's own, created with `options`
    /// appended to `CREATE DATABASE` (e.g. another collation).
    pub async fn postgres_with(options: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let admin_url = postgres_url().expect("postgres tests need CHATD_TEST_DATABASE_URL");
        let name = format!("chatd_test_{}", uuid::Uuid::now_v7().simple());
        let mut conn = pg_admin().await;
        sqlx::query(&format!("CREATE DATABASE \"{name}\" {options}"))
            .execute(&mut conn)
            .await
            .expect("create test database");
        let (base, _) = admin_url.rsplit_once('/').expect("database URL has a path");
        Self {
            url: format!("{base}/{name}"),
            pg: Some((admin_url, name)),
            dir,
        }
    }

    /// A database the test manages itself (e.g. its own PostgreSQL server),
    /// with a fresh data directory; nothing is dropped afterwards.
    pub fn external(url: String) -> Self {
        Self {
            url,
            pg: None,
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// Opens the database with the server's store code (no migrations run).
    pub async fn store(&self) -> chatd::store::Store {
        chatd::store::Store::connect(&chatd::store::StoreOptions {
            url: self.url.clone(),
            max_connections: 4,
            timeout: Duration::from_secs(5),
        })
        .await
        .expect("connect to the test database")
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let Some((admin_url, name)) = self.pg.take() else {
            return;
        };
        // Drop may run inside a runtime: use a thread with its own.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async {
                if let Ok(mut conn) = <sqlx::PgConnection as sqlx::Connection>::connect(&admin_url).await {
                    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                        .execute(&mut conn)
                        .await;
                }
            });
        })
        .join();
    }
}

/// The migrations directory of `backend` in the repository.
fn migrations_dir(backend: Backend) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../migrations")
        .join(match backend {
            Backend::Postgres => "postgres",
            Backend::Sqlite => "sqlite",
        })
}
