//! The client library's search (protocol §18) against the real server:
//! `search_page` pages by `next`, `search_all` follows it to the end, a
//! channel filter and the server's refusals come back as `AdminError`s.

use chatd_client::admin::{AdminClient, AdminError, SearchQuery};

use chatd_testkit::on_both_stores;
use chatd_testkit::*;

on_both_stores!(the_client_pages_search_results_and_reports_refusals);

async fn the_client_pages_search_results_and_reports_refusals(backend: Backend) {
    let app = spawn_app(backend).await;
    app.create_channel("room", &["alice", "bob"]).await;
    app.create_channel("side", &["alice", "bob"]).await;
    app.create_channel("private", &["alice"]).await;
    let mut alice = app.connect("alice").await;
    let mut ids = Vec::new();
    for i in 0..7 {
        let channel = if i % 2 == 0 { "room" } else { "side" };
        let ack = alice
            .send_and_ack(channel, &format!("m{i}"), &format!("Тест-{i} 東京"))
            .await;
        ids.push(ack["messageId"].as_str().expect("id").to_owned());
    }
    alice.send_and_ack("private", "p", "тест-private 東京").await;
    let bob = AdminClient::new(app.url(""), app.token("bob"));

    let mut query = SearchQuery::new("тЕСТ- 東京");
    query.limit = Some(3);
    let first = bob.search_page(&query, None).await.expect("page");
    assert_eq!(first.results.len(), 3);
    let next = first.next.clone().expect("more pages");
    let second = bob.search_page(&query, Some(&next)).await.expect("page");
    assert_eq!(second.results[0].body, "Тест-3 東京", "the page after the first");

    let all = bob.search_all(&query, 100).await.expect("all");
    let got: Vec<String> = all.iter().map(|m| m.message_id.to_string()).collect();
    let mut want = ids.clone();
    want.reverse();
    assert_eq!(got, want, "every match once, newest first, not the private channel");
    assert!(all.iter().all(|m| m.channel_id == "room" || m.channel_id == "side"));
    assert_eq!(bob.search_all(&query, 4).await.expect("some").len(), 4, "stops at most");

    query.channel_id = Some("side".into());
    query.limit = None;
    let side = bob.search_page(&query, None).await.expect("side");
    assert_eq!(side.results.len(), 3);
    assert!(side.next.is_none());

    query.channel_id = Some("private".into());
    match bob.search_page(&query, None).await {
        Err(AdminError::Status { status: 403, .. }) => {}
        other => panic!("a channel bob is not in: {other:?}"),
    }
    match bob.search_page(&SearchQuery::new(" "), None).await {
        Err(AdminError::Status { status: 400, body }) => assert!(body.contains("invalid_field"), "{body}"),
        other => panic!("an empty q: {other:?}"),
    }
}
