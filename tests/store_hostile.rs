//! The history store touches only its own database: another program's SQLite
//! file, a newer schema, a file that is not SQLite at all and a database that
//! cannot be written are refused with exit 2 before anything is measured, and
//! left byte for byte as they were (no WAL switch, no `-wal`, `-shm` or
//! `-journal` file, no table). A history an older cipherbench made is migrated.

use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// `PRAGMA application_id` of cipherbench's databases: ASCII "CBnc".
const CBNC: i32 = 0x4342_6E63;

struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

fn cipherbench(args: &[&str], db: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cipherbench"));
    c.args(args).arg("--db").arg(db).env("NO_COLOR", "1");
    c
}

fn ran(mut c: Command) -> Ran {
    let t0 = Instant::now();
    let out = c.output().unwrap();
    Ran {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: t0.elapsed(),
    }
}

fn run(args: &[&str], db: &Path) -> Ran {
    ran(cipherbench(args, db))
}

/// The file names in `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The three ways to hand a file to cipherbench: two that only read, one that
/// would measure (with a budget long enough that measuring would show).
const COMMANDS: [&[&str]; 3] = [
    &["history"],
    &["report", "--json"],
    &["speed", "aes-128-gcm", "--bytes", "1k", "--budget", "5s", "--json"],
];

/// Every command refuses `db` with exit 2 naming the file and `why`, measures
/// nothing, and leaves the file and its folder exactly as they were.
fn refused_untouched(db: &Path, why: &str) {
    let dir = db.parent().unwrap();
    let before = std::fs::read(db).unwrap();
    let listing = entries(dir);
    for args in COMMANDS {
        let r = run(args, db);
        let what = format!("{args:?} on {}: {}", db.display(), r.stderr);
        assert_eq!(r.code, Some(2), "{what}");
        assert!(r.stderr.contains(&db.display().to_string()), "names the file: {what}");
        assert!(r.stderr.contains("not a cipherbench history database"), "{what}");
        assert!(r.stderr.contains(why), "says why ({why}): {what}");
        assert!(r.stdout.trim().is_empty(), "nothing measured or shown: {what}\n{}", r.stdout);
        assert!(
            r.took < Duration::from_secs(3),
            "refused before measuring, took {:?}: {what}",
            r.took
        );
        assert!(std::fs::read(db).unwrap() == before, "the file changed: {what}");
        assert_eq!(entries(dir), listing, "files appeared or went: {what}");
    }
}

#[test]
fn another_programs_database_is_refused_and_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    // Rollback mode, and WAL mode (closed cleanly, so no log beside it).
    for (name, journal) in [("app.sqlite", "DELETE"), ("app-wal.sqlite", "WAL")] {
        let db = dir.path().join(name);
        let c = Connection::open(&db).unwrap();
        c.pragma_update(None, "journal_mode", journal).unwrap();
        c.execute_batch("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES ('ada');")
            .unwrap();
        drop(c);
        refused_untouched(&db, "table 'users'");
    }
    // Another program that sets its own application_id.
    let db = dir.path().join("marked.sqlite");
    let c = Connection::open(&db).unwrap();
    c.execute_batch("PRAGMA application_id = 1234; CREATE TABLE t (x);").unwrap();
    drop(c);
    refused_untouched(&db, "another program");
    // Look-alikes: our table names beside another, and a `runs` of other columns.
    let db = dir.path().join("lookalike.sqlite");
    let c = Connection::open(&db).unwrap();
    c.execute_batch("CREATE TABLE runs (id TEXT); CREATE TABLE results (run_id TEXT); CREATE TABLE notes (x);")
        .unwrap();
    drop(c);
    refused_untouched(&db, "table 'notes'");
    let db = dir.path().join("columns.sqlite");
    let c = Connection::open(&db).unwrap();
    c.execute_batch("CREATE TABLE runs (id TEXT PRIMARY KEY, secret BLOB);").unwrap();
    drop(c);
    refused_untouched(&db, "columns cipherbench never made");
}

