//! The emitted configs, judged by the auditors users trust, on real servers:
//! - ssh-audit 3.9.0 (the repo's `.venv`, made by `scripts/ensure-venv.sh`) against a
//!   real private sshd on 127.0.0.1 loaded with the emitted `sshd` lines, for each
//!   built-in policy: FAIL count and first kex;
//! - testssl.sh against a real nginx loaded with the emitted `nginx` lines: no
//!   finding below OK;
//! - no lock-out: the `HostKeyAlgorithms` line follows the server's own keys.
//!
//! The server whose keys a run stores (and `recommend` reads) is the test's own
//! sshd, named by `CIPHERBENCH_SSHD_CONFIG` (what `sshd -T -f` reads) during the run.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command as Cmd, Stdio};
use std::time::Duration;

mod common;
use common::{json_of, start_server, Proc};

fn cb() -> Command {
    let mut c = Command::cargo_bin("cipherbench").unwrap();
    c.env_remove("NO_COLOR").env("NO_COLOR", "1").timeout(Duration::from_secs(120));
    c
}

fn sshd_bin() -> &'static str {
    ["/usr/sbin/sshd", "/usr/local/sbin/sshd"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("sshd (openssh-server) must be installed")
}

fn ssh_audit() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/ssh-audit");
    assert!(
        p.exists(),
        "{} is missing: run scripts/ensure-venv.sh (make test does)",
        p.display()
    );
    p
}

/// One small real SSH run (curve25519 and the post-quantum hybrid measured, one
/// cipher and MAC) into `db`; the run stores the host keys the sshd that
/// `sshd_config` names can serve (what `recommend` then reads).
fn ssh_run(db: &Path, sshd_config: &Path) {
    // One run at a time: the servers' runs must not share the CPU with each other.
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    cb().env("CIPHERBENCH_SSHD_CONFIG", sshd_config)
        .args(["ssh", "--ciphers", "aes128-ctr", "--macs", "hmac-sha2-256-etm@openssh.com"])
        .args(["--kex", "curve25519-sha256,sntrup761x25519-sha512", "--hostkeys", "ssh-ed25519"])
        .args(["--budget", "10s", "--quiet", "--db"])
        .arg(db)
        .assert()
        .success();
}

/// A directory with host keys of the given types (`ed25519`, `rsa`, `ecdsa`) and a
/// base sshd config naming them.
struct Server {
    dir: tempfile::TempDir,
    /// Where it listens since its last start (a port of its own each time).
    port: std::cell::Cell<u16>,
}

impl Server {
    fn new(keys: &[&str]) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let mut base = format!(
            "ListenAddress 127.0.0.1\nPidFile {}/sshd.pid\nUsePAM no\nLogLevel ERROR\n",
            d.display()
        );
        for k in keys {
            let path = d.join(format!("host_{k}"));
            let bits: &[&str] = match *k {
                "rsa" => &["-b", "3072"],
                "ecdsa" => &["-b", "256"],
                _ => &[],
            };
            let st = Cmd::new("ssh-keygen")
                .args(["-q", "-N", "", "-t", k])
                .args(bits)
                .arg("-f")
                .arg(&path)
                .status()
                .unwrap();
            assert!(st.success());
            base.push_str(&format!("HostKey {}\n", path.display()));
        }
        std::fs::write(d.join("base_config"), base).unwrap();
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let _ = std::fs::create_dir_all("/run/sshd");
        }
        Server {
            dir,
            port: std::cell::Cell::new(0),
        }
    }

    fn base(&self) -> PathBuf {
        self.dir.path().join("base_config")
    }

    /// This server's history: one SSH run that read this server's keys.
    fn db(&self) -> PathBuf {
        let db = self.dir.path().join("h.sqlite");
        if !db.exists() {
            ssh_run(&db, &self.base());
        }
        db
    }

    /// `recommend` for sshd under `policy` on this server's run: the JSON
    /// recommendation and the terminal text.
    fn recommend(&self, policy: &str) -> (Value, String) {
        let db = self.db();
        let run = |json: bool| {
            let mut c = cb();
            c.args(["recommend", "--for", "sshd", "--policy", policy, "--db"]).arg(&db);
            if json {
                c.arg("--json");
            }
            c.assert().success().get_output().stdout.clone()
        };
        let doc = json_of(&run(true));
        let rec = doc["recommendations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["protocol"] == "ssh" && r["target"] == "sshd")
            .unwrap_or_else(|| panic!("no sshd recommendation: {doc:#}"))
            .clone();
        (rec, String::from_utf8(run(false)).unwrap())
    }

    /// Starts sshd with the base config plus `lines` (checked by `sshd -t` first).
    fn start(&self, lines: &[String]) -> Proc {
        let conf = format!("{}{}\n", std::fs::read_to_string(self.base()).unwrap(), lines.join("\n"));
        let file = self.dir.path().join("sshd_config");
        std::fs::write(&file, &conf).unwrap();
        let t = Cmd::new(sshd_bin()).arg("-t").arg("-f").arg(&file).output().unwrap();
        assert!(
            t.status.success(),
            "sshd -t refused:\n{conf}\n{}",
            String::from_utf8_lossy(&t.stderr)
        );
        let (port, sshd) = start_server("sshd", &self.dir.path().join("sshd.log"), |port| {
            let mut c = Cmd::new(sshd_bin());
            c.args(["-D", "-e", "-o", &format!("Port={port}"), "-f"]).arg(&file);
            c
        });
        self.port.set(port);
        sshd
    }

    /// ssh-audit's JSON verdict on the running server.
    fn audit(&self) -> Value {
        let out = Cmd::new(ssh_audit())
            .args(["-j", "--skip-rate-test", "-t", "20", "-p"])
            .arg(self.port.get().to_string())
            .arg("127.0.0.1")
            .output()
            .unwrap();
        // ssh-audit exits non-zero when it has warnings or failures: the JSON is what counts.
        json_of(&out.stdout)
    }
}

