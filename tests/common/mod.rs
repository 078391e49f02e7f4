//! Helpers for the end-to-end tests: the real binaries on loopback.

#![allow(dead_code)]

pub mod h3_client;
pub mod in_memory;
pub mod listing;
pub mod raw;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

pub const SERVER: &str = env!("CARGO_BIN_EXE_quiche-server");
pub const CLIENT: &str = env!("CARGO_BIN_EXE_quiche-client");

/// How long a server may take to start, or to report a closed connection.
const WAIT: Duration = Duration::from_secs(20);

pub fn sha256_hex(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

/// `len` pseudo-random bytes (xorshift; no need for quality).
pub fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// A running `quiche-server` on an ephemeral loopback port; killed on drop.
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
    stderr: Receiver<String>,
    /// Every stderr line seen so far.
    pub log: Vec<String>,
}

impl Server {
    /// Starts the server with `args` (plus `--listen 127.0.0.1:0`) and waits
    /// until it listens.
    pub fn start(args: &[&str], qlog_dir: Option<&Path>) -> Server {
        Self::start_with_env(args, qlog_dir, &[])
    }

    /// Like [`Server::start`], with extra environment variables.
    pub fn start_with_env(args: &[&str], qlog_dir: Option<&Path>, env: &[(&str, &Path)]) -> Server {
        let mut cmd = Command::new(SERVER);
        cmd.args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .env_remove("RUST_LOG");
        match qlog_dir {
            Some(dir) => cmd.env("QLOGDIR", dir),
            None => cmd.env_remove("QLOGDIR"),
        };
        for (name, value) in env {
            cmd.env(name, value);
        }
        let mut child = cmd.spawn().expect("cannot start quiche-server");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            child,
            addr: "127.0.0.1:0".parse().unwrap(),
            stderr: rx,
            log: Vec::new(),
        };
        let line = server.wait_for_line(|l| l.contains("listening on "));
        let addr = line
            .split("listening on ")
            .nth(1)
            .and_then(|rest| rest.split(',').next())
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("no address in '{line}'"));
        server.addr = addr;
        server
    }

    /// Waits for a stderr line matching `pred` and returns it.
    pub fn wait_for_line(&mut self, pred: impl Fn(&str) -> bool) -> String {
        self.wait_for_line_within(pred, WAIT)
    }

    /// [`Self::wait_for_line`], failing the test after `limit`.
    pub fn wait_for_line_within(&mut self, pred: impl Fn(&str) -> bool, limit: Duration) -> String {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) => {
                    self.log.push(line.clone());
                    if pred(&line) {
                        return line;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!(
                        "server said nothing expected in {limit:?}; it said {:#?}",
                        self.log
                    )
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("server exited; it said {:#?}", self.log)
                }
            }
        }
    }

    /// Waits until the server reports a closed connection; returns the
    /// connection ID (hex) from that report.
    pub fn wait_for_closed_connection(&mut self) -> String {
        let line = self.wait_for_line(|l| l.contains("quiche-server: connection "));
        line.split_whitespace()
            .nth(2)
            .unwrap_or_else(|| panic!("no connection id in '{line}'"))
            .to_string()
    }

    /// Sends `signal` to the server and waits for it to exit (failing the
    /// test after [`WAIT`]); the rest of its stderr joins `log`.
    pub fn stop(&mut self, signal: i32) -> std::process::ExitStatus {
        self.stop_within(signal, WAIT)
    }

    /// [`Self::stop`], failing the test if the server has not exited
    /// within `limit`.
    pub fn stop_within(&mut self, signal: i32, limit: Duration) -> std::process::ExitStatus {
        // SAFETY: kill(2) on the child we started.
        unsafe { libc::kill(self.child.id() as i32, signal) };
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("cannot wait for the server") {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not exit within {limit:?} of signal {signal}; it said {:#?}",
                self.log
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        while let Ok(line) = self.stderr.recv_timeout(Duration::from_secs(5)) {
            self.log.push(line);
        }
        status
    }

    /// The server's process ID.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Open file descriptors of the server process.
    pub fn open_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .map(|d| d.count())
            .unwrap_or(0)
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

/// Runs `quiche-client` with `args`, `QLOGDIR` as given.
pub fn client(args: &[&str], qlog_dir: Option<&Path>) -> Output {
    client_with_env(args, qlog_dir, &[])
}

/// Like [`client`], with extra environment variables.
pub fn client_with_env(args: &[&str], qlog_dir: Option<&Path>, env: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(CLIENT);
    cmd.args(args).stdin(Stdio::null()).env_remove("RUST_LOG");
    match qlog_dir {
        Some(dir) => cmd.env("QLOGDIR", dir),
        None => cmd.env_remove("QLOGDIR"),
    };
    for (name, value) in env {
        cmd.env(name, value);
    }
    cmd.output().expect("cannot run quiche-client")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts a command failed cleanly: non-zero exit, `expected` phrases on
/// stderr, no panic.
pub fn assert_clean_failure(output: &Output, expected: &[&str]) {
    let stderr = text(&output.stderr);
    assert!(
        !output.status.success(),
        "expected failure; stdout {} stderr {stderr}",
        text(&output.stdout)
    );
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    for phrase in expected {
        assert!(
            stderr.contains(phrase),
            "'{phrase}' not in stderr: {stderr}"
        );
    }
}

/// A qlog file's JSON-SEQ records (RFC 7464: each preceded by 0x1e).
pub fn qlog_records(path: &Path) -> Vec<serde_json::Value> {
    let data = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    assert!(
        data.starts_with('\u{1e}'),
        "{} does not start with a record separator",
        path.display()
    );
    let records: Vec<serde_json::Value> = data
        .split('\u{1e}')
        .filter(|r| !r.trim().is_empty())
        .enumerate()
        .map(|(i, r)| {
            serde_json::from_str(r)
                .unwrap_or_else(|e| panic!("{} record {i} is not JSON: {e}: {r}", path.display()))
        })
        .collect();
    let header = records
        .first()
        .unwrap_or_else(|| panic!("{} is empty", path.display()));
    assert!(
        header.get("file_schema").is_some() || header.get("qlog_format").is_some(),
        "{} header lacks file_schema/qlog_format: {header}",
        path.display()
    );
    records
}

/// The `data` of every event called `name`.
pub fn events<'a>(records: &'a [serde_json::Value], name: &str) -> Vec<&'a serde_json::Value> {
    records
        .iter()
        .filter(|r| r.get("name").and_then(|n| n.as_str()) == Some(name))
        .filter_map(|r| r.get("data"))
        .collect()
}

/// The only file in `dir` whose name starts with `prefix`.
pub fn only_file(dir: &Path, prefix: &str) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .collect();
    assert_eq!(files.len(), 1, "{prefix}* in {}: {files:?}", dir.display());
    files.into_iter().next().unwrap()
}
