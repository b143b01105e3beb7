//! A machine without sshd (a client-only machine, here `CIPHERBENCH_SSHD`
//! naming no sshd): the ssh client's configuration is still read by `check`
//! (`ssh -G` does not need sshd), and the sshd block of `recommend` configures
//! no list, naming that cause. Needs no root.

mod common;

use std::process::Command;

const NO_SSHD: &str = "/nonexistent/sshd";

fn cb() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cipherbench"));
    c.env("CIPHERBENCH_SSHD", NO_SSHD);
    c
}

#[test]
fn check_reads_the_ssh_client_without_sshd() {
    let out = cb()
        .args(["--no-store", "check", "--json", "--for", "ssh", "--budget", "3s"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let r = common::json_of(&out.stdout);
    let ssh = r["diffs"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["software"] == "ssh"))
        .unwrap_or_else(|| panic!("ssh not read (exit {:?}): {r:#}\n{err}", out.status.code()));
    assert!(ssh["offered"].as_array().is_some_and(|o| !o.is_empty()), "{ssh:#}");
    let notes = format!("{}", ssh["notes"]);
    assert!(notes.contains("no sshd is installed"), "{ssh:#}");
    // Measuring needs a private sshd: exit 3, saying which sshd was not found.
    assert!(
        matches!(out.status.code(), Some(0 | 1)) || (out.status.code() == Some(3) && err.contains(NO_SSHD)),
        "exit {:?}: {err}",
        out.status.code()
    );
}

#[test]
fn the_sshd_block_names_the_missing_sshd() {
    let dir = tempfile::tempdir().unwrap();
    let out = cb()
        .args(["--no-store", "--db"])
        .arg(dir.path().join("h.sqlite"))
        .args(["recommend", "--json", "--for", "sshd", "--no-validate", "--budget", "3s"])
        .output()
        .unwrap();
    let doc = common::json_of(&out.stdout);
    let lines: Vec<String> = doc["recommendations"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["target"] == "sshd"))
        .and_then(|r| r["lines"].as_array())
        .unwrap_or_else(|| panic!("{doc:#}\n{}", String::from_utf8_lossy(&out.stderr)))
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect();
    assert!(lines.iter().all(|l| l.starts_with('#')), "{lines:#?}");
    let want = format!("CIPHERBENCH_SSHD={NO_SSHD} is not an executable sshd");
    assert!(lines.iter().any(|l| l.contains(&want)), "{lines:#?}");
}
