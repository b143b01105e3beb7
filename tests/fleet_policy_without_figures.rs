//! The fleet half of issue 37's defect 11: a class whose hosts measured no SSH MAC
//! still gets a `MACs` line, from the hosts' own stored lists (what every host of
//! the class offers), filtered and ordered by the policy and said so; the sshd
//! lines `fleet --ansible-vars` writes for those hosts pass `cipherbench check`
//! (through `sshd -T`, the real sshd parser). Before, such a class got no `MACs`
//! line, sshd kept its default umac-64 and hmac-sha1, and `check` exited 1.
//!
//! The exports are real (a short `cipherbench ssh` against its private loopback
//! sshd); the missing MAC figures are made by deleting those records from copies.
//! The Ansible flow itself is tests/fleet.rs's.

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

mod common;
use common::{json_of, missing};

/// What policy `intermediate` (the default) refuses among OpenSSH's default MACs.
const REFUSED_DEFAULT_MACS: [&str; 4] = [
    "umac-64-etm@openssh.com",
    "umac-64@openssh.com",
    "hmac-sha1-etm@openssh.com",
    "hmac-sha1",
];

const NOTE: &str = "# MACs: not measured in this run; ordered by the policy";

fn cb() -> Command {
    let mut c = Command::cargo_bin("cipherbench").unwrap();
    c.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
    c.timeout(Duration::from_secs(240));
    c
}

fn sshd_installed() -> bool {
    ["/usr/sbin/sshd", "/usr/local/sbin/sshd"].iter().any(|p| Path::new(p).exists())
}

/// The lines of `cipherbench_class_sshd_lines` in a host's vars file (each a
/// `{"__ansible_unsafe": LINE}`), `None` when the key is not there.
fn class_sshd_lines(vars: &Path) -> Option<Vec<String>> {
    let v: Value = serde_json::from_slice(&std::fs::read(vars).unwrap()).unwrap();
    let lines = v.get("cipherbench_class_sshd_lines")?.as_array().unwrap();
    Some(
        lines
            .iter()
            .map(|l| l["__ansible_unsafe"].as_str().unwrap_or_else(|| panic!("{l}")).to_string())
            .collect(),
    )
}

/// The values of the `key` line (`MACs a,b` → [a, b]).
fn list_of<'a>(lines: &'a [String], key: &str) -> Vec<&'a str> {
    let l = lines.iter().find_map(|l| l.strip_prefix(&format!("{key} ")));
    l.unwrap_or_else(|| panic!("no {key} line: {lines:#?}")).split(',').collect()
}

