//! A hostile local user and a hostile environment (issue 37, defects 7 to 10):
//! another user's folder, file or symbolic link where the history would go, no
//! home at all, a home that does not exist, an `OPENSSL_CONF` that leaves OpenSSL
//! with no working provider, a `TMPDIR` that does not exist. The other user is a
//! real one (`nobody`, or a uid without a passwd entry, through `setpriv`), in a
//! private sticky 1777 folder of the test's own: these tests need root, as the
//! test machines and CI run them.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const NOBODY: u32 = 65534;
/// A uid with no passwd entry (checked in `no_passwd_uid`).
const NO_PASSWD: u32 = 4242;

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Whether this test can play another user; says so when it cannot.
fn can_switch_users(test: &str) -> bool {
    let ok = is_root() && Command::new("setpriv").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped {test}: needs root and setpriv to act as another user");
    }
    ok
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_cipherbench")
}

/// The binary with a clean, known environment: no home, no XDG folders, no
/// OpenSSL configuration override (each test adds what it means to).
fn cb() -> Command {
    let mut c = Command::new(bin());
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()))
        .env("NO_COLOR", "1");
    c
}

/// `cb()` run as `uid` (group the same number, no supplementary groups).
fn cb_as(uid: u32) -> Command {
    let mut c = Command::new("setpriv");
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()))
        .env("NO_COLOR", "1")
        .args([&format!("--reuid={uid}"), &format!("--regid={uid}"), "--clear-groups", bin()]);
    c
}

/// Runs `cmd` as `uid` (a shell command line, for making the hostile files).
fn as_user(uid: u32, script: &str) {
    let st = Command::new("setpriv")
        .args([
            &format!("--reuid={uid}"),
            &format!("--regid={uid}"),
            "--clear-groups",
            "sh",
            "-c",
            script,
        ])
        .status()
        .unwrap();
    assert!(st.success(), "as uid {uid}: {script}");
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A private folder (root's, 0755 so other users can pass) holding a sticky,
/// world-writable folder `shared`: a /tmp of the test's own.
struct Shared {
    root: tempfile::TempDir,
}

impl Shared {
    fn new() -> Shared {
        let root = tempfile::Builder::new().prefix("cb-hostile-env-").tempdir().unwrap();
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let s = root.path().join("shared");
        std::fs::create_dir(&s).unwrap();
        std::fs::set_permissions(&s, std::fs::Permissions::from_mode(0o1777)).unwrap();
        Shared { root }
    }
    fn shared(&self) -> PathBuf {
        self.root.path().join("shared")
    }
    /// A folder of root's own, 0700, beside the shared one.
    fn private(&self, name: &str) -> PathBuf {
        let p = self.root.path().join(name);
        std::fs::create_dir(&p).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700)).unwrap();
        p
    }
}

const SPEED: [&str; 7] = ["speed", "sha256", "--bytes", "16", "--budget", "1s", "-q"];

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

#[test]
fn no_passwd_uid_really_has_none() {
    let out = Command::new("getent").args(["passwd", &NO_PASSWD.to_string()]).output().unwrap();
    assert!(
        !out.status.success(),
        "uid {NO_PASSWD} has a passwd entry; the tests need one without"
    );
}

