//! The README's client-library snippet, verbatim between the `README` marks
//! (a test checks that the README's block equals it, and runs [`chat`]
//! against a live server).
//!
//! ```sh
//! CHATD_TOKEN=<user token> cargo run -p chatd-client --example readme -- ws://127.0.0.1:8080/v1/ws room1
//! ```

use chatd_client::{Client, ClientConfig, Event};

/// Sends "hello" to `channel` and prints every message of the user's
/// channels (its own included) until the client stops.
pub async fn chat(url: String, token: String, channel: String) -> Result<(), Box<dyn std::error::Error>> {
    // README begin
    let (client, mut events) = Client::connect(ClientConfig::new(url, token)).await?;
    let ack = client.send(&channel, "hello").await?; // retried safely until ACKed
    println!("stored as #{}", ack.seq);
    while let Some(event) = events.recv().await {
        match event {
            Event::Message(m) => println!("#{} {}: {}", m.seq, m.sender_id, m.body),
            Event::Stopped { reason } => return Err(reason.into()),
            _ => {} // Connected (HELLO), Receipt, Disconnected (it reconnects by itself), ...
        }
    }
    // README end
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args.next().unwrap_or_else(|| "ws://127.0.0.1:8080/v1/ws".to_owned());
    let channel = args.next().unwrap_or_else(|| "room1".to_owned());
    let token = std::env::var("CHATD_TOKEN").map_err(|_| "set CHATD_TOKEN to a user token")?;
    chat(url, token, channel).await
}
