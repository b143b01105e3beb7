//! Every run ends on time and loses nothing (issue 20): slow and silent peers on
//! 127.0.0.1, special files, a locked or full store, killed runs, exit codes.
//! Peers here are bounded loops that stop by themselves.

use assert_cmd::Command;
use predicates::prelude::*;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn cb() -> Command {
    let mut c = Command::cargo_bin("cipherbench").unwrap();
    c.env("NO_COLOR", "1");
    c.timeout(Duration::from_secs(120));
    c
}

/// What a misbehaving peer does once it has accepted a connection.
#[derive(Clone, Copy)]
enum Peer {
    /// Reads and never answers.
    Silent,
    /// Sends `first` then one byte of it every 700 ms, never finishing.
    Drip(&'static [u8]),
}

/// Serves `peer` on 127.0.0.1 for at most `life`, then stops by itself.
fn peer(kind: Peer, life: Duration) -> u16 {
    counted_peer(kind, life).0
}

/// [`peer`], with the count of connections it has accepted so far.
fn counted_peer(kind: Peer, life: Duration) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    l.set_nonblocking(true).unwrap();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        let end = Instant::now() + life;
        while Instant::now() < end {
            let Ok((mut s, _)) = l.accept() else {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            };
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let _ = s.set_nonblocking(false);
            std::thread::spawn(move || {
                let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
                let mut buf = [0u8; 4096];
                let mut i = 0;
                while Instant::now() < end {
                    match kind {
                        Peer::Silent => {
                            if let Ok(0) = s.read(&mut buf) {
                                return;
                            }
                        }
                        Peer::Drip(bytes) => {
                            let _ = s.read(&mut buf);
                            if s.write_all(&bytes[i % bytes.len()..][..1]).is_err() {
                                return;
                            }
                            i += 1;
                            std::thread::sleep(Duration::from_millis(700));
                        }
                    }
                }
            });
        }
    });
    (port, accepted)
}

/// Runs `c`, returning (exit code, stderr, wall seconds).
fn timed(c: &mut Command) -> (Option<i32>, String, f64) {
    let t0 = Instant::now();
    let out = c.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        t0.elapsed().as_secs_f64(),
    )
}

/// Budget 3 s: the deadline is 3 s + grace (1 s + 5%); allow 1.5 s for process
/// start and a debug build on a shared machine.
const BUDGET: f64 = 3.0;
fn limit() -> f64 {
    BUDGET + 1.0 + 0.05 * BUDGET + 1.5
}

#[test]
fn tls_connect_to_silent_and_dripping_peers_ends_within_the_budget() {
    let silent = peer(Peer::Silent, Duration::from_secs(30));
    // A TLS record header (handshake, TLS 1.2) whose body never comes.
    let drip = peer(
        Peer::Drip(b"\x16\x03\x03\x40\x00\x02\x02\x02\x02\x02\x02\x02"),
        Duration::from_secs(30),
    );
    let (code, err, secs) = timed(
        cb().args(["tls", "--no-store", "--budget", "3s", "--timeout", "30s", "--connect"])
            .arg(format!("127.0.0.1:{silent}")),
    );
    assert_eq!(code, Some(3), "{err}");
    assert!(secs < limit(), "{secs:.1} s for a {BUDGET} s budget: {err}");
    assert!(err.contains("accepted the connection but sent nothing"), "{err}");
    assert!(err.contains("--timeout 30s is capped"), "{err}");
    assert!(!err.contains("refused") && !err.contains("unreachable"), "{err}");

    let (code, err, secs) = timed(
        cb().args(["tls", "--no-store", "--budget", "3s", "--timeout", "30s", "--connect"])
            .arg(format!("127.0.0.1:{drip}")),
    );
    assert_eq!(code, Some(3), "{err}");
    assert!(secs < limit(), "{secs:.1} s for a {BUDGET} s budget: {err}");
    assert!(err.contains("too slow to measure") && err.contains("bytes in"), "{err}");
    assert!(!err.contains("refused"), "{err}");
}

