//! `GET /v1/openapi.json`: an OpenAPI 3.1 document of every route the
//! router serves, with the error shape and the security schemes; and
//! `GET /v1/asyncapi.json`, the AsyncAPI 3.0 document of the WebSocket frames.

use serde_json::Value;

use chatd_testkit::{spawn_app, Backend, TestApp, ADMIN_TOKEN};

/// Every route of the API (method, path). A route added to the router must
/// be added here too: the test below checks both directions. The web console
/// (`/console`, `console_enabled`) is a page for people, not API, and is not
/// in the document.
const ROUTES: &[(&str, &str)] = &[
    ("get", "/v1/ws"),
    ("delete", "/v1/users/{userId}"),
    ("post", "/v1/channels/{channelId}/attachments"),
    ("get", "/v1/attachments/{attachmentId}"),
    ("get", "/v1/attachments/{attachmentId}/thumbnail"),
    ("post", "/v1/channels"),
    ("get", "/v1/channels"),
    ("get", "/v1/channels/{channelId}"),
    ("patch", "/v1/channels/{channelId}"),
    ("delete", "/v1/channels/{channelId}"),
    ("get", "/v1/me/channels"),
    ("post", "/v1/me/channels"),
    ("put", "/v1/me/channels/{channelId}"),
    ("delete", "/v1/me/channels/{channelId}"),
    ("put", "/v1/me/channels/{channelId}/settings"),
    ("get", "/v1/directory"),
    ("get", "/v1/me/search"),
    ("put", "/v1/me/direct/{userId}"),
    ("put", "/v1/channels/{channelId}/members/{userId}"),
    ("delete", "/v1/channels/{channelId}/members/{userId}"),
    ("get", "/v1/channels/{channelId}/members"),
    ("get", "/v1/channels/{channelId}/bans"),
    ("delete", "/v1/channels/{channelId}/bans/{userId}"),
    ("delete", "/v1/channels/{channelId}/messages/{messageId}"),
    ("get", "/v1/me/blocks"),
    ("put", "/v1/me/blocks/{userId}"),
    ("delete", "/v1/me/blocks/{userId}"),
    ("post", "/v1/messages/{messageId}/flags"),
    ("get", "/v1/flags"),
    ("get", "/v1/channels/{channelId}/messages"),
    ("post", "/v1/channels/{channelId}/messages"),
    ("post", "/v1/tokens"),
    ("get", "/v1/users/{userId}/export"),
    ("get", "/healthz"),
    ("get", "/readyz"),
    ("get", "/metrics"),
    ("get", "/v1/openapi.json"),
    ("get", "/v1/asyncapi.json"),
];

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

async fn document(app: &TestApp) -> Value {
    let res = app.http.get(app.url("/v1/openapi.json")).send().await.expect("http");
    assert_eq!(res.status().as_u16(), 200, "no credentials needed");
    assert!(res.headers()["content-type"]
        .to_str()
        .expect("text")
        .starts_with("application/json"));
    res.json().await.expect("json")
}

/// (method, path) of every operation of the document.
fn operations(doc: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in METHODS {
            if item.get(method).is_some() {
                found.push((method.to_owned(), path.clone()));
            }
        }
    }
    found.sort();
    found
}

#[tokio::test]
async fn the_document_lists_every_route_the_router_serves() {
    let app = spawn_app(Backend::Sqlite).await;
    app.create_channel("room", &["alice"]).await;
    let doc = document(&app).await;
    assert_eq!(doc["openapi"], "3.1.0");
    let mut expected: Vec<(String, String)> = ROUTES.iter().map(|(m, p)| ((*m).to_owned(), (*p).to_owned())).collect();
    expected.sort();
    assert_eq!(operations(&doc), expected);

    // Every documented operation is served (not the router's 404 or 405),
    // and every other method on a documented path is not.
    for (path, item) in doc["paths"].as_object().expect("paths") {
        let concrete = path.replace("{channelId}", "room").replace("{userId}", "bob");
        for method in METHODS {
            let res = app
                .http
                .request(method.to_uppercase().parse().unwrap(), app.url(&concrete))
                .bearer_auth(ADMIN_TOKEN)
                .send()
                .await
                .expect("http");
            let status = res.status().as_u16();
            let body: Value = res.json().await.unwrap_or(Value::Null);
            let unrouted = status == 405 || (status == 404 && body["error"]["message"] == "no such route");
            if item.get(method).is_some() {
                assert!(
                    !unrouted,
                    "{method} {path} is documented but not served: {status} {body}"
                );
            } else {
                assert_eq!(status, 405, "{method} {path} is served but not documented");
            }
        }
    }
    app.stop().await;
}

#[tokio::test]
async fn every_operation_documents_its_errors_and_credentials() {
    let app = spawn_app(Backend::Sqlite).await;
    let doc = document(&app).await;
    let schemes = &doc["components"]["securitySchemes"];
    assert_eq!(schemes["adminToken"]["scheme"], "bearer");
    assert_eq!(schemes["userJwt"]["scheme"], "bearer");
    assert_eq!(schemes["userJwt"]["bearerFormat"], "JWT");
    let error = &doc["components"]["schemas"]["ErrorBody"];
    assert_eq!(error["required"], serde_json::json!(["error"]));
    let open = [
        "/healthz",
        "/readyz",
        "/metrics",
        "/v1/openapi.json",
        "/v1/asyncapi.json",
    ];
    for (method, path) in operations(&doc) {
        let operation = &doc["paths"][&path][&method];
        let responses = operation["responses"].as_object().expect("responses");
        assert!(
            responses.keys().any(|s| s.starts_with('2') || s == "101"),
            "{method} {path}: a success answer"
        );
        for (status, response) in responses {
            if status.starts_with('4') || status.starts_with('5') {
                assert_eq!(
                    response["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/ErrorBody",
                    "{method} {path} {status}"
                );
            }
        }
        if open.contains(&path.as_str()) {
            assert!(operation.get("security").is_none(), "{path} needs no credentials");
        } else {
            assert!(responses.contains_key("401"), "{method} {path}: 401");
            assert!(
                operation["security"].as_array().is_some_and(|s| !s.is_empty()),
                "{method} {path}"
            );
        }
    }
    // The error shape of the document is what a refusal looks like.
    let (status, body) = app.request("GET", "/v1/channels/room", None, None).await;
    assert_eq!(status, 401);
    let keys: Vec<&String> = body["error"].as_object().expect("error object").keys().collect();
    assert_eq!(keys, ["code", "message"]);
    assert_eq!(body.as_object().map(|o| o.len()), Some(1));
    app.stop().await;
}

/// `GET /v1/asyncapi.json` answers without credentials with the AsyncAPI
/// document of the frames (checked against chatd-proto by the unit tests of
/// `src/http/asyncapi`), and `/v1/ws` is the channel it describes.
#[tokio::test]
async fn the_asyncapi_document_is_served_without_credentials() {
    let app = spawn_app(Backend::Sqlite).await;
    let res = app.http.get(app.url("/v1/asyncapi.json")).send().await.expect("http");
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(res.headers()["content-type"], "application/json");
    let served: Value = res.json().await.expect("json");
    let file: Value = serde_json::from_str(chatd::http::asyncapi::DOCUMENT).expect("json");
    assert_eq!(served, file);
    assert_eq!(served["asyncapi"], "3.0.0");
    assert_eq!(served["channels"]["gateway"]["address"], "/v1/ws");
    app.stop().await;
}
