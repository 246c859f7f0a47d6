//! The `chatd` binary as a child process: a clean environment, its address
//! read from its log, every line of its output kept.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::{ws_connect_hello, Admin, WsClient};

/// A command for the binary at `bin` (in a test, the [`chatd!`](crate::chatd)
/// macro supplies it) with a clean environment (only `PATH`), run in `dir`.
pub fn chatd_command(bin: &str, dir: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir(dir);
    cmd
}

/// A `chatd serve` process started by a test, with its output kept.
pub struct ServerProcess {
    pub child: Child,
    /// `host:port` it listens on.
    pub addr: String,
    /// Every line of its stdout and stderr so far.
    pub log: Arc<Mutex<Vec<String>>>,
}

impl ServerProcess {
    /// Starts `chatd serve --listen 127.0.0.1:0` and waits for its address.
    pub fn start(mut cmd: Command) -> Self {
        let mut child = cmd
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn chatd");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        for pipe in [
            Box::new(child.stdout.take().expect("stdout")) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().expect("stderr")),
        ] {
            let log = log.clone();
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    // The address is in the "chatd listening" line, as
                    // `addr=…` in text logs or an `addr` field in JSON logs.
                    if line.contains("chatd listening") {
                        if let Some(rest) = line.split("addr=").nth(1) {
                            let _ = tx.send(rest.split_whitespace().next().unwrap_or_default().to_owned());
                        } else if let Ok(json) = serde_json::from_str::<Value>(&line) {
                            let addr = json["addr"].as_str().or(json["fields"]["addr"].as_str());
                            if let Some(addr) = addr {
                                let _ = tx.send(addr.to_owned());
                            }
                        }
                    }
                    log.lock().expect("log").push(line);
                }
            });
        }
        let addr = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(addr) => addr,
            Err(_) => {
                let _ = child.kill();
                panic!("chatd did not start: {:?}", log.lock().expect("log"));
            }
        };
        Self { child, addr, log }
    }

    /// `http://host:port` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The admin HTTP API (and probes) of this process, with admin token `token`.
    pub fn admin(&self, token: &str) -> Admin {
        Admin::new(&self.addr, token)
    }

    /// Connects with `token` and reads HELLO.
    pub async fn connect(&self, token: &str) -> WsClient {
        ws_connect_hello(&self.addr, token).await
    }

    /// Sends signal `name` (e.g. `TERM`) with kill(1).
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    }

    /// Kills the process (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits for exit and returns the exit code.
    pub fn wait(mut self) -> i32 {
        for _ in 0..300 {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code().unwrap_or(-1);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        panic!("chatd did not exit: {:?}", self.log.lock().expect("log"));
    }

    /// Its output so far, one line each.
    pub fn log_text(&self) -> String {
        self.log.lock().expect("log").join("\n")
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
