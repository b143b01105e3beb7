//! The private directories runs make in a temporary folder (`cipherbench-sshd-*`,
//! `cipherbench-file-*`): what a run stopped outright (SIGKILL, a crash) leaves
//! behind is found the same way for every kind, so each kind only decides whether
//! the owner is gone and what else to stop.

use std::path::{Path, PathBuf};

/// The directories in `parent` named `prefix…` that this user owns (not symlinks).
pub fn own(parent: &Path, prefix: &str) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| e.path())
        .filter(|d| std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir() && m.uid() == uid))
        .collect()
}