/// Defect 7: with no HOME and no passwd entry, the history went to
/// `$TMPDIR/cipherbench/history.sqlite`; a folder another user made there (0777,
/// with a world-writable database) received the run. Now: refused with exit 2
/// asking for --db, the planted files untouched; with a private XDG_RUNTIME_DIR
/// the history goes there, made 0700/0600; an XDG_RUNTIME_DIR that is not private
/// is not used.
#[test]
fn without_a_home_the_history_never_lands_in_a_shared_folder() {
    if !can_switch_users("without_a_home_the_history_never_lands_in_a_shared_folder") {
        return;
    }
    let s = Shared::new();
    let shared = s.shared();
    // The hostile user's trap: shared/cipherbench (0777) with a world-writable history.
    as_user(
        NOBODY,
        &format!(
            "mkdir -m 0777 {d}/cipherbench && touch {d}/cipherbench/history.sqlite && chmod 0666 {d}/cipherbench/history.sqlite",
            d = shared.display()
        ),
    );
    let planted = shared.join("cipherbench/history.sqlite");
    for args in [&SPEED[..], &["history"], &["report", "--json"]] {
        let out = cb_as(NO_PASSWD).args(args).env("TMPDIR", &shared).output().unwrap();
        let what = format!("{args:?} with no home: {}", text(&out));
        assert_eq!(out.status.code(), Some(2), "{what}");
        let err = stderr(&out);
        assert!(err.contains("no private place for the history database"), "{what}");
        assert!(
            err.contains("HOME is not set") && err.contains("--db"),
            "names the cause and the way out: {what}"
        );
        assert_eq!(
            std::fs::metadata(&planted).unwrap().len(),
            0,
            "the planted database was written: {what}"
        );
        assert_eq!(
            std::fs::read_dir(shared.join("cipherbench")).unwrap().count(),
            1,
            "files appeared beside the planted database: {what}"
        );
    }
    // --no-store needs no place.
    let mut no_store = SPEED.to_vec();
    no_store.push("--no-store");
    let out = cb_as(NO_PASSWD).args(&no_store).env("TMPDIR", &shared).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    // A private XDG_RUNTIME_DIR of the user's own: the history goes there, private.
    let runtime = s.root.path().join("run-4242");
    std::fs::create_dir(&runtime).unwrap();
    std::os::unix::fs::chown(&runtime, Some(NO_PASSWD), Some(NO_PASSWD)).unwrap();
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = cb_as(NO_PASSWD)
        .args(SPEED)
        .env("TMPDIR", &shared)
        .env("XDG_RUNTIME_DIR", &runtime)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let db = runtime.join("cipherbench/history.sqlite");
    assert_eq!(std::fs::metadata(&db).unwrap().uid(), NO_PASSWD);
    assert_eq!(mode(&runtime.join("cipherbench")), 0o700);
    assert_eq!(mode(&db), 0o600);
    assert_eq!(std::fs::metadata(&planted).unwrap().len(), 0);
    let out = cb_as(NO_PASSWD)
        .args(["history"])
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("TMPDIR", &shared)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("complete"), "{}", text(&out));

    // An XDG_RUNTIME_DIR others can read, or another user's: not used.
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o755)).unwrap();
    let theirs = s.root.path().join("run-nobody");
    std::fs::create_dir(&theirs).unwrap();
    std::os::unix::fs::chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
    for dir in [&runtime, &theirs] {
        let out = cb_as(NO_PASSWD)
            .args(SPEED)
            .env("TMPDIR", &shared)
            .env("XDG_RUNTIME_DIR", dir)
            .output()
            .unwrap();
        let what = format!("XDG_RUNTIME_DIR {} (mode {:o}): {}", dir.display(), mode(dir), text(&out));
        assert_eq!(out.status.code(), Some(2), "{what}");
        assert!(stderr(&out).contains("XDG_RUNTIME_DIR") && stderr(&out).contains("0700"), "{what}");
    }
}

/// Defect 10: `HOME=/nonexistent` as root made /nonexistent/.local/share/...
/// Now a home that does not exist is not made: exit 2 naming it, nothing created.
#[test]
fn a_home_that_does_not_exist_is_not_made() {
    let s = Shared::new();
    let home = s.root.path().join("no-such-home");
    for args in [&SPEED[..], &["history"]] {
        let out = cb().args(args).env("HOME", &home).output().unwrap();
        let what = format!("{args:?}: {}", text(&out));
        assert_eq!(out.status.code(), Some(2), "{what}");
        assert!(stderr(&out).contains(&format!("HOME {} does not exist", home.display())), "{what}");
        assert!(!home.exists(), "the home was made: {what}");
    }
}

/// Every folder the store makes is 0700 (given by XDG_DATA_HOME or by --db), and
/// a new database 0600.
#[test]
fn the_folders_the_store_makes_are_private() {
    let s = Shared::new();
    let mine = s.private("mine");
    let xdg = mine.join("a/xdg");
    let out = cb().args(SPEED).env("XDG_DATA_HOME", &xdg).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for d in [mine.join("a"), xdg.clone(), xdg.join("cipherbench")] {
        assert_eq!(mode(&d), 0o700, "{}", d.display());
    }
    assert_eq!(mode(&xdg.join("cipherbench/history.sqlite")), 0o600);
    let db = mine.join("b/c/h.sqlite");
    let out = cb().args(SPEED).arg("--db").arg(&db).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for d in [mine.join("b"), mine.join("b/c")] {
        assert_eq!(mode(&d), 0o700, "{}", d.display());
    }
    assert_eq!(mode(&db), 0o600);
}

