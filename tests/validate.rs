//! `recommend` checks its emitted lines with each target software's own parser
//! (`nginx -t`, `openssl ciphers`, `gnutls-cli --priority`, `haproxy -c`): the
//! answer says which parser accepted them, the JSON keeps it per recommendation
//! (`validated`), and `--no-validate` runs none of them.

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

mod common;
use common::{json_of, missing};

fn cb() -> Command {
    let mut c = Command::cargo_bin("cipherbench").unwrap();
    c.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
    c
}

/// Whether `program` is installed where the targets look for it.
fn installed(program: &str) -> bool {
    ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"]
        .iter()
        .any(|d| Path::new(d).join(program).exists())
}

/// A history with one quick primitive run.
fn primitive_db(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("h.sqlite");
    cb().args(["speed", "--bytes", "16k", "--budget", "2s", "--quiet", "--db"])
        .arg(&db)
        .assert()
        .success();
    db
}

fn recommend(db: &Path, extra: &[&str]) -> std::process::Output {
    cb().args(["recommend", "--for", "nginx,openssl,gnutls,haproxy", "--db"])
        .arg(db)
        .args(extra)
        .assert()
        .success()
        .get_output()
        .clone()
}

#[test]
fn recommend_says_which_parser_accepted_its_lines() {
    for p in ["nginx", "openssl", "gnutls-cli"] {
        if !installed(p) {
            return missing(&format!("{p} is not installed"));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let db = primitive_db(dir.path());
    let doc: Value = json_of(&recommend(&db, &["--json"]).stdout);
    let recs = doc["recommendations"].as_array().unwrap();
    let validated = |target: &str| -> Value {
        let r = recs
            .iter()
            .find(|r| r["target"] == target && !r["lines"].as_array().unwrap().is_empty())
            .unwrap_or_else(|| panic!("no {target} recommendation with lines: {recs:#?}"));
        r["validated"].clone()
    };
    for (target, by) in [
        ("nginx", "nginx -t"),
        ("openssl", "openssl ciphers"),
        ("gnutls", "gnutls-cli --priority"),
    ] {
        let v = validated(target);
        // The parser, then what the software negotiated where it was run with them.
        let detail = v["detail"].as_str().unwrap_or_default();
        assert!(
            v["status"] == "accepted" && (detail == by || detail.starts_with(&format!("{by}; "))),
            "{target}: {v:#}"
        );
    }
    let h = validated("haproxy");
    match installed("haproxy") {
        true => assert_eq!(h["status"], "accepted", "{h:#}"),
        false => assert_eq!(
            (h["status"].as_str(), h["detail"].as_str()),
            (Some("not checked"), Some("haproxy is not installed"))
        ),
    }

    let text = String::from_utf8(recommend(&db, &[]).stdout).unwrap();
    assert!(text.contains("checked: nginx -t accepts these lines"), "{text}");
    assert!(text.contains("checked: openssl ciphers accepts these lines"), "{text}");

    let quiet: Value = json_of(&recommend(&db, &["--json", "--no-validate"]).stdout);
    for r in quiet["recommendations"].as_array().unwrap() {
        assert!(r.get("validated").is_none(), "--no-validate checked {r:#}");
    }
    let text = String::from_utf8(recommend(&db, &["--no-validate"]).stdout).unwrap();
    assert!(!text.contains("own parser"), "{text}");
}

/// The main job checks its lines too (or says that its budget left no time for
/// it), and keeps what the parser said in the document.
#[test]
fn the_main_job_keeps_each_parsers_word() {
    if !installed("nginx") {
        return missing("nginx is not installed");
    }
    let dir = tempfile::tempdir().unwrap();
    let out = cb()
        .env("XDG_DATA_HOME", dir.path())
        .args(["--for", "nginx,openssl", "--budget", "10s", "--no-store", "--json"])
        .assert()
        .success()
        .get_output()
        .clone();
    let doc: Value = json_of(&out.stdout);
    let recs = doc["recommendations"].as_array().unwrap();
    let nginx = recs
        .iter()
        .find(|r| r["target"] == "nginx" && !r["lines"].as_array().unwrap().is_empty())
        .unwrap_or_else(|| panic!("no nginx lines: {recs:#?}"));
    let v = &nginx["validated"];
    let ok = (v["status"] == "accepted" && v["detail"].as_str().unwrap_or("").starts_with("nginx -t"))
        || (v["status"] == "not checked" && v["detail"].as_str().unwrap_or("").contains("budget was spent"));
    assert!(ok, "{v:#}");
}
