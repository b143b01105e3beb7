//! What a database file is before the store writes to it: ours (and of which
//! schema), empty, another program's, or not SQLite at all; setting ours up and
//! migrating an older one.

use super::{APPLICATION_ID, MIGRATION, SCHEMA_VERSION};
use crate::error::UsageError;
use crate::untrusted::{bounded, shown};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};

/// The columns of `runs` (`owner` may be missing from an unmarked database) and
/// of `results`, as every cipherbench has made them.
pub(super) const RUNS_COLUMNS: [&str; 9] = [
    "id",
    "started_at",
    "finished_at",
    "status",
    "command",
    "info",
    "verdicts",
    "recommendations",
    "owner",
];
pub(super) const RESULTS_COLUMNS: [&str; 7] = ["run_id", "seq", "kind", "metric", "status", "median", "record"];

/// What the file at a history path is, judged before SQLite may write anything.
pub(super) enum Found {
    /// No file: ours to make.
    Absent,
    /// An empty file: ours to make.
    Blank,
    /// An SQLite file marked with our application id and a schema version we read
    /// (its tables are checked once it is open).
    Marked,
    /// An unmarked SQLite file holding nothing, or only what an older cipherbench
    /// made; the read-only, immutable connection that looked at it.
    Unmarked(Connection),
}

/// The database header (https://sqlite.org/fileformat.html#the_database_header):
/// 100 bytes, starting with this string.
pub(super) const HEADER_LEN: usize = 100;
pub(super) const MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Looks at the file at `path` without letting SQLite write anything (no lock, no
/// `-wal` or `-shm` file): its type and size, its header (application id and
/// schema version), and when it is unmarked, its tables through an immutable,
/// read-only connection. A file that is not ours is an error naming why.
pub(super) fn inspect(path: &Path) -> Result<Found, UsageError> {
    let cannot_read = |e: std::io::Error| UsageError::Invalid(format!("cannot read the history database {}: {e}", shown_path(path)));
    let meta = match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Absent),
        Err(e) => return Err(cannot_read(e)),
        Ok(m) => m,
    };
    if meta.is_dir() {
        return Err(refused(path, "it is a directory"));
    }
    if !meta.is_file() {
        return Err(refused(path, "it is not a regular file (a device, FIFO or socket)"));
    }
    if meta.len() == 0 {
        return Ok(Found::Blank);
    }
    let mut head = Vec::with_capacity(HEADER_LEN);
    {
        use std::io::Read;
        let f = std::fs::File::open(path).map_err(cannot_read)?;
        f.take(HEADER_LEN as u64).read_to_end(&mut head).map_err(cannot_read)?;
    }
    if head.len() < HEADER_LEN || &head[..MAGIC.len()] != MAGIC {
        return Err(refused(path, "it is not an SQLite database"));
    }
    let field = |at: usize| i32::from_be_bytes([head[at], head[at + 1], head[at + 2], head[at + 3]]);
    let (application_id, user_version) = (field(68), field(60));
    if let Some(why) = marks_refused(application_id, user_version) {
        return Err(refused(path, &why));
    }
    if application_id == APPLICATION_ID {
        return Ok(Found::Marked);
    }
    // Unmarked: only its tables tell whether an older cipherbench made it. The
    // immutable connection reads the file alone, so a log beside it holding
    // changes not yet in the file would be missed: such a file (in use, or left
    // by a crash) is not taken over.
    for (suffix, what) in [("-wal", "a write-ahead log"), ("-journal", "a rollback journal")] {
        let side = sidecar(path, suffix);
        if std::fs::metadata(&side).is_ok_and(|m| m.len() > 0) {
            return Err(refused(
                path,
                &format!(
                    "it has no cipherbench mark and {what} beside it ({}) holds changes not yet in the file: \
                     another program may be writing it (for a history of an older cipherbench left by a crash, \
                     `sqlite3 FILE 'PRAGMA wal_checkpoint'` folds the log in)",
                    shown_path(&side)
                ),
            ));
        }
    }
    let conn = open_immutable(path).map_err(|e| refused(path, &format!("SQLite cannot read it ({e})")))?;
    match shape(&conn) {
        Err(e) => Err(refused(path, &format!("SQLite cannot read it ({e})"))),
        Ok(Shape::NotOurs(why)) => Err(refused(path, &why)),
        Ok(_) => Ok(Found::Unmarked(conn)),
    }
}

