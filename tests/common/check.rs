//! Set-up shared by the tests of `cipherbench check` against real servers
//! (`tests/check.rs`: nginx and sshd; `tests/installed.rs`: Apache, HAProxy and
//! stunnel): running `check`, applying its diff with the real `patch`, starting a
//! real server and asking a real default OpenSSL client what it negotiates.

use super::{json_of, wait_listening, Proc};
use serde_json::Value;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// `cipherbench --no-store` without colour, killed after 240 s.
pub fn cb() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("cipherbench").unwrap();
    c.env_remove("NO_COLOR").arg("--no-store");
    c.timeout(Duration::from_secs(240));
    c
}

/// `check --json` on a file: (exit code, report). The same run's
/// `--export-prom` file must agree with the report: one `findings` sample per
/// software and kind, counting the report's findings, and one `refused_offered`
/// sample per refused option.
pub fn check(file: &Path, software: &str, budget: &str) -> (i32, Value) {
    let dir = tempfile::tempdir().unwrap();
    let prom_file = dir.path().join("cipherbench.prom");
    let out = cb()
        .args(["check", "--json", "--for", software, "--budget", budget, "--config-from"])
        .arg(file)
        .arg("--export-prom")
        .arg(&prom_file)
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "check exited {code}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = json_of(&out.stdout);
    let prom = std::fs::read_to_string(&prom_file).expect("--export-prom written");
    for line in prom.lines().filter(|l| !l.starts_with('#')) {
        let (_, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("not a sample: {line}"));
        assert!(value.parse::<f64>().is_ok(), "not a number: {line}");
    }
    for kind in ["policy", "speed", "negotiation"] {
        let n = r["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == kind).count();
        let want = format!("cipherbench_check_findings{{software=\"{software}\",kind=\"{kind}\",");
        let line = prom
            .lines()
            .find(|l| l.starts_with(&want))
            .unwrap_or_else(|| panic!("{want} missing:\n{prom}"));
        assert!(line.ends_with(&format!("}} {n}")), "{line} vs {n} {kind} finding(s)");
    }
    let refused = r["diffs"][0]["offered"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["allowed"] == false)
        .count();
    assert_eq!(prom.matches("cipherbench_check_refused_offered{").count(), refused, "{prom}");
    (code, r)
}

/// The `name` of each object of a JSON array.
pub fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap().to_string())
        .collect()
}

/// A diff names each of `wanted` among its fixes, each fix with its grade and a
/// cited reason (an option refused only because the policy does not list it says
/// so), and introduces nothing.
pub fn assert_fixes(diff: &Value, wanted: &[&str]) {
    let fixed = names(&diff["fixed"]);
    for want in wanted {
        assert!(fixed.contains(&want.to_string()), "{want} not among the fixes {fixed:?}\n{diff:#}");
    }
    for f in diff["fixed"].as_array().unwrap() {
        let reason = f["reasons"][0].as_str().unwrap();
        match f["level"].as_str() {
            Some("weak" | "insecure") => assert!(reason.contains('['), "no cited reference: {f}"),
            _ => assert!(reason.contains("policy `intermediate`"), "{f}"),
        }
    }
    assert_eq!(diff["introduced"].as_array().unwrap().len(), 0, "{diff:#}");
}

/// Applies a unified diff with the real `patch` program (`-d / -p1`).
pub fn apply(patch: &str) {
    use std::io::Write;
    let mut p = Command::new("patch")
        .args(["-s", "-d", "/", "-p1"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("patch");
    p.stdin.take().unwrap().write_all(patch.as_bytes()).unwrap();
    assert!(p.wait().unwrap().success(), "patch refused:\n{patch}");
}

/// A free port for a server a test starts more than once from the same file: below
/// the kernel's ephemeral range (32768 and up), so that nothing that binds port 0
/// meanwhile (cipherbench's own loopback peers in a parallel test's `check`) can
/// take it between two starts and answer in the server's place.
pub fn server_port() -> u16 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let start = std::process::id() % 6000 * 2;
    for _ in 0..4000 {
        let port = 20000 + (start + NEXT.fetch_add(1, Ordering::SeqCst)) % 12000;
        if TcpListener::bind(("127.0.0.1", port as u16)).is_ok() {
            return port as u16;
        }
    }
    panic!("no free port between 20000 and 32000");
}

/// Starts a server that listens on 127.0.0.1:`port` (in the foreground, output
/// discarded) and waits up to 10 s until it does; it is stopped when the returned
/// guard drops. A server that exits right after (its port was taken: what listens
/// is something else) fails the test.
pub fn serve(cmd: &mut Command, port: u16, what: &str) -> Proc {
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    wait_listening(port, &mut child, what);
    std::thread::sleep(Duration::from_millis(200));
    if let Ok(Some(st)) = child.try_wait() {
        panic!("{what} exited ({st}) right after 127.0.0.1:{port} answered: something else listens there");
    }
    Proc(child)
}

/// What a default OpenSSL client (`openssl s_client`, plus `extra` arguments)
/// negotiates with the server on 127.0.0.1:`port`: (protocol, OpenSSL suite name),
/// or what the last try printed when no handshake completes. A worker that is
/// still starting can accept and drop the first connections: up to 10 tries,
/// 300 ms apart.
pub fn s_client(port: u16, extra: &[&str]) -> Result<(String, String), String> {
    let mut last = String::new();
    for _ in 0..10 {
        let out = Command::new("openssl")
            .args(["s_client", "-brief", "-connect", &format!("127.0.0.1:{port}")])
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        // `-brief` prints, once the handshake is done, "Protocol version: TLSv1.2"
        // and "Ciphersuite: ECDHE-RSA-AES128-SHA" on stderr (the session block of
        // the long form is printed only when a TLS 1.3 ticket arrives in time).
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        let field = |k: &str| text.lines().find_map(|l| l.strip_prefix(k).map(|r| r.trim().to_string()));
        if let (Some(p), Some(c)) = (field("Protocol version:"), field("Ciphersuite:")) {
            return Ok((p, c));
        }
        last = text;
        std::thread::sleep(Duration::from_millis(300));
    }
    Err(last)
}

/// [`s_client`] that must complete a handshake.
pub fn negotiated(port: u16) -> (String, String) {
    s_client(port, &[]).unwrap_or_else(|e| panic!("no TLS handshake with 127.0.0.1:{port}:\n{e}"))
}
