//! The private directories runs make in a temporary folder (`cipherbench-sshd-*`,
//! `cipherbench-file-*`): what a run stopped outright (SIGKILL, a crash) leaves
//! behind is found the same way for every kind, so each kind only decides whether
//! the owner is gone and what else to stop. The owner is named by a token (host,
//! pid and the process's start time) that the history's run rows use too.

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

/// This process as a run's owner: `host:pid:start`, where start is the process's
/// start time in clock ticks since boot (field 22 of /proc/PID/stat).
pub fn owner_token() -> String {
    format!(
        "{}:{}:{}",
        hostname(),
        std::process::id(),
        start_ticks(std::process::id()).unwrap_or(0)
    )
}

pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn start_ticks(pid: u32) -> Option<u64> {
    Some(crate::proc::Stat::read(pid)?.starttime)
}

/// Whether the owner named by `token` is certainly gone (same host, and its pid
/// is free or belongs to a process started at another time).
pub fn owner_gone(token: &str) -> bool {
    let mut it = token.rsplitn(3, ':');
    let (Some(start), Some(pid), Some(host)) = (it.next(), it.next(), it.next()) else {
        return false;
    };
    let (Ok(start), Ok(pid)) = (start.parse::<u64>(), pid.parse::<u32>()) else {
        return false;
    };
    if host != hostname() {
        return false;
    }
    match start_ticks(pid) {
        None => true,
        Some(now) => start != 0 && now != start,
    }
}
