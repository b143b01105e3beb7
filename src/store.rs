//! The run history in SQLite (the embedded, bundled library).
//!
//! A run row is written before the first measurement and every result as soon as
//! it exists, each in its own transaction, so Ctrl-C, a crash or a full disk leave
//! a consistent database holding everything measured so far. Rows hold the same
//! serde model as the JSON document.
//!
//! A failing database never costs a run its results: writes wait at most
//! [`RUN_BUSY`] for a lock during the run (the session keeps everything in memory
//! and retries at the end, see `session.rs`). Each run row names its owner
//! process (host, pid and the process's start time, so a reused pid is not
//! mistaken for it); opening the database for a run marks rows still `running`
//! whose owner is gone as `abandoned` (readers show them so without writing).
//!
//! The store touches only its own database. Databases it makes carry
//! [`APPLICATION_ID`] and [`SCHEMA_VERSION`]; any other file (another program's
//! database, a newer schema, not SQLite at all) is refused before SQLite may write
//! a byte of it or beside it, and a history an older cipherbench made is
//! migrated explicitly (see [`SCHEMA_VERSION`]). Commands that only read open it
//! read-only and never create it.

use crate::error::UsageError;
use crate::model::{Document, ResultRecord, RunInfo, RunStatus, SCHEMA};
use anyhow::{Context, Result};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, MAIN_DB};
use std::path::{Path, PathBuf};

mod file;
mod place;
use file::{inspect, open_immutable, refused, set_up, shape, shown_path, sidecar, Found, Shape};
pub use place::{chosen, default_dir, has_default_place};

pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// Whether `runs` has the `owner` column (a database an older cipherbench
    /// made, opened read-only, may not).
    has_owner: bool,
}

/// One line of `history`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunSummary {
    pub id: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: String,
    pub command: String,
    pub cpu_model: String,
    pub results: usize,
}

/// `PRAGMA application_id` of every history database cipherbench makes: the ASCII
/// bytes "CBnc" as a big-endian 32-bit integer, 0x43426E63. A database carrying
/// another application id belongs to another program and is never written.
pub const APPLICATION_ID: i32 = i32::from_be_bytes(*b"CBnc");

/// `PRAGMA user_version`: the schema version this build reads and writes. A
/// database with a higher one was made by a newer cipherbench and is refused.
///
/// The versions, and the path from each to this one (`set_up` and `migrate`):
///
/// - **unmarked** (application_id 0, user_version 0): every cipherbench before the
///   marks. Tables `runs` and `results` and the index `results_kind`, in WAL
///   mode. The first releases made `runs` without the `owner` column; later ones
///   made it with it, or added it with `ALTER TABLE`. Such a database is taken as
///   ours only when every table, index and column in it is one of these (anything
///   else is another program's and is refused). Migrated to 1 in one transaction:
///   the missing tables or index are created, `owner` is added when missing, then
///   application_id and user_version 1 are set.
/// - **1**: the unmarked shape with `owner`, marked with [`APPLICATION_ID`] and
///   user_version 1.
///
/// A future version 2 adds a step `1 → 2` to `migrate` and raises this constant.
pub const SCHEMA_VERSION: i32 = 1;

/// The schema at [`SCHEMA_VERSION`]; also what completes an older one.
const MIGRATION: &str = "
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,
    command TEXT NOT NULL,
    info TEXT NOT NULL,
    verdicts TEXT NOT NULL DEFAULT '[]',
    recommendations TEXT NOT NULL DEFAULT '[]',
    owner TEXT
);
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    metric TEXT NOT NULL,
    status TEXT NOT NULL,
    median REAL,
    record TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE INDEX IF NOT EXISTS results_kind ON results(kind);
";

/// How long a write waits for another connection's lock during a run.
pub const RUN_BUSY: std::time::Duration = std::time::Duration::from_secs(2);
/// ...and when closing the run (the last chance to keep the row consistent).
pub const FINISH_BUSY: std::time::Duration = std::time::Duration::from_secs(3);

