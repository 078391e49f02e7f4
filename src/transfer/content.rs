//! What the server serves: a [`ContentSource`] maps a request path to a body.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use sha2::{Digest, Sha256};

use super::request::path_segments;

/// A response body: its length and a reader that yields exactly that many
/// bytes.
pub struct Body {
    pub len: u64,
    pub reader: Box<dyn Read + Send>,
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "Body({} bytes)", self.len)
    }
}

/// Why a path has no body.
#[derive(Debug)]
pub enum Lookup {
    /// Nothing there, or nothing the source is willing to show (a path that
    /// leaves the root is reported as not found).
    NotFound,
    /// Something is there but could not be read.
    Failed(io::Error),
}

/// Maps request paths (as sent by the client, e.g. `/dir/file?x=1`) to bodies.
pub trait ContentSource: Send + Sync {
    fn open(&self, path: &str) -> Result<Body, Lookup>;

    /// The length of the body `open` would give (for HEAD), without
    /// reading it.
    fn length(&self, path: &str) -> Result<u64, Lookup> {
        self.open(path).map(|b| b.len)
    }
}

/// Files under a root directory. Paths are resolved segment by segment; `..`
/// segments, paths not starting with `/`, dotfiles (any segment starting
/// with `.`, unless allowed), and anything that resolves (through symbolic
/// links) outside the root are not found. A directory serves its index
/// file (`index.html` unless [`DirSource::with_index`] names another).
///
/// A body holds no open file: each chunk is read by opening the file,
/// reading at the offset, and closing it again, so that any number of
/// pending responses costs no file descriptors. A file replaced or shrunk
/// under a response fails that response (the client sees a reset stream,
/// never a mix of two files).
#[derive(Clone, Debug)]
pub struct DirSource {
    root: PathBuf,
    dotfiles: bool,
    /// The file a directory's path serves.
    index: String,
}

/// The index file served for a directory unless told otherwise (quiche's
/// server's default too).
pub const DEFAULT_INDEX: &str = "index.html";

impl DirSource {
    pub fn new(root: &Path) -> anyhow::Result<Self> {
        let meta = std::fs::metadata(root).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => {
                anyhow::anyhow!("root directory {} does not exist", root.display())
            }
            io::ErrorKind::PermissionDenied => {
                anyhow::anyhow!("root directory {}: permission denied", root.display())
            }
            _ => anyhow::anyhow!("root directory {}: {e}", root.display()),
        })?;
        if !meta.is_dir() {
            bail!("root {} is not a directory", root.display());
        }
        // Listing it proves we may read it.
        std::fs::read_dir(root).map_err(|e| match e.kind() {
            io::ErrorKind::PermissionDenied => {
                anyhow::anyhow!("root directory {}: permission denied", root.display())
            }
            _ => anyhow::anyhow!("cannot read root directory {}: {e}", root.display()),
        })?;
        let root = root
            .canonicalize()
            .with_context(|| format!("cannot resolve root directory {}", root.display()))?;
        Ok(DirSource {
            root,
            dotfiles: false,
            index: DEFAULT_INDEX.to_string(),
        })
    }

    /// Serve `name` for a path naming a directory (quiche's `--index`). A
    /// file name, not a path: one segment, not `.`/`..`, no NUL.
    pub fn with_index(mut self, name: &str) -> anyhow::Result<Self> {
        if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
            bail!("index '{name}' must be a file name (one path segment)");
        }
        self.index = name.to_string();
        Ok(self)
    }

    /// Serve dotfiles (`/.env`, `/.git/config`) too; refused by default.
    pub fn with_dotfiles(mut self, dotfiles: bool) -> Self {
        self.dotfiles = dotfiles;
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file a request path names, if it is inside the root.
    pub fn resolve(&self, path: &str) -> Option<PathBuf> {
        let segments = path_segments(path, self.dotfiles)?;
        let mut candidate = self.root.clone();
        candidate.extend(segments);
        if candidate.is_dir() {
            candidate.push(&self.index);
        }
        // Resolves symbolic links; whatever leaves the root is refused.
        let resolved = candidate.canonicalize().ok()?;
        if !resolved.starts_with(&self.root) {
            return None;
        }
        // A link may lead to a dotfile inside the root.
        if !self.dotfiles {
            let inside = resolved.strip_prefix(&self.root).ok()?;
            if inside
                .components()
                .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
            {
                return None;
            }
        }
        Some(resolved)
    }

    fn lookup(&self, path: &str) -> Result<(PathBuf, std::fs::Metadata), Lookup> {
        let file = self.resolve(path).ok_or(Lookup::NotFound)?;
        let meta = std::fs::metadata(&file).map_err(|_| Lookup::NotFound)?;
        if !meta.is_file() {
            return Err(Lookup::NotFound);
        }
        Ok((file, meta))
    }
}

