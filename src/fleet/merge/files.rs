//! Finding the exports and reading one: host names, markers of failed hosts, the
//! size cap on the open file, and the parse of what the fold needs.

use super::*;

/// The host a file stands for: its name without `.json` (profile.yml writes
/// `results/HOST.json`; every host's own hostname may well be the same).
pub fn host_of(path: &Path) -> String {
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    for ext in [".json", ".failed", ".unreachable"] {
        if let Some(stem) = name.strip_suffix(ext) {
            return stem.to_string();
        }
    }
    name
}

/// Why `host` cannot be an inventory host name that becomes a file name
/// (`host_vars/HOST.json`), or `None` when it can: ASCII letters, digits and
/// `.-_:` (host names, IPv4 and IPv6 addresses), at most 253 bytes, not starting
/// with `.` or `-`, no `..`. A path separator, a control character or any other
/// character is refused.
pub fn bad_host_name(host: &str) -> Option<&'static str> {
    if host.is_empty() {
        Some("it is empty")
    } else if host.len() > 253 {
        Some("it is longer than 253 bytes")
    } else if host.starts_with('.') {
        Some("it starts with a dot")
    } else if host.starts_with('-') {
        Some("it starts with a dash")
    } else if host.contains("..") {
        Some("it holds '..'")
    } else if !host
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'))
    {
        Some("it holds a character other than ASCII letters, digits and . - _ :")
    } else {
        None
    }
}

pub(super) fn is_marker(path: &Path) -> bool {
    let n = path.to_string_lossy();
    n.ends_with(".failed") || n.ends_with(".unreachable")
}

pub(super) fn is_input_name(path: &Path) -> bool {
    path.to_string_lossy().ends_with(".json") || is_marker(path)
}

pub(super) fn unreadable(path: &Path, error: String) -> Problem {
    Problem {
        host: String::new(),
        file: path.display().to_string(),
        kind: "unreadable".into(),
        error,
    }
}

/// Expands directories into their `*.json` files and host markers, sorted. An
/// argument that does not exist, a directory that cannot be listed, and an entry
/// of a directory that cannot be read (a symlink loop, a dangling link, no
/// permission, not a regular file) are named as problems; the rest goes on.
pub fn expand(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<Problem>) {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for p in paths {
        let meta = match std::fs::metadata(p) {
            Ok(m) => m,
            Err(e) => {
                problems.push(unreadable(p, format!("{}: {e}", p.display())));
                continue;
            }
        };
        if !meta.is_dir() {
            // A file named on the command line is read whatever its name.
            files.push(p.clone());
            continue;
        }
        let rd = match std::fs::read_dir(p) {
            Ok(rd) => rd,
            Err(e) => {
                problems.push(unreadable(p, format!("cannot list {}: {e}", p.display())));
                continue;
            }
        };
        let mut v = Vec::new();
        for entry in rd {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    problems.push(unreadable(p, format!("cannot list {}: {e}", p.display())));
                    continue;
                }
            };
            let f = entry.path();
            if !is_input_name(&f) {
                continue;
            }
            match std::fs::metadata(&f) {
                Ok(m) if m.is_file() => v.push(f),
                Ok(_) => problems.push(unreadable(&f, format!("{}: not a regular file", f.display()))),
                Err(e) => problems.push(unreadable(&f, format!("{}: {e}", f.display()))),
            }
        }
        v.sort();
        files.extend(v);
    }
    (files, problems)
}

/// A reader that fails once more than `limit` bytes came through (it reads at
/// most `limit + 1`), and says so in `over`.
pub(super) struct Capped<'a, R> {
    inner: std::io::Take<R>,
    over: &'a Cell<bool>,
}

impl<'a, R: Read> Capped<'a, R> {
    pub(super) fn new(inner: R, limit: u64, over: &'a Cell<bool>) -> Self {
        Capped {
            inner: inner.take(limit.saturating_add(1)),
            over,
        }
    }
}

impl<R: Read> Read for Capped<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if self.inner.limit() == 0 && n > 0 {
            self.over.set(true);
            return Err(std::io::Error::other("over the size limit"));
        }
        Ok(n)
    }
}

/// Opens `path` for reading without blocking on a FIFO, and checks on the open
/// file (not the name, which may change) that it is a regular file of at most
/// `limit` bytes.
pub(super) fn open_checked(path: &Path, limit: u64) -> Result<std::fs::File, (&'static str, String)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = path.display().to_string();
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| ("unreadable", format!("cannot read {file}: {e}")))?;
    let meta = f.metadata().map_err(|e| ("unreadable", format!("cannot read {file}: {e}")))?;
    if !meta.is_file() {
        return Err(("unreadable", format!("{file}: not a regular file")));
    }
    if meta.len() > limit {
        return Err((
            "too-large",
            format!(
                "{file}: {} bytes, over the {} limit (--max-export-size); not read",
                meta.len(),
                crate::units::Bytes(limit)
            ),
        ));
    }
    Ok(f)
}

