//! Where the client puts a response body: counted, hashed, optionally saved.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Counts and hashes (SHA-256) a body, and saves it to a file if asked.
///
/// A saved body goes to a new temporary file beside its destination (a
/// hidden name with a random part, created exclusively) and is renamed to
/// the destination only by [`BodySink::commit`], once the caller has judged
/// the response complete. Until then an existing file of that name is never
/// touched; a sink dropped without commit removes its temporary file.
#[derive(Debug)]
pub struct BodySink {
    bytes: u64,
    /// `None`: the body is only counted (no one will check its hash).
    hasher: Option<Sha256>,
    file: Option<SavedFile>,
}

#[derive(Debug)]
struct SavedFile {
    destination: PathBuf,
    temporary: PathBuf,
    writer: Option<BufWriter<File>>,
    committed: bool,
}

impl Drop for SavedFile {
    fn drop(&mut self) {
        if !self.committed {
            self.writer = None;
            std::fs::remove_file(&self.temporary).ok();
        }
    }
}

impl BodySink {
    /// A sink that keeps nothing but the count and hash.
    pub fn counting() -> Self {
        BodySink {
            bytes: 0,
            hasher: Some(Sha256::new()),
            file: None,
        }
    }

    /// A sink that only counts: for a body that never ends, whose hash no
    /// one can check.
    pub fn counting_unhashed() -> Self {
        BodySink {
            hasher: None,
            ..Self::counting()
        }
    }

    /// A sink that also saves the body as `destination`, once committed.
    pub fn to_file(destination: &Path) -> io::Result<Self> {
        let dir = destination.parent().unwrap_or(Path::new("."));
        let name = destination
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut attempts = 0;
        let (temporary, file) = loop {
            let mut random = [0u8; 8];
            getrandom::fill(&mut random).map_err(|e| io::Error::other(e.to_string()))?;
            let temporary = dir.join(format!(
                ".{}.partial-{}",
                name_prefix(&name, MAX_NAME_IN_TEMPORARY),
                hex::encode(random)
            ));
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&temporary)
            {
                Ok(file) => break (temporary, file),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 8 => {
                    attempts += 1;
                }
                Err(e) => return Err(e),
            }
        };
        Ok(BodySink {
            file: Some(SavedFile {
                destination: destination.to_path_buf(),
                temporary,
                writer: Some(BufWriter::new(file)),
                committed: false,
            }),
            ..Self::counting()
        })
    }

    pub fn write(&mut self, data: &[u8]) -> io::Result<()> {
        self.bytes += data.len() as u64;
        if let Some(hasher) = self.hasher.as_mut() {
            hasher.update(data);
        }
        if let Some(writer) = self.file.as_mut().and_then(|f| f.writer.as_mut()) {
            writer.write_all(data)?;
        }
        Ok(())
    }

    /// Whether the sink hashes what is written (see [`Self::counting_unhashed`]).
    pub fn is_hashing(&self) -> bool {
        self.hasher.is_some()
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Where the body was saved: only once committed.
    pub fn path(&self) -> Option<&Path> {
        self.file
            .as_ref()
            .filter(|f| f.committed)
            .map(|f| f.destination.as_path())
    }

    /// The temporary file the body is written to before commit.
    pub fn temporary_path(&self) -> Option<&Path> {
        self.file.as_ref().map(|f| f.temporary.as_path())
    }

    /// Returns the SHA-256 of everything written, as lowercase hex. The
    /// sink can still be read (`bytes`) and committed afterwards.
    pub fn finish(&mut self) -> String {
        // An unhashed sink gives an empty string: no hash to compare.
        self.hasher.as_mut().map_or_else(String::new, |hasher| {
            hex::encode(std::mem::take(hasher).finalize())
        })
    }

    /// Saves the body under its destination: flushes and syncs the
    /// temporary file and renames it over the destination. Nothing to do
    /// for a counting sink.
    pub fn commit(&mut self) -> io::Result<()> {
        let Some(file) = &mut self.file else {
            return Ok(());
        };
        if let Some(mut writer) = file.writer.take() {
            writer.flush()?;
            writer.get_ref().sync_all()?;
        }
        std::fs::rename(&file.temporary, &file.destination)?;
        file.committed = true;
        Ok(())
    }

    /// Drops the body: removes the temporary file (also done on drop).
    pub fn discard(&mut self) {
        self.file = None;
    }
}