#[test]
fn a_class_that_measured_no_mac_gets_the_policys_macs_and_check_finds_nothing() {
    if !sshd_installed() {
        return missing("sshd (openssh-server)");
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let export = d.join("run.json");
    cb().args(["ssh", "--quiet", "--no-store", "--budget", "12s", "--export-json"])
        .arg(&export)
        .args(["--ciphers", "chacha20-poly1305@openssh.com,aes128-ctr"])
        .args(["--macs", "hmac-sha2-256-etm@openssh.com,umac-128-etm@openssh.com"])
        .args(["--kex", "curve25519-sha256"])
        .args(["--hostkeys", "ssh-ed25519"])
        .assert()
        .success();
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&export).unwrap()).unwrap();
    assert!(
        doc["run"]["capabilities"]["openssh"]["macs"]
            .as_array()
            .is_some_and(|m| !m.is_empty()),
        "the export stores its OpenSSH's MACs: {:#}",
        doc["run"]["capabilities"]
    );
    // Every record of a session with a MAC goes: the run measured ciphers (the AEAD
    // one needs no MAC) and no MAC.
    let results = doc["results"].as_array_mut().unwrap();
    let before = results.len();
    results.retain(|r| !(r["kind"] == "ssh-bulk" && r["subject"]["mac"].is_string()));
    let removed = before - results.len();
    assert!(removed > 0, "the run measured no MAC to remove");
    assert!(
        results.iter().any(|r| r["kind"] == "ssh-bulk" && r["status"] == "ok"),
        "a cipher stays measured: {results:#?}"
    );
    // Two hosts of one class (the same machine), two runs.
    let results_dir = d.join("results");
    std::fs::create_dir(&results_dir).unwrap();
    for host in ["host-a", "host-b"] {
        doc["run"]["id"] = Value::String(format!("{}-{host}", doc["run"]["id"].as_str().unwrap()));
        std::fs::write(results_dir.join(format!("{host}.json")), serde_json::to_vec(&doc).unwrap()).unwrap();
    }
    let inventory = d.join("inventory");
    let out = cb()
        .args(["fleet", "--json", "--ansible-vars"])
        .arg(&inventory)
        .arg(&results_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report = json_of(&out.stdout);
    let classes = report["classes"].as_array().unwrap();
    assert_eq!(classes.len(), 1, "{report:#}");
    // Of OpenSSH's MACs, intermediate refuses these four (the policy's own word on
    // what sshd then offers comes from `check` below).
    let allowed = |m: &str| !REFUSED_DEFAULT_MACS.contains(&m);
    let offered: Vec<String> = doc["run"]["capabilities"]["openssh"]["macs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    for host in ["host-a", "host-b"] {
        let lines = class_sshd_lines(&inventory.join("host_vars").join(format!("{host}.json")))
            .unwrap_or_else(|| panic!("{host}: no sshd lines written"));
        let at = lines
            .iter()
            .position(|l| l.starts_with("MACs "))
            .unwrap_or_else(|| panic!("{host}: no MACs line: {lines:#?}"));
        assert_eq!(lines[at - 1], NOTE, "{host}: {lines:#?}");
        let macs = list_of(&lines, "MACs");
        assert!(!macs.is_empty());
        for m in &macs {
            assert!(allowed(m), "{host}: {m} in {macs:?}");
            assert!(offered.iter().any(|o| o == m), "{host}: {m} is not the host's own: {offered:?}");
        }
    }
    // The lines, in a config of their own with a host key, checked by `cipherbench
    // check` through `sshd -T`: nothing the policy refuses is offered. --min-gain
    // 1000%: the MACs come in the policy's order, not from figures; a speed finding
    // would be a fair answer, not this defect.
    let lines = class_sshd_lines(&inventory.join("host_vars/host-a.json")).unwrap();
    let key = d.join("host_ed25519");
    let st = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&key)
        .status()
        .unwrap();
    assert!(st.success());
    let file = d.join("sshd_config");
    std::fs::write(&file, format!("HostKey {}\n{}\n", key.display(), lines.join("\n"))).unwrap();
    let out = cb()
        .args([
            "--no-store",
            "check",
            "--json",
            "--for",
            "sshd",
            "--budget",
            "3s",
            "--min-gain",
            "1000%",
        ])
        .arg("--config-from")
        .arg(&file)
        .output()
        .unwrap();
    let r = json_of(&out.stdout);
    let offered = r["diffs"][0]["offered"].as_array().unwrap_or_else(|| panic!("{r:#}"));
    assert!(!offered.is_empty(), "{r:#}");
    let refused: Vec<&Value> = offered.iter().filter(|g| g["allowed"] != true).collect();
    assert!(refused.is_empty(), "sshd -T offers what the policy refuses: {refused:#?}");
    assert_eq!(r["findings"], serde_json::json!([]), "{r:#}");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // The class's report says so, and its MACs ranking has nothing measured: every
    // accepted MAC kept in the policy's order. sshd's line is that list, within
    // sshd's own defaults (sshd never goes beyond them), in the same order.
    assert!(
        classes[0]["unmeasured"]
            .as_array()
            .is_some_and(|u| u.iter().any(|l| l == "ssh_macs")),
        "{:#}",
        classes[0]
    );
    let ranking = classes[0]["rankings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["list"] == "ssh_macs")
        .unwrap_or_else(|| panic!("no MACs ranking: {:#}", classes[0]));
    assert!(ranking["ranked"].as_array().is_none_or(|v| v.is_empty()), "{ranking:#}");
    let by_policy: Vec<&str> = ranking["unmeasured"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let macs: Vec<&str> = list_of(&lines, "MACs");
    let in_order: Vec<&str> = by_policy.iter().copied().filter(|m| macs.contains(m)).collect();
    assert_eq!(macs, in_order, "the MACs line is not in the policy's order: {by_policy:?}");
}
