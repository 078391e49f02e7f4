//! Where the client puts a response body: counted, hashed, optionally saved.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Counts and hashes (SHA-256) a body, and writes it to a file if asked.
#[derive(Debug)]
pub struct BodySink {
    bytes: u64,
    hasher: Sha256,
    file: Option<(PathBuf, BufWriter<File>)>,
}

impl BodySink {
    /// A sink that keeps nothing but the count and hash.
    pub fn counting() -> Self {
        BodySink {
            bytes: 0,
            hasher: Sha256::new(),
            file: None,
        }
    }

    /// A sink that also writes the body to `path` (created or truncated).
    pub fn to_file(path: &Path) -> io::Result<Self> {
        let file = File::create(path)?;
        Ok(BodySink {
            file: Some((path.to_path_buf(), BufWriter::new(file))),
            ..Self::counting()
        })
    }

    pub fn write(&mut self, data: &[u8]) -> io::Result<()> {
        self.bytes += data.len() as u64;
        self.hasher.update(data);
        if let Some((_, file)) = &mut self.file {
            file.write_all(data)?;
        }
        Ok(())
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn path(&self) -> Option<&Path> {
        self.file.as_ref().map(|(p, _)| p.as_path())
    }

    /// Flushes the file and returns the SHA-256 of everything written, as
    /// lowercase hex. The sink can still be read (`bytes`) afterwards.
    pub fn finish(&mut self) -> io::Result<String> {
        if let Some((_, file)) = &mut self.file {
            file.flush()?;
        }
        let hasher = std::mem::take(&mut self.hasher);
        Ok(hex::encode(hasher.finalize()))
    }
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

    #[test]
    fn hashes_and_counts() {
        let mut s = BodySink::counting();
        s.write(b"hello ").unwrap();
        s.write(b"world").unwrap();
        assert_eq!(s.bytes(), 11);
        assert_eq!(
            s.finish().unwrap(),
            "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"
        );
    }

    #[test]
    fn writes_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let mut s = BodySink::to_file(&path).unwrap();
        s.write(b"abc").unwrap();
        s.finish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"abc");
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