/// Bytes of the destination's name kept in its temporary name, which adds
/// 26 (`.` + `.partial-` + 16 hex digits): a name of up to 255 bytes, the
/// file system's limit, still has a temporary name that fits.
const MAX_NAME_IN_TEMPORARY: usize = 64;

/// At most `max` bytes of `name`, cut at a character boundary.
fn name_prefix(name: &str, max: usize) -> &str {
    let mut end = name.len().min(max);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// The file name under `--dump-responses` for a request path: its last
/// segment (without query), `index.html` for a directory, with characters
/// that could name another directory replaced.
pub fn dump_file_name(path: &str) -> String {
    let path = path.split(['?', '#']).next().unwrap_or("");
    let last = path.rsplit('/').next().unwrap_or("");
    let name: String = last
        .chars()
        .map(|c| {
            if c == '\\' || c == '\0' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    match name.as_str() {
        "" => "index.html".to_string(),
        "." | ".." => "_".repeat(name.len()),
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::names_in;

    #[test]
    fn hashes_and_counts() {
        let mut s = BodySink::counting();
        s.write(b"hello ").unwrap();
        s.write(b"world").unwrap();
        assert_eq!(s.bytes(), 11);
        let expected = hex::encode(Sha256::digest(b"hello world"));
        assert_eq!(s.finish(), expected);
        s.commit().unwrap();
        assert_eq!(s.path(), None);
    }

    #[test]
    fn an_unhashed_sink_counts_and_hashes_nothing() {
        let mut s = BodySink::counting_unhashed();
        s.write(b"hello ").unwrap();
        s.write(b"world").unwrap();
        assert_eq!(s.bytes(), 11);
        assert!(!s.is_hashing());
        assert_eq!(s.finish(), "");
    }

    #[test]
    fn saves_only_on_commit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        std::fs::write(&path, b"old good file").unwrap();
        let mut s = BodySink::to_file(&path).unwrap();
        s.write(b"abc").unwrap();
        s.finish();
        // Before commit the old file is intact; the body is elsewhere.
        assert_eq!(std::fs::read(&path).unwrap(), b"old good file");
        assert_eq!(s.path(), None);
        let temporary = s.temporary_path().unwrap().to_path_buf();
        assert_eq!(temporary.parent(), Some(dir.path()));
        s.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"abc");
        assert_eq!(s.path(), Some(path.as_path()));
        assert!(!temporary.exists());
        drop(s);
        assert_eq!(std::fs::read(&path).unwrap(), b"abc");
        assert_eq!(names_in(dir.path()), vec!["out"]);
    }

    #[test]
    fn dropped_or_discarded_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        std::fs::write(&path, b"old").unwrap();
        let mut a = BodySink::to_file(&path).unwrap();
        a.write(b"partial").unwrap();
        let mut b = BodySink::to_file(&path).unwrap();
        assert_ne!(a.temporary_path(), b.temporary_path());
        b.write(b"x").unwrap();
        b.discard();
        drop(a);
        assert_eq!(names_in(dir.path()), vec!["out"]);
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
    }

    #[test]
    fn names_up_to_the_file_system_limit_save() {
        let dir = tempfile::tempdir().unwrap();
        // 245 bytes: the temporary name was 271 and could not be created;
        // 255 is the most a name can have; multi-byte characters are not
        // cut in half.
        for name in ["a".repeat(245), "b".repeat(255), "é".repeat(127)] {
            let path = dir.path().join(&name);
            let mut s = BodySink::to_file(&path).unwrap();
            let temporary = s.temporary_path().unwrap().to_path_buf();
            assert!(temporary.file_name().unwrap().len() <= 255);
            s.write(b"body").unwrap();
            s.finish();
            s.commit().unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), b"body");
        }
    }

    #[test]
    fn dump_names() {
        assert_eq!(dump_file_name("/file"), "file");
        assert_eq!(dump_file_name("/a/b.bin?x=1"), "b.bin");
        assert_eq!(dump_file_name("/"), "index.html");
        assert_eq!(dump_file_name("/dir/"), "index.html");
        assert_eq!(dump_file_name("/.."), "__");
        assert_eq!(dump_file_name("/a\\b"), "a_b");
    }
}
