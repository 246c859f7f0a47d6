//! A user whose erasure is pending (§19) gains no membership until it is
//! done: a join or an add is refused 409 `conflict`, and a new channel
//! naming it as a member is made without it. Found by a hostile run
//! (breaker 7): a user rejoining or re-added during a 25 s erasure kept
//! both memberships and up to 184 messages after the erasure's 204.
//!
//! The erasure is held pending by its row alone (written to the test's
//! database while the server runs, so no pass of it starts), with a
//! watermark of 0 so that the user's new tokens are taken.

use serde_json::json;

use chatd_testkit::on_both_stores;
use chatd_testkit::{spawn_app, Backend, TestApp};

on_both_stores!(a_user_being_erased_gains_no_membership);

/// Runs `sql` (no rows back) on the test's database.
async fn execute(app: &TestApp, backend: Backend, sql: &str) {
    use sqlx::Connection;
    match backend {
        Backend::Postgres => {
            let mut conn = sqlx::PgConnection::connect(&app.db.url).await.expect("pg");
            sqlx::query(sql).execute(&mut conn).await.expect("execute");
        }
        Backend::Sqlite => {
            let mut conn = sqlx::SqliteConnection::connect(&app.db.url).await.expect("sqlite");
            sqlx::query(sql).execute(&mut conn).await.expect("execute");
        }
    }
}

async fn a_user_being_erased_gains_no_membership(backend: Backend) {
    let app = spawn_app(backend).await;
    app.post_channel(json!({"channelId": "lobby", "visibility": "public", "members": ["alice"]}))
        .await;
    app.post_channel(json!({"channelId": "room", "owners": ["olive"], "members": ["alice"]}))
        .await;
    execute(
        &app,
        backend,
        "INSERT INTO user_erasures (user_id, erased_at, started_at, pending) VALUES ('zoe', 0, 0, true)",
    )
    .await;
    let zoe = app.token("zoe");

    // Its own join of a public channel.
    let (status, body) = app.request("PUT", "/v1/me/channels/lobby", Some(&zoe), None).await;
    assert_eq!((status, &body["error"]["code"]), (409, &json!("conflict")), "{body}");
    // An owner's add, and the admin's.
    let (status, body) = app
        .request("PUT", "/v1/channels/room/members/zoe", Some(&app.token("olive")), None)
        .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(app.put_member("room", "zoe").await.as_u16(), 409);
    // A new channel naming zoe is made without her.
    let (status, created) = app
        .request(
            "POST",
            "/v1/channels",
            Some(chatd_testkit::ADMIN_TOKEN),
            Some(r#"{"channelId": "fresh", "members": ["alice", "zoe"]}"#),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["members"], json!(["alice"]));
    // So the backend cannot post as zoe anywhere.
    let (status, body) = app
        .request(
            "POST",
            "/v1/channels/room/messages",
            Some(chatd_testkit::ADMIN_TOKEN),
            Some(r#"{"senderId": "zoe", "clientMsgId": "z-1", "body": "still here"}"#),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    for channel in ["lobby", "room", "fresh"] {
        let (_, page) = app
            .request(
                "GET",
                &format!("/v1/channels/{channel}/members"),
                Some(chatd_testkit::ADMIN_TOKEN),
                None,
            )
            .await;
        let users: Vec<&str> = page["members"]
            .as_array()
            .expect("members")
            .iter()
            .filter_map(|m| m["userId"].as_str())
            .collect();
        assert!(!users.contains(&"zoe"), "{channel}: {users:?}");
    }
    app.stop().await;
}
