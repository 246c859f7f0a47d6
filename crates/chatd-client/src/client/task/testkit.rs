//! A task for the unit tests, with no connection.

use tokio::sync::{mpsc, watch};

use super::Task;
use crate::client::command::Command;
use crate::client::types::Event;
use crate::config::ClientConfig;
use crate::order::StartFrom;

pub(super) fn task() -> (Task, mpsc::Sender<Command>, mpsc::Receiver<Event>) {
    task_with(true)
}

pub(super) fn task_with(fold_messages: bool) -> (Task, mpsc::Sender<Command>, mpsc::Receiver<Event>) {
    let (commands_tx, commands) = mpsc::channel(8);
    let (events, event_rx) = mpsc::channel(256);
    let (connected, _) = watch::channel(true);
    let mut config = ClientConfig::new("ws://127.0.0.1:9/v1/ws", "token");
    config.start_from = StartFrom::Beginning;
    config.fold_messages = fold_messages;
    (
        Task::new(config, commands, events, connected, "alice".into()),
        commands_tx,
        event_rx,
    )
}