/// A database another process is writing (its log beside it holds changes not
/// yet in the file): neither it nor its log is touched.
#[test]
fn a_database_in_use_by_another_program_is_refused_and_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("busy.sqlite");
    let c = Connection::open(&db).unwrap();
    c.pragma_update(None, "journal_mode", "WAL").unwrap();
    c.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    c.execute_batch("CREATE TABLE users (id INTEGER PRIMARY KEY); INSERT INTO users DEFAULT VALUES;")
        .unwrap();
    let wal = dir.path().join("busy.sqlite-wal");
    let log = std::fs::read(&wal).unwrap();
    assert!(!log.is_empty());
    refused_untouched(&db, "write-ahead log");
    assert!(std::fs::read(&wal).unwrap() == log, "the other program's log changed");
    drop(c);
}

#[test]
fn a_newer_schema_is_refused_and_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("newer.sqlite");
    let c = Connection::open(&db).unwrap();
    c.pragma_update(None, "application_id", CBNC).unwrap();
    c.pragma_update(None, "user_version", 999).unwrap();
    c.execute_batch("CREATE TABLE runs (id TEXT PRIMARY KEY, shiny_new_column TEXT);")
        .unwrap();
    drop(c);
    refused_untouched(&db, "newer cipherbench");
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_and_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.txt");
    std::fs::write(&db, "these are my notes, not a database\n".repeat(50)).unwrap();
    refused_untouched(&db, "not an SQLite database");
    // Shorter than a header, and a header's start and nothing more.
    let db = dir.path().join("short.bin");
    std::fs::write(&db, b"SQLite format 3\0").unwrap();
    refused_untouched(&db, "not an SQLite database");
}

/// Makes a path unwritable for the binary, and writable again when dropped: the
/// immutable attribute as root (root ignores permissions), file modes otherwise.
/// When root cannot set the attribute, the binary runs as `nobody` instead.
struct Unwritable {
    path: PathBuf,
    undo: Undo,
}

enum Undo {
    Chattr,
    Mode(u32),
    Nobody(u32),
}

fn is_root() -> bool {
    // SAFETY: geteuid(2) cannot fail.
    unsafe { libc::geteuid() == 0 }
}

impl Unwritable {
    fn new(path: &Path) -> Unwritable {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).unwrap().permissions().mode();
        let undo = if !is_root() {
            let ro = if path.is_dir() { 0o555 } else { 0o444 };
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(ro)).unwrap();
            Undo::Mode(mode)
        } else if Command::new("chattr").arg("+i").arg(path).status().is_ok_and(|s| s.success()) {
            Undo::Chattr
        } else {
            // As nobody: the folders down to the file must be readable by others,
            // the file and its folder writable only by root.
            let mut p = path.parent();
            while let Some(d) = p.filter(|d| d.starts_with(env!("CARGO_TARGET_TMPDIR"))) {
                std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
                p = d.parent();
            }
            let ro = if path.is_dir() { 0o755 } else { 0o644 };
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(ro)).unwrap();
            Undo::Nobody(mode)
        };
        Unwritable {
            path: path.to_path_buf(),
            undo,
        }
    }

    /// The binary, as the user the path is unwritable for.
    fn cipherbench(&self, args: &[&str], db: &Path) -> Command {
        match self.undo {
            Undo::Nobody(_) => {
                let mut c = Command::new("setpriv");
                c.args([
                    "--reuid=65534",
                    "--regid=65534",
                    "--clear-groups",
                    env!("CARGO_BIN_EXE_cipherbench"),
                ])
                .args(args)
                .arg("--db")
                .arg(db)
                .env("NO_COLOR", "1")
                .env("XDG_DATA_HOME", db.parent().unwrap());
                c
            }
            _ => cipherbench(args, db),
        }
    }
}

impl Drop for Unwritable {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        match self.undo {
            Undo::Chattr => {
                let _ = Command::new("chattr").arg("-i").arg(&self.path).status();
            }
            Undo::Mode(m) | Undo::Nobody(m) => {
                let _ = std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(m));
            }
        }
    }
}

