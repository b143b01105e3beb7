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

/// The 20 moments, from a fixed-seed generator: random, yet the same on every machine.
fn moments() -> Vec<Duration> {
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    (0..20)
        .map(|_| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            Duration::from_millis(200 + (seed >> 33) % 7800)
        })
        .collect()
}

/// Runs `runs` (index, moment) one after another, each in its own database under
/// `data`, with `tmp` as TMPDIR: every assertion of the test, per run.
fn interrupt_runs(runs: &[(usize, Duration)], data: &Path, tmp: &Path) {
    let exe = assert_cmd::cargo::cargo_bin("cipherbench");
    let (sshd_before, dirs_before) = (private_sshds(tmp), sshd_dirs(tmp));
    for &(i, delay) in runs {
        let db = data.join(format!("h{i}.sqlite"));
        let mut child = Command::new(&exe)
            .args(["--budget", "30s", "--quiet", "--db"])
            .arg(&db)
            .env("XDG_DATA_HOME", data)
            .env("TMPDIR", tmp)
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
        assert_eq!(private_sshds(tmp), sshd_before, "run {i}: a private sshd outlived the run");
        assert_eq!(sshd_dirs(tmp), dirs_before, "run {i}: a private sshd directory was left");
    }
}

/// The 20 runs in two streams side by side, each stream with its
/// own data directory and TMPDIR (it counts only its own sshds): the test waits on the moments,
/// not on the CPU, so two streams halve its wall time and nothing here is timed.
#[test]
fn sigint_at_random_moments_keeps_the_database_and_stops_the_daemon() {
    let runs: Vec<(usize, Duration)> = moments().into_iter().enumerate().collect();
    std::thread::scope(|s| {
        // Longest moment first to the stream with less waiting so far: two even halves.
        let mut by_length = runs.clone();
        by_length.sort_by_key(|&(_, d)| std::cmp::Reverse(d));
        let mut halves: [Vec<(usize, Duration)>; 2] = [Vec::new(), Vec::new()];
        for run in by_length {
            let total = |h: &Vec<(usize, Duration)>| h.iter().map(|&(_, d)| d).sum::<Duration>();
            let k = usize::from(total(&halves[1]) < total(&halves[0]));
            halves[k].push(run);
        }
        let streams: Vec<_> = halves
            .into_iter()
            .map(|mut mine| {
                mine.sort();
                s.spawn(move || {
                    let (data, tmp) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
                    interrupt_runs(&mine, data.path(), tmp.path());
                })
            })
            .collect();
        for h in streams {
            h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        }
    });
}

/// Ctrl-C twice quits at once (the forced exit): the run is still written as
/// `interrupted`, not left `running` for the next run to call abandoned, and the
/// private sshd is stopped with its directory.
#[test]
fn ctrl_c_twice_quits_at_once_and_the_run_reads_interrupted() {
    let exe = assert_cmd::cargo::cargo_bin("cipherbench");
    let (data, tmp) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for (i, first) in [1500u64, 4000].into_iter().enumerate() {
        let db = data.path().join(format!("twice{i}.sqlite"));
        let child = Command::new(&exe)
            .args(["--budget", "30s", "--quiet", "--db"])
            .arg(&db)
            .env("XDG_DATA_HOME", data.path())
            .env("TMPDIR", tmp.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(first));
        for _ in 0..2 {
            // SAFETY: kill(2) on our own child.
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            std::thread::sleep(Duration::from_millis(50));
        }
        let out = child.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{said}");
        assert!(db.exists(), "no history written after {first} ms: {said}");
        let conn = rusqlite::Connection::open(&db).unwrap();
        let status: String = conn.query_row("SELECT status FROM runs", [], |r| r.get(0)).unwrap();
        assert_eq!(status, "interrupted", "after {first} ms: {said}");
        assert_eq!(private_sshds(tmp.path()), 0, "a private sshd outlived the forced exit");
        assert_eq!(sshd_dirs(tmp.path()), 0, "a private sshd directory was left");
    }
}
