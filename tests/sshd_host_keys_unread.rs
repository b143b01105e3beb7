//! sshd's host keys that cannot be read (issue 38): the comment that leaves
//! `HostKeyAlgorithms` out names the real cause, which as root is never "needs
//! root". The real sshd reads a configuration (`CIPHERBENCH_SSHD_CONFIG`) whose
//! only host key does not exist, so `sshd -T` refuses whoever runs it.

mod common;

use std::process::Command;

#[test]
fn the_host_keys_comment_names_what_sshd_said() {
    if !["/usr/sbin/sshd", "/usr/local/sbin/sshd"]
        .iter()
        .any(|p| std::path::Path::new(p).exists())
    {
        return common::missing("sshd (openssh-server)");
    }
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("sshd_config");
    std::fs::write(&conf, format!("HostKey {}\n", dir.path().join("no-such-key").display())).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cipherbench"))
        .args(["--no-store", "--db"])
        .arg(dir.path().join("h.sqlite"))
        .args(["recommend", "--json", "--for", "sshd", "--no-validate", "--budget", "3s"])
        .env("CIPHERBENCH_SSHD_CONFIG", &conf)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let caps = &doc["run"]["capabilities"];
    let recs = doc["recommendations"].as_array().unwrap();
    let lines: Vec<&str> = recs
        .iter()
        .find(|r| r["target"] == "sshd")
        .and_then(|r| r["lines"].as_array())
        .unwrap_or_else(|| panic!("{recs:#?}"))
        .iter()
        .filter_map(|l| l.as_str())
        .collect();
    // The defaults are read all the same (a throw-away host key of their own).
    assert!(!caps["sshd_defaults"].is_null(), "{caps:#}");
    let comment = lines
        .iter()
        .find(|l| l.starts_with("# HostKeyAlgorithms left out"))
        .unwrap_or_else(|| panic!("{lines:#?}"));
    assert!(!comment.contains("needs root"), "{comment}");
    let why = caps["sshd_hostkeys_unread"]
        .as_str()
        .unwrap_or_else(|| panic!("no cause recorded: {caps:#}"));
    // sshd's own words: it found no host key.
    assert!(why.contains("`sshd -T` refused") && why.contains("hostkeys"), "{why}");
    let root = unsafe { libc::geteuid() } == 0;
    assert_eq!(why.contains("not running as root"), !root, "{why}");
    assert!(comment.contains(why), "{comment}");
}
