//! Careful Resume's retained state on the server side (RFC 9959 section
//! 3.1): what each connection measured of its path (capacity and minimum
//! RTT), saved when it closes, keyed by the client's address prefix, with a
//! lifetime; and the file that keeps it across server restarts.
//!
//! The phase machine itself runs inside the congestion controller's host
//! (`vegas_cc::careful_resume`); this module only decides what a new
//! connection may resume and records what a closed one measured.

use std::collections::HashMap;
use std::io::Read;
use std::net::IpAddr;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
pub use vegas_cc::careful_resume::LossRule;
use vegas_cc::{CarefulResumeConfig, SavedPath};

use crate::cc_select::ResolvedCc;
use crate::private_file::write_private_atomically;

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
    /// caller starts empty. The file is opened without following a symbolic
    /// link and without blocking, and only a regular file is read: a link
    /// or a FIFO planted under its name is an error, not a hang.
    pub fn load(dir: &Path, lifetime: Duration) -> anyhow::Result<Self> {
        let path = dir.join(STORE_FILE_NAME);
        let file = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ResumeStore::new(lifetime))
            }
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                bail!("{} is a symbolic link: not followed", path.display())
            }
            Err(e) => return Err(e).with_context(|| format!("cannot open {}", path.display())),
        };
        let meta = file
            .metadata()
            .with_context(|| format!("cannot stat {}", path.display()))?;
        if !meta.file_type().is_file() {
            bail!("{} is not a regular file", path.display());
        }
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

    /// Writes the store into `dir` atomically and privately
    /// ([`crate::private_file`]): the old store or the new one survives a
    /// crash, never a partial file, and nothing planted in the directory is
    /// written through.
    pub fn save_to(&self, dir: &Path) -> anyhow::Result<PathBuf> {
        let path = dir.join(STORE_FILE_NAME);
        write_private_atomically(&path, self.to_text().as_bytes())?;
        Ok(path)
    }

    /// Takes in `other`'s entries where they are newer than ours (another
    /// server sharing the directory saved them), keeping at most
    /// [`MAX_ENTRIES`], the newest.
    pub fn merge_newer(&mut self, other: ResumeStore) {
        for (key, entry) in other.entries {
            match self.entries.get(&key) {
                Some(ours) if ours.saved_at >= entry.saved_at => {}
                _ => {
                    self.entries.insert(key, entry);
                }
            }
        }
        if self.entries.len() > MAX_ENTRIES {
            let mut by_age: Vec<(u64, EndpointKey)> =
                self.entries.iter().map(|(k, e)| (e.saved_at, *k)).collect();
            by_age.sort_unstable();
            let excess = self.entries.len() - MAX_ENTRIES;
            for (_, key) in by_age.into_iter().take(excess) {
                self.entries.remove(&key);
            }
        }
    }
}

/// Checks `--resume-store DIR` before the server uses it, creating it
/// (mode 0700) if missing: it must be a directory owned by this user or
/// root and writable by nobody else, or anyone who may write there could
/// plant files the server reads or replace the store it writes.
pub fn prepare_store_dir(dir: &Path) -> anyhow::Result<()> {
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| {
                format!("cannot create the resume store directory {}", dir.display())
            })?;
    }
    let meta = std::fs::metadata(dir)
        .with_context(|| format!("resume store directory {}", dir.display()))?;
    if !meta.is_dir() {
        bail!("resume store {} is not a directory", dir.display());
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o022 != 0 {
        bail!(
            "resume store directory {} is writable by group or others (mode {mode:04o}): \
             refused, as anyone who can write there can plant files the server trusts \
             (chmod go-w it or choose another directory)",
            dir.display()
        );
    }
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me && meta.uid() != 0 {
        bail!(
            "resume store directory {} belongs to user {}, not to this user ({me}) or root: refused",
            dir.display(),
            meta.uid()
        );
    }
    Ok(())
}

/// A closed connection's measurement, on its way to the store file.
enum StoreUpdate {
    Save(IpAddr, SavedPath, SystemTime),
    /// Write now what has come so far, then say so.
    Flush(mpsc::Sender<()>),
}