/// Defect 7 with a home: a `cipherbench` folder under XDG_DATA_HOME that another
/// user made, or that others can write, is refused (exit 2), nothing written in it.
#[test]
fn a_history_folder_that_is_not_private_is_refused() {
    if !can_switch_users("a_history_folder_that_is_not_private_is_refused") {
        return;
    }
    let s = Shared::new();
    let shared = s.shared();
    as_user(NOBODY, &format!("mkdir -m 0700 {}/cipherbench", shared.display()));
    let mine = s.private("mine");
    std::fs::create_dir(mine.join("cipherbench")).unwrap();
    std::fs::set_permissions(mine.join("cipherbench"), std::fs::Permissions::from_mode(0o777)).unwrap();
    for (xdg, why) in [(&shared, "owned by another user"), (&mine, "others can write in it")] {
        for args in [&SPEED[..], &["history"]] {
            let out = cb().args(args).env("XDG_DATA_HOME", xdg).output().unwrap();
            let what = format!("{args:?} in {}: {}", xdg.display(), text(&out));
            assert_eq!(out.status.code(), Some(2), "{what}");
            let err = stderr(&out);
            assert!(err.contains("refusing the history folder") && err.contains(why), "{what}");
            assert_eq!(std::fs::read_dir(xdg.join("cipherbench")).unwrap().count(), 0, "{what}");
        }
    }
}

/// Defect 8: in a sticky world-writable folder, another user's symbolic link
/// (dangling or not), another user's file, and another user's link where SQLite
/// keeps its journal are refused with exit 2 by every command; the link's target
/// is never made and the files are left as they were. Root's own link to root's
/// own file still works.
#[test]
fn another_users_database_or_link_is_refused() {
    if !can_switch_users("another_users_database_or_link_is_refused") {
        return;
    }
    let s = Shared::new();
    let shared = s.shared();
    let d = shared.display();
    as_user(
        NOBODY,
        &format!(
            "ln -s {d}/made-by-root.sqlite {d}/link.sqlite && touch {d}/file.sqlite && chmod 0666 {d}/file.sqlite \
             && ln -s {d}/journal-target {d}/mine.sqlite-journal"
        ),
    );
    // Root's own, in its own folder, with root's link to it in the shared one.
    let private = s.private("private");
    let real = private.join("real.sqlite");
    let out = cb().args(SPEED).arg("--db").arg(&real).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    std::os::unix::fs::symlink(&real, shared.join("roots-link.sqlite")).unwrap();
    let out = cb().args(SPEED).arg("--db").arg(shared.join("roots-link.sqlite")).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "root's own link: {}", text(&out));

    let cases = [
        ("link.sqlite", "is a symbolic link owned by another user"),
        ("file.sqlite", "is owned by another user"),
        ("mine.sqlite", "mine.sqlite-journal is a symbolic link owned by another user"),
    ];
    for (name, why) in cases {
        let db = shared.join(name);
        for args in [&SPEED[..], &["history"], &["report", "--json"], &["recommend", "--no-validate"]] {
            let out = cb().args(args).arg("--db").arg(&db).output().unwrap();
            let what = format!("{args:?} --db {}: {}", db.display(), text(&out));
            assert_eq!(out.status.code(), Some(2), "{what}");
            let err = stderr(&out);
            assert!(err.contains("refusing the history database") && err.contains(why), "{what}");
            assert!(err.contains(&db.display().to_string()), "names the file: {what}");
            assert!(!shared.join("made-by-root.sqlite").exists(), "the link's target was made: {what}");
            assert!(
                !shared.join("journal-target").exists(),
                "the journal link's target was made: {what}"
            );
            assert_eq!(std::fs::metadata(shared.join("file.sqlite")).unwrap().len(), 0, "{what}");
            assert!(!shared.join("mine.sqlite").exists(), "{what}");
        }
    }
}

