//! `cipherbench file` against real files, real OpenSSL and real `openssl enc`.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

fn cb() -> Command {
    let mut c = Command::cargo_bin("cipherbench").unwrap();
    c.env_remove("NO_COLOR").arg("--no-store");
    c
}

fn json_of(out: &[u8]) -> Value {
    serde_json::from_slice(out).unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(out)))
}

fn write_file(dir: &Path, name: &str, len: usize) -> std::path::PathBuf {
    let p = dir.join(name);
    let data: Vec<u8> = (0..len).map(|i| (i * 7 + i / 256) as u8).collect();
    std::fs::write(&p, data).unwrap();
    p
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// Every cipher and mode round-trips (verified by hash inside the tool) in both
/// I/O modes, on a size that is not a multiple of any block, after its KAT.
#[test]
fn every_cipher_round_trips_in_memory_and_disk_mode() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_file(dir.path(), "odd.bin", 300_001);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    for mode in ["memory", "disk"] {
        let doc = json_of(
            &cb()
                .args([
                    "file",
                    "--all",
                    "--reps",
                    "1",
                    "--chunk",
                    "64k",
                    "--json",
                    "--mode",
                    mode,
                    "--output-dir",
                ])
                .arg(&out)
                .arg(&input)
                .assert()
                .success()
                .get_output()
                .stdout,
        );
        let rs = doc["results"].as_array().unwrap();
        assert!(rs.len() >= 40, "{} results", rs.len());
        for r in rs {
            assert_eq!(r["kind"], "file");
            assert_eq!(r["subject"]["mode"], mode);
            assert_eq!(r["subject"]["bytes"], 300_001);
            match r["status"].as_str().unwrap() {
                "ok" => assert!(r["median"].as_f64().unwrap() > 0.0),
                // Only what this OpenSSL lacks (IDEA on Debian) may be missing.
                "unsupported" => assert!(r["reason"].as_str().unwrap().contains("not in this build"), "{r}"),
                _ => panic!("{mode}: {r}"),
            }
        }
        let ok = rs.iter().filter(|r| r["status"] == "ok").count();
        assert!(ok >= 40, "{mode}: only {ok} ok");
        // Verdicts come with the results: ECB is flagged.
        let ecb = doc["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["subject"]["name"] == "aes-128-ecb")
            .unwrap();
        assert_eq!(ecb["level"], "insecure");
        assert!(entries(&out).is_empty(), "{mode}: temporary files left: {:?}", entries(&out));
    }
}

#[test]
fn study_table_layout_and_openssl_cli_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_file(dir.path(), "doc.pdf", 200_000);
    let out = cb()
        .env("NO_COLOR", "1")
        .args([
            "file",
            "--ciphers",
            "des-ecb,des-cbc,aes-256-cbc,aes-256-gcm",
            "--reps",
            "2",
            "--via-openssl-cli",
        ])
        .arg(&input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("ECB enc") && text.contains("CBC dec") && text.contains("CBC ratio"),
        "{text}"
    );
    assert!(text.contains("File encryption via openssl enc"), "{text}");
    assert!(text.contains("openssl enc does not support AEAD or XTS ciphers"), "{text}");
    assert!(text.contains("warning: des-ecb is insecure"), "{text}");
    let doc = json_of(
        &cb()
            .args(["file", "--ciphers", "aes-128-cbc", "--reps", "1", "--via-openssl-cli", "--json"])
            .arg(&input)
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    let cli: Vec<_> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["subject"]["library"] == "openssl-cli")
        .collect();
    assert_eq!(cli.len(), 2);
    for r in cli {
        assert_eq!(r["status"], "ok", "{r}");
    }
}

