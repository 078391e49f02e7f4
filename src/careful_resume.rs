//! Careful Resume's retained state on the server side (RFC 9959 section
//! 3.1): what each connection measured of its path (capacity and minimum
//! RTT), saved when it closes, keyed by the client's address prefix, with a
//! lifetime; and the file that keeps it across server restarts.
//!
//! The phase machine itself runs inside the congestion controller's host
//! (`vegas_cc::careful_resume`); this module only decides what a new
//! connection may resume and records what a closed one measured.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
pub use vegas_cc::careful_resume::LossRule;
use vegas_cc::{CarefulResumeConfig, SavedPath};

use crate::cc_select::ResolvedCc;

/// The store's file inside `--resume-store DIR`.
pub const STORE_FILE_NAME: &str = "careful-resume.store";
/// First line of a store file; another version is ignored.
const STORE_HEADER: &str = "quiche-vegas careful-resume store v1";
/// A store file larger than this is not read (a hostile or runaway file).
const MAX_STORE_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Entries kept; the oldest go first beyond this.
pub const MAX_ENTRIES: usize = 100_000;
/// Saved parameters older than this are not used (RFC 9959 section 4.3.1
/// leaves the lifetime open: hours on stable paths).
pub const DEFAULT_LIFETIME: Duration = Duration::from_secs(3600);
/// Plausibility bounds of a stored value.
const MAX_SAVED_CWND_BYTES: u64 = 1 << 32;
const MAX_SAVED_RTT: Duration = Duration::from_secs(60);

/// The client's address prefix a saved path belongs to: the whole IPv4
/// address, the /64 of an IPv6 one (one subscriber's network).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EndpointKey(IpAddr);

impl EndpointKey {
    pub fn of(ip: IpAddr) -> Self {
        match ip {
            IpAddr::V4(v4) => EndpointKey(IpAddr::V4(v4)),
            IpAddr::V6(v6) => {
                let bits = u128::from(v6) & !((1u128 << 64) - 1);
                EndpointKey(IpAddr::V6(bits.into()))
            }
        }
    }
}

impl std::fmt::Display for EndpointKey {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    path: SavedPath,
    /// When it was saved, in seconds since the Unix epoch (the store
    /// outlives the process, so no `Instant`).
    saved_at: u64,
}

/// Saved paths by client address prefix.
#[derive(Clone, Debug)]
pub struct ResumeStore {
    entries: HashMap<EndpointKey, Entry>,
    lifetime: Duration,
}

impl Default for ResumeStore {
    fn default() -> Self {
        ResumeStore::new(DEFAULT_LIFETIME)
    }
}