/// An OpenSSL configuration that loads only the null provider, and one whose
/// provider fails to load.
fn hostile_confs(dir: &Path) -> [(PathBuf, &'static str); 2] {
    let null = dir.join("null.cnf");
    std::fs::write(
        &null,
        "openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n[provider_sect]\nnull = null_sect\n[null_sect]\nactivate = 1\n",
    )
    .unwrap();
    let broken = dir.join("broken.cnf");
    std::fs::write(
        &broken,
        format!(
            "openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n[provider_sect]\nbogus = bogus_sect\n\
             [bogus_sect]\nmodule = {}/no-such-provider.so\nactivate = 1\n",
            dir.display()
        ),
    )
    .unwrap();
    [(null, "null provider only"), (broken, "a provider that fails to load")]
}

/// Defect 9: `speed` (and `run`, `recommend`) panicked (exit 101) under an
/// OPENSSL_CONF that loads only the null provider. Now every subcommand that
/// uses OpenSSL exits 3 naming the configuration, before anything runs; those
/// that only read the history or files exit as they always do; none panics.
#[test]
fn a_hostile_openssl_conf_is_exit_3_and_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let out = cb()
        .args(SPEED)
        .arg("--db")
        .arg(&db)
        .arg("--export-json")
        .arg(dir.path().join("a.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let uses_openssl: [&[&str]; 11] = [
        &["run", "--budget", "5s"],
        &["speed", "aes-128-gcm", "--bytes", "1k", "--budget", "2s"],
        &["file", "--size", "1M", "--budget", "2s"],
        &["tls", "--budget", "3s"],
        &["ssh", "--budget", "3s"],
        &["list", "primitives"],
        &["list", "tls"],
        &["list", "ssh"],
        &["recommend", "--no-validate"],
        &["recommend", "--no-store", "--no-validate"],
        &["check", "--budget", "3s"],
    ];
    let a = dir.path().join("a.json");
    let a = a.to_str().unwrap();
    let reads_only: [(&[&str], i32); 4] = [
        (&["history"], 0),
        (&["report", "--json"], 0),
        (&["compare", a, a], 0),
        (&["completions", "bash"], 0),
    ];
    for (conf, what) in hostile_confs(dir.path()) {
        for args in uses_openssl {
            let out = cb().args(args).arg("--db").arg(&db).env("OPENSSL_CONF", &conf).output().unwrap();
            let shown = format!("{args:?} under {what}: {}", text(&out));
            let err = stderr(&out);
            assert!(!err.contains("panicked"), "{shown}");
            assert_eq!(out.status.code(), Some(3), "{shown}");
            assert!(
                err.contains(&format!("{} (OPENSSL_CONF)", conf.display())) && err.contains("provider"),
                "names the configuration and the cause: {shown}"
            );
        }
        for (args, code) in reads_only {
            let out = cb().args(args).arg("--db").arg(&db).env("OPENSSL_CONF", &conf).output().unwrap();
            let shown = format!("{args:?} under {what}: {}", text(&out));
            assert!(!stderr(&out).contains("panicked"), "{shown}");
            assert_eq!(out.status.code(), Some(code), "{shown}");
        }
    }
}

/// Defect 10: with TMPDIR missing, `ssh` said "install the package
/// openssh-client" (it is installed). Now every command that runs tools says the
/// temporary folder is the cause, exit 2 (as `file` always did).
#[test]
fn a_missing_tmpdir_is_named_not_a_missing_package() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("no-such-tmp");
    let commands: [&[&str]; 6] = [
        &["ssh", "--budget", "3s"],
        &["tls", "--budget", "3s"],
        &["speed", "sha256", "--bytes", "16", "--budget", "1s"],
        &["file", "--size", "1M", "--budget", "2s"],
        &["list", "ssh"],
        &["check", "--budget", "3s"],
    ];
    for args in commands {
        let out = cb().args(args).arg("--no-store").env("TMPDIR", &gone).output().unwrap();
        let what = format!("{args:?}: {}", text(&out));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{what}");
        assert!(err.contains(&format!("temporary folder {} (TMPDIR)", gone.display())), "{what}");
        assert!(!err.contains("install the package"), "{what}");
        assert!(!gone.exists(), "{what}");
    }
}
