//! The order of spending of `cipherbench ssh` against a real private sshd, with a
//! tiny budget: what the policy allows first, one axis at a time (every allowed
//! cipher with one MAC before any second MAC), refused options last and only
//! one or two of them. The stored results are in the order their subjects were
//! first measured (a result is recorded at its first session).

use assert_cmd::Command;
use serde_json::Value;
use std::collections::HashMap;

fn cb() -> Command {
    let mut c = Command::cargo_bin("cipherbench").unwrap();
    c.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
    c
}

fn json_of(out: &[u8]) -> Value {
    serde_json::from_slice(out).unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(out)))
}

/// Whether the policy passes each SSH cipher and MAC of the local OpenSSH, by
/// `list ssh --policy` (the judge's own answer, not a copy of it here).
fn passes(policy: &str) -> HashMap<(String, String), bool> {
    let out = cb()
        .args(["list", "ssh", "--json", "--policy", policy])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v = json_of(&out);
    v["grades"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let key = (g["domain"].as_str().unwrap().to_string(), g["name"].as_str().unwrap().to_string());
            (key, g["grade"]["passes"].as_bool().unwrap())
        })
        .collect()
}

#[test]
fn allowed_ciphers_first_then_allowed_macs_then_one_or_two_refused() {
    let pass = passes("intermediate");
    let ok = |domain: &str, name: &str| pass.get(&(domain.to_string(), name.to_string())).copied().unwrap_or(false);
    let out = cb()
        .args([
            "ssh",
            "--kex",
            "curve25519-sha256",
            "--hostkeys",
            "ssh-ed25519",
            "--no-handshakes",
            "--budget",
            "15s",
            "--no-store",
            "--json",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let doc = json_of(&out.stdout);
    // The throughput records, in the order their subjects were first measured.
    let bulk: Vec<&Value> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "ssh-bulk" && r["metric"] == "bytes_per_sec")
        .collect();
    let measured: Vec<(String, Option<String>)> = bulk
        .iter()
        .filter(|r| r["status"] == "ok")
        .map(|r| {
            let s = &r["subject"];
            (s["cipher"].as_str().unwrap().to_string(), s["mac"].as_str().map(String::from))
        })
        .collect();
    assert!(measured.len() >= 2, "too little measured to judge the order: {bulk:#?}");
    let allowed = |(c, m): &(String, Option<String>)| ok("ssh-cipher", c) && m.as_deref().is_none_or(|m| ok("ssh-mac", m));
    // Never the cipher × MAC matrix: one fixed MAC for the ciphers.
    let fixed_mac = measured.iter().find_map(|(_, m)| m.clone()).unwrap_or_default();
    assert!(
        ok("ssh-mac", &fixed_mac) || fixed_mac.is_empty(),
        "fixed MAC {fixed_mac} is refused"
    );
    let cipher_axis = |x: &(String, Option<String>)| allowed(x) && x.1.as_deref().is_none_or(|m| m == fixed_mac);
    // Every allowed cipher the sweep planned (all are in the records, measured or
    // skipped) is measured before any second MAC and before anything refused.
    let planned_ciphers: Vec<&str> = bulk
        .iter()
        .map(|r| r["subject"]["cipher"].as_str().unwrap())
        .filter(|c| ok("ssh-cipher", c))
        .collect();
    let first_other = measured.iter().position(|x| !cipher_axis(x));
    if let Some(i) = first_other {
        for c in &planned_ciphers {
            assert!(
                measured[..i].iter().any(|(mc, _)| mc == c),
                "{c} was not measured before {:?}: {measured:#?}",
                measured[i]
            );
        }
    }
    // Allowed before refused, and at most two refused.
    let first_refused = measured.iter().position(|x| !allowed(x)).unwrap_or(measured.len());
    assert!(measured[first_refused..].iter().all(|x| !allowed(x)), "{measured:#?}");
    assert!(measured.len() - first_refused <= 2, "{measured:#?}");
    if first_refused < measured.len() {
        // A refused option only once every allowed subject has its session.
        let unmeasured: Vec<&&Value> = bulk
            .iter()
            .filter(|r| r["status"] != "ok")
            .filter(|r| {
                let s = &r["subject"];
                allowed(&(s["cipher"].as_str().unwrap().to_string(), s["mac"].as_str().map(String::from)))
            })
            .collect();
        assert!(unmeasured.is_empty(), "refused measured while allowed left: {unmeasured:#?}");
    }
    // Every session's value is stored with its round (`rounds`), and the ciphers
    // of the first round were measured back to back: they share its key.
    let keys = |r: &Value| -> Vec<String> {
        r["rounds"]
            .as_array()
            .map(|v| v.iter().map(|x| x["round"].as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    for r in bulk.iter().filter(|r| r["status"] == "ok") {
        assert_eq!(keys(r).len() as u64, r["samples"].as_u64().unwrap(), "{r:#}");
        assert!(r["rounds"][0]["value"].as_f64().unwrap() > 0.0, "{r:#}");
    }
    let ciphers_ok: Vec<&&Value> = bulk
        .iter()
        .filter(|r| r["status"] == "ok" && r["subject"]["mac"].is_null())
        .collect();
    if ciphers_ok.len() >= 2 {
        let first = &keys(ciphers_ok[0])[0];
        assert!(ciphers_ok[1..].iter().any(|r| keys(r).contains(first)), "{ciphers_ok:#?}");
    }
    // 3des-cbc and hmac-md5 are never what the comparison needs first.
    assert!(
        !measured.iter().any(|(c, m)| c == "3des-cbc" || m.as_deref() == Some("hmac-md5")),
        "{measured:#?}"
    );
}