impl ResumeStore {
    pub fn new(lifetime: Duration) -> Self {
        ResumeStore {
            entries: HashMap::new(),
            lifetime,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The saved path for `ip`, removed from the store: section 3.2 lets
    /// only one connection use a set of saved parameters. Expired entries
    /// give nothing.
    pub fn take(&mut self, ip: IpAddr, now: SystemTime) -> Option<SavedPath> {
        let entry = self.entries.remove(&EndpointKey::of(ip))?;
        let age = unix_seconds(now).saturating_sub(entry.saved_at);
        (age <= self.lifetime.as_secs()).then_some(entry.path)
    }

    /// What a closed connection to `ip` measured replaces what was saved.
    pub fn save(&mut self, ip: IpAddr, path: SavedPath, now: SystemTime) {
        if self.entries.len() >= MAX_ENTRIES {
            self.evict_oldest();
        }
        self.entries.insert(
            EndpointKey::of(ip),
            Entry {
                path,
                saved_at: unix_seconds(now),
            },
        );
    }

    /// Section 3.5: a Safe Retreat deletes the saved parameters.
    pub fn forget(&mut self, ip: IpAddr) {
        self.entries.remove(&EndpointKey::of(ip));
    }

    fn evict_oldest(&mut self) {
        if let Some(key) = self
            .entries
            .iter()
            .min_by_key(|(k, e)| (e.saved_at, **k))
            .map(|(k, _)| *k)
        {
            self.entries.remove(&key);
        }
    }

    /// The store as text: a header line, then `PREFIX CWND_BYTES RTT_US
    /// SAVED_AT_UNIX_S` per line, sorted so that the same store gives the
    /// same bytes.
    pub fn to_text(&self) -> String {
        let mut keys: Vec<&EndpointKey> = self.entries.keys().collect();
        keys.sort();
        let mut text = format!("{STORE_HEADER}\n");
        for key in keys {
            let e = &self.entries[key];
            text.push_str(&format!(
                "{key} {} {} {}\n",
                e.path.cwnd_bytes,
                e.path.rtt.as_micros(),
                e.saved_at
            ));
        }
        text
    }

    /// Parses [`Self::to_text`]'s format. Any malformed line, or a last line
    /// without its newline, rejects the whole text: a store that is partly
    /// garbage is not trusted.
    pub fn from_text(text: &str, lifetime: Duration) -> anyhow::Result<Self> {
        // Every line ends with a newline: a file cut short is recognised.
        if !text.is_empty() && !text.ends_with('\n') {
            bail!("truncated: the last line has no newline");
        }
        let mut lines = text.lines();
        match lines.next() {
            Some(STORE_HEADER) => {}
            Some(other) => bail!(
                "unknown header {:?} (expected {STORE_HEADER:?})",
                other.chars().take(80).collect::<String>()
            ),
            None => bail!("empty file"),
        }
        let mut store = ResumeStore::new(lifetime);
        for (n, line) in lines.enumerate() {
            let line_no = n + 2;
            let fields: Vec<&str> = line.split(' ').collect();
            let [ip, cwnd, rtt_us, saved_at] = fields[..] else {
                bail!("line {line_no}: expected 4 fields, got {}", fields.len());
            };
            let ip: IpAddr = ip
                .parse()
                .with_context(|| format!("line {line_no}: bad address"))?;
            let cwnd: u64 = cwnd
                .parse()
                .with_context(|| format!("line {line_no}: bad window"))?;
            let rtt_us: u64 = rtt_us
                .parse()
                .with_context(|| format!("line {line_no}: bad RTT"))?;
            let saved_at: u64 = saved_at
                .parse()
                .with_context(|| format!("line {line_no}: bad time"))?;
            let rtt = Duration::from_micros(rtt_us);
            if cwnd == 0 || cwnd > MAX_SAVED_CWND_BYTES || rtt.is_zero() || rtt > MAX_SAVED_RTT {
                bail!("line {line_no}: implausible window {cwnd} or RTT {rtt_us} us");
            }
            if store.entries.len() >= MAX_ENTRIES {
                bail!("more than {MAX_ENTRIES} entries");
            }
            store.entries.insert(
                EndpointKey::of(ip),
                Entry {
                    path: SavedPath {
                        cwnd_bytes: cwnd,
                        rtt,
                    },
                    saved_at,
                },
            );
        }
        Ok(store)
    }

    /// Reads `dir`'s store file. A missing file is an empty store; a file
    /// that cannot be read or parsed is reported in the error, and the
    /// caller starts empty.
    pub fn load(dir: &Path, lifetime: Duration) -> anyhow::Result<Self> {
        let path = dir.join(STORE_FILE_NAME);
        let file = match std::fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ResumeStore::new(lifetime))
            }
            Err(e) => return Err(e).with_context(|| format!("cannot open {}", path.display())),
        };
        let mut bytes = Vec::new();
        file.take(MAX_STORE_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if bytes.len() as u64 > MAX_STORE_FILE_BYTES {
            bail!(
                "{} is larger than {MAX_STORE_FILE_BYTES} bytes",
                path.display()
            );
        }
        let text = std::str::from_utf8(&bytes)
            .with_context(|| format!("{} is not UTF-8", path.display()))?;
        Self::from_text(text, lifetime).with_context(|| format!("{}", path.display()))
    }

    /// Writes the store into `dir` atomically: a temporary file in the same
    /// directory, synced, then renamed over the old one, so that a crash
    /// leaves the old store or the new one, never a partial file.
    pub fn save_to(&self, dir: &Path) -> anyhow::Result<PathBuf> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join(STORE_FILE_NAME);
        let tmp = dir.join(format!(".{STORE_FILE_NAME}.tmp-{}", std::process::id()));
        let result = (|| {
            let mut file = std::fs::File::create(&tmp)?;
            file.write_all(self.to_text().as_bytes())?;
            file.sync_all()?;
            std::fs::rename(&tmp, &path)
        })();
        if let Err(e) = result {
            std::fs::remove_file(&tmp).ok();
            return Err(e).with_context(|| format!("cannot write {}", path.display()));
        }
        Ok(path)
    }
}

