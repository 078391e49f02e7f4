//! What a directory holds, for tests that check which files were left
//! behind. One file for the integration tests (`tests/common`) and the
//! library's unit tests (`src/private_file.rs` includes it under
//! `cfg(test)`).

use std::path::Path;

/// Names of the entries of `dir`, sorted.
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| {
            e.expect("a directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}
