//! Where the history lives by default, and what keeps it private.
//!
//! The default folder is `$XDG_DATA_HOME/cipherbench`, else
//! `$HOME/.local/share/cipherbench` when that home exists (from `HOME`, else the
//! passwd entry), else `$XDG_RUNTIME_DIR/cipherbench` when that folder is this
//! user's own with mode 0700. Nothing else: no shared folder such as /tmp, and a
//! home that does not exist is never made. Without any of them the command is
//! refused (exit 2) and asks for `--db`.
//!
//! Every folder the store makes is made 0700. One that already exists must be a
//! folder (not a symbolic link) owned by this user (or root) and writable by no
//! one else. A database, or a file SQLite keeps beside it (`-wal`, `-shm`,
//! `-journal`), that is owned by another user, or is a symbolic link another user
//! owns, is refused (exit 2): such a file in a shared folder is another user's
//! trap, not our history.

use crate::error::UsageError;
use crate::untrusted::shown;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// Whether a file owned by `uid` may be trusted: ours, or root's (root can
/// change anything anyway).
fn trusted(uid: u32) -> bool {
    uid == euid() || uid == 0
}

fn show(p: &Path) -> String {
    shown(&p.to_string_lossy()).into_owned()
}

/// A folder that holds the default history: an existing `base` and the folders
/// below it that are ours to make and check.
struct Place {
    base: PathBuf,
    below: Vec<&'static str>,
    /// `XDG_DATA_HOME` is the user's own choice: made when missing.
    make_base: bool,
}

/// Why there is no private place for the history, as one error.
fn nowhere(why: &[String]) -> UsageError {
    UsageError::Invalid(format!(
        "no private place for the history database: {}; give --db PATH (a file of your own) or --no-store",
        why.join("; ")
    ))
}

fn place() -> Result<Place, UsageError> {
    if let Some(p) = std::env::var_os("XDG_DATA_HOME").map(PathBuf::from) {
        // The XDG base directory spec: a relative path is to be ignored.
        if p.is_absolute() {
            return Ok(Place {
                base: p,
                below: vec!["cipherbench"],
                make_base: true,
            });
        }
    }
    let mut why = Vec::new();
    let home = match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        Some(h) => Some((PathBuf::from(h), "HOME")),
        // dirs asks the passwd entry when HOME is unset or empty.
        None => dirs::home_dir().map(|h| (h, "the passwd entry's home")),
    };
    match home {
        Some((h, _)) if h.is_absolute() && h.is_dir() => {
            return Ok(Place {
                base: h,
                below: vec![".local", "share", "cipherbench"],
                make_base: false,
            })
        }
        Some((h, from)) if h.is_absolute() => why.push(format!("{from} {} does not exist (it is not made)", show(&h))),
        Some((h, from)) => why.push(format!("{from} {} is not an absolute path", show(&h))),
        None => why.push("HOME is not set and this user has no passwd entry".into()),
    }
    match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        None => why.push("XDG_RUNTIME_DIR is not set".into()),
        Some(r) => match std::fs::symlink_metadata(&r) {
            Ok(m) if r.is_absolute() && m.is_dir() && m.uid() == euid() && m.mode() & 0o077 == 0 => {
                return Ok(Place {
                    base: r,
                    below: vec!["cipherbench"],
                    make_base: false,
                })
            }
            Ok(m) => why.push(format!(
                "XDG_RUNTIME_DIR {} is not a folder of this user's (uid {}) with mode 0700 (owner uid {}, mode {:04o})",
                show(&r),
                euid(),
                m.uid(),
                m.mode() & 0o7777
            )),
            Err(e) => why.push(format!("XDG_RUNTIME_DIR {}: {e}", show(&r))),
        },
    }
    Err(nowhere(&why))
}

/// Whether there is a default place at all (a home, `XDG_DATA_HOME` or a private
/// `XDG_RUNTIME_DIR`), usable or not.
pub fn has_default_place() -> bool {
    place().is_ok()
}

/// Why the existing folder `dir` (with metadata `m`, not followed) is not private.
fn not_private(m: &std::fs::Metadata) -> Option<String> {
    if m.file_type().is_symlink() {
        return Some("it is a symbolic link".into());
    }
    if !m.is_dir() {
        return Some("it is not a folder".into());
    }
    if !trusted(m.uid()) {
        return Some(format!("it is owned by another user (uid {}; this is uid {})", m.uid(), euid()));
    }
    if m.mode() & 0o022 != 0 {
        return Some(format!("others can write in it (mode {:04o})", m.mode() & 0o7777));
    }
    None
}