/// (section, algorithm) pairs ssh-audit marks `fail` (or `warn`).
fn notes(audit: &Value, level: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for sec in ["kex", "key", "enc", "mac"] {
        for a in audit[sec].as_array().into_iter().flatten() {
            if a["notes"][level].as_array().is_some_and(|n| !n.is_empty()) {
                out.push((sec.to_string(), a["algorithm"].as_str().unwrap_or("").to_string()));
            }
        }
    }
    out
}

fn line<'a>(rec: &'a Value, prefix: &str) -> Option<&'a str> {
    rec["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .find_map(|l| l.strip_prefix(prefix))
}

const HYBRIDS: &[&str] = &[
    "mlkem768x25519-sha256",
    "sntrup761x25519-sha512",
    "sntrup761x25519-sha512@openssh.com",
];

/// Each built-in policy's sshd lines on a real sshd (ed25519, RSA and ECDSA host
/// keys), audited by the current ssh-audit. `strict` and `modern`: no FAIL, and a
/// post-quantum hybrid first. `intermediate`: a hybrid first too; its only FAILs
/// are the NIST curves it keeps for old peers, after every other option, and the
/// output names that disagreement.
#[test]
fn ssh_audit_passes_each_policys_sshd_lines_on_a_real_sshd() {
    let server = Server::new(&["ed25519", "rsa", "ecdsa"]);
    let mut report = Vec::new();
    for policy in ["strict", "modern", "intermediate"] {
        let (rec, text) = server.recommend(policy);
        let lines: Vec<String> = rec["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_string())
            .collect();
        let _sshd = server.start(&lines);
        let audit = server.audit();
        let fails = notes(&audit, "fail");
        let warns = notes(&audit, "warn");
        let first_kex = audit["kex"][0]["algorithm"].as_str().unwrap_or("").to_string();
        report.push(format!("{policy}: FAIL {} WARN {} first kex {first_kex}", fails.len(), warns.len()));
        assert!(HYBRIDS.contains(&first_kex.as_str()), "{policy}: first kex {first_kex}\n{audit:#}");
        // The server had RSA: the RSA signature algorithms stay, and the key is served.
        let hk = line(&rec, "HostKeyAlgorithms ").unwrap_or_else(|| panic!("{policy}: no HostKeyAlgorithms in {lines:?}"));
        assert!(hk.contains("rsa-sha2-512") && hk.contains("rsa-sha2-256"), "{policy}: {hk}");
        assert!(
            audit["key"].as_array().is_some_and(|k| !k.is_empty()),
            "{policy}: no host key offered"
        );
        if policy == "intermediate" {
            assert!(!fails.is_empty(), "intermediate keeps the NIST curves, which ssh-audit fails");
            let choice = |list: &str| -> Vec<String> {
                rec["choice"][list]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_str().unwrap().to_string())
                    .collect()
            };
            for (sec, alg) in &fails {
                assert!(alg.contains("nistp"), "intermediate: unexpected FAIL {sec} {alg}\n{audit:#}");
                assert!(
                    text.contains(alg.as_str()) && text.contains("disagreement"),
                    "the disagreement over {alg} is not named:\n{text}"
                );
                // Kept only after every option ssh-audit does not fail.
                let list = if sec == "kex" { choice("ssh_kex") } else { choice("ssh_hostkeys") };
                let at = list.iter().position(|x| x == alg).unwrap();
                assert!(list[at..].iter().all(|x| x.contains("nistp")), "{alg} is not last: {list:?}");
            }
        } else {
            assert!(fails.is_empty(), "{policy}: ssh-audit FAILs {fails:?}\n{lines:?}");
        }
        // Every warning of the text stands on its own line.
        for (i, _) in text.match_indices("warning:") {
            assert!(
                i == 0 || text[..i].ends_with('\n'),
                "a warning runs on from the line before:\n{text}"
            );
        }
    }
    eprintln!("ssh-audit 3.9.0 on the emitted sshd lines: {}", report.join("; "));
}