#[test]
fn password_keys_report_pbkdf2_separately() {
    let doc = json_of(
        &cb()
            .args([
                "file",
                "--size",
                "64k",
                "--ciphers",
                "aes-128-ctr",
                "--reps",
                "1",
                "--password",
                "hunter2",
                "--pbkdf2-iter",
                "2000",
                "--json",
            ])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    let rs = doc["results"].as_array().unwrap();
    let kdf = rs.iter().find(|r| r["subject"]["op"] == "derive-key").unwrap();
    assert_eq!(kdf["metric"], "seconds");
    assert!(kdf["median"].as_f64().unwrap() > 0.0);
    assert_eq!(
        rs.iter()
            .filter(|r| r["subject"]["algorithm"] == "aes-128-ctr" && r["status"] == "ok")
            .count(),
        2
    );
}

#[test]
fn bad_inputs_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    cb().args(["file", "/definitely/not/here.bin"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read /definitely/not/here.bin"));
    cb().arg("file")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is a directory"));
    cb().args(["file"]).assert().code(2).stderr(predicate::str::contains("--size"));
    let f = write_file(dir.path(), "x.bin", 1000);
    cb().args(["file", "--ciphers", "aes-128-ccm"])
        .arg(&f)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot encrypt a file as a stream"));
    cb().args(["file", "--ciphers", "aes-128-cbx"])
        .arg(&f)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("aes-128-cbc"));
    cb().args(["file", "--output-dir", "/proc/nope"])
        .arg(&f)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot write in the output directory"));
    // Unreadable: only meaningful when not root (root reads everything).
    if unsafe { libc::geteuid() } != 0 {
        use std::os::unix::fs::PermissionsExt;
        let locked = write_file(dir.path(), "locked.bin", 10);
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        cb().arg("file")
            .arg(&locked)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("cannot read"));
    } else {
        eprintln!("skipped the unreadable-file case: running as root");
    }
}

#[test]
fn empty_file_is_allowed_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write_file(dir.path(), "empty.bin", 0);
    let out = cb()
        .args(["file", "--ciphers", "aes-128-gcm", "--json"])
        .arg(&empty)
        .assert()
        .success()
        .get_output()
        .clone();
    let doc = json_of(&out.stdout);
    let results = doc["results"].as_array().unwrap();
    assert!(!results.is_empty(), "the empty file has no record: {doc:#}");
    for r in results {
        assert_eq!(r["status"], "unsupported");
        assert!(r["reason"].as_str().unwrap().contains("empty file"));
    }
    cb().args(["file", "--ciphers", "aes-128-gcm"])
        .arg(&empty)
        .assert()
        .success()
        .stderr(predicate::str::contains("empty"));
}

/// A disk that fills up mid-run: a clear error, a non-zero exit, and no partial
/// output left behind. Needs root to mount a 1 MiB tmpfs.
#[test]
fn full_disk_in_disk_mode_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_file(dir.path(), "big.bin", 3 << 20);
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(&mnt)
        .status();
    if !mounted.is_ok_and(|s| s.success()) {
        eprintln!("skipped: cannot mount a small tmpfs here (needs root)");
        return;
    }
    let out = cb()
        .args(["file", "--ciphers", "aes-128-ctr", "--mode", "disk", "--reps", "1", "--output-dir"])
        .arg(&mnt)
        .arg(&input)
        .assert()
        .failure()
        .get_output()
        .clone();
    let left = entries(&mnt);
    let _ = std::process::Command::new("umount").arg(&mnt).status();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("No space left on device"), "{err}");
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn ctrl_c_removes_temporary_files() {
    let dir = tempfile::tempdir().unwrap();
    let exe = assert_cmd::cargo::cargo_bin("cipherbench");
    let mut child = std::process::Command::new(exe)
        .args([
            "file",
            "--no-store",
            "--quiet",
            "--size",
            "256M",
            "--ciphers",
            "des-ede3-cbc",
            "--mode",
            "disk",
            "--output-dir",
        ])
        .arg(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until its private directory holds an output file, then interrupt.
    let start = std::time::Instant::now();
    loop {
        let busy = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .any(|e| e.path().is_dir() && entries(&e.path()).iter().any(|n| n.contains("des-ede3")));
        if busy {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no output appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(entries(dir.path()).is_empty(), "left behind: {:?}", entries(dir.path()));
}
