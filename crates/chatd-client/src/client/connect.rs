//! Opening one connection: the WebSocket handshake with the token, up to
//! HELLO; and writing queued frames to it.

use chatd_proto::protocol::{ChannelState, ClientFrame, ServerFrame};
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::types::ConnectError;
use crate::config::ClientConfig;

pub(super) type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Why one connection attempt failed.
pub(super) enum Failure {
    /// Give up (and tell the application).
    Fatal(ConnectError),
    /// Try again after a backoff.
    Transient(String),
}

/// HELLO's fields.
pub(super) struct Hello {
    pub(super) user_id: String,
    pub(super) session_id: String,
    pub(super) channels: Vec<ChannelState>,
}

pub(super) async fn open(config: &ClientConfig) -> Result<(Socket, Hello), Failure> {
    let attempt = async {
        let mut request = config
            .url
            .as_str()
            .into_client_request()
            .map_err(|e| Failure::Fatal(ConnectError::BadUrl(e.to_string())))?;
        let bearer = HeaderValue::from_str(&format!("Bearer {}", config.token))
            .map_err(|_| Failure::Fatal(ConnectError::Unauthorized))?;
        request.headers_mut().insert("authorization", bearer);
        let ws_config = WebSocketConfig::default()
            .max_message_size(Some(config.max_message_bytes))
            .max_frame_size(Some(config.max_message_bytes))
            .read_buffer_size(config.read_buffer_bytes)
            .write_buffer_size(config.write_buffer_bytes);
        let (mut socket, _) = tokio_tungstenite::connect_async_with_config(request, Some(ws_config), true)
            .await
            .map_err(|e| match &e {
                tokio_tungstenite::tungstenite::Error::Http(response) if response.status().as_u16() == 401 => {
                    Failure::Fatal(ConnectError::Unauthorized)
                }
                _ => Failure::Transient(e.to_string()),
            })?;
        loop {
            match socket.next().await {
                Some(Ok(Message::Text(text))) => match ServerFrame::decode(&text) {
                    Ok(ServerFrame::Hello {
                        user_id,
                        session_id,
                        channels,
                        ..
                    }) => {
                        return Ok((
                            socket,
                            Hello {
                                user_id,
                                session_id,
                                channels,
                            },
                        ))
                    }
                    _ => return Err(Failure::Transient("the first frame was not HELLO".into())),
                },
                Some(Ok(Message::Close(frame))) => {
                    return Err(Failure::Transient(format!("closed before HELLO: {frame:?}")))
                }
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Err(Failure::Transient(e.to_string())),
                None => return Err(Failure::Transient("closed before HELLO".into())),
            }
        }
    };
    tokio::time::timeout(config.connect_timeout, attempt)
        .await
        .unwrap_or_else(|_| Err(Failure::Transient("connect timed out".into())))
}

/// Writes queued frames with one flush.
pub(super) async fn write_all(socket: &mut Socket, out: &mut Vec<ClientFrame>) -> Result<(), String> {
    if out.is_empty() {
        return Ok(());
    }
    for frame in out.drain(..) {
        let text = serde_json::to_string(&frame).map_err(|e| e.to_string())?;
        socket.feed(Message::text(text)).await.map_err(|e| e.to_string())?;
    }
    socket.flush().await.map_err(|e| e.to_string())
}