/// Why marks `(application_id, user_version)` are not ours, if they are not.
pub(super) fn marks_refused(application_id: i32, user_version: i32) -> Option<String> {
    if application_id != APPLICATION_ID && application_id != 0 {
        return Some(format!(
            "it belongs to another program (SQLite application_id {:#010x}; cipherbench's is {:#010x})",
            application_id as u32, APPLICATION_ID as u32
        ));
    }
    if application_id == 0 && user_version != 0 {
        return Some(format!(
            "it belongs to another program (SQLite user_version {user_version} without cipherbench's application_id)"
        ));
    }
    if user_version > SCHEMA_VERSION {
        return Some(format!(
            "a newer cipherbench made it (schema version {user_version}; this one reads up to {SCHEMA_VERSION})"
        ));
    }
    if user_version < 0 {
        return Some(format!("its schema version {user_version} is not one cipherbench ever wrote"));
    }
    None
}

/// What a database holds, judged by its marks and its schema.
pub(super) enum Shape {
    /// Nothing at all: ours to make.
    Empty,
    /// Ours at `version` (0: unmarked, made by an older cipherbench). `tables`:
    /// both tables are there; `has_owner`: `runs` names its owners.
    Ours { version: i32, tables: bool, has_owner: bool },
    /// Not ours, and why.
    NotOurs(String),
}