#[test]
fn ssh_host_silent_and_dripping_peers_end_within_the_budget() {
    let silent = peer(Peer::Silent, Duration::from_secs(30));
    let drip = peer(Peer::Drip(b"SSH-2.0-OpenSSH_dripping"), Duration::from_secs(30));
    for (port, want) in [(silent, "sent nothing"), (drip, "too slow to measure")] {
        let (code, err, secs) = timed(cb().args([
            "ssh",
            "--no-store",
            "--budget",
            "3s",
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ]));
        assert_eq!(code, Some(3), "{err}");
        assert!(secs < limit(), "{secs:.1} s for a {BUDGET} s budget: {err}");
        assert!(err.contains(want) && err.contains("accepted the connection"), "{err}");
        assert!(!err.contains("unreachable") && !err.contains("refused"), "{err}");
    }
}

#[test]
fn ctrl_c_during_a_remote_probe_exits_130() {
    let (silent, accepted) = counted_peer(Peer::Silent, Duration::from_secs(60));
    let exe = assert_cmd::cargo::cargo_bin("cipherbench");
    let mut child = std::process::Command::new(exe)
        .args(["tls", "--no-store", "--budget", "20s", "--timeout", "20s", "--connect"])
        .arg(format!("127.0.0.1:{silent}"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The probe is under way once the silent peer has accepted its connection
    // (within a deadline: a loaded machine can take seconds to get there).
    let end = Instant::now() + Duration::from_secs(30);
    while accepted.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        assert!(Instant::now() < end, "cipherbench never connected to the silent peer");
        assert!(child.try_wait().unwrap().is_none(), "cipherbench exited before it connected");
        std::thread::sleep(Duration::from_millis(20));
    }
    let t0 = Instant::now();
    // SAFETY: signals our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let took = t0.elapsed();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    // What the user sees (docs/deadlines.md): Ctrl-C stops the run, keeping its
    // results; a run still going 4 s later (src/interrupt.rs WATCHDOG) is cut at
    // once instead. So the stop comes before the watchdog and not from it: an
    // ignored SIGINT would take the whole 20 s, one that only the watchdog ends
    // takes 4 s and says so.
    assert!(took < Duration::from_secs(4), "took {took:?} to stop: {err}");
    assert!(!err.contains("exiting now"), "the watchdog had to end it: {err}");
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(!err.contains("Interrupted system call"), "{err}");
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn file_refuses_devices_and_fifos_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    mkfifo(&fifo);
    for (path, kind) in [(PathBuf::from("/dev/zero"), "character device"), (fifo, "FIFO")] {
        let (code, err, secs) = timed(cb().args(["file", "--no-store", "--ciphers", "aes-128-gcm"]).arg(&path));
        assert_eq!(code, Some(2), "{err}");
        assert!(secs < 5.0, "{secs:.1} s to refuse {}", path.display());
        assert!(err.contains(kind) && err.contains("--size"), "{err}");
    }
}

#[test]
fn file_keeps_its_budget_with_fewer_repetitions_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, secs) = timed(
        cb().args([
            "file",
            "--no-store",
            "-q",
            "--size",
            "1M",
            "--ciphers",
            "des-ede3-cbc,aes-128-cbc",
            "--reps",
            "50",
            "--budget",
            "2s",
            "--output-dir",
        ])
        .arg(dir.path()),
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(secs < 2.0 + 1.1 + 2.0, "{secs:.1} s for a 2 s budget");
    assert!(err.contains("--budget 2s cut") && err.contains("of 50 repetitions"), "{err}");
}

fn open_db(p: &Path) -> rusqlite::Connection {
    let c = rusqlite::Connection::open(p).unwrap();
    c.busy_timeout(Duration::from_secs(10)).unwrap();
    c
}

