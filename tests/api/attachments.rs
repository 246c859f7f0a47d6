//! Attachments (protocol.md §15), on both stores with the file store:
//! uploads checked (type, size, image decoding and pixel bombs, filename),
//! served to members, the admin and signed URLs only, sent with messages
//! (checked, claimed once, covered by the idempotency key), thumbnails, and
//! removed from the tables and the storage directory with their message,
//! their channel, or unsent after `attachment_orphan_ttl_secs`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use chatd_testkit::on_both_stores;
use chatd_testkit::{eventually, spawn_app, spawn_app_with, Backend, TestApp, WsClient, ADMIN_TOKEN};

on_both_stores!(
    an_upload_is_served_to_members_the_admin_and_signed_urls_only,
    uploads_are_refused_by_type_size_image_and_name_leaving_nothing,
    sends_carry_checked_attachments_claimed_once_and_idempotent,
    images_are_measured_and_get_thumbnails,
    deleting_the_message_or_channel_removes_the_bytes_and_rows,
    unsent_uploads_expire_after_the_orphan_ttl,
    a_message_with_attachments_may_be_edited_to_an_empty_body,
);

/// Uploads `bytes` as `user` into `channel`; (status, body).
pub(crate) async fn upload(
    app: &TestApp,
    user: &str,
    channel: &str,
    content_type: Option<&str>,
    bytes: Vec<u8>,
    filename: Option<&str>,
) -> (u16, Value) {
    let mut url = app.url(&format!("/v1/channels/{channel}/attachments"));
    if let Some(name) = filename {
        url.push_str("?filename=");
        url.push_str(&name.replace('%', "%25").replace('/', "%2F").replace(' ', "%20"));
    }
    let token = if user == "admin" {
        ADMIN_TOKEN.to_owned()
    } else {
        app.token(user)
    };
    let mut request = app.http.post(url).bearer_auth(token).body(bytes);
    if let Some(kind) = content_type {
        request = request.header("content-type", kind);
    }
    let res = request.send().await.expect("http");
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// GET `path` (with `token` when given): status, headers, bytes.
pub(crate) async fn get(
    app: &TestApp,
    path: &str,
    token: Option<&str>,
    range: Option<&str>,
) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let mut request = app.http.get(app.url(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(range) = range {
        request = request.header("range", range);
    }
    let res = request.send().await.expect("http");
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    (status, headers, res.bytes().await.expect("body").to_vec())
}

fn header<'a>(headers: &'a reqwest::header::HeaderMap, name: &str) -> &'a str {
    headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
}

pub(crate) fn id_of(uploaded: &Value) -> String {
    uploaded["attachmentId"].as_str().expect("attachmentId").to_owned()
}

/// A PNG of `width` × `height`, one color.
pub(crate) fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_pixel(width, height, image::Rgb([10, 120, 200]));
    let mut out = std::io::Cursor::new(Vec::new());
    image.write_to(&mut out, image::ImageFormat::Png).expect("png");
    out.into_inner()
}

/// CRC-32 (ISO-HDLC) as PNG chunks carry it.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A decompression bomb: a small PNG whose header says 10,000 × 10,000
/// pixels (its CRC fixed, so the header reads as valid).
fn png_bomb() -> Vec<u8> {
    let mut bytes = png(16, 16);
    // IHDR data starts at 16 (8 signature + 4 length + 4 type).
    bytes[16..20].copy_from_slice(&10_000u32.to_be_bytes());
    bytes[20..24].copy_from_slice(&10_000u32.to_be_bytes());
    let crc = crc32(&bytes[12..29]);
    bytes[29..33].copy_from_slice(&crc.to_be_bytes());
    bytes
}

/// The files under the attachment storage directory (`files/` and
/// `thumbnails/`), relative.
pub(crate) fn stored_files(app: &TestApp) -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path: PathBuf = entry.path();
            if path.is_dir() {
                walk(&path, root, out);
            } else {
                out.push(path.strip_prefix(root).expect("under root").display().to_string());
            }
        }
    }
    let root = app.db.dir.path().join("attachments");
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out.sort();
    out
}