impl ContentSource for DirSource {
    fn open(&self, path: &str) -> Result<Body, Lookup> {
        let (file, meta) = self.lookup(path)?;
        // Fail now, not after the headers, if the file cannot be read.
        File::open(&file).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => Lookup::NotFound,
            _ => Lookup::Failed(e),
        })?;
        Ok(Body {
            len: meta.len(),
            reader: Box::new(LazyFile {
                path: file,
                identity: FileIdentity::of(&meta),
                offset: 0,
                end: meta.len(),
            }),
        })
    }

    fn length(&self, path: &str) -> Result<u64, Lookup> {
        self.lookup(path).map(|(_, meta)| meta.len())
    }
}

/// What tells a file from its replacement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileIdentity {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
}

impl FileIdentity {
    fn of(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        FileIdentity {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
        }
    }
}

/// Reads a file without keeping it open (see [`DirSource`]).
struct LazyFile {
    path: PathBuf,
    identity: FileIdentity,
    offset: u64,
    end: u64,
}

impl Read for LazyFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let left = self.end - self.offset;
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        if want == 0 {
            return Ok(0);
        }
        let file = File::open(&self.path)?;
        if FileIdentity::of(&file.metadata()?) != self.identity {
            return Err(io::Error::other(format!(
                "{} changed while being served",
                self.path.display()
            )));
        }
        let n = file.read_at(&mut buf[..want], self.offset)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.offset += n as u64;
        Ok(n)
    }
}

/// The same `size` pseudo-random bytes for every path, made on the fly from
/// `seed`: a server for the simulator that needs no files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyntheticSource {
    pub size: u64,
    pub seed: u64,
}

impl SyntheticSource {
    pub fn new(size: u64, seed: u64) -> Self {
        SyntheticSource { size, seed }
    }

    pub fn reader(&self) -> SyntheticReader {
        SyntheticReader {
            seed: self.seed,
            pos: 0,
            end: self.size,
        }
    }

