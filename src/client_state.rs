//! What the client keeps between its connections to a server: the TLS
//! session to resume (`--session-file`, as quiche's client) and the token
//! of the server's NEW_TOKEN frame (RFC 9000 section 8.1.3), which spares
//! the next connection a Retry round trip (`--token-file`, or the session
//! file).
//!
//! The file is text:
//!
//! ```text
//! quiche-vegas client state 1
//! server HOST:PORT
//! session HEX
//! token HEX
//! ```
//!
//! Both are used only for the server named in it (RFC 9000 section 8.1.3:
//! a token is for the server that issued it). A session file in quiche's
//! apps' format (the raw session bytes) is read too, and used for any
//! server, as quiche's client does; we write ours. The file is written
//! with mode 0600 (a session holds a resumption secret) through a
//! temporary file created exclusively under a random name, and renamed.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::{bail, Context};

use crate::private_file::write_private_atomically;

const HEADER: &str = "quiche-vegas client state 1";
/// Largest file read: a session is a few kilobytes.
const MAX_FILE_BYTES: u64 = 256 * 1024;
/// Longest NEW_TOKEN token kept: a longer one would crowd the ClientHello
/// out of the first Initial (ours are 41 bytes).
pub const MAX_TOKEN_LEN: usize = 512;

/// A client's saved session and token for one server.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientState {
    /// The server (`host:port`) they belong to; `None`: a session file of
    /// quiche's apps, for any server.
    pub server: Option<String>,
    pub session: Option<Vec<u8>>,
    pub token: Option<Vec<u8>>,
}

impl ClientState {
    /// Whether what is saved may be offered to `server`.
    pub fn is_for(&self, server: &str) -> bool {
        self.server.as_deref().is_none_or(|s| s == server)
    }

    pub fn to_text(&self) -> String {
        let mut text = format!("{HEADER}\n");
        if let Some(server) = &self.server {
            text.push_str(&format!("server {server}\n"));
        }
        if let Some(session) = &self.session {
            text.push_str(&format!("session {}\n", hex::encode(session)));
        }
        if let Some(token) = &self.token {
            text.push_str(&format!("token {}\n", hex::encode(token)));
        }
        text
    }

    /// Our text format; `bytes` not starting with its header line are a
    /// raw session (quiche's apps' format).
    pub fn parse(bytes: &[u8]) -> anyhow::Result<ClientState> {
        let Some(rest) = bytes.strip_prefix(format!("{HEADER}\n").as_bytes()) else {
            if bytes.is_empty() {
                bail!("empty");
            }
            return Ok(ClientState {
                server: None,
                session: Some(bytes.to_vec()),
                token: None,
            });
        };
        let text = std::str::from_utf8(rest).context("not UTF-8")?;
        let mut state = ClientState::default();
        for (i, line) in text.lines().enumerate() {
            let (key, value) = line
                .split_once(' ')
                .with_context(|| format!("line {}: no value", i + 2))?;
            let decode = || hex::decode(value).with_context(|| format!("line {}: not hex", i + 2));
            match key {
                "server" => state.server = Some(value.to_string()),
                "session" => state.session = Some(decode()?),
                "token" => state.token = Some(decode()?),
                _ => bail!("line {}: unknown key '{key}'", i + 2),
            }
        }
        if state.server.is_none() {
            bail!("no server line");
        }
        if state
            .token
            .as_ref()
            .is_some_and(|t| t.len() > MAX_TOKEN_LEN)
        {
            bail!("token longer than {MAX_TOKEN_LEN} bytes");
        }
        Ok(state)
    }

    /// Reads `path`: `Ok(None)` if it does not exist. A symbolic link, a
    /// FIFO or anything else but a regular file is an error (opened without
    /// following links or blocking).
    pub fn load(path: &Path) -> anyhow::Result<Option<ClientState>> {
        let file = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot open {}", path.display())),
        };
        let meta = file.metadata()?;
        if !meta.file_type().is_file() {
            bail!("{} is not a regular file", path.display());
        }
        let mut bytes = Vec::new();
        file.take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            bail!("{} is larger than {MAX_FILE_BYTES} bytes", path.display());
        }
        Self::parse(&bytes)
            .map(Some)
            .with_context(|| format!("{}", path.display()))
    }

    /// Writes to `path` atomically, mode 0600 ([`crate::private_file`]).
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        write_private_atomically(path, self.to_text().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn text_round_trips_and_raw_sessions_are_read() {
        let state = ClientState {
            server: Some("localhost:4433".into()),
            session: Some(vec![0, 1, 255]),
            token: Some(vec![9; 41]),
        };
        let text = state.to_text();
        assert_eq!(
            text,
            format!(
                "quiche-vegas client state 1\nserver localhost:4433\nsession 0001ff\ntoken {}\n",
                "09".repeat(41)
            )
        );
        assert_eq!(ClientState::parse(text.as_bytes()).unwrap(), state);
        assert!(state.is_for("localhost:4433") && !state.is_for("localhost:4434"));
        // quiche's apps' file: the session's bytes, for any server.
        let raw = ClientState::parse(&[0, 0, 0, 5, 1]).unwrap();
        assert_eq!(raw.session, Some(vec![0, 0, 0, 5, 1]));
        assert!(raw.server.is_none() && raw.token.is_none() && raw.is_for("x:1"));
    }

    #[test]
    fn bad_files_are_errors() {
        for bad in [
            &b""[..],
            b"quiche-vegas client state 1\ntoken 00\n",
            b"quiche-vegas client state 1\nserver a:1\ntoken zz\n",
            b"quiche-vegas client state 1\nserver a:1\nfoo 00\n",
            b"quiche-vegas client state 1\nserver a:1\ntoken\n",
            b"quiche-vegas client state 1\n\xff\n",
        ] {
            assert!(ClientState::parse(bad).is_err(), "{bad:?}");
        }
        let long = format!(
            "quiche-vegas client state 1\nserver a:1\ntoken {}\n",
            "00".repeat(MAX_TOKEN_LEN + 1)
        );
        assert!(ClientState::parse(long.as_bytes()).is_err());
    }

    #[test]
    fn files_are_private_and_links_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        assert_eq!(ClientState::load(&path).unwrap(), None);
        let state = ClientState {
            server: Some("h:1".into()),
            session: None,
            token: Some(vec![1, 2]),
        };
        state.save(&path).unwrap();
        assert_eq!(ClientState::load(&path).unwrap(), Some(state));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // Only the file itself: no temporary left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert!(ClientState::load(&link).is_err());
    }
}