fn status_of(db: &Path) -> Vec<(String, i64)> {
    let c = open_db(db);
    let mut st = c
        .prepare("SELECT status, (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id) FROM runs r ORDER BY rowid")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Another connection holds the history's write lock while a run starts and
/// measures: the run still prints and exports everything, exits 4 (not saved as
/// it went), and closes its row once the lock is gone.
#[test]
fn locked_history_keeps_the_export_and_closes_the_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    cb().args(["speed", "sha256", "--bytes", "1k", "--budget", "1s", "-q", "--db"])
        .arg(&db)
        .assert()
        .success();
    let (locked, is_locked) = std::sync::mpsc::channel();
    let locker = std::thread::spawn({
        let db = db.clone();
        move || {
            let c = open_db(&db);
            c.execute_batch("BEGIN EXCLUSIVE").unwrap();
            locked.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(3500));
            c.execute_batch("COMMIT").unwrap();
        }
    });
    // The run starts once the lock is held (not after a guessed while).
    is_locked.recv_timeout(Duration::from_secs(30)).expect("the locker took the lock");
    let export = dir.path().join("out.json");
    let (code, err, _) = timed(
        cb().args(["speed", "sha256", "aes-128-gcm", "--bytes", "1k", "--budget", "4s", "--db"])
            .arg(&db)
            .arg("--export-json")
            .arg(&export),
    );
    locker.join().unwrap();
    assert_eq!(code, Some(4), "{err}");
    assert!(err.contains("history database") && err.contains("failed"), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&export).unwrap()).unwrap();
    let n = doc["results"].as_array().unwrap().len() as i64;
    assert!(n >= 2);
    let runs = status_of(&db);
    assert_eq!(runs.len(), 2, "{runs:?}");
    // Closed with every result; `partial` when waiting for the lock ran it into
    // its deadline after measuring (docs/deadlines.md).
    assert!(
        runs[1] == ("complete".to_string(), n) || runs[1] == ("partial".to_string(), n),
        "{runs:?}"
    );
}

/// A run killed outright stays `running` until the next run sees its process is
/// gone and marks it `abandoned`; `history` (which only reads) shows it so at once.
#[test]
fn killed_runs_are_marked_abandoned() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let exe = assert_cmd::cargo::cargo_bin("cipherbench");
    let mut child = std::process::Command::new(exe)
        .args(["speed", "sha256", "--budget", "30s", "-q", "--db"])
        .arg(&db)
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while status_of_if_exists(&db).is_empty() && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(status_of(&db)[0].0, "running");
    cb().args(["history", "--db"])
        .arg(&db)
        .assert()
        .success()
        .stdout(predicate::str::contains("abandoned"));
    assert_eq!(status_of(&db)[0].0, "running", "history only reads");
    cb().args(["speed", "sha256", "--bytes", "16", "--budget", "1s", "-q", "--db"])
        .arg(&db)
        .assert()
        .success();
    assert_eq!(status_of(&db)[0].0, "abandoned");
}

/// The statuses of the runs so far, or nothing while the database is being made.
fn status_of_if_exists(db: &Path) -> Vec<(String, i64)> {
    if !db.exists() {
        return Vec::new();
    }
    let c = open_db(db);
    let Ok(mut st) = c.prepare("SELECT status FROM runs") else {
        return Vec::new();
    };
    let rows = st
        .query_map([], |r| r.get::<_, String>(0))
        .map(|it| it.flatten().map(|s| (s, 0)).collect());
    rows.unwrap_or_default()
}

fn mount_tmpfs(at: &Path, size: &str) -> bool {
    std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(at)
        .status()
        .is_ok_and(|s| s.success())
}

