//! A WebSocket client speaking JSON frames, and builders of the frames tests
//! send most.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::client::Request;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::FRAME_TIMEOUT;

/// The upgrade request for `ws://{addr}/v1/ws` with `token` in the
/// Authorization header.
pub fn ws_request(addr: impl std::fmt::Display, token: &str) -> Request {
    let mut request = format!("ws://{addr}/v1/ws").into_client_request().expect("request");
    request
        .headers_mut()
        .insert("authorization", format!("Bearer {token}").parse().expect("header"));
    request
}

/// Opens a WebSocket to the server at `addr` (`host:port`) with `token` in
/// the Authorization header; HELLO is not read yet.
pub async fn ws_connect(
    addr: impl std::fmt::Display,
    token: &str,
) -> Result<WsClient, tokio_tungstenite::tungstenite::Error> {
    let (stream, _) = tokio_tungstenite::connect_async(ws_request(addr, token)).await?;
    Ok(WsClient::new(stream))
}

/// Connects to `addr` with `token` and reads HELLO, asserting it is one.
pub async fn ws_connect_hello(addr: impl std::fmt::Display, token: &str) -> WsClient {
    ws_connect(addr, token).await.expect("connect").read_hello().await
}

/// A WebSocket client speaking JSON frames.
pub struct WsClient {
    pub stream: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// The HELLO frame once read, `Null` before.
    pub hello: Value,
}

impl WsClient {
    /// A client on an open WebSocket whose HELLO is not read yet.
    pub fn new(stream: WebSocketStream<MaybeTlsStream<TcpStream>>) -> Self {
        Self {
            stream,
            hello: Value::Null,
        }
    }

    /// Reads the first frame, asserts that it is HELLO and keeps it.
    pub async fn read_hello(mut self) -> Self {
        let hello = self.recv().await;
        assert_eq!(hello["type"], "HELLO", "first frame: {hello}");
        self.hello = hello;
        self
    }

    pub async fn send_json(&mut self, frame: Value) {
        self.stream
            .send(Message::text(frame.to_string()))
            .await
            .expect("ws send");
    }

    pub async fn send_text(&mut self, text: &str) {
        self.stream.send(Message::text(text.to_owned())).await.expect("ws send");
    }

    pub async fn send_msg(&mut self, channel: &str, client_msg_id: &str, body: &str) {
        self.send_json(json!({"type": "MSG_SEND", "channelId": channel, "clientMsgId": client_msg_id, "body": body}))
            .await;
    }

    /// The next message of any kind; panics after [`FRAME_TIMEOUT`], saying
    /// what the test was waiting for.
    async fn next_in_time(&mut self, waiting_for: &str) -> Option<Result<Message, WsError>> {
        tokio::time::timeout(FRAME_TIMEOUT, self.stream.next())
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for {waiting_for}"))
    }

    /// The next frame as JSON; panics on close or after [`FRAME_TIMEOUT`].
    pub async fn recv(&mut self) -> Value {
        loop {
            match self.next_in_time("a frame").await {
                Some(Ok(Message::Text(text))) => return serde_json::from_str(text.as_str()).expect("server sent JSON"),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                other => panic!("expected a text frame, got {other:?}"),
            }
        }
    }

    /// The next frame, which must have `type`.
    pub async fn recv_type(&mut self, ty: &str) -> Value {
        let frame = self.recv().await;
        assert_eq!(frame["type"], ty, "unexpected frame {frame}");
        frame
    }

    /// Sends a message and returns its MSG_ACK.
    pub async fn send_and_ack(&mut self, channel: &str, client_msg_id: &str, body: &str) -> Value {
        self.send_msg(channel, client_msg_id, body).await;
        let ack = self.recv_type("MSG_ACK").await;
        assert_eq!(ack["clientMsgId"], client_msg_id);
        ack
    }

    /// Asserts no frame arrives within `wait`.
    pub async fn expect_silence(&mut self, wait: Duration) {
        loop {
            match tokio::time::timeout(wait, self.stream.next()).await {
                Err(_) => return,
                Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => continue,
                Ok(other) => panic!("expected silence, got {other:?}"),
            }
        }
    }

    /// Reads until the close frame and returns its code, skipping other frames.
    pub async fn recv_close_code(&mut self) -> u16 {
        loop {
            match self.next_in_time("close").await {
                Some(Ok(Message::Close(Some(frame)))) => return u16::from(frame.code),
                Some(Ok(Message::Close(None))) => return u16::from(CloseCode::Status),
                Some(Ok(_)) => continue,
                other => panic!("connection ended without a close frame: {other:?}"),
            }
        }
    }
}

/// A SYNC frame.
pub fn sync(channel: &str, after_seq: i64, limit: Option<i64>) -> Value {
    let mut frame = json!({"type": "SYNC", "channelId": channel, "afterSeq": after_seq});
    if let Some(limit) = limit {
        frame["limit"] = json!(limit);
    }
    frame
}

/// Seqs of a list of MSG_RECV objects.
pub fn seqs(messages: &[Value]) -> Vec<i64> {
    messages.iter().map(|m| m["seq"].as_i64().expect("seq")).collect()
}