/// A history of ours, made by a short real run, in a folder of its own.
fn made_by_a_run() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new().tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let db = dir.path().join("h").join("history.sqlite");
    let r = run(&["speed", "sha256", "--bytes", "16", "--budget", "1s", "-q"], &db);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    (dir, db)
}

/// A read-only history file, and a history in a read-only folder: exit 2 before
/// anything is measured, naming the file; nothing changes. `history` still reads.
#[test]
fn an_unwritable_database_is_exit_2_before_measuring() {
    let (_dir, db) = made_by_a_run();
    let folder = db.parent().unwrap().to_path_buf();
    for target in [db.clone(), folder.clone()] {
        let before = std::fs::read(&db).unwrap();
        let listing = entries(&folder);
        let lock = Unwritable::new(&target);
        let r = ran(lock.cipherbench(&["speed", "aes-128-gcm", "--bytes", "1k", "--budget", "5s", "--json"], &db));
        let what = format!("{} unwritable: {}", target.display(), r.stderr);
        assert_eq!(r.code, Some(2), "{what}");
        assert!(r.stderr.contains("cannot write the history database"), "{what}");
        assert!(r.stderr.contains(&db.display().to_string()), "names the file: {what}");
        assert!(r.stdout.trim().is_empty(), "nothing measured: {what}\n{}", r.stdout);
        assert!(
            r.took < Duration::from_secs(3),
            "refused before measuring, took {:?}: {what}",
            r.took
        );
        // Reading still works, and leaves nothing behind either.
        let h = ran(lock.cipherbench(&["history"], &db));
        assert_eq!(h.code, Some(0), "history on {what}: {}", h.stderr);
        assert!(h.stdout.contains("complete"), "{}", h.stdout);
        drop(lock);
        assert!(std::fs::read(&db).unwrap() == before, "the file changed: {what}");
        assert_eq!(entries(&folder), listing, "files appeared or went: {what}");
    }
}

/// A fresh history carries cipherbench's application_id and schema version, and
/// the run leaves no log beside it.
#[test]
fn a_fresh_database_is_marked() {
    let (_dir, db) = made_by_a_run();
    let c = Connection::open(&db).unwrap();
    let app: i32 = c.query_row("PRAGMA application_id", [], |r| r.get(0)).unwrap();
    let version: i32 = c.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(app, CBNC, "application_id {app:#x}");
    assert_eq!(version, 1);
    let header = std::fs::read(&db).unwrap();
    assert_eq!(&header[68..72], b"CBnc", "the mark is in the file itself");
    let n: i64 = c.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 1);
    drop(c);
    assert_eq!(entries(db.parent().unwrap()), vec!["history.sqlite".to_string()]);
}

/// The commands that only read never make a database: `history` on a missing
/// file says no runs are stored, `report` says so with exit 2, no file appears.
#[test]
fn reading_a_missing_database_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sub").join("none.sqlite");
    let r = run(&["history"], &db);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("no runs stored"), "{}", r.stdout);
    let r = run(&["report"], &db);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("no runs stored"), "{}", r.stderr);
    let r = run(&["compare", "latest", "latest"], &db);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
    // An empty file reads as no runs too, and stays empty.
    std::fs::write(dir.path().join("empty.sqlite"), b"").unwrap();
    let r = run(&["history"], &dir.path().join("empty.sqlite"));
    assert!(r.stdout.contains("no runs stored"), "{} {}", r.stdout, r.stderr);
    assert_eq!(entries(dir.path()), vec!["empty.sqlite".to_string()]);
    assert_eq!(std::fs::metadata(dir.path().join("empty.sqlite")).unwrap().len(), 0);
}

/// The tables the first releases made (before runs named their owner process),
/// as they made them: no application_id, no user_version, WAL mode.
const FIRST_RELEASE: &str = "
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,
    command TEXT NOT NULL,
    info TEXT NOT NULL,
    verdicts TEXT NOT NULL DEFAULT '[]',
    recommendations TEXT NOT NULL DEFAULT '[]'
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