/// No lock-out: a server with only an RSA host key gets the RSA signature
/// algorithms; one whose only key the policy refuses (ECDSA under `modern`) gets no
/// `HostKeyAlgorithms` line at all, and still serves its key.
#[test]
fn sshd_lines_list_only_host_keys_the_server_has_and_never_none() {
    let rsa = Server::new(&["rsa"]);
    let (rec, _) = rsa.recommend("strict");
    assert_eq!(line(&rec, "HostKeyAlgorithms "), Some("rsa-sha2-512,rsa-sha2-256"), "{rec:#}");
    let ecdsa = Server::new(&["ecdsa"]);
    let (rec, text) = ecdsa.recommend("modern");
    let lines: Vec<String> = rec["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect();
    assert!(line(&rec, "HostKeyAlgorithms ").is_none(), "{lines:?}");
    assert!(text.contains("HostKeyAlgorithms left out"), "{text}");
    let _sshd = ecdsa.start(&lines);
    let audit = ecdsa.audit();
    let keys: Vec<&str> = audit["key"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|k| k["algorithm"].as_str())
        .collect();
    assert!(
        keys.contains(&"ecdsa-sha2-nistp256"),
        "the server must keep its only key: {audit:#}"
    );
}

/// testssl.sh against a real nginx with the emitted `intermediate` TLS lines: no
/// finding below OK (protocols, cipher categories, forward secrecy; the scanner's
/// own notes about its openssl are not findings about the server).
#[test]
fn testssl_finds_nothing_below_ok_in_the_nginx_lines() {
    let testssl = ["testssl", "testssl.sh"]
        .into_iter()
        .find(|t| {
            Cmd::new("sh")
                .arg("-c")
                .arg(format!("command -v {t}"))
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .expect("testssl.sh must be installed (scripts/ensure-deps.sh)");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("h.sqlite");
    cb().args(["speed", "--bytes", "16k", "--budget", "2s", "--quiet", "--db"])
        .arg(&db)
        .assert()
        .success();
    let out = cb()
        .args(["recommend", "--json", "--for", "nginx", "--policy", "intermediate", "--db"])
        .arg(&db)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc = json_of(&out);
    let rec = doc["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["target"] == "nginx")
        .unwrap();
    let lines: Vec<String> = rec["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| format!("    {}", l.as_str().unwrap()))
        .collect();
    common::p256_cert(d);
    // SAFETY: geteuid has no preconditions.
    let user = if unsafe { libc::geteuid() } == 0 { "user root;" } else { "" };
    let (port, _nginx) = start_server("nginx", &d.join("nginx.log"), |port| {
        let conf = format!(
            "{user}\nworker_processes 1;\nerror_log {p}/error.log;\nevents {{ worker_connections 64; }}\nhttp {{\n  access_log off;\n  server {{\n    listen 127.0.0.1:{port} ssl;\n    ssl_certificate {p}/cert.pem;\n    ssl_certificate_key {p}/key.pem;\n{}\n  }}\n}}\n",
            lines.join("\n"),
            p = d.display()
        );
        std::fs::write(d.join("nginx.conf"), &conf).unwrap();
        let mut c = Cmd::new("nginx");
        c.arg("-p")
            .arg(d)
            .arg("-e")
            .arg(d.join("error.log"))
            .arg("-c")
            .arg(d.join("nginx.conf"))
            .arg("-g")
            .arg(format!("daemon off; pid {}/nginx.pid;", d.display()));
        c
    });
    let json = d.join("testssl.json");
    let st = Cmd::new(testssl)
        .args(["--quiet", "--color", "0", "--warnings", "off", "-p", "-s", "-f", "--jsonfile"])
        .arg(&json)
        .arg(format!("127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let findings: Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap_or_else(|e| panic!("testssl wrote no JSON ({st}): {e}"))).unwrap();
    let all = findings.as_array().unwrap();
    // The scan really ran: protocols and cipher categories were judged.
    assert!(all.iter().any(|f| f["id"] == "TLS1_3" && f["severity"] == "OK"), "{findings:#}");
    let below: Vec<&Value> = all
        .iter()
        .filter(|f| matches!(f["severity"].as_str(), Some("LOW" | "MEDIUM" | "HIGH" | "CRITICAL")))
        .filter(|f| f["id"] != "engine_problem")
        .collect();
    let conf = std::fs::read_to_string(d.join("nginx.conf")).unwrap();
    assert!(below.is_empty(), "testssl.sh findings below OK for\n{conf}\n{below:#?}");
}
