//! Streaming keeps memory constant: a 4 GiB (sparse) file runs in at most 64 MiB
//! RSS. Alone in its own test binary so that the peak RSS of children is ours.

use std::process::Command;

#[test]
fn four_gib_file_runs_in_64_mib() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sparse-4g.bin");
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(4 << 30).unwrap();
    drop(f);
    let exe = assert_cmd::cargo::cargo_bin("cipherbench");
    let out = Command::new(exe)
        .args(["file", "--no-store", "--json", "--ciphers", "aes-128-ctr", "--reps", "1"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = doc["results"].as_array().unwrap();
    assert!(!results.is_empty(), "nothing measured: {doc:#}");
    for r in results {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["subject"]["bytes"], 4u64 << 30);
    }
    // SAFETY: getrusage fills the struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let peak_mib = ru.ru_maxrss as f64 / 1024.0;
    assert!(peak_mib <= 64.0, "peak RSS {peak_mib:.1} MiB");
    eprintln!("peak RSS {peak_mib:.1} MiB for a 4 GiB file");
}