/// A history an older cipherbench made, holding one real run: read as it is by
/// `history` and `report` (read-only, unchanged), then migrated by the next run
/// and marked, its old run still there.
#[test]
fn an_old_cipherbench_history_is_migrated_and_readable() {
    let r = ran({
        let mut c = Command::new(env!("CARGO_BIN_EXE_cipherbench"));
        c.args(["speed", "sha256", "--bytes", "16", "--budget", "1s", "--no-store", "--json"]);
        c
    });
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let id = doc["run"]["id"].as_str().unwrap().to_string();
    for with_owner in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("old.sqlite");
        let c = Connection::open(&db).unwrap();
        c.pragma_update(None, "journal_mode", "WAL").unwrap();
        c.pragma_update(None, "foreign_keys", "ON").unwrap();
        c.execute_batch(FIRST_RELEASE).unwrap();
        if with_owner {
            // What the releases with owners added to an existing database.
            c.execute_batch("ALTER TABLE runs ADD COLUMN owner TEXT").unwrap();
        }
        c.execute(
            "INSERT INTO runs (id, started_at, finished_at, status, command, info) VALUES (?1, ?2, ?3, 'complete', 'speed', ?4)",
            rusqlite::params![
                id,
                doc["run"]["started_at"].as_str(),
                doc["run"]["finished_at"].as_str(),
                doc["run"].to_string()
            ],
        )
        .unwrap();
        for (i, res) in doc["results"].as_array().unwrap().iter().enumerate() {
            c.execute(
                "INSERT INTO results (run_id, seq, kind, metric, status, median, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                rusqlite::params![
                    id,
                    i as i64,
                    res["kind"].as_str(),
                    res["metric"].as_str(),
                    res["status"].as_str(),
                    res["median"].as_f64(),
                    res.to_string()
                ],
            )
            .unwrap();
        }
        drop(c);
        let what = if with_owner { "with owners" } else { "before owners" };

        // Reading changes nothing.
        let before = std::fs::read(&db).unwrap();
        let h = run(&["history", "--json"], &db);
        assert_eq!(h.code, Some(0), "{what}: {}", h.stderr);
        let runs: serde_json::Value = serde_json::from_str(&h.stdout).unwrap();
        assert_eq!(runs[0]["id"], id.as_str(), "{what}");
        let rep = run(&["report", "--json"], &db);
        assert_eq!(rep.code, Some(0), "{what}: {}", rep.stderr);
        let loaded: serde_json::Value = serde_json::from_str(&rep.stdout).unwrap();
        assert_eq!(loaded["results"], doc["results"], "{what}");
        assert!(std::fs::read(&db).unwrap() == before, "{what}: reading changed the file");
        assert_eq!(entries(dir.path()), vec!["old.sqlite".to_string()], "{what}");

        // The next run migrates it, then stores beside the old run.
        let r = run(&["speed", "sha256", "--bytes", "16", "--budget", "1s", "-q"], &db);
        assert_eq!(r.code, Some(0), "{what}: {}", r.stderr);
        let c = Connection::open(&db).unwrap();
        let app: i32 = c.query_row("PRAGMA application_id", [], |r| r.get(0)).unwrap();
        let version: i32 = c.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!((app, version), (CBNC, 1), "{what}");
        let owner: bool = c
            .prepare("SELECT 1 FROM pragma_table_info('runs') WHERE name = 'owner'")
            .unwrap()
            .exists([])
            .unwrap();
        assert!(owner, "{what}: owner column added");
        drop(c);
        let h = run(&["history", "--json"], &db);
        let runs: serde_json::Value = serde_json::from_str(&h.stdout).unwrap();
        assert_eq!(runs.as_array().unwrap().len(), 2, "{what}: {runs}");
        let old = run(&["report", "--json", "--run", &id], &db);
        assert_eq!(old.code, Some(0), "{what}: {}", old.stderr);
        let loaded: serde_json::Value = serde_json::from_str(&old.stdout).unwrap();
        assert_eq!(loaded["results"], doc["results"], "{what}: the old run survives the migration");
    }
}