    /// SHA-256 of the body, as lowercase hex (what the client reports).
    pub fn sha256_hex(&self) -> String {
        let mut hasher = Sha256::new();
        let mut reader = self.reader();
        let mut buf = vec![0; 64 * 1024];
        loop {
            let n = reader.fill(&mut buf);
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        hex::encode(hasher.finalize())
    }
}

impl ContentSource for SyntheticSource {
    fn open(&self, _path: &str) -> Result<Body, Lookup> {
        Ok(Body {
            len: self.size,
            reader: Box::new(self.reader()),
        })
    }
}

/// Reads the bytes of a [`SyntheticSource`]: byte `i` is byte `i % 8` of
/// splitmix64 of `seed + i / 8`.
#[derive(Clone, Debug)]
pub struct SyntheticReader {
    seed: u64,
    pos: u64,
    end: u64,
}

impl SyntheticReader {
    fn fill(&mut self, buf: &mut [u8]) -> usize {
        let n = buf
            .len()
            .min(usize::try_from(self.end - self.pos).unwrap_or(usize::MAX));
        // One splitmix64 per 8 bytes, not per byte: the simulator's server
        // makes every body byte here. First the rest of a word begun by the
        // previous read, then whole words, then the start of the next.
        let word = |index: u64| splitmix64(self.seed.wrapping_add(index)).to_le_bytes();
        let skip = (self.pos % 8) as usize;
        let head = if skip == 0 { 0 } else { (8 - skip).min(n) };
        let (first, rest) = buf[..n].split_at_mut(head);
        if head > 0 {
            first.copy_from_slice(&word(self.pos / 8)[skip..skip + head]);
        }
        let mut index = (self.pos + head as u64) / 8;
        let mut words = rest.chunks_exact_mut(8);
        for chunk in &mut words {
            chunk.copy_from_slice(&word(index));
            index += 1;
        }
        let tail = words.into_remainder();
        let tail_len = tail.len();
        tail.copy_from_slice(&word(index)[..tail_len]);
        self.pos += n as u64;
        n
    }
}

impl Read for SyntheticReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Ok(self.fill(buf))
    }
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(body: Body) -> Vec<u8> {
        let mut out = Vec::new();
        let mut reader = body.reader;
        reader.read_to_end(&mut out).unwrap();
        out
    }

    fn tree() -> (tempfile::TempDir, DirSource) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("file"), b"hello").unwrap();
        std::fs::write(root.join("sub/index.html"), b"index").unwrap();
        std::fs::write(root.join("sub/a b"), b"space").unwrap();
        std::fs::write(dir.path().join("secret"), b"secret").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret"), root.join("escape")).unwrap();
            std::os::unix::fs::symlink(root.join("file"), root.join("inside")).unwrap();
        }
        let source = DirSource::new(&root).unwrap();
        (dir, source)
    }

    #[test]
    fn serves_files_and_indexes() {
        let (_dir, s) = tree();
        assert_eq!(read_all(s.open("/file").unwrap()), b"hello");
        assert_eq!(read_all(s.open("/file?x=1").unwrap()), b"hello");
        assert_eq!(read_all(s.open("/sub/").unwrap()), b"index");
        assert_eq!(read_all(s.open("/sub/a%20b").unwrap()), b"space");
        assert_eq!(read_all(s.open("//sub//./a b").unwrap()), b"space");
        #[cfg(unix)]
        assert_eq!(read_all(s.open("/inside").unwrap()), b"hello");
    }

    #[test]
    fn refuses_paths_outside_the_root() {
        let (_dir, s) = tree();
        for path in [
            "/../secret",
            "/sub/../../secret",
            "/%2e%2e/secret",
            "../secret",
            "secret",
            "/escape",
            "/missing",
            "/%zz",
            "/file\0",
            "/..\\secret",
        ] {
            assert!(
                matches!(s.open(path), Err(Lookup::NotFound)),
                "{path} should not be found"
            );
        }
        // The root has no index.html.
        assert!(matches!(s.open("/"), Err(Lookup::NotFound)));
    }

    #[test]
    fn dotfiles_are_refused_unless_allowed() {
        let (dir, s) = tree();
        let root = dir.path().join("root");
        std::fs::create_dir(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/config"), b"git").unwrap();
        std::fs::write(root.join(".env"), b"secret=1").unwrap();
        std::os::unix::fs::symlink(root.join(".env"), root.join("visible")).unwrap();
        for path in ["/.env", "/.git/config", "/%2eenv", "/visible"] {
            assert!(matches!(s.open(path), Err(Lookup::NotFound)), "{path}");
        }
        let s = s.with_dotfiles(true);
        assert_eq!(read_all(s.open("/.env").unwrap()), b"secret=1");
        assert_eq!(read_all(s.open("/visible").unwrap()), b"secret=1");
        assert_eq!(read_all(s.open("/.git/config").unwrap()), b"git");
    }

    #[test]
    fn bodies_hold_no_file_open_and_notice_replacement() {
        let (dir, s) = tree();
        let fds = || std::fs::read_dir("/proc/self/fd").unwrap().count();
        let before = fds();
        let bodies: Vec<Body> = (0..50).map(|_| s.open("/file").unwrap()).collect();
        // Other tests run in parallel threads and open files of their own,
        // so the count may move a little; 50 open bodies holding a file
        // each would move it by 50.
        let after = fds();
        assert!(
            after < before + 25,
            "open bodies hold file descriptors: {before} before, {after} after"
        );
        assert_eq!(s.length("/file").unwrap(), 5);
        let mut body = s.open("/file").unwrap();
        // Replaced (new inode) between lookup and read: an error, not the
        // other file's bytes.
        let file = dir.path().join("root/file");
        std::fs::remove_file(&file).unwrap();
        std::fs::write(&file, b"HELLO WORLD").unwrap();
        let mut out = Vec::new();
        assert!(body.reader.read_to_end(&mut out).is_err());
        assert!(out.is_empty());
        drop(bodies);
    }

    #[test]
    fn missing_root_is_an_error() {
        let e = DirSource::new(Path::new("/nonexistent/root"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not exist"), "{e}");
    }

    #[test]
    fn synthetic_bytes_follow_their_definition_whatever_the_read_sizes() {
        let (seed, size) = (0x1234_5678_9abc_def0u64, 1000u64);
        // Byte i is byte i % 8 of splitmix64(seed + i / 8), computed here
        // byte by byte.
        let expected: Vec<u8> = (0..size)
            .map(|i| splitmix64(seed.wrapping_add(i / 8)).to_le_bytes()[(i % 8) as usize])
            .collect();
        let mut reader = SyntheticSource::new(size, seed).reader();
        let mut got = Vec::new();
        // Reads that start and end anywhere within a word.
        for len in [1usize, 3, 7, 8, 13, 2, 64, 5].iter().cycle() {
            let mut buf = vec![0; *len];
            let n = reader.fill(&mut buf);
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, expected);
    }

    #[test]
    fn synthetic_is_deterministic() {
        let s = SyntheticSource::new(100_003, 7);
        let a = read_all(s.open("/x").unwrap());
        let b = read_all(s.open("/y").unwrap());
        assert_eq!(a.len(), 100_003);
        assert_eq!(a, b);
        assert_eq!(hex::encode(Sha256::digest(&a)), s.sha256_hex());
        assert_ne!(
            a,
            read_all(SyntheticSource::new(100_003, 8).open("/").unwrap())
        );
    }
}