pub use crate::privdir::{owner_gone, owner_token};

impl Store {
    /// Opens the database for a run: creates it when absent or empty, migrates one
    /// an older cipherbench made, and checks it can be written, all before anything
    /// is measured. Anything else (another program's database, a newer schema, a
    /// file that is not SQLite) is refused as a usage error and left byte for byte
    /// as it was: it is judged from its header and a read-only, immutable look
    /// before it is opened for writing.
    pub fn open(path: &Path) -> Result<Store> {
        let unwritable = |why: String| {
            UsageError::Invalid(format!(
                "cannot write the history database {}: {why} (use --db PATH or --no-store)",
                shown_path(path)
            ))
        };
        place::check_owner(path)?;
        if path.is_dir() {
            return Err(unwritable("it is a directory".into()).into());
        }
        if let Found::Absent = inspect(path)? {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                place::make_dirs(parent).map_err(|e| unwritable(e.to_string()))?;
            }
            place::make_file(path).map_err(|e| unwritable(e.to_string()))?;
            // What appeared meanwhile is judged like any other file.
            place::check_owner(path)?;
        }
        // Without SQLITE_OPEN_URI: a name such as `file:x?vfs=...` is a file name.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| unwritable(e.to_string()))?;
        // SQLite opens a file it may not write read-only instead of failing.
        if conn.is_readonly(MAIN_DB)? {
            return Err(unwritable("the file is read-only".into()).into());
        }
        conn.busy_timeout(FINISH_BUSY)?;
        let mut tries = 0;
        let changed = loop {
            match set_up(&conn) {
                Ok(Ok(changed)) => break changed,
                Ok(Err(why)) => return Err(refused(path, &why).into()),
                // Setting up can meet another run doing the same (SQLite then answers
                // "locked" at once, without waiting): a few tries, then a clear error.
                Err(e) if tries < 30 && e.to_string().contains("locked") => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::CannotOpen) => {
                    return Err(unwritable(format!(
                        "{e} (no -wal or -journal file can be made beside it: is its folder read-only?)"
                    ))
                    .into())
                }
                Err(e) => return Err(unwritable(e.to_string()).into()),
            }
        };
        let journal = |conn: &Connection| -> rusqlite::Result<()> {
            conn.pragma_update(None, "journal_mode", "WAL")?;
            conn.pragma_update(None, "foreign_keys", "ON")
        };
        let mut tries = 0;
        loop {
            match journal(&conn) {
                Ok(()) => break,
                Err(e) if tries < 30 && e.to_string().contains("locked") => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Err(e) => return Err(unwritable(e.to_string()).into()),
            }
        }
        if changed {
            // The marks go into the file itself, not only the log, so the header
            // check of the next open sees them even after a crash. Best effort.
            let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
        let s = Store {
            conn,
            path: path.to_path_buf(),
            has_owner: true,
        };
        // Best effort: a locked database must not stop a run from starting.
        let _ = s.mark_abandoned();
        Ok(s)
    }

    /// Opens the database for a command that only reads (`history`, `report`,
    /// `compare`): read-only, never created, never migrated, never switched to
    /// WAL. An absent or empty file reads as a history without runs. Runs whose
    /// owner process is gone read as `abandoned` (the next run marks them so).
    pub fn open_read(path: &Path) -> Result<Store> {
        let unreadable = |why: String| {
            UsageError::Invalid(format!(
                "cannot read the history database {}: {why} (use --db PATH)",
                shown_path(path)
            ))
        };
        place::check_owner(path)?;
        if path.is_dir() {
            return Err(unreadable("it is a directory".into()).into());
        }
        let conn = match inspect(path)? {
            Found::Absent | Found::Blank => None,
            Found::Unmarked(conn) => Some(conn),
            // A log beside our own database may hold the latest runs (a run may be
            // writing it now): read through it, as SQLite does.
            Found::Marked if sidecar(path, "-wal").exists() => {
                let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
                Some(Connection::open_with_flags(path, flags).map_err(|e| unreadable(e.to_string()))?)
            }
            Found::Marked => Some(open_immutable(path).map_err(|e| unreadable(e.to_string()))?),
        };
        let blank = || -> Result<Store> {
            let conn = Connection::open_in_memory()?;
            conn.execute_batch(MIGRATION)?;
            Ok(Store {
                conn,
                path: path.to_path_buf(),
                has_owner: true,
            })
        };
        let Some(conn) = conn else {
            return blank();
        };
        conn.busy_timeout(FINISH_BUSY)?;
        match shape(&conn).map_err(|e| unreadable(e.to_string()))? {
            Shape::NotOurs(why) => Err(refused(path, &why).into()),
            // Nothing stored yet (or a table never made): no runs.
            Shape::Empty | Shape::Ours { tables: false, .. } => blank(),
            Shape::Ours { has_owner, .. } => Ok(Store {
                conn,
                path: path.to_path_buf(),
                has_owner,
            }),
        }
    }

    /// How long writes wait for another connection's lock.
    pub fn set_busy_timeout(&self, d: std::time::Duration) {
        let _ = self.conn.busy_timeout(d);
    }

    /// Marks runs still `running` whose owner process is gone as `abandoned`.
    /// Returns how many.
    pub fn mark_abandoned(&self) -> Result<usize> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, owner FROM runs WHERE status = 'running' AND owner IS NOT NULL")?;
        let rows: Vec<(String, String)> = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<Result<_, _>>()?;
        let mut n = 0;
        for (id, owner) in rows {
            if owner_gone(&owner) {
                n += self
                    .conn
                    .execute("UPDATE runs SET status = 'abandoned' WHERE id = ?1 AND status = 'running'", [&id])?;
            }
        }
        Ok(n)
    }

    /// `owner` in a query on `runs`, or NULL where the column is missing.
    fn owner_column(&self) -> &'static str {
        if self.has_owner {
            "owner"
        } else {
            "NULL"
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn begin_run(&self, run: &RunInfo) -> Result<()> {
        self.conn
            .execute(
                "INSERT OR IGNORE INTO runs (id, started_at, finished_at, status, command, info, owner) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    run.id,
                    run.started_at,
                    run.finished_at,
                    run.status.as_str(),
                    run.command,
                    serde_json::to_string(run)?,
                    owner_token()
                ],
            )
            .with_context(|| format!("writing run {} to {}", run.id, self.path.display()))?;
        Ok(())
    }

    /// Appends one result; `seq` orders results within the run.
    pub fn put_result(&self, run_id: &str, seq: usize, r: &ResultRecord) -> Result<()> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO results (run_id, seq, kind, metric, status, median, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    run_id,
                    seq as i64,
                    enum_str(&r.kind)?,
                    enum_str(&r.metric)?,
                    enum_str(&r.status)?,
                    r.median,
                    serde_json::to_string(r)?
                ],
            )
            .with_context(|| format!("writing a result to {}", self.path.display()))?;
        Ok(())
    }

    /// Marks run `id` of the history at `path`, if still `running`, as
    /// `interrupted` at `finished_at`: the forced exit's last write (Ctrl-C
    /// twice, or a step that did not stop in time), over a connection of its own
    /// (the run's may be busy in another thread) that waits at most a second for
    /// a lock, so that the history says what happened rather than `abandoned`.
    pub fn mark_interrupted(path: &Path, id: &str, finished_at: &str) -> Result<usize> {
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
        conn.busy_timeout(std::time::Duration::from_secs(1))?;
        let n = conn.execute(
            "UPDATE runs SET status = 'interrupted', finished_at = ?2 WHERE id = ?1 AND status = 'running'",
            params![id, finished_at],
        )?;
        // The run's info as readers see it says so too (where it is JSON).
        let _ = conn.execute(
            "UPDATE runs SET info = json_set(info, '$.status', 'interrupted', '$.finished_at', ?2) WHERE id = ?1 AND json_valid(info)",
            params![id, finished_at],
        );
        Ok(n)
    }

    /// Marks the run finished and stores what the later stages made of it.
    pub fn finish_run(&self, doc: &Document) -> Result<()> {
        self.conn
            .execute(
                "UPDATE runs SET finished_at = ?2, status = ?3, info = ?4, verdicts = ?5, recommendations = ?6 WHERE id = ?1",
                params![
                    doc.run.id,
                    doc.run.finished_at,
                    doc.run.status.as_str(),
                    serde_json::to_string(&doc.run)?,
                    serde_json::to_string(&doc.verdicts)?,
                    serde_json::to_string(&doc.recommendations)?
                ],
            )
            .with_context(|| format!("finishing run {} in {}", doc.run.id, self.path.display()))?;
        Ok(())
    }

    /// Runs, newest first.
    pub fn runs(&self, limit: usize) -> Result<Vec<RunSummary>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT r.id, r.started_at, r.finished_at, r.status, r.command, r.info,
                    (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id), {}
             FROM runs r ORDER BY r.started_at DESC, r.rowid DESC LIMIT ?1",
            self.owner_column()
        ))?;
        let rows = stmt.query_map([limit as i64], |row| {
            let info: String = row.get(5)?;
            let cpu_model = serde_json::from_str::<RunInfo>(&info).map(|i| i.host.cpu_model).unwrap_or_default();
            Ok(RunSummary {
                id: row.get(0)?,
                started_at: row.get(1)?,
                finished_at: row.get(2)?,
                status: shown_status(row.get(3)?, row.get(7)?),
                command: row.get(4)?,
                cpu_model,
                results: row.get::<_, i64>(6)? as usize,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Loads a whole run as a document. `latest` (or a unique id prefix) selects it.
    pub fn load(&self, selector: &str) -> Result<Document> {
        let id: Option<String> = if selector == "latest" {
            self.conn
                .query_row("SELECT id FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1", [], |r| r.get(0))
                .optional()?
        } else {
            let mut stmt = self.conn.prepare("SELECT id FROM runs WHERE id LIKE ?1 || '%'")?;
            let ids: Vec<String> = stmt.query_map([selector], |r| r.get(0))?.collect::<Result<_, _>>()?;
            match ids.len() {
                0 => None,
                1 => ids.into_iter().next(),
                n => return Err(UsageError::Invalid(format!("run id '{selector}' is ambiguous: {n} runs start with it")).into()),
            }
        };
        let id = id.ok_or_else(|| match selector {
            "latest" => UsageError::Invalid(format!("no runs stored in {} yet", self.path.display())),
            _ => UsageError::Invalid(format!(
                "no run '{selector}' in {} (see `cipherbench history`)",
                self.path.display()
            )),
        })?;
        let (info, status, finished, verdicts, recs): (String, String, Option<String>, String, String) = self.conn.query_row(
            &format!(
                "SELECT info, status, finished_at, verdicts, recommendations, {} FROM runs WHERE id = ?1",
                self.owner_column()
            ),
            [&id],
            |r| Ok((r.get(0)?, shown_status(r.get(1)?, r.get(5)?), r.get(2)?, r.get(3)?, r.get(4)?)),
        )?;
        let mut run: RunInfo = serde_json::from_str(&info).context("stored run info")?;
        // A run whose process died shows as running; the row's own status wins.
        run.status = RunStatus::parse(&status).unwrap_or(run.status);
        run.finished_at = finished.or(run.finished_at);
        let mut stmt = self.conn.prepare("SELECT record FROM results WHERE run_id = ?1 ORDER BY seq")?;
        let results = stmt
            .query_map([&id], |r| r.get::<_, String>(0))?
            .map(|r| Ok(serde_json::from_str::<ResultRecord>(&r?)?))
            .collect::<Result<Vec<_>>>()?;
        // A row planted in the database is read back like an export: refused whole.
        crate::plausible::check_records(&results)
            .map_err(|why| anyhow::anyhow!("stored run {id} in {}: {why}: refused", self.path.display()))?;
        Ok(Document {
            schema: SCHEMA.to_string(),
            run,
            results,
            verdicts: serde_json::from_str(&verdicts)?,
            recommendations: serde_json::from_str(&recs)?,
        })
    }
}

/// Whether two runs were measured on the same machine as far as speed goes: the
/// same host (name, CPU model, cores, architecture and the crypto-relevant CPU
/// flags), the same version of every library both name (OpenSSL in both or in
/// neither), the same target (`settings.target`: a remote server, or the
/// private one) and the same masked CPU features (`settings.cpu_caps`). The
/// kernel may differ. A change of any of these starts afresh.
pub fn same_machine(a: &RunInfo, b: &RunInfo) -> bool {
    let (x, y) = (&a.host, &b.host);
    let flags = |h: &crate::model::Host| {
        let mut f = h.cpu_flags.clone();
        f.sort();
        f
    };
    let libs = a.libraries.iter().all(|(k, v)| b.libraries.get(k).is_none_or(|w| w == v))
        && a.libraries.contains_key("openssl") == b.libraries.contains_key("openssl");
    x.hostname == y.hostname
        && x.cpu_model == y.cpu_model
        && x.cores == y.cores
        && x.arch == y.arch
        && flags(x) == flags(y)
        && libs
        && ["target", "cpu_caps"].iter().all(|k| a.settings.get(k) == b.settings.get(k))
}

impl Store {
    /// The stored runs comparable with `run` ([`same_machine`]), finished
    /// (complete or partial), started no later than it, other than itself: at most
    /// `limit`, newest first, as documents. A stored run that cannot be read is
    /// left out.
    pub fn comparable(&self, run: &RunInfo, limit: usize) -> Result<Vec<Document>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, info FROM runs WHERE id != ?1 AND status IN ('complete', 'partial') AND started_at <= ?2
             ORDER BY started_at DESC, rowid DESC LIMIT 500",
        )?;
        let rows: Vec<(String, String)> = stmt
            .query_map(params![run.id, run.started_at], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let mut out = Vec::new();
        for (id, info) in rows {
            if out.len() >= limit {
                break;
            }
            let Ok(other) = serde_json::from_str::<RunInfo>(&info) else {
                continue;
            };
            if !same_machine(run, &other) {
                continue;
            }
            if let Ok(d) = self.load(&id) {
                if d.run.id == id {
                    out.push(d);
                }
            }
        }
        Ok(out)
    }
}

/// A run's status as shown: `running` whose owner is gone reads `abandoned`, as
/// the next run will mark it (a reader does not write it).
fn shown_status(status: String, owner: Option<String>) -> String {
    if status == "running" && owner.as_deref().is_some_and(owner_gone) {
        "abandoned".to_string()
    } else {
        status
    }
}

fn enum_str<T: serde::Serialize>(v: &T) -> Result<String> {
    Ok(serde_json::to_value(v)?.as_str().unwrap_or_default().to_string())
}

#[cfg(test)]
mod tests {
    use super::file::marks_refused;
    use super::*;
    use crate::model::Summary;
    use crate::model::*;

    fn run(id: &str, started: &str) -> RunInfo {
        RunInfo {
            id: id.into(),
            started_at: started.into(),
            finished_at: None,
            status: RunStatus::Running,
            command: "speed".into(),
            host: crate::discover::host::fingerprint(),
            libraries: Default::default(),
            settings: serde_json::json!({"budget": 1.0}),
            capabilities: Default::default(),
        }
    }

    #[test]
    fn results_survive_an_unfinished_run_and_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/dir/h.sqlite");
        {
            let s = Store::open(&path).unwrap();
            s.begin_run(&run("r1", "2026-01-01T00:00:00Z")).unwrap();
            let sum = Summary::of(&[1.0, 2.0, 3.0]).unwrap();
            let subject = Subject {
                algorithm: Some("aes-128-gcm".into()),
                bytes: Some(16),
                ..Default::default()
            };
            s.put_result(
                "r1",
                0,
                &ResultRecord::ok(Kind::Primitive, subject.clone(), Metric::BytesPerSec, &sum, None),
            )
            .unwrap();
            s.put_result(
                "r1",
                1,
                &ResultRecord::not_ok(Kind::Primitive, subject, Metric::BytesPerSec, Status::Unsupported, "no"),
            )
            .unwrap();
            // Dropped without finish_run, as if the process had died.
        }
        let s = Store::open(&path).unwrap();
        let doc = s.load("latest").unwrap();
        assert_eq!(doc.run.id, "r1");
        assert_eq!(doc.run.status, RunStatus::Running);
        assert_eq!(doc.results.len(), 2);
        assert_eq!(doc.results[0].median, Some(2.0));
        assert_eq!(doc.results[1].reason.as_deref(), Some("no"));
        let mut finished = doc.clone();
        finished.run.status = RunStatus::Complete;
        finished.run.finished_at = Some("2026-01-01T00:01:00Z".into());
        s.finish_run(&finished).unwrap();
        assert_eq!(s.load("r").unwrap().run.status, RunStatus::Complete);
        let runs = s.runs(10).unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].results, 2);
    }

    #[test]
    fn selects_runs_and_explains_missing_ones() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("h.sqlite")).unwrap();
        assert!(s.load("latest").unwrap_err().to_string().contains("no runs stored"));
        s.begin_run(&run("20260101-aaaa", "2026-01-01T00:00:00Z")).unwrap();
        s.begin_run(&run("20260102-bbbb", "2026-01-02T00:00:00Z")).unwrap();
        assert_eq!(s.load("latest").unwrap().run.id, "20260102-bbbb");
        assert_eq!(s.load("20260101").unwrap().run.id, "20260101-aaaa");
        assert!(s.load("2026").unwrap_err().to_string().contains("ambiguous"));
        assert!(s.load("nope").unwrap_err().to_string().contains("no run 'nope'"));
    }

    #[test]
    fn runs_of_gone_processes_are_abandoned_and_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let s = Store::open(&path).unwrap();
        s.begin_run(&run("live", "2026-01-01T00:00:00Z")).unwrap();
        s.begin_run(&run("dead", "2026-01-02T00:00:00Z")).unwrap();
        // A pid that is certainly gone: a child that has exited and been reaped.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let host = crate::privdir::hostname();
        s.conn
            .execute("UPDATE runs SET owner = ?1 WHERE id = 'dead'", [format!("{host}:{pid}:12345")])
            .unwrap();
        assert!(!owner_gone(&owner_token()), "this process is alive");
        assert!(owner_gone(&format!("{host}:{pid}:12345")));
        assert!(
            !owner_gone(&format!("elsewhere:{pid}:12345")),
            "another host's runs are not ours to judge"
        );
        assert_eq!(s.mark_abandoned().unwrap(), 1);
        assert_eq!(s.load("dead").unwrap().run.status, RunStatus::Abandoned);
        assert_eq!(s.load("live").unwrap().run.status, RunStatus::Running);
    }

    #[test]
    fn unwritable_paths_are_usage_errors() {
        let dir = tempfile::tempdir().unwrap();
        let e = Store::open(dir.path()).err().unwrap();
        assert!(e.downcast_ref::<UsageError>().is_some());
        let e = Store::open(Path::new("/proc/definitely/not/here.sqlite")).err().unwrap();
        assert!(e.downcast_ref::<UsageError>().is_some(), "{e}");
    }

    #[test]
    fn marks_say_whose_a_database_is() {
        assert_eq!(&APPLICATION_ID.to_be_bytes(), b"CBnc");
        assert!(marks_refused(APPLICATION_ID, SCHEMA_VERSION).is_none());
        assert!(marks_refused(0, 0).is_none(), "unmarked: judged by its tables");
        assert!(marks_refused(7, 0).unwrap().contains("another program"));
        assert!(marks_refused(0, 3).unwrap().contains("another program"));
        assert!(marks_refused(APPLICATION_ID, SCHEMA_VERSION + 1)
            .unwrap()
            .contains("newer cipherbench"));
        assert!(marks_refused(APPLICATION_ID, -1).is_some());
    }

    #[test]
    fn only_our_tables_indexes_and_columns_are_ours() {
        let shape_of = |sql: &str| {
            let c = Connection::open_in_memory().unwrap();
            c.execute_batch(sql).unwrap();
            shape(&c).unwrap()
        };
        assert!(matches!(shape_of(""), Shape::Empty));
        assert!(matches!(
            shape_of(MIGRATION),
            Shape::Ours {
                version: 0,
                tables: true,
                has_owner: true
            }
        ));
        let not_ours = |sql: &str| match shape_of(&format!("{MIGRATION}{sql}")) {
            Shape::NotOurs(why) => why,
            _ => panic!("taken as ours: {sql}"),
        };
        assert!(not_ours("CREATE VIEW v AS SELECT 1;").contains("view 'v'"));
        assert!(not_ours("CREATE TRIGGER t AFTER INSERT ON runs BEGIN SELECT 1; END;").contains("trigger 't'"));
        assert!(not_ours("CREATE INDEX mine ON runs(command);").contains("index 'mine'"));
        assert!(not_ours("ALTER TABLE results ADD COLUMN extra TEXT;").contains("'results'"));
        // A hostile name is escaped in the reason.
        assert!(not_ours("CREATE TABLE \"x\x1b[2J\" (a);").contains("\\x1b"));
    }

    #[test]
    fn reading_never_creates_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/h.sqlite");
        let s = Store::open_read(&path).unwrap();
        assert!(s.runs(10).unwrap().is_empty());
        assert!(s.load("latest").unwrap_err().to_string().contains("no runs stored"));
        assert!(!dir.path().join("sub").exists());
    }

    /// A run of the same machine measuring aes128-gcm and chacha20-poly1305 over
    /// SSH at ±12% noise, its figures written to the history.
    fn ssh_run(s: &Store, id: &str, day: u32, openssl: &str, aes: f64, chacha: f64) -> Document {
        let mut info = run(id, &format!("2026-11-{day:02}T10:00:00Z"));
        info.status = RunStatus::Complete;
        info.libraries.insert("openssl".into(), openssl.into());
        info.settings = serde_json::json!({"noise": {"ssh-bulk": 0.12}});
        info.capabilities.openssh = Some(crate::model::OpenSshCapabilities {
            version: "OpenSSH_10.0p2".into(),
            ciphers: vec!["chacha20-poly1305@openssh.com".into(), "aes128-gcm@openssh.com".into()],
            ..Default::default()
        });
        s.begin_run(&info).unwrap();
        for (i, (cipher, m)) in [("chacha20-poly1305@openssh.com", chacha), ("aes128-gcm@openssh.com", aes)]
            .into_iter()
            .enumerate()
        {
            let sum = Summary::of(&[m * 0.97, m * 0.99, m, m * 1.01, m * 1.03, m, m, m]).unwrap();
            let subject = Subject {
                cipher: Some(cipher.into()),
                ..Default::default()
            };
            let r = crate::measure::engine::noise::floor(ResultRecord::ok(Kind::SshBulk, subject, Metric::BytesPerSec, &sum, None), 0.12);
            s.put_result(id, i, &r).unwrap();
        }
        let d = s.load(id).unwrap();
        s.finish_run(&d).unwrap();
        s.load(id).unwrap()
    }

    fn ssh_ciphers(d: &Document) -> Vec<(String, usize)> {
        let k = crate::judge::Knowledge::builtin().unwrap();
        let p = crate::judge::Policy::builtin("intermediate").unwrap();
        let out = crate::recommend::recommend(d, &k, &p, &crate::software::emitters(&["sshd".to_string()]));
        let r = out.recommendations[0].rankings.iter().find(|r| r.list == "ssh_ciphers").unwrap();
        r.ranked.iter().map(|x| (x.name.clone(), x.rank)).collect()
    }

    /// Three runs of one machine, each leaving AES-GCM and ChaCha20 (17% apart)
    /// tied at ±12% noise, order them once pooled, and say so; an earlier run with
    /// another OpenSSL (where ChaCha20 was faster) is not pooled.
    #[test]
    fn three_comparable_runs_order_what_each_leaves_tied_and_another_openssl_starts_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("h.sqlite")).unwrap();
        let old = ssh_run(&s, "r0", 19, "OpenSSL 3.0.17", 200e6, 400e6);
        let runs = [
            ssh_run(&s, "r1", 20, "OpenSSL 3.5.1", 240e6, 200e6),
            ssh_run(&s, "r2", 21, "OpenSSL 3.5.1", 236e6, 204e6),
            ssh_run(&s, "r3", 22, "OpenSSL 3.5.1", 244e6, 198e6),
        ];
        for d in &runs {
            let r = ssh_ciphers(d);
            assert!(r.iter().all(|x| x.1 == 1), "{} alone orders: {r:?}", d.run.id);
        }
        let earlier = s.comparable(&runs[2].run, 9).unwrap();
        let ids: Vec<&str> = earlier.iter().map(|d| d.run.id.as_str()).collect();
        assert_eq!(ids, ["r2", "r1"], "newest first, not itself, not another OpenSSL");
        assert!(!same_machine(&runs[2].run, &old.run));
        let pooled = crate::recommend::pool::pool(&runs[2], &earlier);
        let r = ssh_ciphers(&pooled);
        assert_eq!(r[0], ("aes128-gcm@openssh.com".to_string(), 1), "{r:?}");
        assert_eq!(r[1], ("chacha20-poly1305@openssh.com".to_string(), 2), "{r:?}");
        let k = crate::judge::Knowledge::builtin().unwrap();
        let p = crate::judge::Policy::builtin("intermediate").unwrap();
        let out = crate::recommend::recommend(&pooled, &k, &p, &crate::software::emitters(&[]));
        let notes: Vec<String> = out
            .protocols
            .iter()
            .flat_map(|x| x.1.iter())
            .flat_map(|r| r.notes.clone())
            .collect();
        assert!(notes.iter().any(|n| n.starts_with("pooled 3 runs since 2026-11-20")), "{notes:?}");
        // With the other OpenSSL's run pooled too, the figures would not order them.
        let all = crate::recommend::pool::pool(&runs[2], &[earlier[0].clone(), earlier[1].clone(), old]);
        assert!(ssh_ciphers(&all).iter().all(|x| x.1 == 1), "{:?}", ssh_ciphers(&all));
        // Another host, or another target, is not the same machine either.
        let mut other = runs[1].run.clone();
        other.host.cpu_flags.push("no-such-flag".into());
        assert!(!same_machine(&runs[2].run, &other));
        let mut remote = runs[1].run.clone();
        remote.settings["target"] = "me@server".into();
        assert!(!same_machine(&runs[2].run, &remote));
        let mut masked = runs[1].run.clone();
        masked.settings["cpu_caps"] = "no-aesni".into();
        assert!(!same_machine(&runs[2].run, &masked));
    }
}
