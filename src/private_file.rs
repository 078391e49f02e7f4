//! Replacing a small private file atomically: the Careful Resume store
//! ([`crate::careful_resume`]) and the client's session and token file
//! ([`crate::client_state`]) are written this one way.
//!
//! The bytes go to a temporary file in the destination's directory, which is
//! synced and renamed over the destination, then the directory is synced:
//! a crash leaves the old file or the new one, never a part. The temporary
//! file has a random name and is created exclusively (`O_CREAT|O_EXCL`),
//! mode 0600, without following a symbolic link (`O_NOFOLLOW`): a link, a
//! FIFO or any file planted in the directory under that name makes the write
//! fail instead of being written through, opened or blocked on, and a link
//! planted at the destination is replaced by the rename, not followed.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// Bytes of the destination's name kept in the temporary name, which adds
/// 23 (`.` + `.tmp-` + 16 hex digits): any name the file system takes still
/// has a temporary name that fits its 255-byte limit.
const MAX_NAME_IN_TEMPORARY: usize = 64;

/// Replaces `path` with `bytes`, privately (mode 0600) and atomically (see
/// the module's documentation).
pub fn write_private_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut suffix = [0u8; 8];
    getrandom::fill(&mut suffix).map_err(|e| anyhow::anyhow!("no randomness: {e}"))?;
    let tmp = temporary_name(path, &hex::encode(suffix))?;
    write_through(&tmp, path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

/// The directory `path` is in (`.` for a bare name).
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// `.NAME.tmp-SUFFIX` beside `path`, NAME cut to
/// [`MAX_NAME_IN_TEMPORARY`] bytes at a character boundary.
fn temporary_name(path: &Path, suffix: &str) -> anyhow::Result<PathBuf> {
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?
        .to_string_lossy();
    let mut end = name.len().min(MAX_NAME_IN_TEMPORARY);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    Ok(directory_of(path).join(format!(".{}.tmp-{suffix}", &name[..end])))
}

/// Writes `bytes` to `tmp` (created here, never opened if it exists) and
/// renames it to `path`. A temporary file this call created is removed on
/// failure; anything else found under its name is left alone.
fn write_through(tmp: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(tmp)?;
    let result = (|| {
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(tmp, path)
    })();
    if let Err(e) = result {
        std::fs::remove_file(tmp).ok();
        return Err(e);
    }
    // The rename itself survives a crash once the directory is synced.
    File::open(directory_of(path))?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::names_in;
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    use std::sync::mpsc;
    use std::time::Duration;

    /// Runs `f` on a thread of its own and fails the test if it has not
    /// returned within a minute: a call that blocks (opening a FIFO) fails
    /// instead of hanging the suite.
    fn without_blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            tx.send(f()).ok();
        });
        rx.recv_timeout(Duration::from_secs(60))
            .expect("the write blocked")
    }

    fn mkfifo(path: &Path) {
        let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn writes_replace_the_file_privately_and_leave_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        std::fs::write(&path, b"old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private_atomically(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "mode {mode:o}");
        assert_eq!(names_in(dir.path()), ["state"]);
    }

    #[test]
    fn a_link_planted_at_the_temporary_name_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim_dir = tempfile::tempdir().unwrap();
        let victim = victim_dir.path().join("victim");
        std::fs::write(&victim, b"root's file").unwrap();
        let path = dir.path().join("state");
        let tmp = temporary_name(&path, "0123456789abcdef").unwrap();
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        let e = write_through(&tmp, &path, b"secret").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists, "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"root's file");
        assert!(!path.exists(), "nothing renamed into place");
        // The planted link is not ours to remove.
        assert!(std::fs::symlink_metadata(&tmp)
            .unwrap()
            .file_type()
            .is_symlink());
        // A dangling link is refused too (O_EXCL does not follow it to
        // create its target).
        let dangling = temporary_name(&path, "fedcba9876543210").unwrap();
        let target = victim_dir.path().join("created-through-link");
        std::os::unix::fs::symlink(&target, &dangling).unwrap();
        assert!(write_through(&dangling, &path, b"secret").is_err());
        assert!(!target.exists());
    }

    #[test]
    fn a_link_at_the_destination_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim_dir = tempfile::tempdir().unwrap();
        let victim = victim_dir.path().join("victim");
        std::fs::write(&victim, b"root's file").unwrap();
        let path = dir.path().join("state");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        write_private_atomically(&path, b"secret").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"root's file");
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert!(meta.file_type().is_file(), "{meta:?}");
        assert_eq!(std::fs::read(&path).unwrap(), b"secret");
    }

    #[test]
    fn a_fifo_at_the_temporary_name_or_the_destination_never_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        let tmp = temporary_name(&path, "0123456789abcdef").unwrap();
        mkfifo(&tmp);
        let (t, p) = (tmp.clone(), path.clone());
        let e = without_blocking(move || write_through(&t, &p, b"secret")).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists, "{e}");
        assert!(std::fs::symlink_metadata(&tmp)
            .unwrap()
            .file_type()
            .is_fifo());
        // At the destination, the FIFO is replaced by the new file.
        std::fs::remove_file(&tmp).unwrap();
        mkfifo(&path);
        let p = path.clone();
        without_blocking(move || write_private_atomically(&p, b"secret")).unwrap();
        assert!(std::fs::symlink_metadata(&path)
            .unwrap()
            .file_type()
            .is_file());
        assert_eq!(std::fs::read(&path).unwrap(), b"secret");
    }

    #[test]
    fn temporary_names_are_bounded_and_random() {
        let dir = tempfile::tempdir().unwrap();
        let long = "é".repeat(127);
        let path = dir.path().join(&long);
        let tmp = temporary_name(&path, "0123456789abcdef").unwrap();
        let name = tmp.file_name().unwrap().to_str().unwrap();
        assert!(name.len() <= 255, "{} bytes", name.len());
        assert!(name.starts_with(&format!(".{}", "é".repeat(32))));
        write_private_atomically(&path, b"x").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"x");
        assert!(temporary_name(Path::new("/"), "00").is_err());
    }
}