/// Writes the store file on a thread of its own: the event loop only hands
/// over each closed connection's measurement (a channel send), and the
/// thread writes at most once per [`STORE_WRITE_INTERVAL`], however many
/// connections closed in between, merging what another server sharing the
/// directory wrote meanwhile. Dropping it (or [`Self::finish`]) writes what
/// is pending and waits for the thread.
pub struct StoreWriter {
    updates: Option<mpsc::Sender<StoreUpdate>>,
    thread: Option<JoinHandle<()>>,
    writes: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

/// The store file is rewritten at most this often.
pub const STORE_WRITE_INTERVAL: Duration = Duration::from_secs(1);

impl StoreWriter {
    /// Starts the writer for `dir` from `store` (what was loaded at start).
    pub fn start(dir: PathBuf, store: ResumeStore) -> anyhow::Result<StoreWriter> {
        Self::with_interval(dir, store, STORE_WRITE_INTERVAL)
    }

    fn with_interval(
        dir: PathBuf,
        mut store: ResumeStore,
        interval: Duration,
    ) -> anyhow::Result<StoreWriter> {
        let (tx, rx) = mpsc::channel::<StoreUpdate>();
        let writes = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = std::sync::Arc::clone(&writes);
        let thread = std::thread::Builder::new()
            .name("resume-store".into())
            .spawn(move || {
                let write = |store: &mut ResumeStore| {
                    // Another server may share the directory: keep what it
                    // saved that is newer than ours.
                    if let Ok(on_disk) = ResumeStore::load(&dir, store.lifetime) {
                        store.merge_newer(on_disk);
                    }
                    if let Err(e) = store.save_to(&dir) {
                        log::warn!("careful resume: {e:#}");
                    }
                    counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                };
                let mut pending = false;
                let mut waiters: Vec<mpsc::Sender<()>> = Vec::new();
                loop {
                    let update = if pending {
                        rx.recv_timeout(interval)
                    } else {
                        rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected)
                    };
                    match update {
                        Ok(StoreUpdate::Save(ip, path, at)) => {
                            store.save(ip, path, at);
                            pending = true;
                            continue;
                        }
                        Ok(StoreUpdate::Flush(done)) => waiters.push(done),
                        Err(mpsc::RecvTimeoutError::Timeout) => {}
                        Err(mpsc::RecvTimeoutError::Disconnected) => {
                            if pending {
                                write(&mut store);
                            }
                            return;
                        }
                    }
                    if pending {
                        write(&mut store);
                        pending = false;
                    }
                    for done in waiters.drain(..) {
                        done.send(()).ok();
                    }
                }
            })
            .context("cannot start the resume store's writer thread")?;
        Ok(StoreWriter {
            updates: Some(tx),
            thread: Some(thread),
            writes,
        })
    }

    /// Queues a closed connection's measurement; never blocks on the disk.
    pub fn save(&self, ip: IpAddr, path: SavedPath, at: SystemTime) {
        if let Some(tx) = &self.updates {
            tx.send(StoreUpdate::Save(ip, path, at)).ok();
        }
    }

    /// Writes what is pending now and waits until it is on disk.
    pub fn flush(&self) {
        let (done_tx, done_rx) = mpsc::channel();
        if let Some(tx) = &self.updates {
            if tx.send(StoreUpdate::Flush(done_tx)).is_ok() {
                done_rx.recv().ok();
            }
        }
    }

