//! What an upload cut off by a crash leaves (tools/breaker8/FINDINGS.md,
//! finding 1): a `kill -9` in the middle of a body leaves no object, but
//! bytes still. On the file store, `object_store`'s staging file
//! `files/<id>#<n>` (never listed); on S3, an incomplete multipart upload
//! (never listed as an object). `chatd::attachments::strays::sweep_strays`
//! removes the staging files of chatd's keys once older than the grace and
//! aborts the S3 uploads journaled in `attachment_multiparts` begun before
//! it; an upload in progress stays. On both stores, S3 against the real
//! server (`CHATD_TEST_S3_ENDPOINT`).
//!
//! The crash is modelled twice: an upload's writer leaked with
//! `std::mem::forget` after its first part (no destructor runs, as none
//! does in a killed process, so the staging file or the multipart upload and
//! its journal row stay as a crash leaves them; beside it an upload in
//! progress), and for real in `killed_process`: `chatd serve` as a child
//! process killed with SIGKILL 6 MiB into an 8 MiB body (SQLite), the sweep
//! then run on its data directory and bucket.

use std::time::{Duration, SystemTime};

use chatd::attachments::strays::{sweep_strays, STRAY_GRACE};
use chatd_testkit::on_both_stores;
use chatd_testkit::{eventually, spawn_app, Backend, TestApp};

use crate::attachments::{count, id_of, upload};
use crate::attachments_storage::{s3_app, s3_endpoint};

on_both_stores!(
    a_staging_file_a_crash_left_goes_after_the_grace_and_one_being_written_stays,
    an_s3_upload_a_crash_cut_off_is_aborted_by_the_sweep,
);

/// Bytes written before the "crash": more than one part (5 MiB).
const WRITTEN: usize = 6 * 1024 * 1024;
/// The grace the file store's sweeps are called with here, and the age of
/// what a crash left "long ago". Both well under [`STRAY_GRACE`], so the
/// server's own sweep (a minute after start, with the real grace) never
/// takes what this test counts.
const GRACE: Duration = Duration::from_secs(3600);
const OLD: Duration = Duration::from_secs(2 * 3600);

/// Sets the last-written time of `path` to `age` ago.
fn age_file(path: &std::path::Path, age: Duration) {
    let file = std::fs::OpenOptions::new().write(true).open(path).expect("open");
    file.set_modified(SystemTime::now() - age).expect("set mtime");
}

async fn a_staging_file_a_crash_left_goes_after_the_grace_and_one_being_written_stays(backend: Backend) {
    let app = spawn_app(backend).await;
    let (storage, store) = (&app.state.attachments.storage, &app.state.store);
    let root = storage.root_dir().expect("the file store").to_owned();

    // An upload cut off after its first part, as `kill -9` leaves it.
    let crashed = uuid::Uuid::now_v7();
    let mut writer = storage
        .writer(&format!("files/{crashed}"), store)
        .await
        .expect("writer");
    writer.write(&vec![7u8; WRITTEN]).await.expect("write");
    std::mem::forget(writer);
    let crashed_staging = root.join(format!("files/{crashed}#1"));
    eventually("the first part is in the staging file", || async {
        std::fs::metadata(&crashed_staging).is_ok_and(|m| m.len() >= 5 * 1024 * 1024)
    })
    .await;
    // An upload in progress: its staging file must survive every sweep.
    let live = uuid::Uuid::now_v7();
    let mut live_writer = storage.writer(&format!("files/{live}"), store).await.expect("writer");
    live_writer.write(&vec![8u8; WRITTEN]).await.expect("write");
    let live_staging = root.join(format!("files/{live}#1"));
    assert!(live_staging.exists(), "object_store stages {live_staging:?}");

    // A thumbnail's staging file a crash left, and names of other shapes
    // (another application's files): all old.
    let thumbnail_staging = root.join(format!("thumbnails/{}#2", uuid::Uuid::now_v7()));
    std::fs::create_dir_all(root.join("thumbnails")).expect("dir");
    std::fs::create_dir_all(root.join("notes")).expect("dir");
    let foreign = [
        root.join("files/not-an-id#1"),
        root.join(format!("files/{}#x", uuid::Uuid::now_v7())),
        root.join(format!("files/{}#", uuid::Uuid::now_v7())),
        root.join(format!("notes/{}#1", uuid::Uuid::now_v7())),
    ];
    for path in foreign.iter().chain([&thumbnail_staging]) {
        std::fs::write(path, b"left behind").expect("write");
        age_file(path, OLD);
    }

    // Young: the crashed upload's staging file stays; the old thumbnail's goes.
    let now = chatd::attachments::now_ms();
    assert_eq!(sweep_strays(storage, store, GRACE, now).await.expect("sweep"), 1);
    assert!(!thumbnail_staging.exists(), "{thumbnail_staging:?}");
    assert!(crashed_staging.exists() && live_staging.exists());

    // The crash was long ago: its staging file goes, the live one stays.
    age_file(&crashed_staging, OLD);
    assert_eq!(sweep_strays(storage, store, GRACE, now).await.expect("sweep"), 1);
    assert!(!crashed_staging.exists(), "{crashed_staging:?} must go");
    assert!(live_staging.exists(), "an upload in progress stays");
    for path in &foreign {
        assert!(path.exists(), "{path:?} is not chatd's: it stays");
    }
    // Another node sweeping after it finds nothing.
    assert_eq!(sweep_strays(storage, store, GRACE, now).await.expect("sweep"), 0);

    // The live upload completes whole.
    live_writer.write(b"end").await.expect("write");
    live_writer.finish().await.expect("finish");
    let stored = storage.read_all(&format!("files/{live}")).await.expect("read");
    assert_eq!(stored.len(), WRITTEN + 3);
    assert!(!live_staging.exists());
}