fn unix_seconds(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Selects `resolved` in `config` with Careful Resume on, resuming `saved`
/// if given. quiche's own algorithms are left as they are (they have no
/// Careful Resume here).
pub fn select_with_resume(
    config: &mut quiche::Config,
    resolved: &ResolvedCc,
    saved: Option<SavedPath>,
    loss_rule: LossRule,
) {
    if let ResolvedCc::Ours(spec) = resolved {
        config
            .set_cc_controller(spec.with_careful_resume(CarefulResumeConfig { saved, loss_rule }));
    }
}

/// What `conn`'s sender measured of its path, worth saving for the next
/// connection (the plug-in host's observation, through `PathStats`).
pub fn observed_path(conn: &quiche::Connection) -> Option<SavedPath> {
    let stats = conn.path_stats().next()?;
    let bytes_per_second = stats.max_bandwidth?;
    let rtt = stats.min_rtt?;
    if bytes_per_second == 0 || rtt.is_zero() {
        return None;
    }
    Some(SavedPath {
        cwnd_bytes: (bytes_per_second as f64 * rtt.as_secs_f64()).round() as u64,
        rtt,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn at(s: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(s)
    }

    fn path(cwnd: u64, rtt_ms: u64) -> SavedPath {
        SavedPath {
            cwnd_bytes: cwnd,
            rtt: Duration::from_millis(rtt_ms),
        }
    }

    const V4: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7));

    #[test]
    fn take_returns_once_and_only_within_lifetime() {
        let mut store = ResumeStore::new(Duration::from_secs(100));
        store.save(V4, path(1_500_000, 600), at(1000));
        assert_eq!(store.take(V4, at(1100)), Some(path(1_500_000, 600)));
        assert_eq!(store.take(V4, at(1100)), None, "one connection only");
        store.save(V4, path(1_500_000, 600), at(1000));
        assert_eq!(store.take(V4, at(1101)), None, "101 s > 100 s lifetime");
    }

    #[test]
    fn ipv6_hosts_of_one_64_share_an_entry() {
        let mut store = ResumeStore::default();
        let a = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 1, 2, 0, 0, 0, 1));
        let b = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 1, 2, 9, 9, 9, 9));
        let other = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 1, 3, 0, 0, 0, 1));
        store.save(a, path(100_000, 50), at(10));
        assert_eq!(store.take(other, at(10)), None);
        assert_eq!(store.take(b, at(10)), Some(path(100_000, 50)));
    }

    #[test]
    fn text_round_trips() {
        let mut store = ResumeStore::default();
        store.save(V4, path(1_500_000, 600), at(1000));
        store.save(
            IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)),
            path(200_000, 40),
            at(2000),
        );
        let text = store.to_text();
        let back = ResumeStore::from_text(&text, DEFAULT_LIFETIME).unwrap();
        assert_eq!(back.to_text(), text);
        assert_eq!(back.len(), 2);
    }

    #[test]
    fn garbage_truncated_and_wrong_version_are_rejected() {
        let good = format!("{STORE_HEADER}\n192.0.2.7 1500000 600000 1000\n");
        assert!(ResumeStore::from_text(&good, DEFAULT_LIFETIME).is_ok());
        let cases = [
            String::new(),
            "quiche-vegas careful-resume store v2\n".to_string(),
            "\u{0}\u{1}binary".to_string(),
            format!("{STORE_HEADER}\n192.0.2.7 1500000 600000"),
            format!("{STORE_HEADER}\n192.0.2.7 1500000 600000 1000 extra"),
            format!("{STORE_HEADER}\nnot-an-ip 1500000 600000 1000"),
            format!("{STORE_HEADER}\n192.0.2.7 -1 600000 1000"),
            format!("{STORE_HEADER}\n192.0.2.7 0 600000 1000"),
            format!("{STORE_HEADER}\n192.0.2.7 1500000 0 1000"),
            format!("{STORE_HEADER}\n192.0.2.7 1500000 999999999999 1000"),
            format!("{STORE_HEADER}\n192.0.2.7 99999999999999999999999 600000 1000"),
        ];
        for text in &cases {
            assert!(
                ResumeStore::from_text(text, DEFAULT_LIFETIME).is_err(),
                "accepted {text:?}"
            );
        }
        // Every prefix of a good file that cuts a line short is rejected.
        for cut in STORE_HEADER.len() + 2..good.len() - 1 {
            let text = &good[..cut];
            assert!(
                ResumeStore::from_text(text, DEFAULT_LIFETIME).is_err(),
                "accepted {text:?}"
            );
        }
    }

    #[test]
    fn too_many_entries_are_rejected() {
        let mut text = format!("{STORE_HEADER}\n");
        for i in 0..=MAX_ENTRIES as u32 {
            text.push_str(&format!("{} 100000 50000 1\n", Ipv4Addr::from(i)));
        }
        assert!(ResumeStore::from_text(&text, DEFAULT_LIFETIME).is_err());
    }

    #[test]
    fn files_load_save_and_bad_ones_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let empty = ResumeStore::load(dir.path(), DEFAULT_LIFETIME).unwrap();
        assert!(empty.is_empty(), "no file, empty store");
        let mut store = ResumeStore::default();
        store.save(V4, path(1_500_000, 600), at(1000));
        let file = store.save_to(dir.path()).unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from(STORE_FILE_NAME)]);
        let back = ResumeStore::load(dir.path(), DEFAULT_LIFETIME).unwrap();
        assert_eq!(back.to_text(), store.to_text());
        std::fs::write(&file, b"\xff\xfe garbage").unwrap();
        assert!(ResumeStore::load(dir.path(), DEFAULT_LIFETIME).is_err());
        let huge = std::fs::File::create(&file).unwrap();
        huge.set_len(MAX_STORE_FILE_BYTES + 1).unwrap();
        let e = ResumeStore::load(dir.path(), DEFAULT_LIFETIME).unwrap_err();
        assert!(e.to_string().contains("larger than"), "{e}");
    }

    #[test]
    fn a_full_store_evicts_the_oldest() {
        let mut store = ResumeStore::default();
        for i in 0..MAX_ENTRIES as u32 {
            store.save(
                IpAddr::V4(Ipv4Addr::from(i)),
                path(100_000, 50),
                at(10 + u64::from(i)),
            );
        }
        store.save(V4, path(100_000, 50), at(1_000_000));
        assert_eq!(store.len(), MAX_ENTRIES);
        let oldest = IpAddr::V4(Ipv4Addr::from(0));
        assert_eq!(store.take(oldest, at(11)), None);
        assert!(store.take(V4, at(1_000_000)).is_some());
    }
}
