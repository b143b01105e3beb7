//! Ctrl-C at random moments of the main job, 20 times: every run exits 130, the
//! database passes `PRAGMA integrity_check` with the run marked interrupted, and
//! no private sshd or its directory outlives the run.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// This test's own private sshds: their config lives under `tmp`, the TMPDIR this
/// test gives its runs, so another run on the machine is never counted.
fn private_sshds(tmp: &Path) -> usize {
    let mine = format!("-f {}/cipherbench-sshd", tmp.display());
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains("sshd") && c.contains(&mine))
        .count()
}

fn sshd_dirs(tmp: &Path) -> usize {
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("cipherbench-sshd"))
        .count()
}

#[test]
fn sigint_at_random_moments_keeps_the_database_and_stops_the_daemon() {
    let exe = assert_cmd::cargo::cargo_bin("cipherbench");
    let data = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let (sshd_before, dirs_before) = (private_sshds(tmp.path()), sshd_dirs(tmp.path()));
    // A fixed-seed generator: random moments, yet the same ones on every machine.
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..20 {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let delay = Duration::from_millis(200 + (seed >> 33) % 7800);
        let db = data.path().join(format!("h{i}.sqlite"));
        let mut child = Command::new(&exe)
            .args(["--budget", "30s", "--quiet", "--db"])
            .arg(&db)
            .env("XDG_DATA_HOME", data.path())
            .env("TMPDIR", tmp.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130), "run {i} interrupted after {delay:?}");
        if db.exists() {
            let conn = rusqlite::Connection::open(&db).unwrap();
            let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
            assert_eq!(check, "ok", "run {i}");
            let status: String = conn.query_row("SELECT status FROM runs", [], |r| r.get(0)).unwrap();
            assert_eq!(status, "interrupted", "run {i} after {delay:?}");
        }
        assert_eq!(private_sshds(tmp.path()), sshd_before, "run {i}: a private sshd outlived the run");
        assert_eq!(sshd_dirs(tmp.path()), dirs_before, "run {i}: a private sshd directory was left");
    }
}