/// The body of GET `url` (S3's XML answers), and its status.
async fn get_text(url: &str) -> (u16, String) {
    let res = reqwest::get(url).await.expect("s3");
    let status = res.status().as_u16();
    (status, res.text().await.expect("body"))
}

/// The ids of the bucket's incomplete multipart uploads (`ListMultipartUploads`).
async fn uploads_in_progress(bucket: &str) -> String {
    let (status, body) = get_text(&format!("{bucket}?uploads")).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// The journaled upload ids, oldest first.
async fn journaled(app: &TestApp) -> Vec<String> {
    let rows = app
        .state
        .store
        .multiparts_started_before(i64::MAX, 100)
        .await
        .expect("journal");
    rows.into_iter().map(|r| r.upload_id).collect()
}

async fn an_s3_upload_a_crash_cut_off_is_aborted_by_the_sweep(backend: Backend) {
    let Some(endpoint) = s3_endpoint() else {
        eprintln!("CHATD_TEST_S3_ENDPOINT unset: the S3 test is skipped");
        return;
    };
    let (app, bucket) = s3_app(backend, &endpoint).await;
    let (storage, store) = (&app.state.attachments.storage, &app.state.store);

    // A finished upload leaves no journal row and no upload in progress.
    app.create_channel("room", &["alice"]).await;
    let (status, up) = upload(&app, "alice", "room", Some("text/plain"), vec![b'x'; WRITTEN], None).await;
    assert_eq!(status, 201, "{up}");
    assert!(storage.exists(&format!("files/{}", id_of(&up))).await.expect("s3"));
    assert_eq!(
        count(&app, backend, "SELECT count(*) FROM attachment_multiparts").await,
        0
    );
    assert!(!uploads_in_progress(&bucket).await.contains("<UploadId>"));

    // An upload cut off after its first part, as `kill -9` leaves it.
    let key = format!("files/{}", uuid::Uuid::now_v7());
    let mut writer = storage.writer(&key, store).await.expect("writer");
    writer.write(&vec![7u8; WRITTEN]).await.expect("write");
    std::mem::forget(writer);
    let ids = journaled(&app).await;
    assert_eq!(ids.len(), 1, "journaled before the first part: {ids:?}");
    let id = ids[0].clone();
    eventually("the first part is in S3", || async {
        get_text(&format!("{bucket}/{key}?uploadId={id}"))
            .await
            .1
            .contains("<PartNumber>1</PartNumber>")
    })
    .await;
    assert!(uploads_in_progress(&bucket).await.contains(&id));

    // An upload whose writer went without finishing (its client gone) is
    // aborted at once, its row deleted.
    let gone_key = format!("files/{}", uuid::Uuid::now_v7());
    let mut gone = storage.writer(&gone_key, store).await.expect("writer");
    gone.write(b"some").await.expect("write");
    drop(gone);
    eventually("the abandoned upload is aborted", || async {
        journaled(&app).await == [id.clone()]
    })
    .await;

    // Young: stays.
    let now = chatd::attachments::now_ms();
    assert_eq!(sweep_strays(storage, store, STRAY_GRACE, now).await.expect("sweep"), 0);
    assert!(uploads_in_progress(&bucket).await.contains(&id));

    // Past the grace: aborted, its parts gone, its row deleted.
    let later = now + 1_000;
    assert_eq!(
        sweep_strays(storage, store, Duration::ZERO, later)
            .await
            .expect("sweep"),
        1
    );
    let listed = uploads_in_progress(&bucket).await;
    assert!(
        !listed.contains("<UploadId>"),
        "no upload in progress is left: {listed}"
    );
    assert_eq!(get_text(&format!("{bucket}/{key}?uploadId={id}")).await.0, 404);
    assert!(journaled(&app).await.is_empty());
    assert!(!storage.exists(&key).await.expect("s3"));
    // Another node sweeping after it finds nothing; its abort of the same
    // upload (two nodes at once) is not an error.
    assert_eq!(
        sweep_strays(storage, store, Duration::ZERO, later)
            .await
            .expect("sweep"),
        0
    );
    storage
        .abort_multipart(&key, &id)
        .await
        .expect("an upload aborted already is no error");
}

/// The real thing: `chatd serve` as a child process killed (SIGKILL) in
/// the middle of an upload's body, then the sweep run on its data.
mod killed_process {
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    use chatd::attachments::strays::sweep_strays;
    use chatd::attachments::Storage;
    use chatd::store::{Store, StoreOptions};
    use chatd_testkit::{chatd, eventually, mint_token, ServerProcess};
    use tokio::io::AsyncWriteExt;

    use super::{age_file, get_text, uploads_in_progress, GRACE, OLD, WRITTEN};
    use crate::attachments_storage::s3_endpoint;

    const SECRET: &str = "crash-test-jwt-secret-0123456789abcdef";
    const ADMIN: &str = "crash-test-admin-token-0123456789";

    /// Starts the binary in `dir` with `env` and sends 6 MiB of an 8 MiB
    /// upload into a new channel (the connection returned, to keep open).
    async fn start_and_upload(dir: &Path, env: &[(&str, &str)]) -> (ServerProcess, tokio::net::TcpStream) {
        let mut cmd = chatd!(dir);
        cmd.env("CHATD_JWT_SECRET", SECRET).env("CHATD_ADMIN_TOKEN", ADMIN);
        for (name, value) in env {
            cmd.env(name, value);
        }
        let server = ServerProcess::start(cmd);
        server.admin(ADMIN).create_channel("room", &["alice"]).await;
        let token = mint_token(SECRET, "alice", 600);
        let mut stream = tokio::net::TcpStream::connect(&server.addr).await.expect("connect");
        let head = format!(
            "POST /v1/channels/room/attachments HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\
             Content-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
            server.addr,
            8 * 1024 * 1024
        );
        stream.write_all(head.as_bytes()).await.expect("head");
        stream.write_all(&vec![b'x'; WRITTEN]).await.expect("body");
        (server, stream)
    }

    /// The server's storage and database, opened in the test's process.
    async fn open(data: &Path, s3: Option<(&str, &str)>) -> (Storage, Store) {
        let mut config = chatd::config::Config {
            data_dir: data.to_owned(),
            ..chatd::config::Config::default()
        };
        if let Some((endpoint, bucket)) = s3 {
            config.attachments_store = chatd::config::AttachmentsStore::S3;
            config.attachments_s3_bucket = Some(bucket.to_owned());
            config.attachments_s3_endpoint = Some(endpoint.to_owned());
            config.attachments_s3_region = Some("us-east-1".into());
        }
        let storage = Storage::from_config(&config).expect("storage");
        let store = Store::connect(&StoreOptions {
            url: format!("sqlite://{}", data.join("chatd.db").display()),
            max_connections: 2,
            timeout: Duration::from_secs(5),
        })
        .await
        .expect("store");
        (storage, store)
    }

    /// The staging files under `dir` (names holding `#`).
    fn staging_files(dir: &Path) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.contains('#')))
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_staging_file_left_by_a_killed_server_goes_after_the_grace() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut server, stream) = start_and_upload(dir.path(), &[]).await;
        let files = dir.path().join("data/attachments/files");
        eventually("the first part is in a staging file", || async {
            staging_files(&files)
                .iter()
                .any(|p| std::fs::metadata(p).is_ok_and(|m| m.len() >= 5 * 1024 * 1024))
        })
        .await;
        server.kill();
        drop(stream);
        let left = staging_files(&files);
        assert_eq!(left.len(), 1, "the crash leaves the staging file: {left:?}");
        age_file(&left[0], OLD);

        let (storage, store) = open(&dir.path().join("data"), None).await;
        let now = chatd::attachments::now_ms();
        assert_eq!(sweep_strays(&storage, &store, GRACE, now).await.expect("sweep"), 1);
        assert!(staging_files(&files).is_empty(), "{:?}", staging_files(&files));
        assert_eq!(sweep_strays(&storage, &store, GRACE, now).await.expect("sweep"), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_s3_upload_cut_off_by_a_killed_server_is_aborted_by_the_sweep() {
        let Some(endpoint) = s3_endpoint() else {
            eprintln!("CHATD_TEST_S3_ENDPOINT unset: the S3 test is skipped");
            return;
        };
        for (name, value) in [("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")] {
            if std::env::var_os(name).is_none() {
                std::env::set_var(name, value);
            }
        }
        let bucket = format!("chatd-test-{}", uuid::Uuid::now_v7().simple());
        let bucket_url = format!("{endpoint}/{bucket}");
        let created = reqwest::Client::new().put(&bucket_url).send().await.expect("bucket");
        assert!(created.status().is_success());
        let dir = tempfile::tempdir().expect("tempdir");
        let env = [
            ("CHATD_ATTACHMENTS_STORE", "s3"),
            ("CHATD_ATTACHMENTS_S3_BUCKET", bucket.as_str()),
            ("CHATD_ATTACHMENTS_S3_ENDPOINT", endpoint.as_str()),
            ("CHATD_ATTACHMENTS_S3_REGION", "us-east-1"),
            ("AWS_ACCESS_KEY_ID", "testing"),
            ("AWS_SECRET_ACCESS_KEY", "testing"),
        ];
        let (mut server, stream) = start_and_upload(dir.path(), &env).await;
        let (storage, store) = open(&dir.path().join("data"), Some((&endpoint, &bucket))).await;
        let journaled = || async { store.multiparts_started_before(i64::MAX, 10).await.expect("journal") };
        eventually("the first part is in S3", || async {
            let Some(upload) = journaled().await.pop() else {
                return false;
            };
            get_text(&format!(
                "{bucket_url}/{}?uploadId={}",
                upload.storage_key, upload.upload_id
            ))
            .await
            .1
            .contains("<PartNumber>1</PartNumber>")
        })
        .await;
        server.kill();
        drop(stream);
        let rows = journaled().await;
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert!(uploads_in_progress(&bucket_url).await.contains(&rows[0].upload_id));

        let later = chatd::attachments::now_ms() + 1_000;
        assert_eq!(
            sweep_strays(&storage, &store, Duration::ZERO, later)
                .await
                .expect("sweep"),
            1
        );
        let listed = uploads_in_progress(&bucket_url).await;
        assert!(
            !listed.contains("<UploadId>"),
            "nothing of the upload is left: {listed}"
        );
        assert!(journaled().await.is_empty());
        assert_eq!(
            sweep_strays(&storage, &store, Duration::ZERO, later)
                .await
                .expect("sweep"),
            0
        );
    }
}