    /// How many times the file was written.
    pub fn writes(&self) -> usize {
        self.writes.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Writes what is pending and stops the thread.
    pub fn finish(&mut self) {
        self.updates.take();
        if let Some(thread) = self.thread.take() {
            thread.join().ok();
        }
    }
}

impl Drop for StoreWriter {
    fn drop(&mut self) {
        self.finish();
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

    #[test]
    fn the_temporary_file_never_follows_a_planted_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let victim_dir = tempfile::tempdir().unwrap();
        let victim = victim_dir.path().join("victim");
        std::fs::write(&victim, b"root's file").unwrap();
        // The name the store's temporary file had (the server's pid), and the
        // store's own name, both links to the victim.
        let planted = dir
            .path()
            .join(format!(".{STORE_FILE_NAME}.tmp-{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let mut store = ResumeStore::default();
        store.save(V4, path(1_500_000, 600), at(1000));
        let file = store.save_to(dir.path()).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"root's file");
        let meta = std::fs::symlink_metadata(&file).unwrap();
        assert!(meta.file_type().is_file(), "the store became {meta:?}");
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        // A link at the store's name is replaced, not written through, and
        // is refused when loading.
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(&victim, &file).unwrap();
        let e = ResumeStore::load(dir.path(), DEFAULT_LIFETIME).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        store.save_to(dir.path()).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"root's file");
        assert!(std::fs::symlink_metadata(&file)
            .unwrap()
            .file_type()
            .is_file());
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join(STORE_FILE_NAME);
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        // On a thread, so that a blocking open fails the test instead of
        // hanging it.
        let (tx, rx) = mpsc::channel();
        let path = dir.path().to_path_buf();
        std::thread::spawn(move || {
            tx.send(ResumeStore::load(&path, DEFAULT_LIFETIME).map(|s| s.len()))
                .ok();
        });
        let result = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("loading a FIFO blocked");
        let e = result.unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }

    #[test]
    fn store_directories_others_can_write_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let parent = tempfile::tempdir().unwrap();
        let fresh = parent.path().join("new/store");
        prepare_store_dir(&fresh).unwrap();
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "created {mode:o}");
        for (mode, ok) in [
            (0o700, true),
            (0o755, true),
            (0o775, false),
            (0o777, false),
            (0o1777, false),
            (0o722, false),
        ] {
            std::fs::set_permissions(&fresh, std::fs::Permissions::from_mode(mode)).unwrap();
            let result = prepare_store_dir(&fresh);
            assert_eq!(result.is_ok(), ok, "mode {mode:o}: {result:?}");
            if let Err(e) = result {
                assert!(e.to_string().contains("writable by group or others"), "{e}");
            }
        }
        let file = parent.path().join("file");
        std::fs::write(&file, b"").unwrap();
        assert!(prepare_store_dir(&file).is_err());
    }

    #[test]
    fn the_writer_batches_and_never_writes_on_the_callers_thread() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(STORE_FILE_NAME);
        let mut writer = StoreWriter::with_interval(
            dir.path().to_path_buf(),
            ResumeStore::default(),
            Duration::from_secs(3600),
        )
        .unwrap();
        for i in 0..100u32 {
            writer.save(
                IpAddr::V4(Ipv4Addr::from(i)),
                path(100_000, 50),
                at(10 + u64::from(i)),
            );
        }
        // Handed over, not written: the caller did not wait for the disk.
        assert_eq!(writer.writes(), 0);
        assert!(!file.exists());
        writer.flush();
        assert_eq!(writer.writes(), 1, "100 saves, one write");
        let back = ResumeStore::load(dir.path(), DEFAULT_LIFETIME).unwrap();
        assert_eq!(back.len(), 100);
        // What is pending at the end is written when the writer stops.
        writer.save(V4, path(1_500_000, 600), at(5000));
        writer.finish();
        let back = ResumeStore::load(dir.path(), DEFAULT_LIFETIME).unwrap();
        assert_eq!(back.len(), 101);
    }

    #[test]
    fn the_writer_keeps_newer_entries_of_another_server() {
        let dir = tempfile::tempdir().unwrap();
        let other = IpAddr::V4(Ipv4Addr::new(198, 51, 100, 1));
        let mut theirs = ResumeStore::default();
        theirs.save(other, path(300_000, 80), at(2000));
        theirs.save(V4, path(900_000, 600), at(3000));
        let mut writer =
            StoreWriter::start(dir.path().to_path_buf(), ResumeStore::default()).unwrap();
        // Our older measurement of V4 loses to theirs; theirs of `other`
        // stays although we never saw it.
        writer.save(V4, path(1_500_000, 600), at(1000));
        theirs.save_to(dir.path()).unwrap();
        writer.finish();
        let mut back = ResumeStore::load(dir.path(), DEFAULT_LIFETIME).unwrap();
        assert_eq!(back.take(V4, at(3000)), Some(path(900_000, 600)));
        assert_eq!(back.take(other, at(3000)), Some(path(300_000, 80)));
    }
}
