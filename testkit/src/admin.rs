//! The admin HTTP API (channels, members, history) and the probes
//! (`/readyz`, `/metrics`) of one server, in-process or a child process.

use serde_json::{json, Value};

/// HTTP requests to the server at `base` (`http://host:port`), the admin
/// routes with `token` as the bearer.
#[derive(Clone)]
pub struct Admin {
    pub base: String,
    pub token: String,
    pub http: reqwest::Client,
}

impl Admin {
    /// The server at `addr` (`host:port`) with admin token `token`.
    pub fn new(addr: impl std::fmt::Display, token: &str) -> Self {
        Self {
            base: format!("http://{addr}"),
            token: token.to_owned(),
            http: reqwest::Client::new(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// An admin request; returns the status and the JSON body (`Null` when none).
    pub async fn request(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut request = self.http.request(method, self.url(path)).bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let res = request.send().await.expect("http");
        let status = res.status().as_u16();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    /// POST /v1/channels with `body`.
    pub async fn post_channel(&self, body: Value) -> reqwest::Response {
        self.http
            .post(self.url("/v1/channels"))
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await
            .expect("http")
    }

    /// Creates a channel and asserts 201.
    pub async fn create_channel(&self, id: &str, members: &[&str]) {
        let res = self.post_channel(json!({"channelId": id, "members": members})).await;
        assert_eq!(
            res.status(),
            201,
            "create channel {id}: {}",
            res.text().await.unwrap_or_default()
        );
    }

    pub async fn put_member(&self, channel: &str, user: &str) -> reqwest::StatusCode {
        self.member(reqwest::Method::PUT, channel, user).await
    }

    pub async fn delete_member(&self, channel: &str, user: &str) -> reqwest::StatusCode {
        self.member(reqwest::Method::DELETE, channel, user).await
    }

    async fn member(&self, method: reqwest::Method, channel: &str, user: &str) -> reqwest::StatusCode {
        let url = self.url(&format!("/v1/channels/{channel}/members/{user}"));
        self.http
            .request(method, url)
            .bearer_auth(&self.token)
            .send()
            .await
            .expect("http")
            .status()
    }

    /// Every message of a channel, paging through the history route until
    /// `hasMore` is false.
    pub async fn all_messages(&self, channel: &str) -> Vec<Value> {
        let mut after = 0;
        let mut out = Vec::new();
        loop {
            let path = format!("/v1/channels/{channel}/messages?afterSeq={after}&limit=500");
            let (status, body) = self.request(reqwest::Method::GET, &path, None).await;
            assert_eq!(status, 200, "{body}");
            let page = body["messages"].as_array().expect("messages").clone();
            if let Some(last) = page.last() {
                after = last["seq"].as_i64().expect("seq");
            }
            out.extend(page);
            if body["hasMore"] == false {
                return out;
            }
        }
    }

    /// GET /readyz (no credentials): the status and the JSON body.
    pub async fn readyz(&self) -> (u16, Value) {
        let res = self.http.get(self.url("/readyz")).send().await.expect("http");
        let status = res.status().as_u16();
        (status, res.json().await.unwrap_or(Value::Null))
    }

    /// The value of one metric series (`name` with its labels, as rendered)
    /// on `/metrics`, 0 when the series does not exist yet.
    pub async fn metric(&self, series: &str) -> f64 {
        let text = self
            .http
            .get(self.url("/metrics"))
            .send()
            .await
            .expect("http")
            .text()
            .await
            .expect("text");
        text.lines()
            .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.trim().parse().ok())
            .unwrap_or(0.0)
    }
}