pub(super) fn shape(conn: &Connection) -> rusqlite::Result<Shape> {
    let application_id: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let version: i32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if let Some(why) = marks_refused(application_id, version) {
        return Ok(Shape::NotOurs(why));
    }
    let mut stmt = conn.prepare("SELECT type, name, tbl_name FROM sqlite_master")?;
    let objects: Vec<(String, String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    if objects.is_empty() {
        return Ok(Shape::Empty);
    }
    let ours_table = |t: &str| t == "runs" || t == "results";
    let strange: Vec<String> = objects
        .iter()
        .filter(|(kind, name, table)| match kind.as_str() {
            "table" => !ours_table(name),
            "index" => !(ours_table(table) && (name == "results_kind" || name.starts_with("sqlite_autoindex_"))),
            _ => true,
        })
        .map(|(kind, name, _)| format!("{kind} '{}'", shown(&bounded(name, 60))))
        .collect();
    if !strange.is_empty() {
        let more = if strange.len() > 5 {
            format!(" and {} more", strange.len() - 5)
        } else {
            String::new()
        };
        return Ok(Shape::NotOurs(format!(
            "it holds what cipherbench never makes: {}{more}",
            strange[..strange.len().min(5)].join(", ")
        )));
    }
    let columns = |table: &str| -> rusqlite::Result<Vec<String>> {
        let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
        let rows = stmt.query_map([table], |r| r.get(0))?;
        rows.collect::<Result<_, _>>()
    };
    let (runs, results) = (columns("runs")?, columns("results")?);
    let has_owner = runs.iter().any(|c| c == "owner");
    let runs_ok = runs.is_empty()
        || (runs.iter().all(|c| RUNS_COLUMNS.contains(&c.as_str()))
            && RUNS_COLUMNS.iter().all(|c| *c == "owner" || runs.iter().any(|r| r == c)));
    let results_ok = results.is_empty()
        || (results.iter().all(|c| RESULTS_COLUMNS.contains(&c.as_str()))
            && RESULTS_COLUMNS.iter().all(|c| results.iter().any(|r| r == c)));
    if !runs_ok || !results_ok {
        return Ok(Shape::NotOurs(format!(
            "its table '{}' has columns cipherbench never made",
            if runs_ok { "results" } else { "runs" }
        )));
    }
    Ok(Shape::Ours {
        version,
        tables: !runs.is_empty() && !results.is_empty(),
        has_owner,
    })
}

/// Checks the database again, now that it is open for writing (another process
/// may have changed it since `inspect`), then makes or migrates it to
/// [`SCHEMA_VERSION`]. A current database is only read (a run must not wait for
/// another's write lock to start); making or migrating takes the write lock and
/// looks once more under it. `Ok(Ok(changed))` when it is ready, `Ok(Err(why))`
/// when it is not ours (and nothing was written).
pub(super) fn set_up(conn: &Connection) -> rusqlite::Result<Result<bool, String>> {
    let current = |shape: &Shape| {
        matches!(
            shape,
            Shape::Ours {
                version: SCHEMA_VERSION,
                tables: true,
                has_owner: true,
            }
        )
    };
    match shape(conn)? {
        Shape::NotOurs(why) => return Ok(Err(why)),
        s if current(&s) => return Ok(Ok(false)),
        _ => {}
    }
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
    let changed = match shape(conn)? {
        Shape::NotOurs(why) => return Ok(Err(why)),
        s if current(&s) => false,
        Shape::Empty => {
            migrate(conn, 0)?;
            true
        }
        Shape::Ours { version, .. } => {
            migrate(conn, version)?;
            true
        }
    };
    tx.commit()?;
    Ok(Ok(changed))
}

/// Brings a database of ours from `version` (0: empty, or unmarked and made by an
/// older cipherbench) to [`SCHEMA_VERSION`], inside the caller's transaction.
pub(super) fn migrate(conn: &Connection, version: i32) -> rusqlite::Result<()> {
    // 0 → 1, and completing a version 1 missing a table or the index (only a
    // database someone else edited): whatever is missing, then the owner column,
    // then the marks.
    if version <= 1 {
        conn.execute_batch(MIGRATION)?;
        let has_owner = conn
            .prepare("SELECT 1 FROM pragma_table_info('runs') WHERE name = 'owner'")?
            .exists([])?;
        if !has_owner {
            // A database made before runs had owners.
            conn.execute_batch("ALTER TABLE runs ADD COLUMN owner TEXT")?;
        }
    }
    conn.pragma_update(None, "application_id", APPLICATION_ID)?;
    conn.pragma_update(None, "user_version", SCHEMA_VERSION)
}

/// The error for a file that is not a history database of ours.
pub(super) fn refused(path: &Path, why: &str) -> UsageError {
    UsageError::Invalid(format!(
        "{} is not a cipherbench history database: {why}. It was left as it was; \
         choose another file with --db PATH (or --no-store)",
        shown_path(path)
    ))
}

pub(super) fn shown_path(path: &Path) -> String {
    shown(&path.to_string_lossy()).into_owned()
}

/// `path` with `suffix` appended to its file name (SQLite's `-wal`, `-shm`, `-journal`).
pub(super) fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// A read-only connection that takes no lock and makes no `-wal` or `-shm` file
/// (SQLite's `immutable` URI parameter): it sees the file alone.
pub(super) fn open_immutable(path: &Path) -> rusqlite::Result<Connection> {
    use std::os::unix::ffi::OsStrExt;
    let abs = match std::env::current_dir() {
        Ok(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_path_buf(),
    };
    // file:// + an empty authority + the absolute path, every byte but the
    // unreserved ones and '/' percent-encoded (so '?', '#' and '%' in a name
    // stay part of it).
    let mut uri = String::from(if abs.has_root() { "file://" } else { "file:" });
    for &b in abs.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?mode=ro&immutable=1");
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Connection::open_with_flags(uri, flags)
}