/// `SELECT count(*)` of `sql` on the test's database.
pub(crate) async fn count(app: &TestApp, backend: Backend, sql: &str) -> i64 {
    use sqlx::Connection;
    match backend {
        Backend::Postgres => {
            let mut conn = sqlx::PgConnection::connect(&app.db.url).await.expect("pg");
            sqlx::query_scalar::<_, i64>(sql)
                .fetch_one(&mut conn)
                .await
                .expect("count")
        }
        Backend::Sqlite => {
            let mut conn = sqlx::SqliteConnection::connect(&app.db.url).await.expect("sqlite");
            sqlx::query_scalar::<_, i64>(sql)
                .fetch_one(&mut conn)
                .await
                .expect("count")
        }
    }
}

/// Sends a message with `attachments` and returns the answer (ACK or ERROR).
pub(crate) async fn send_with(ws: &mut WsClient, channel: &str, key: &str, body: &str, attachments: &[&str]) -> Value {
    ws.send_json(
        json!({"type": "MSG_SEND", "channelId": channel, "clientMsgId": key, "body": body, "attachments": attachments}),
    )
    .await;
    ws.recv().await
}

async fn an_upload_is_served_to_members_the_admin_and_signed_urls_only(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    app.create_channel("other", &["carol"]).await;
    let text = b"PLAIN-7c1 hello attachment\n".to_vec();
    let (status, up) = upload(
        &app,
        "alice",
        "room",
        Some("text/plain; charset=utf-8"),
        text.clone(),
        Some("notes 1.txt"),
    )
    .await;
    assert_eq!(status, 201, "{up}");
    use sha2::Digest;
    let sha = hex::encode(sha2::Sha256::digest(&text));
    assert_eq!(
        (
            &up["channelId"],
            &up["contentType"],
            &up["size"],
            &up["sha256"],
            &up["filename"]
        ),
        (
            &json!("room"),
            &json!("text/plain"),
            &json!(text.len()),
            &json!(sha),
            &json!("notes 1.txt")
        )
    );
    assert!(up.get("width").is_none() && up["createdAt"].as_i64().expect("createdAt") > 1_600_000_000_000);
    let id = id_of(&up);
    let path = format!("/v1/attachments/{id}");

    // A member: the bytes and every header of §15.
    let (status, headers, bytes) = get(&app, &path, Some(&app.token("bob")), None).await;
    assert_eq!((status, bytes.as_slice()), (200, text.as_slice()));
    assert_eq!(header(&headers, "content-type"), "text/plain");
    assert_eq!(header(&headers, "content-length"), text.len().to_string());
    assert_eq!(header(&headers, "etag"), format!("\"{sha}\""));
    assert_eq!(header(&headers, "x-content-type-options"), "nosniff");
    assert_eq!(header(&headers, "content-security-policy"), "sandbox");
    assert_eq!(
        header(&headers, "content-disposition"),
        "attachment; filename=\"notes 1.txt\""
    );
    // `If-None-Match: *` matches any current file (RFC 9110 §13.1.2).
    let res = app
        .http
        .get(app.url(&path))
        .bearer_auth(app.token("bob"))
        .header("if-none-match", "*")
        .send()
        .await
        .expect("http");
    assert_eq!(res.status().as_u16(), 304);
    // Its tag given weak (`W/"…"`, as a cache may keep it) also matches:
    // If-None-Match compares weakly (RFC 9110 §13.1.2); so does a list on two lines.
    for tags in [
        vec![format!("W/\"{sha}\"")],
        vec!["\"other\"".to_owned(), format!("\"{sha}\"")],
    ] {
        let mut request = app.http.get(app.url(&path)).bearer_auth(app.token("bob"));
        for tag in &tags {
            request = request.header("if-none-match", tag);
        }
        let res = request.send().await.expect("http");
        assert_eq!(res.status().as_u16(), 304, "{tags:?}");
    }
    // A range.
    let (status, headers, bytes) = get(&app, &path, Some(&app.token("bob")), Some("bytes=0-4")).await;
    assert_eq!((status, bytes.as_slice()), (206, &text[0..5]));
    assert_eq!(header(&headers, "content-range"), format!("bytes 0-4/{}", text.len()));
    let (status, _, _) = get(&app, &path, Some(&app.token("bob")), Some("bytes=9999-")).await;
    assert_eq!(status, 416);
    // The admin.
    assert_eq!(get(&app, &path, Some(ADMIN_TOKEN), None).await.0, 200);
    // Anyone else: 404, as for an unknown id.
    for (who, token) in [("carol", Some(app.token("carol"))), ("nobody", None)] {
        let (status, _, bytes) = get(&app, &path, token.as_deref(), None).await;
        assert_eq!(status, 404, "{who}");
        assert!(!bytes.windows(9).any(|w| w == b"PLAIN-7c1"), "{who}");
    }
    let unknown = format!("/v1/attachments/{}", uuid::Uuid::now_v7());
    assert_eq!(get(&app, &unknown, Some(&app.token("bob")), None).await.0, 404);

    // Sent: the message carries it with a signed url that works without a token.
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let ack = send_with(&mut alice, "room", "k1", "see file", &[&id]).await;
    assert_eq!(ack["type"], "MSG_ACK", "{ack}");
    let recv = bob.recv_type("MSG_RECV").await;
    let carried = &recv["attachments"][0];
    assert_eq!(
        (
            &carried["attachmentId"],
            &carried["contentType"],
            &carried["size"],
            &carried["filename"]
        ),
        (
            &json!(id),
            &json!("text/plain"),
            &json!(text.len()),
            &json!("notes 1.txt")
        )
    );
    let url = carried["url"].as_str().expect("url").to_owned();
    assert!(url.starts_with(&format!("/v1/attachments/{id}?exp=")), "{url}");
    assert!(carried.get("thumbnailUrl").is_none(), "no thumbnail for text");
    let (status, _, bytes) = get(&app, &url, None, None).await;
    assert_eq!((status, bytes.as_slice()), (200, text.as_slice()));
    // Altered: 404. Another attachment's id with this signature: 404.
    let altered = format!(
        "{}{}",
        &url[..url.len() - 1],
        if url.ends_with('0') { '1' } else { '0' }
    );
    assert_eq!(get(&app, &altered, None, None).await.0, 404);
    let (_, other) = upload(&app, "alice", "room", Some("text/plain"), b"other".to_vec(), None).await;
    let swapped = url.replace(&id, &id_of(&other));
    assert_eq!(get(&app, &swapped, None, None).await.0, 404);
    let later = url.replace("exp=", "exp=9");
    assert_eq!(get(&app, &later, None, None).await.0, 404);
    // Other spellings of the same expiry and signature (breaker 8): 404.
    let (path, sig) = url.split_once("&sig=").expect("sig");
    for respelled in [
        url.replace("exp=", "exp=%2B"),
        url.replace("exp=", "exp=0"),
        format!("{path}&sig={}", sig.to_uppercase()),
    ] {
        assert_eq!(get(&app, &respelled, None, None).await.0, 404, "{respelled}");
    }

    // Reads carry it too (history).
    let (status, page) = app
        .request(
            "GET",
            "/v1/channels/room/messages?afterSeq=0",
            Some(&app.token("bob")),
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(page["messages"][0]["attachments"][0]["attachmentId"], json!(id));
}

/// An upload refused: status, code, `Content-Type`, body, `filename`.
type Refusal = (u16, &'static str, Option<&'static str>, Vec<u8>, Option<&'static str>);

async fn uploads_are_refused_by_type_size_image_and_name_leaving_nothing(backend: Backend) {
    let app = spawn_app_with(backend, |c| {
        c.max_attachment_bytes = 4_000;
        c.max_image_pixels = 1_000_000;
    })
    .await;
    app.create_channel("room", &["alice"]).await;
    let refusals: Vec<Refusal> = vec![
        (
            415,
            "unsupported_media_type",
            Some("image/svg+xml"),
            b"<svg/>".to_vec(),
            None,
        ),
        (415, "unsupported_media_type", Some("text/html"), b"<p>".to_vec(), None),
        (415, "unsupported_media_type", None, b"x".to_vec(), None),
        (413, "body_too_large", Some("application/pdf"), vec![b'a'; 4_001], None),
        (400, "invalid_field", Some("image/png"), b"not a png".to_vec(), None),
        // A PNG declared as JPEG.
        (400, "invalid_field", Some("image/jpeg"), png(8, 8), None),
        (400, "invalid_field", Some("text/plain"), b"x".to_vec(), Some("a/b.txt")),
        (400, "invalid_field", Some("text/plain"), b"x".to_vec(), Some("a\u{7}b")),
        (400, "invalid_field", Some("text/plain"), b"x".to_vec(), Some("..")),
        // A right-to-left override: shown as "exe.png".
        (
            400,
            "invalid_field",
            Some("text/plain"),
            b"x".to_vec(),
            Some("\u{202e}gnp.exe"),
        ),
        // Blank, or with a zero-width filler: shown as nothing, or as
        // another file's name.
        (400, "invalid_field", Some("text/plain"), b"x".to_vec(), Some(" ")),
        (
            400,
            "invalid_field",
            Some("text/plain"),
            b"x".to_vec(),
            Some("\u{3164}"),
        ),
        // A lone combining mark (tenth breaker run): it marks nothing.
        (
            400,
            "invalid_field",
            Some("text/plain"),
            b"x".to_vec(),
            Some("\u{20dd}"),
        ),
        (
            400,
            "invalid_field",
            Some("text/plain"),
            b"x".to_vec(),
            Some("\u{200b}invoice.pdf"),
        ),
        (
            400,
            "invalid_field",
            Some("text/plain"),
            b"x".to_vec(),
            Some("in\u{feff}voice.pdf"),
        ),
    ];
    for (want, code, kind, bytes, name) in refusals {
        let (status, body) = upload(&app, "alice", "room", kind, bytes, name).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (want, Some(code)),
            "{kind:?} {name:?}: {body}"
        );
    }
    // A pixel bomb is refused at once, naming the body.
    let started = std::time::Instant::now();
    let (status, body) = upload(&app, "alice", "room", Some("image/png"), png_bomb(), None).await;
    assert_eq!((status, &body["error"]["field"]), (400, &json!("body")), "{body}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the bomb took {:?}",
        started.elapsed()
    );
    // Non-members and the admin may not upload.
    assert_eq!(
        upload(&app, "mallory", "room", Some("text/plain"), b"x".to_vec(), None)
            .await
            .0,
        403
    );
    assert_eq!(
        upload(&app, "admin", "room", Some("text/plain"), b"x".to_vec(), None)
            .await
            .0,
        403
    );
    assert_eq!(
        upload(&app, "alice", "nowhere", Some("text/plain"), b"x".to_vec(), None)
            .await
            .0,
        403
    );
    // Nothing was left behind.
    assert_eq!(stored_files(&app), Vec::<String>::new());
    assert_eq!(count(&app, backend, "SELECT count(*) FROM attachments").await, 0);
    // Exactly the limit is taken.
    assert_eq!(
        upload(&app, "alice", "room", Some("application/pdf"), vec![b'a'; 4_000], None)
            .await
            .0,
        201
    );
}

async fn sends_carry_checked_attachments_claimed_once_and_idempotent(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.max_attachments_per_message = 2).await;
    app.create_channel("room", &["alice", "bob"]).await;
    app.create_channel("side", &["alice", "bob"]).await;
    let up = |user: &'static str, channel: &'static str| {
        let app = &app;
        async move {
            id_of(
                &upload(app, user, channel, Some("application/pdf"), b"%PDF-1".to_vec(), None)
                    .await
                    .1,
            )
        }
    };
    let (a1, a2, a3) = (
        up("alice", "room").await,
        up("alice", "room").await,
        up("alice", "room").await,
    );
    let (bobs, side) = (up("bob", "room").await, up("alice", "side").await);
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;

    // An empty body with attachments; order kept.
    let ack = send_with(&mut alice, "room", "k1", "", &[&a2, &a1]).await;
    assert_eq!(
        (ack["type"].as_str(), ack["duplicate"].as_bool()),
        (Some("MSG_ACK"), Some(false)),
        "{ack}"
    );
    let recv = bob.recv_type("MSG_RECV").await;
    let ids: Vec<&str> = recv["attachments"]
        .as_array()
        .expect("attachments")
        .iter()
        .map(|a| a["attachmentId"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, vec![a2.as_str(), a1.as_str()]);
    // A retry: the original ACK. The same key with another list: a conflict.
    let again = send_with(&mut alice, "room", "k1", "", &[&a2, &a1]).await;
    assert_eq!(
        (again["duplicate"].as_bool(), &again["seq"]),
        (Some(true), &ack["seq"]),
        "{again}"
    );
    let changed = send_with(&mut alice, "room", "k1", "", &[&a1, &a2]).await;
    assert_eq!(changed["code"], "idempotency_conflict", "{changed}");
    // Refused, naming the field: already sent, someone else's, another
    // channel's, unknown, too many, repeated, a bad id, an empty body without any.
    let unknown = uuid::Uuid::now_v7().to_string();
    for (key, list) in [
        ("r1", vec![a1.as_str()]),
        ("r2", vec![bobs.as_str()]),
        ("r3", vec![side.as_str()]),
        ("r4", vec![unknown.as_str()]),
        ("r5", vec![a3.as_str(), bobs.as_str(), side.as_str()]),
        ("r6", vec![a3.as_str(), a3.as_str()]),
        ("r7", vec!["not-an-id"]),
    ] {
        let refused = send_with(&mut alice, "room", key, "x", &list).await;
        assert_eq!(
            (refused["code"].as_str(), refused["field"].as_str()),
            (Some("invalid_field"), Some("attachments")),
            "{key}: {refused}"
        );
    }
    let empty = send_with(&mut alice, "room", "r8", "", &[]).await;
    assert_eq!(
        (empty["code"].as_str(), empty["field"].as_str()),
        (Some("invalid_field"), Some("body")),
        "{empty}"
    );
    // Nothing of that was stored: the next message is seq 2.
    let ack2 = send_with(&mut alice, "room", "k2", "with a3", &[&a3]).await;
    assert_eq!(ack2["seq"], 2, "{ack2}");
    // The backend's post takes attachments too, as the sender.
    let b2 = up("bob", "room").await;
    let (status, posted) = app
        .admin()
        .request(
            reqwest::Method::POST,
            "/v1/channels/room/messages",
            Some(json!({"senderId": "bob", "clientMsgId": "p1", "body": "", "attachments": [b2]})),
        )
        .await;
    assert_eq!((status, &posted["seq"]), (201, &json!(3)), "{posted}");
    let (status, conflict) = app
        .admin()
        .request(
            reqwest::Method::POST,
            "/v1/channels/room/messages",
            Some(json!({"senderId": "bob", "clientMsgId": "p2", "body": "x", "attachments": [b2]})),
        )
        .await;
    assert_eq!(
        (status, &conflict["error"]["field"]),
        (400, &json!("attachments")),
        "{conflict}"
    );
    // SYNC carries them.
    alice
        .send_json(json!({"type": "SYNC", "channelId": "room", "afterSeq": 0}))
        .await;
    let batch = loop {
        let frame = alice.recv().await;
        if frame["type"] == "SYNC_BATCH" {
            break frame;
        }
    };
    let counts: Vec<usize> = batch["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["attachments"].as_array().map_or(0, Vec::len))
        .collect();
    assert_eq!(counts, vec![2, 1, 1]);
}

async fn images_are_measured_and_get_thumbnails(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let (status, up) = upload(
        &app,
        "alice",
        "room",
        Some("image/png"),
        png(800, 400),
        Some("wide.png"),
    )
    .await;
    assert_eq!(status, 201, "{up}");
    assert_eq!((&up["width"], &up["height"]), (&json!(800), &json!(400)));
    let id = id_of(&up);
    let (status, headers, bytes) = get(
        &app,
        &format!("/v1/attachments/{id}/thumbnail"),
        Some(&app.token("bob")),
        None,
    )
    .await;
    assert_eq!((status, header(&headers, "content-type")), (200, "image/jpeg"));
    let thumb = image::load_from_memory_with_format(&bytes, image::ImageFormat::Jpeg).expect("jpeg");
    assert_eq!((thumb.width(), thumb.height()), (320, 160));
    // Images are shown inline.
    let (_, headers, _) = get(&app, &format!("/v1/attachments/{id}"), Some(&app.token("bob")), None).await;
    assert_eq!(header(&headers, "content-disposition"), "inline");
    // The message carries a signed thumbnailUrl.
    let mut alice = app.connect("alice").await;
    let ack = send_with(&mut alice, "room", "k1", "pic", &[&id]).await;
    assert_eq!(ack["type"], "MSG_ACK");
    let (_, page) = app
        .request(
            "GET",
            "/v1/channels/room/messages?afterSeq=0",
            Some(&app.token("bob")),
            None,
        )
        .await;
    let carried = &page["messages"][0]["attachments"][0];
    assert_eq!((&carried["width"], &carried["height"]), (&json!(800), &json!(400)));
    let thumb_url = carried["thumbnailUrl"].as_str().expect("thumbnailUrl");
    assert_eq!(get(&app, thumb_url, None, None).await.0, 200);
    // The file's signature does not open the thumbnail, and text has none.
    let file_sig = carried["url"]
        .as_str()
        .expect("url")
        .split_once('?')
        .expect("query")
        .1
        .to_owned();
    assert_eq!(
        get(&app, &format!("/v1/attachments/{id}/thumbnail?{file_sig}"), None, None)
            .await
            .0,
        404
    );
    let (_, text) = upload(&app, "alice", "room", Some("text/plain"), b"t".to_vec(), None).await;
    assert_eq!(
        get(
            &app,
            &format!("/v1/attachments/{}/thumbnail", id_of(&text)),
            Some(&app.token("alice")),
            None
        )
        .await
        .0,
        404
    );
}

async fn deleting_the_message_or_channel_removes_the_bytes_and_rows(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let mut alice = app.connect("alice").await;
    // A message with an image (bytes and thumbnail) and a file.
    let img = id_of(
        &upload(&app, "alice", "room", Some("image/png"), png(40, 30), None)
            .await
            .1,
    );
    let doc = id_of(
        &upload(
            &app,
            "alice",
            "room",
            Some("application/zip"),
            b"PK\x03\x04".to_vec(),
            None,
        )
        .await
        .1,
    );
    let ack = send_with(&mut alice, "room", "k1", "two files", &[&img, &doc]).await;
    let message = ack["messageId"].as_str().expect("id").to_owned();
    let (_, page) = app
        .request(
            "GET",
            "/v1/channels/room/messages?afterSeq=0",
            Some(&app.token("bob")),
            None,
        )
        .await;
    let url = page["messages"][0]["attachments"][0]["url"]
        .as_str()
        .expect("url")
        .to_owned();
    assert_eq!(stored_files(&app).len(), 3, "{:?}", stored_files(&app));

    alice
        .send_json(json!({"type": "MSG_DELETE", "clientMsgId": "d1", "messageId": message}))
        .await;
    assert_eq!(alice.recv_type("MSG_ACK").await["clientMsgId"], "d1");
    // The rows at once (same transaction), the bytes once the queue drains.
    assert_eq!(count(&app, backend, "SELECT count(*) FROM attachments").await, 0);
    eventually("the storage directory is empty", || async {
        stored_files(&app).is_empty()
    })
    .await;
    eventually("the removal queue is empty", || async {
        count(&app, backend, "SELECT count(*) FROM attachment_removals").await == 0
    })
    .await;
    let (_, page) = app
        .request(
            "GET",
            "/v1/channels/room/messages?afterSeq=0",
            Some(&app.token("bob")),
            None,
        )
        .await;
    assert_eq!(page["messages"][0]["deleted"], true);
    assert!(page["messages"][0].get("attachments").is_none(), "{page}");
    assert_eq!(get(&app, &url, None, None).await.0, 404);
    assert_eq!(
        get(&app, &format!("/v1/attachments/{img}"), Some(ADMIN_TOKEN), None)
            .await
            .0,
        404
    );

    // A channel's delete: its sent and unsent uploads go.
    let sent = id_of(
        &upload(&app, "alice", "room", Some("image/png"), png(20, 20), None)
            .await
            .1,
    );
    let _unsent = upload(&app, "bob", "room", Some("text/plain"), b"u".to_vec(), None).await;
    assert_eq!(
        send_with(&mut alice, "room", "k2", "x", &[&sent]).await["type"],
        "MSG_ACK"
    );
    assert_eq!(stored_files(&app).len(), 3);
    let (status, _) = app
        .request("DELETE", "/v1/channels/room", Some(ADMIN_TOKEN), None)
        .await;
    assert_eq!(status, 204);
    assert_eq!(count(&app, backend, "SELECT count(*) FROM attachments").await, 0);
    eventually("the storage directory is empty again", || async {
        stored_files(&app).is_empty()
    })
    .await;
}

async fn unsent_uploads_expire_after_the_orphan_ttl(backend: Backend) {
    let app = spawn_app_with(backend, |c| c.attachment_orphan_ttl_secs = 1).await;
    app.create_channel("room", &["alice"]).await;
    let (status, _) = upload(&app, "alice", "room", Some("image/png"), png(10, 10), None).await;
    assert_eq!(status, 201);
    assert_eq!(stored_files(&app).len(), 2);
    eventually("the unsent upload expired", || async {
        count(&app, backend, "SELECT count(*) FROM attachments").await == 0 && stored_files(&app).is_empty()
    })
    .await;
}

/// A message with attachments may be edited to an empty body, as it may
/// be sent with one (§15: "With attachments, `body` may be `""`"); one
/// without attachments may not (`invalid_field`, `body`, nothing stored).
/// Before, every empty edit was refused.
async fn a_message_with_attachments_may_be_edited_to_an_empty_body(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    let (status, up) = upload(&app, "alice", "room", Some("application/pdf"), b"%PDF-1".to_vec(), None).await;
    assert_eq!(status, 201, "{up}");
    let file = id_of(&up);
    let mut alice = app.connect("alice").await;
    let mut bob = app.connect("bob").await;
    let with = send_with(&mut alice, "room", "k1", "a caption", &[&file]).await;
    let with = with["messageId"].as_str().expect("id").to_owned();
    let plain = alice.send_and_ack("room", "k2", "plain").await;
    let plain = plain["messageId"].as_str().expect("id").to_owned();
    bob.recv_type("MSG_RECV").await;
    bob.recv_type("MSG_RECV").await;
    let edit =
        |key: &str, target: &str| json!({"type": "MSG_EDIT", "clientMsgId": key, "messageId": target, "body": ""});
    alice.send_json(edit("e1", &with)).await;
    let ack = alice.recv_type("MSG_ACK").await;
    assert_eq!((&ack["clientMsgId"], &ack["seq"]), (&json!("e1"), &json!(3)), "{ack}");
    let recv = bob.recv_type("MSG_RECV").await;
    assert_eq!((&recv["kind"], &recv["body"]), (&json!("edit"), &json!("")), "{recv}");
    alice.send_json(edit("e2", &plain)).await;
    let error = alice.recv_type("ERROR").await;
    assert_eq!(
        (&error["code"], &error["field"], &error["clientMsgId"]),
        (&json!("invalid_field"), &json!("body"), &json!("e2")),
        "{error}"
    );
    let messages = app.all_messages("room").await;
    let first = messages.iter().find(|m| m["messageId"] == json!(with)).expect("first");
    assert_eq!(first["body"], "", "{first}");
    assert_eq!(first["attachments"].as_array().map(Vec::len), Some(1), "{first}");
    let second = messages
        .iter()
        .find(|m| m["messageId"] == json!(plain))
        .expect("second");
    assert_eq!(second["body"], "plain", "{second}");
    assert_eq!(messages.len(), 3, "the refused edit stored nothing: {messages:?}");
}