fn refused_dir(dir: &Path, why: &str) -> UsageError {
    UsageError::Invalid(format!(
        "refusing the history folder {}: {why}; a history there is not private (make it yours with mode 0700, \
         or give --db PATH or --no-store)",
        show(dir)
    ))
}

/// The default folder for the history with `extra` folders below it (the main
/// job's `reports`), each checked to be private. With `make`, missing folders are
/// made 0700; without, the path is returned as it would be (reading an absent
/// history reads no runs).
pub fn default_dir(extra: &[&'static str], make: bool) -> Result<PathBuf, UsageError> {
    let p = place()?;
    let base_ok = |m: &std::fs::Metadata| m.is_dir() && (m.mode() & 0o002 == 0 || m.mode() & 0o1000 != 0);
    match std::fs::metadata(&p.base) {
        Ok(m) if base_ok(&m) => {}
        Ok(m) if m.is_dir() => {
            return Err(refused_dir(
                &p.base,
                &format!("everyone can write in it and it is not sticky (mode {:04o})", m.mode() & 0o7777),
            ))
        }
        Ok(_) => return Err(refused_dir(&p.base, "it is not a folder")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && p.make_base && make => {
            make_dirs(&p.base).map_err(|e| refused_dir(&p.base, &format!("cannot make it: {e}")))?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && p.make_base => {
            return Ok(p.below.iter().chain(extra).fold(p.base, |d, c| d.join(c)));
        }
        Err(e) => return Err(refused_dir(&p.base, &e.to_string())),
    }
    let mut dir = p.base;
    for c in p.below.iter().chain(extra) {
        dir.push(c);
        let m = match std::fs::symlink_metadata(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !make => continue,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                    // Another run (or user) made it first: judged below like any other.
                    Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                        return Err(refused_dir(&dir, &format!("cannot make it: {e}")))
                    }
                    _ => {}
                }
                std::fs::symlink_metadata(&dir).map_err(|e| refused_dir(&dir, &e.to_string()))?
            }
            Err(e) => return Err(refused_dir(&dir, &e.to_string())),
            Ok(m) => m,
        };
        if let Some(why) = not_private(&m) {
            return Err(refused_dir(&dir, &why));
        }
    }
    Ok(dir)
}

/// Where the history lives unless `--db` says otherwise (see the module's notes);
/// checked, not made.
pub fn default_path() -> Result<PathBuf, UsageError> {
    Ok(default_dir(&[], false)?.join("history.sqlite"))
}

/// The history `--db` names, else the default one.
pub fn chosen(db: Option<&Path>) -> Result<PathBuf, UsageError> {
    db.map(Path::to_path_buf).map_or_else(default_path, Ok)
}

/// Makes the missing folders of `dir`, each 0700.
pub fn make_dirs(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// Makes the absent database file `path`, empty and 0600 (SQLite gives the files
/// it keeps beside it the same mode), never through a symbolic link. A file that
/// appeared meanwhile is left to the checks that follow.
pub fn make_file(path: &Path) -> std::io::Result<()> {
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        r => r.map(drop),
    }
}

/// Refuses a database `path` (and the files SQLite keeps beside it) that another
/// user owns, or that is a symbolic link another user owns or that leads nowhere.
pub fn check_owner(path: &Path) -> Result<(), UsageError> {
    let refuse = |p: &Path, why: String| {
        UsageError::Invalid(format!(
            "refusing the history database {}: {} {why}; it was left as it was (give --db a file of your own, or --no-store)",
            show(path),
            if p == path { "it".to_string() } else { show(p) }
        ))
    };
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let p = super::file::sidecar(path, suffix);
        let m = match std::fs::symlink_metadata(&p) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(refuse(&p, format!("cannot be looked at: {e}"))),
            Ok(m) => m,
        };
        if m.file_type().is_symlink() {
            if !trusted(m.uid()) {
                return Err(refuse(
                    &p,
                    format!("is a symbolic link owned by another user (uid {}; this is uid {})", m.uid(), euid()),
                ));
            }
            match std::fs::metadata(&p) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(refuse(&p, "is a symbolic link to nothing (give the file it names)".into()))
                }
                Err(e) => return Err(refuse(&p, format!("cannot be followed: {e}"))),
                Ok(t) if !trusted(t.uid()) => {
                    return Err(refuse(
                        &p,
                        format!("leads to a file owned by another user (uid {}; this is uid {})", t.uid(), euid()),
                    ))
                }
                Ok(_) => {}
            }
        } else if !trusted(m.uid()) {
            return Err(refuse(
                &p,
                format!("is owned by another user (uid {}; this is uid {})", m.uid(), euid()),
            ));
        }
    }
    Ok(())
}