fn entries(d: &Path) -> Vec<String> {
    std::fs::read_dir(d)
        .map(|r| r.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

/// An export onto a full filesystem: the run still prints its summary and
/// stores its history, exits 4 naming the file, and leaves nothing half-written.
#[test]
fn full_filesystem_export_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    if !mount_tmpfs(&mnt, "64k") {
        eprintln!("skipped: cannot mount a small tmpfs here (needs root)");
        return;
    }
    // Fill it up.
    let mut f = std::fs::File::create(mnt.join("filler")).unwrap();
    let chunk = vec![7u8; 4096];
    while f.write_all(&chunk).is_ok() {}
    drop(f);
    let db = dir.path().join("h.sqlite");
    let out = mnt.join("out.json");
    let (code, err, _) = timed(
        cb().args(["speed", "sha256", "--bytes", "1k", "--budget", "1s", "--db"])
            .arg(&db)
            .arg("--export-json")
            .arg(&out),
    );
    let left = entries(&mnt);
    let _ = std::process::Command::new("umount").arg(&mnt).status();
    assert_eq!(code, Some(4), "{err}");
    assert!(err.contains("No space left on device") && err.contains("out.json"), "{err}");
    assert_eq!(left, vec!["filler".to_string()], "half-written files left behind");
    assert_eq!(status_of(&db)[0].0, "complete");
}

/// A `file` run killed outright leaves its private directory; the next run
/// sweeps it (as the SSH ones are swept).
#[test]
fn killed_file_runs_private_directory_is_swept() {
    let dir = tempfile::tempdir().unwrap();
    let exe = assert_cmd::cargo::cargo_bin("cipherbench");
    let mut child = std::process::Command::new(&exe)
        .args([
            "file",
            "--no-store",
            "-q",
            "--size",
            "16M",
            "--ciphers",
            "des-ede3-cbc",
            "--reps",
            "100",
            "--output-dir",
        ])
        .arg(dir.path())
        .spawn()
        .unwrap();
    let private = || {
        entries(dir.path())
            .into_iter()
            .filter(|e| e.starts_with("cipherbench-file-"))
            .collect::<Vec<_>>()
    };
    let t0 = Instant::now();
    while !private().iter().any(|d| dir.path().join(d).join("owner").exists()) {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "no private directory with its owner after 20 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(private().len(), 1, "the killed run's directory should be there");
    cb().args([
        "file",
        "--no-store",
        "-q",
        "--size",
        "64k",
        "--ciphers",
        "aes-128-ctr",
        "--reps",
        "1",
        "--output-dir",
    ])
    .arg(dir.path())
    .assert()
    .success();
    assert!(private().is_empty(), "left behind: {:?}", private());
}

#[test]
fn bad_outputs_policies_and_memory_are_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope/out.json");
    for args in [
        vec!["speed", "--budget", "60s"],
        vec!["file", "--size", "1M", "--budget", "60s"],
        vec!["tls", "--budget", "60s"],
    ] {
        let (code, err, secs) = timed(cb().args(&args).arg("--no-store").arg("--export-json").arg(&missing));
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(secs < 5.0 && err.contains("does not exist"), "{args:?}: {secs:.1} s, {err}");
        let (code, err, _) = timed(cb().args(&args).args(["--no-store", "--policy", "superstrict"]));
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("superstrict"), "{err}");
    }
    let (code, err, _) = timed(cb().args(["speed", "aes-128-gcm", "--threads", "1024", "--bytes", "64M", "--no-store"]));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("GiB") && err.contains("available"), "{err}");
}

#[test]
fn main_job_reports_directory_is_checked_first() {
    let dir = tempfile::tempdir().unwrap();
    let blocked = dir.path().join("data");
    std::fs::write(&blocked, "a file where a directory should be").unwrap();
    let (code, err, secs) = timed(
        cb().env("XDG_DATA_HOME", &blocked)
            .args(["run", "--budget", "60s", "--db"])
            .arg(dir.path().join("h.sqlite")),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(secs < 5.0 && err.contains("reports directory"), "{secs:.1} s: {err}");
}

#[test]
fn compare_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{ not json").unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    cb().args([
        "speed",
        "sha256",
        "--bytes",
        "1k",
        "--budget",
        "1s",
        "--no-store",
        "-q",
        "--export-json",
    ])
    .arg(&a)
    .assert()
    .success();
    cb().args([
        "speed",
        "md5",
        "--bytes",
        "1k",
        "--budget",
        "1s",
        "--no-store",
        "-q",
        "--export-json",
    ])
    .arg(&b)
    .assert()
    .success();
    cb().arg("compare").arg(&a).arg(&bad).assert().code(2);
    cb().arg("compare").arg(&a).arg(&b).assert().success();
    cb().arg("compare")
        .arg(&a)
        .arg(&b)
        .arg("--fail-on-regression")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("share no measured result"));
}
