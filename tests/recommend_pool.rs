//! `recommend` pools the history: runs of the same machine (CPU flags, library
//! versions) measured into one real SQLite history are pooled and said to be;
//! `--no-pool` ranks the latest run alone.

use assert_cmd::Command;
use serde_json::Value;

fn cb() -> Command {
    let mut c = Command::cargo_bin("cipherbench").unwrap();
    c.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
    c
}

/// The notes of every ranking of `doc`'s recommendations.
fn notes(doc: &Value) -> Vec<String> {
    doc["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["rankings"].as_array().unwrap().iter())
        .flat_map(|r| r["notes"].as_array().cloned().unwrap_or_default())
        .map(|n| n.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn two_speed_runs_are_pooled_and_said_and_no_pool_ranks_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    for _ in 0..2 {
        cb().args(["speed", "--bytes", "16k", "--budget", "2s", "--quiet", "--db"])
            .arg(&db)
            .assert()
            .success();
    }
    let recommend = |extra: &[&str]| -> Value {
        let out = cb()
            .args(["recommend", "--json", "--for", "openssl", "--db"])
            .arg(&db)
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let pooled = notes(&recommend(&[]));
    assert!(pooled.iter().any(|n| n.starts_with("pooled 2 runs since ")), "{pooled:?}");
    let alone = notes(&recommend(&["--no-pool"]));
    assert!(alone.iter().all(|n| !n.starts_with("pooled")), "{alone:?}");
    // The terminal view says it first.
    let text = cb().args(["recommend", "--for", "openssl", "--db"]).arg(&db).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    let at = text.find("pooled 2 runs").expect("said");
    assert!(at < text.find("TLS 1.3 suites").unwrap(), "{text}");
}
