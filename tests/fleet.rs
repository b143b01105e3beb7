//! `cipherbench fleet` and deploy/ansible with the real engine: three inventory
//! hosts (127.0.0.2, .3, .4), each a private sshd with its own host key listening
//! on that address, reached by Ansible (`.venv/bin/ansible-playbook`) over real SSH
//! with a throwaway key. One host hides AES-NI (`--cpu-caps no-aesni`).
//!
//! Budgets (the machine has 2 cores; three hosts run at once):
//! - pass 1 runs the main job (`run`) with a 6 s budget on every host: exports,
//!   classes, cleanup, the fleet config and apply.yml's nginx lines. At that budget
//!   the main job's TLS and SSH figures are single samples (tied) or skipped;
//! - pass 2 (one sshd stopped) runs `cipherbench ssh` on two ciphers with a 12 s
//!   budget, for sshd lines that apply.yml shows and `sshd -t` checks;
//! - pass 3 runs `cipherbench speed` on the AEADs with a 3 s budget: CPU time per
//!   byte, which load does not blur, decides ChaCha20 against AES-GCM per class.

#[path = "common/fleet.rs"]
mod hosts;
#[path = "common/ports.rs"]
mod ports;

use hosts::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

fn fleet(args: &[&Path], more: &[&str]) -> (std::process::Output, Value) {
    let out = Command::new(bin())
        .arg("fleet")
        .args(args)
        .args(["--json", "--no-store"])
        .args(more)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "fleet --json: {e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, v)
}

