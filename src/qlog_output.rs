//! qlog output: with `QLOGDIR` set, every connection writes
//! `QLOGDIR/<role>-<hex connection id>.sqlog` (JSON-SEQ), as quiche's own apps
//! do.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The environment variable naming the qlog directory.
pub const QLOG_DIR_ENV: &str = "QLOGDIR";

/// The qlog directory from `QLOGDIR`, if set and not empty.
pub fn qlog_dir_from_env() -> Option<PathBuf> {
    std::env::var_os(QLOG_DIR_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Which end of a connection writes the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Client,
    Server,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Client => "client",
            Role::Server => "server",
        }
    }
}

/// The file a connection with source connection ID `scid` logs to.
pub fn qlog_path(dir: &Path, role: Role, scid: &[u8]) -> PathBuf {
    dir.join(format!("{}-{}.sqlog", role.as_str(), hex::encode(scid)))
}

/// Starts qlog output of `conn` into `dir` (created if missing). `detail`
/// goes into the log's description (e.g. the congestion controller). Call
/// right after the connection is created, before any packet is processed.
pub fn attach(
    conn: &mut quiche::Connection,
    dir: &Path,
    role: Role,
    app: &str,
    detail: &str,
) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create qlog directory {}", dir.display()))?;
    let scid = conn.source_id().into_owned();
    let path = qlog_path(dir, role, &scid);
    let file = File::create(&path)
        .with_context(|| format!("cannot create qlog file {}", path.display()))?;
    let id = hex::encode(&scid[..]);
    conn.set_qlog(
        Box::new(BufWriter::new(file)),
        format!("{app} qlog"),
        format!("{app} qlog id={id} {detail}"),
    );
    Ok(path)
}