/// An export up to this size (a main job's is about 0.5 MB) is read into one
/// buffer and parsed from it (serde_json parses a slice about twice as fast as a
/// reader); a larger one streams. Either way memory stays bounded whatever the
/// file's size.
pub(super) const SLURP: u64 = 4 << 20;

/// Parses `path` into `T`, reading at most `limit` bytes: a file that grows past
/// the limit while it is read is refused too.
pub(super) fn parse_capped<T: serde::de::DeserializeOwned>(
    path: &Path,
    limit: u64,
) -> Result<Result<T, serde_json::Error>, (&'static str, String)> {
    let mut f = open_checked(path, limit)?;
    let over_limit = || {
        (
            "too-large",
            format!(
                "{}: grew past the {} limit (--max-export-size) while it was read",
                path.display(),
                crate::units::Bytes(limit)
            ),
        )
    };
    let first = SLURP.min(limit);
    let mut head = Vec::new();
    (&mut f)
        .take(first + 1)
        .read_to_end(&mut head)
        .map_err(|e| ("unreadable", format!("cannot read {}: {e}", path.display())))?;
    if head.len() as u64 <= first {
        return Ok(serde_json::from_slice(&head));
    }
    if first == limit {
        return Err(over_limit());
    }
    // Larger than a buffer should hold: stream the rest, still capped.
    let over = Cell::new(false);
    let r = serde_json::from_reader(std::io::BufReader::new(Capped::new(
        std::io::Cursor::new(head).chain(f),
        limit,
        &over,
    )));
    if over.get() {
        return Err(over_limit());
    }
    Ok(r)
}

/// At most this much of a `HOST.failed`/`HOST.unreachable` marker is read (the
/// play writes the failing task and a few lines of its error).
pub(super) const MAX_MARKER: u64 = 4096;

/// Reads one file: an export, or a profile.yml marker for a host that failed or
/// was unreachable.
pub(super) fn read_one(path: &Path, limit: u64) -> Result<Parsed, Problem> {
    let host = host_of(path);
    let file = path.display().to_string();
    let problem = |kind: &str, error: String| Problem {
        host: host.clone(),
        file: file.clone(),
        kind: kind.to_string(),
        error,
    };
    let as_problem = |(kind, error): (&str, String)| problem(kind, error);
    for marker in ["failed", "unreachable"] {
        if file.ends_with(&format!(".{marker}")) {
            let f = open_checked(path, limit).map_err(as_problem)?;
            let mut bytes = Vec::new();
            f.take(MAX_MARKER)
                .read_to_end(&mut bytes)
                .map_err(|e| problem("unreadable", format!("cannot read {file}: {e}")))?;
            let why = String::from_utf8_lossy(&bytes).trim().to_string();
            let why = if why.is_empty() {
                format!("host {marker} (see the play recap)")
            } else {
                why
            };
            return Err(problem(marker, format!("{host}: {why}")));
        }
    }
    match parse_capped::<Export>(path, limit).map_err(as_problem)? {
        // Every figure a host wrote is checked before any is merged: one that is
        // not physically possible (1e308, negative, zero) refuses the whole host.
        Ok(e) if e.schema == SCHEMA => match crate::plausible::check_records(&e.results) {
            Err(why) => Err(problem(
                "implausible",
                format!("{file}: host {host}: {why}; not merged (see docs/json-schema.md, \"Figures read back\")"),
            )),
            Ok(()) => Ok(Parsed {
                key: class_key(&e.run),
                offers: offers(&e.run),
                capabilities: e.run.capabilities,
                run_id: e.run.id,
                host,
                file,
                results: e.results,
            }),
        },
        Ok(e) => Err(problem(
            "schema",
            format!("{file}: schema {:?}, but this cipherbench merges {SCHEMA}", e.schema),
        )),
        Err(e) if e.is_eof() => Err(problem(
            "truncated",
            format!(
                "{file}: truncated: the JSON ends early (line {}, column {}); was the fetch cut off?",
                e.line(),
                e.column()
            ),
        )),
        Err(e) if e.is_syntax() => Err(problem("not-json", format!("{file}: not a cipherbench export: not JSON ({e})"))),
        Err(e) => match parse_capped::<Probe>(path, limit).map_err(as_problem)?.ok().and_then(|p| p.schema) {
            Some(serde_json::Value::String(s)) if s == SCHEMA => {
                Err(problem("malformed", format!("{file}: malformed {SCHEMA} export: {e}")))
            }
            Some(serde_json::Value::String(s)) if s.starts_with("cipherbench/") => Err(problem(
                "schema",
                format!("{file}: schema {s:?}, but this cipherbench merges {SCHEMA}"),
            )),
            _ => Err(problem(
                "foreign",
                format!("{file}: not a cipherbench export (no \"schema\": \"{SCHEMA}\"; another program's JSON?)"),
            )),
        },
    }
}