/// Every option of the fleet-wide choice passes the policy, by `list --policy --json`.
fn assert_fleet_choice_passes(report: &Value, policy: &str) {
    let ssh: Value = serde_json::from_slice(
        &Command::new(bin())
            .args(["list", "ssh", "--policy", policy, "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let tls: Value = serde_json::from_slice(
        &Command::new(bin())
            .args(["list", "tls", "--policy", policy, "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let choice = report["fleet"]["choice"].as_object().expect("fleet choice");
    assert!(!choice.is_empty(), "the fleet-wide choice is empty: {report:#}");
    for (list, names) in choice {
        for n in names.as_array().unwrap() {
            let n = n.as_str().unwrap();
            let passes = match list.as_str() {
                "ssh_ciphers" | "ssh_macs" | "ssh_kex" | "ssh_hostkeys" => ssh["grades"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|g| g["name"] == n)
                    .map(|g| g["grade"]["passes"] == true),
                "tls13_suites" | "tls12_suites" => tls
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|g| g["suite"]["iana"] == n)
                    .map(|g| g["grade"]["passes"] == true),
                _ => Some(true),
            };
            assert_eq!(passes, Some(true), "{list} {n} in the fleet config does not pass policy {policy}");
        }
    }
}

#[test]
fn ansible_profiles_three_hosts_merges_two_classes_and_applies_safely() {
    let Some(sshd) = sshd_path() else {
        missing("no sshd");
        return;
    };
    if !venv_ok() {
        return;
    }
    let mut f = Fleet::start(&sshd, &[2, 3, 4]);

    // Pass 1: the main job on every host.
    let r1 = f.tmp.path().join("results-run");
    let out = f.profile(&r1, "run", 6, &[]);
    assert!(out.status.success(), "profile.yml (run): {}", text(&out));
    let fetched: Vec<_> = std::fs::read_dir(&r1)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    for h in ["127.0.0.2.json", "127.0.0.3.json", "127.0.0.4.json"] {
        assert!(fetched.contains(&h.to_string()), "{h} not fetched: {fetched:?}");
    }
    assert_eq!(fetched.len(), 3, "{fetched:?}");
    f.assert_nothing_left();
    assert!(
        !f.become_log().exists(),
        "profile.yml measures as the login user, yet it became root: {}",
        std::fs::read_to_string(f.become_log()).unwrap_or_default()
    );
    let (out, report) = fleet(&[&r1], &["--ansible-vars", f.inventory_dir().to_str().unwrap()]);
    assert!(out.status.success(), "fleet: {}", text(&out));
    assert_eq!(report["hosts_merged"], 3);
    assert_eq!(report["classes"].as_array().unwrap().len(), 2, "{report:#}");
    assert_eq!(class_of(&report, "127.0.0.2"), class_of(&report, "127.0.0.3"));
    assert_ne!(class_of(&report, "127.0.0.2"), class_of(&report, "127.0.0.4"));
    let masked = report["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == class_of(&report, "127.0.0.4"))
        .unwrap();
    assert!(
        !masked["key"]["cpu_flags"].as_array().unwrap().iter().any(|f| f == "aes"),
        "{masked:#}"
    );
    assert_fleet_choice_passes(&report, "intermediate");
    assert!(f.inventory_dir().join("group_vars/all.json").exists());
    for h in ["127.0.0.2", "127.0.0.3", "127.0.0.4"] {
        assert!(f.inventory_dir().join(format!("host_vars/{h}.json")).exists());
    }

    // apply.yml --check --diff with the main job's answer: nginx lines that nginx -t accepts.
    let out = f.ansible("apply.yml", &serde_json::json!({}), &["--check", "--diff"]);
    assert!(out.status.success(), "apply.yml --check: {}", text(&out));
    let diff = String::from_utf8_lossy(&out.stdout).to_string();
    check_added_lines(&f, &diff, false);

    // Pass 2, one host's sshd stopped: two ciphers over real ssh (fixed volume per
    // session so there are several samples), for sshd lines apply.yml can write.
    f.hosts[1].stop();
    let r2 = f.tmp.path().join("results-ssh");
    let out = f.profile(
        &r2,
        "ssh",
        12,
        &[
            "--ciphers",
            "aes128-gcm@openssh.com,chacha20-poly1305@openssh.com",
            "--macs",
            "hmac-sha2-256-etm@openssh.com",
            "--kex",
            "curve25519-sha256",
            "--no-handshakes",
            "--bytes",
            "4M",
        ],
    );
    assert!(!out.status.success(), "an unreachable host makes the play fail: {}", text(&out));
    assert!(text(&out).contains("127.0.0.3"), "{}", text(&out));
    assert!(r2.join("127.0.0.3.unreachable").exists());
    assert!(r2.join("127.0.0.2.json").exists() && r2.join("127.0.0.4.json").exists());
    f.assert_nothing_left();
    let (out, report) = fleet(&[&r2], &["--ansible-vars", f.inventory_dir().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("127.0.0.3 (unreachable)"),
        "{}",
        text(&out)
    );
    assert_eq!(report["hosts_merged"], 2, "{report:#}");
    assert!(report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["host"] == "127.0.0.3" && p["kind"] == "unreachable"));
    assert_ne!(class_of(&report, "127.0.0.2"), class_of(&report, "127.0.0.4"));
    assert_fleet_choice_passes(&report, "intermediate");
    // Lock-out guard, in the same check run: a HostKeyAlgorithms line naming only
    // algorithms this sshd has no key for (127.0.0.4 has an Ed25519 key only) is
    // left out, never applied.
    let hv = f.inventory_dir().join("host_vars/127.0.0.4.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&hv).unwrap()).unwrap();
    let lines = v["cipherbench_class_sshd_lines"].as_array_mut().unwrap();
    lines.retain(|l| !l["__ansible_unsafe"].as_str().unwrap().contains("HostKeyAlgorithms"));
    lines.push(serde_json::json!({"__ansible_unsafe": "HostKeyAlgorithms rsa-sha2-512,rsa-sha2-256"}));
    std::fs::write(&hv, v.to_string()).unwrap();
    let out = f.ansible(
        "apply.yml",
        &serde_json::json!({"cipherbench_hosts": "127.0.0.2,127.0.0.4"}),
        &["--check", "--diff"],
    );
    assert!(out.status.success(), "apply.yml --check: {}", text(&out));
    let diff = String::from_utf8_lossy(&out.stdout).to_string();
    check_added_lines(&f, &diff, true);
    // Check mode changed nothing.
    for h in &f.hosts {
        let c = std::fs::read_to_string(h.config()).unwrap();
        assert!(!c.contains("cipherbench fleet"), "--check wrote {}", h.config().display());
    }
    let added = added_lines(&diff);
    let sshd_added = added
        .iter()
        .find(|(p, _)| p.contains("sshd-127.0.0.4"))
        .map(|(_, l)| l.clone())
        .unwrap_or_default();
    assert!(sshd_added.iter().any(|l| l.starts_with("Ciphers ")), "{diff}");
    assert!(
        !sshd_added.iter().any(|l| l.contains("HostKeyAlgorithms")),
        "a line that would leave sshd without a usable host key: {diff}"
    );

    // For real on 127.0.0.2 with the measured lines: checked, backed up, reloaded,
    // and a new login still works (tests/apply.rs covers roll-back and stock configs).
    let real = serde_json::json!({
        "cipherbench_hosts": "127.0.0.2",
        "cipherbench_sshd_reload_command": f.hosts[0].reload_command(),
        "cipherbench_nginx_reload_command": "true",
    });
    let out = f.ansible("apply.yml", &real, &[]);
    assert!(out.status.success(), "apply.yml: {}", text(&out));
    let conf = std::fs::read_to_string(f.hosts[0].config()).unwrap();
    assert!(conf.starts_with("# BEGIN cipherbench fleet\n"), "{conf}");
    // The class's cipher answer: a Ciphers line, or, where the measured order is
    // sshd's default one (the two ciphers tied on a loaded machine), the note that
    // says so in its place; either way the block holds a directive.
    assert!(
        conf.contains("\nCiphers ") || conf.contains("\n# Ciphers: the default already does this"),
        "{conf}"
    );
    assert!(
        conf.lines()
            .any(|l| ["Ciphers ", "MACs ", "KexAlgorithms "].iter().any(|k| l.starts_with(k))),
        "no directive written: {conf}"
    );
    let backups = std::fs::read_dir(&f.hosts[0].dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("sshd_config.") && e.file_name().to_string_lossy().ends_with('~'))
        .count();
    assert_eq!(backups, 1, "one backup of sshd_config");
    let st = Command::new(sshd_path().unwrap())
        .arg("-t")
        .arg("-f")
        .arg(f.hosts[0].config())
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", text(&st));
    let login = f.login(&f.hosts[0]);
    assert!(login.status.success(), "a new login after apply.yml: {}", text(&login));

    // Pass 3: the AEAD primitives (CPU time per byte, so a loaded machine does not
    // blur them): ChaCha20 leads where AES-NI is hidden, AES-GCM elsewhere. 6 s:
    // two hosts measure at once beside another test binary, and at 3 s a loaded CI
    // run left one figure under 3 samples, which ties with everything.
    let r3 = f.tmp.path().join("results-speed");
    let out = f.profile(
        &r3,
        "speed",
        6,
        &["aes-128-gcm", "aes-256-gcm", "chacha20-poly1305", "--bytes", "16k"],
    );
    assert!(!out.status.success(), "127.0.0.3 is still down: {}", text(&out));
    f.assert_nothing_left();
    let (_, report) = fleet(&[&r3], &[]);
    assert_eq!(report["hosts_merged"], 2, "{report:#}");
    let plain = leaders(&report, class_of(&report, "127.0.0.2"), "tls13_suites");
    let hidden = leaders(&report, class_of(&report, "127.0.0.4"), "tls13_suites");
    assert_eq!(
        hidden,
        vec!["TLS_CHACHA20_POLY1305_SHA256"],
        "ChaCha20 leads where AES-NI is hidden: {report:#}"
    );
    assert!(
        plain.iter().any(|s| s.contains("AES")),
        "AES-GCM leads (or ties) with AES-NI: {plain:?}"
    );
    assert_ne!(plain, hidden, "the two classes get different answers");
    // The fleet-wide choice maximises the worst class: the AES-NI-less class gives up nothing.
    let gives: Vec<&Value> = report["fleet"]["gives_up"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["list"] == "tls13_suites")
        .collect();
    assert_eq!(
        report["fleet"]["choice"]["tls13_suites"][0], "TLS_CHACHA20_POLY1305_SHA256",
        "{report:#}"
    );
    assert!(
        gives
            .iter()
            .any(|g| g["class"] == class_of(&report, "127.0.0.4") && g["tied"] == true),
        "{gives:?}"
    );
}

/// Puts the lines the diff adds into a copy of each file and runs the software's
/// own parser on it.
fn check_added_lines(f: &Fleet, diff: &str, want_sshd: bool) {
    let added = added_lines(diff);
    let mut sshd_seen = false;
    let mut nginx_seen = false;
    for (path, lines) in &added {
        let body: Vec<&String> = lines.iter().filter(|l| !l.trim_start().starts_with('#')).collect();
        if body.is_empty() {
            continue;
        }
        if path.contains("sshd") {
            sshd_seen = true;
            // At least one list (a list the default already orders so is said in
            // a comment instead; an unmeasured one is written in the policy's order).
            assert!(
                body.iter()
                    .any(|l| ["Ciphers ", "MACs ", "KexAlgorithms "].iter().any(|k| l.starts_with(k))),
                "{lines:?}"
            );
            let orig = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}\n{diff}"));
            let test = f.tmp.path().join("sshd_test_config");
            std::fs::write(&test, format!("{}\n{orig}", lines.join("\n"))).unwrap();
            let out = Command::new(sshd_path().unwrap()).arg("-t").arg("-f").arg(&test).output().unwrap();
            assert!(out.status.success(), "sshd -t refuses {lines:?}: {}", text(&out));
        } else if path.contains("nginx") {
            nginx_seen = true;
            assert!(body.iter().any(|l| l.contains("ssl_")), "{lines:?}");
            let orig = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}\n{diff}"));
            let test = f.tmp.path().join("nginx_test.conf");
            std::fs::write(&test, orig.replacen("http {\n", &format!("http {{\n{}\n", lines.join("\n")), 1)).unwrap();
            if let Some(nginx) = ["/usr/sbin/nginx", "/usr/bin/nginx"].iter().find(|p| Path::new(p).exists()) {
                let out = Command::new(nginx).arg("-t").arg("-c").arg(&test).output().unwrap();
                assert!(out.status.success(), "nginx -t refuses {lines:?}: {}", text(&out));
            }
        }
    }
    assert!(nginx_seen || sshd_seen, "apply.yml --diff showed no lines: {diff}");
    if want_sshd {
        assert!(sshd_seen, "no sshd lines in the diff: {diff}");
    }
}

/// When no host can be reached, Ansible would end the playbook at the first
/// play where every host is gone: each host must still be named in results/ and
/// the playbook must still fail, and `fleet` says nothing could be merged.
#[test]
fn every_host_unreachable_is_still_named_and_the_play_fails() {
    let Some(sshd) = sshd_path() else {
        missing("no sshd");
        return;
    };
    if !venv_ok() {
        return;
    }
    let mut f = Fleet::start(&sshd, &[5, 6]);
    for h in f.hosts.iter_mut() {
        h.stop();
    }
    let results = f.tmp.path().join("results-none");
    let out = f.profile(&results, "run", 6, &[]);
    assert!(!out.status.success(), "no host answered, yet the play passed: {}", text(&out));
    for h in ["127.0.0.5", "127.0.0.6"] {
        let marker = results.join(format!("{h}.unreachable"));
        let why = std::fs::read_to_string(&marker).unwrap_or_else(|e| panic!("{} missing ({e}): {}", marker.display(), text(&out)));
        assert!(why.starts_with(&format!("{h}: unreachable")), "{why}");
    }
    assert!(text(&out).contains("no export from: 127.0.0.5, 127.0.0.6"), "{}", text(&out));
    f.assert_nothing_left();
    let (out, report) = fleet(&[&results], &[]);
    assert_eq!(out.status.code(), Some(2), "nothing merged: {}", text(&out));
    assert_eq!(report["hosts_merged"], 0, "{report:#}");
}

/// A truncated export, another program's JSON and another schema: each named, the
/// rest merged (exit 1).
#[test]
fn truncated_and_foreign_files_are_named_and_the_rest_merged() {
    let dir = tempfile::tempdir().unwrap();
    let text_a = speed_export(&dir.path().join("a.json"));
    // b's run saw an installed sshd offering hmac-sha1 (the installed diff rides
    // along in the run's settings).
    let mut b: Value = serde_json::from_str(&text_a).unwrap();
    b["run"]["id"] = "another-run".into();
    b["run"]["settings"]["installed_diff"] = serde_json::json!([{"software": "sshd", "offered": [
        {"list": "ssh_macs", "name": "hmac-sha1", "level": "weak", "allowed": false},
        {"list": "ssh_macs", "name": "hmac-sha2-256-etm@openssh.com", "level": "recommended", "allowed": true}]}]);
    std::fs::write(dir.path().join("b.json"), serde_json::to_vec_pretty(&b).unwrap()).unwrap();
    std::fs::write(dir.path().join("cut.json"), &text_a[..text_a.len() / 2]).unwrap();
    std::fs::write(dir.path().join("other.json"), r#"{"name": "something else", "items": [1, 2]}"#).unwrap();
    std::fs::write(dir.path().join("future.json"), text_a.replacen("cipherbench/1", "cipherbench/9", 1)).unwrap();
    let (out, report) = fleet(&[dir.path()], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(report["hosts_merged"], 2, "{report:#}");
    let problems = report["problems"].as_array().unwrap();
    let kind = |file: &str| {
        problems
            .iter()
            .find(|p| p["file"].as_str().unwrap().ends_with(file))
            .map(|p| (p["kind"].as_str().unwrap().to_string(), p["error"].as_str().unwrap().to_string()))
            .unwrap_or_else(|| panic!("{file} not named: {problems:?}"))
    };
    let f = report["findings"].as_array().unwrap();
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(
        (f[0]["hosts"].as_u64(), f[0]["software"].as_str(), f[0]["name"].as_str()),
        (Some(1), Some("sshd"), Some("hmac-sha1"))
    );
    let (k, e) = kind("cut.json");
    assert_eq!(k, "truncated");
    assert!(e.contains("cut.json") && e.contains("truncated"), "{e}");
    let (k, e) = kind("other.json");
    assert_eq!(k, "foreign");
    assert!(e.contains("other.json") && e.contains("not a cipherbench export"), "{e}");
    let (k, e) = kind("future.json");
    assert_eq!(k, "schema");
    assert!(e.contains("cipherbench/9") && e.contains("cipherbench/1"), "{e}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    for name in ["cut", "other", "future"] {
        assert!(stderr.contains(name), "{stderr}");
    }
    // Markdown, HTML and the Ansible vars come from the same report; only merged
    // hosts get host_vars.
    let md = dir.path().join("fleet.md");
    let html = dir.path().join("fleet.html");
    let vars = dir.path().join("inv");
    let out = Command::new(bin())
        .arg("fleet")
        .arg(dir.path())
        .arg("--quiet")
        .arg("--export-markdown")
        .arg(&md)
        .arg("--export-html")
        .arg(&html)
        .arg("--ansible-vars")
        .arg(&vars)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("class-1") && md.contains("cut.json"), "{md}");
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(html.contains("<table") && html.contains("class-1"), "{html}");
    let mut hv: Vec<String> = std::fs::read_dir(vars.join("host_vars"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    hv.sort();
    assert_eq!(hv, ["a.json", "b.json"]);
    let a: Value = serde_json::from_str(&std::fs::read_to_string(vars.join("host_vars/a.json")).unwrap()).unwrap();
    assert_eq!(a["cipherbench_class"], "class-1", "{a:#}");
    assert!(
        a["cipherbench_class_nginx_lines"][0]["__ansible_unsafe"]
            .as_str()
            .is_some_and(|l| l.starts_with("ssl_")),
        "{a:#}"
    );
    let all: Value = serde_json::from_str(&std::fs::read_to_string(vars.join("group_vars/all.json")).unwrap()).unwrap();
    assert!(all["cipherbench_fleet_nginx_lines"].is_array(), "{all:#}");
    // The terminal view names them too.
    let out = Command::new(bin())
        .arg("fleet")
        .arg(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(
        t.contains("cut.json: truncated") && t.contains("other.json: not a cipherbench export"),
        "{t}"
    );
    // Nothing mergeable at all is bad input (exit 2).
    let (out, _) = fleet(&[&dir.path().join("cut.json")], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

/// A real export of a short `speed` run (AES-GCM and ChaCha20 at 16 KiB, 1 s) at
/// `path`; returns its text.
fn speed_export(path: &Path) -> String {
    let st = Command::new(bin())
        .args(["speed", "aes-128-gcm", "chacha20-poly1305", "--bytes", "16k", "--budget", "1s"])
        .args(["--no-store", "--quiet", "--export-json"])
        .arg(path)
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::read_to_string(path).unwrap()
}

/// `export` as another host's run: its own run id.
fn as_run(export: &str, id: &str) -> Value {
    let mut v: Value = serde_json::from_str(export).unwrap();
    v["run"]["id"] = id.into();
    v
}

/// A character no terminal output of ours may hold raw: a control character other
/// than the line break, or a line/paragraph separator, bidi control or invisible
/// format character.
fn hostile_char(c: char) -> bool {
    (c.is_control() && c != '\n') || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}')
}

fn assert_no_hostile_char(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    if let Some((i, c)) = text.char_indices().find(|(_, c)| hostile_char(*c)) {
        let from = text[..i].char_indices().rev().nth(80).map_or(0, |(j, _)| j);
        panic!("{what} holds {c:?} at byte {i}: …{:?}", &text[from..i]);
    }
}

/// Exports whose every string a host controls carries line breaks (LF, NEL,
/// U+2028), terminal escapes, `<script>`, Jinja, path separators and 1 MB of text,
/// under file names that are no host names: the files that are host names are
/// merged, the others named; `--ansible-vars` writes files Ansible's own loader
/// reads with no key cipherbench did not write and without templating anything;
/// no output for people holds a control character.
#[test]
fn hostile_exports_become_neither_keys_nor_commands_nor_control_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    let base = speed_export(&dir.path().join("base.json"));
    let pwned = dir.path().join("PWNED");
    let evil = format!(
        "x\n  ansible_ssh_common_args: '-o ProxyCommand=touch {p}'\nnel:\u{85}  ansible_become: true\u{85}ls:\u{2028}  ansible_host: evil\u{2028}\
         \x1b]0;pwned\x07\x1b[2J\x1b[31m<script>alert(1)</script> {{{{ lookup('pipe', 'touch {p}') }}}} ../../etc/passwd a/b\\c\u{202e}",
        p = pwned.display()
    );
    let big = format!("{}{evil}", "A".repeat(1 << 20));
    let mut n = 0;
    let mut hostile = |s: &str| {
        n += 1;
        let mut v = as_run(&base, &format!("run-{n}"));
        v["run"]["id"] = format!("{s}-{n}").into();
        let h = &mut v["run"]["host"];
        h["cpu_model"] = s.into();
        h["arch"] = s.into();
        h["hostname"] = s.into();
        h["cpu_flags"].as_array_mut().unwrap().push(s.into());
        for lib in ["openssl", "gnutls", "cipherbench", s] {
            v["run"]["libraries"][lib] = s.into();
        }
        v["run"]["settings"]["openssh"] = s.into();
        v["run"]["settings"]["cpu_caps"] = s.into();
        v["run"]["settings"]["installed_diff"] = serde_json::json!([{"software": s, "offered": [{"list": s, "name": s, "level": s, "allowed": false},
                {"list": "ssh_macs", "name": s, "level": "weak", "allowed": false}]}]);
        let mut r = v["results"][0].clone();
        r["subject"]["algorithm"] = s.into();
        r["subject"]["library"] = s.into();
        v["results"].as_array_mut().unwrap().push(r);
        v
    };
    let write = |name: &str, v: &Value| std::fs::write(results.join(name), serde_json::to_vec(v).unwrap()).unwrap();
    write("evil.json", &hostile(&evil));
    write("big.json", &hostile(&big));
    write("good.json", &as_run(&base, "good"));
    // File names that cannot be inventory host names (a path separator cannot be
    // in a file name; `..`, a leading dot and controls can).
    for name in [
        "..json",
        ".hidden.json",
        "web1\x1b[31m.json",
        "web\nnl.json",
        "web\u{2028}ls.json",
        "a\\b.json",
    ] {
        write(name, &hostile(&evil));
    }
    let vars = dir.path().join("inv");
    for args in [vec!["--json"], vec![], vec!["--export-markdown", "-"]] {
        let out = Command::new(bin())
            .arg("fleet")
            .arg(&results)
            .arg("--no-store")
            .arg("--ansible-vars")
            .arg(&vars)
            .args(&args)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", text(&out));
        assert_no_hostile_char(&format!("stdout of fleet {args:?}"), &out.stdout);
        assert_no_hostile_char(&format!("stderr of fleet {args:?}"), &out.stderr);
        let stderr = String::from_utf8_lossy(&out.stderr);
        for named in [
            "..json (bad-name)",
            ".hidden.json (bad-name)",
            "web1\\x1b[31m.json (bad-name)",
            "web\\x0anl.json",
        ] {
            assert!(stderr.contains(named), "{named} not named: {stderr}");
        }
        if args == ["--json"] {
            let report: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(report["hosts_merged"], 3, "{}", text(&out));
            // The JSON keeps the data (escaped as JSON does), nothing is lost.
            let evil_class = class_of(&report, "evil");
            let c = report["classes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["id"] == evil_class)
                .unwrap();
            assert!(
                c["key"]["cpu_model"].as_str().unwrap().starts_with("x\n  ansible_ssh_common_args"),
                "{c:#}"
            );
        }
    }
    // Only merged hosts get vars, as JSON; nothing is written outside DIR.
    let mut hv: Vec<String> = std::fs::read_dir(vars.join("host_vars"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    hv.sort();
    assert_eq!(hv, ["big.json", "evil.json", "good.json"]);
    let mut top: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    top.sort();
    assert_eq!(top, ["base.json", "inv", "results"]);
    // Ansible's own loader: every host has exactly the keys cipherbench writes.
    std::fs::write(
        vars.join("hosts"),
        "[fleet]\nevil\nbig\ngood\n\n[fleet:vars]\nansible_connection=local\nansible_python_interpreter=/usr/bin/python3\n",
    )
    .unwrap();
    if !venv_ok() {
        return;
    }
    let inv = Command::new(repo().join(".venv/bin/ansible-inventory"))
        .arg("-i")
        .arg(vars.join("hosts"))
        .arg("--list")
        .env("ANSIBLE_HOME", dir.path().join("ansible-home"))
        .env("ANSIBLE_NOCOLOR", "1")
        .output()
        .unwrap();
    assert!(inv.status.success(), "ansible-inventory: {}", text(&inv));
    let list: Value = serde_json::from_slice(&inv.stdout).unwrap();
    let ours = [
        "cipherbench_fleet_schema",
        "cipherbench_policy",
        "cipherbench_fleet_sshd_lines",
        "cipherbench_fleet_nginx_lines",
        "cipherbench_class",
        "cipherbench_class_label",
        "cipherbench_class_sshd_lines",
        "cipherbench_class_nginx_lines",
        "ansible_connection",
        "ansible_python_interpreter",
    ];
    for host in ["evil", "big", "good"] {
        let vars = list["_meta"]["hostvars"][host]
            .as_object()
            .unwrap_or_else(|| panic!("{host}: {list:#}"));
        for k in vars.keys() {
            assert!(ours.contains(&k.as_str()), "{host}: a key cipherbench did not write: {k}");
        }
        assert_eq!(vars["cipherbench_fleet_schema"], "cipherbench-fleet/1");
        assert!(vars.contains_key("cipherbench_class_label"), "{host}: {vars:?}");
    }
    // Using the label templates nothing: the lookup in it stays text.
    let out = Command::new(repo().join(".venv/bin/ansible"))
        .arg("-i")
        .arg(vars.join("hosts"))
        .args(["all", "-m", "ansible.builtin.debug", "-a", "msg={{ cipherbench_class_label }}"])
        .env("ANSIBLE_HOME", dir.path().join("ansible-home"))
        .env("ANSIBLE_NOCOLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "ansible debug: {}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("lookup('pipe'"), "{}", text(&out));
    assert!(!pwned.exists(), "a string from an export ran a command on the controller");
}

/// Runs `fleet ARGS --json` and returns (exit code, report, peak RSS in bytes,
/// wall time), the RSS from the kernel's accounting of that one child (wait4).
fn fleet_measured(args: &[&Path]) -> (i32, Value, u64, std::time::Duration) {
    let dir = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (dir.path().join("out"), dir.path().join("err"));
    let t0 = std::time::Instant::now();
    // Reaped by wait4 below, which also gives this one child's peak RSS.
    #[allow(clippy::zombie_processes)]
    let child = Command::new(bin())
        .arg("fleet")
        .args(args)
        .args(["--json", "--no-store"])
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 waits for our own child by pid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut ru) };
    let wall = t0.elapsed();
    assert_eq!(r, child.id() as libc::pid_t, "wait4");
    assert!(libc::WIFEXITED(status), "fleet did not exit: {status}");
    let out = std::fs::read(&out_path).unwrap();
    let report: Value = serde_json::from_slice(&out)
        .unwrap_or_else(|e| panic!("fleet --json: {e}: {}", std::fs::read_to_string(&err_path).unwrap_or_default()));
    (libc::WEXITSTATUS(status), report, ru.ru_maxrss as u64 * 1024, wall)
}

/// A 2 GiB sparse export among good ones is refused by name before a byte of it
/// is read, the others are merged, and the process stays small.
#[test]
fn a_2_gib_export_is_refused_by_name_and_memory_stays_flat() {
    let dir = tempfile::tempdir().unwrap();
    let base = speed_export(&dir.path().join("base.json"));
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    for h in ["web1", "web2", "web3"] {
        std::fs::write(results.join(format!("{h}.json")), as_run(&base, h).to_string()).unwrap();
    }
    std::fs::File::create(results.join("huge.json")).unwrap().set_len(2 << 30).unwrap();
    let (code, report, rss, wall) = fleet_measured(&[&results]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["hosts_merged"], 3, "{report:#}");
    let p = &report["problems"][0];
    assert_eq!(
        (p["kind"].as_str(), p["host"].as_str()),
        (Some("too-large"), Some("huge")),
        "{report:#}"
    );
    assert!(p["error"].as_str().unwrap().contains("huge.json") && p["error"].as_str().unwrap().contains("64 MiB"));
    assert!(rss < 64 << 20, "peak RSS {} MB with a 2 GiB export", rss >> 20);
    assert!(wall < std::time::Duration::from_secs(10), "{wall:?}");
    // A lower limit is a flag: the good exports are over 1 KiB.
    let out = Command::new(bin())
        .arg("fleet")
        .arg(&results)
        .args(["--json", "--no-store", "--max-export-size", "1K"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "nothing merged: {}", text(&out));
}

/// The same run under two file names is one host; a symlink loop, a dangling link
/// and a directory with an export's name are named; a path given on the command
/// line that does not exist is named, and the rest is still merged.
#[test]
fn duplicate_runs_loops_and_bad_arguments_are_named_and_the_rest_merged() {
    let dir = tempfile::tempdir().unwrap();
    let base = speed_export(&dir.path().join("base.json"));
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    std::fs::write(results.join("web1.json"), as_run(&base, "r1").to_string()).unwrap();
    std::fs::write(results.join("web4.json"), as_run(&base, "r1").to_string()).unwrap();
    std::fs::write(results.join("web2.json"), as_run(&base, "r2").to_string()).unwrap();
    std::os::unix::fs::symlink("loop.json", results.join("loop.json")).unwrap();
    std::os::unix::fs::symlink("gone", results.join("dangling.json")).unwrap();
    std::fs::create_dir(results.join("dir.json")).unwrap();
    let extra = dir.path().join("web3.json");
    std::fs::write(&extra, as_run(&base, "r3").to_string()).unwrap();
    let missing = dir.path().join("nowhere.json");
    let out = Command::new(bin())
        .arg("fleet")
        .arg(&missing)
        .arg(&results)
        .arg(&extra)
        .args(["--json", "--no-store"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["hosts_merged"], 3, "{report:#}");
    let mut merged: Vec<&str> = report["host_classes"].as_object().unwrap().keys().map(|k| k.as_str()).collect();
    merged.sort();
    // web1 and web4 hold one run: the first in file order is the host.
    assert_eq!(merged, ["web1", "web2", "web3"]);
    let problem = |file: &str| -> (String, String) {
        report["problems"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["file"].as_str().unwrap().ends_with(file))
            .map(|p| (p["kind"].as_str().unwrap().into(), p["error"].as_str().unwrap().into()))
            .unwrap_or_else(|| panic!("{file} not named: {report:#}"))
    };
    let (k, e) = problem("web4.json");
    assert_eq!(k, "duplicate");
    assert!(e.contains("r1") && e.contains("web1.json"), "{e}");
    let (k, e) = problem("loop.json");
    assert_eq!(k, "unreadable");
    assert!(e.contains("symbolic links"), "{e}");
    assert_eq!(problem("dangling.json").0, "unreadable");
    assert!(problem("dir.json").1.contains("not a regular file"));
    let (k, e) = problem("nowhere.json");
    assert_eq!(k, "unreadable");
    assert!(e.contains("No such file"), "{e}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    for named in ["web4 (duplicate)", "loop.json (unreadable)", "nowhere.json (unreadable)"] {
        assert!(stderr.contains(named), "{named}: {stderr}");
    }
}
