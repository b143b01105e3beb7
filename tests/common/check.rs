//! Set-up shared by the tests of `cipherbench check` against real servers
//! (`tests/check.rs`: nginx and sshd; `tests/installed.rs`: Apache, HAProxy and
//! stunnel): running `check`, applying its diff with the real `patch`, starting a
//! real server and asking a real default OpenSSL client what it negotiates.

use super::{json_of, ports, Proc};
use serde_json::Value;
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

/// The port of a server a test starts more than once from the same files: a
/// candidate below the kernel's ephemeral range ([`ports::candidate`]), so that
/// nothing that binds port 0 meanwhile (cipherbench's own loopback peers in a
/// parallel test's `check`) can take it between two starts. When a start finds it
/// taken all the same (another test's server), [`serve`] moves the server to another
/// port, in its files too: read the port with [`ServerPort::get`] after a start.
pub struct ServerPort(Cell<u16>);

impl ServerPort {
    pub fn get(&self) -> u16 {
        self.0.get()
    }
}

/// The port as it is now, for the files that name it.
impl std::fmt::Display for ServerPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.get())
    }
}

pub fn server_port() -> ServerPort {
    ServerPort(Cell::new(ports::candidate()))
}

/// `text` with every `old` port number that stands alone (no digit on either side)
/// replaced by `new`.
fn moved(text: &str, old: u16, new: u16) -> String {
    let (old, new) = (old.to_string(), new.to_string());
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(&old) {
        let before =
            rest[..i].chars().next_back().is_some_and(|c| c.is_ascii_digit()) || (i == 0 && out.ends_with(|c: char| c.is_ascii_digit()));
        let after = rest[i + old.len()..].starts_with(|c: char| c.is_ascii_digit());
        out.push_str(&rest[..i]);
        out.push_str(if before || after { &old } else { &new });
        rest = &rest[i + old.len()..];
    }
    out.push_str(rest);
    out
}

/// Starts the server `command(port)` builds, listening on 127.0.0.1:`port` (its
/// output in `<first file>.log`), and waits until the listening socket there is its
/// own ([`ports::wait_up`]: a deadline, and the log and exit status when it exits
/// first); stopped when the returned guard drops. When its port is taken, the port
/// is moved to another candidate in each of `files` (the configuration that names
/// it) and the start tried again, up to [`ports::TRIES`] times.
pub fn serve(what: &str, port: &ServerPort, files: &[&Path], mut command: impl FnMut(u16) -> Command) -> Proc {
    let log: PathBuf = files.first().map_or_else(
        || std::env::temp_dir().join(format!("{what}.log")),
        |f| {
            let mut l = f.as_os_str().to_owned();
            l.push(".log");
            PathBuf::from(l)
        },
    );
    for _ in 0..ports::TRIES {
        let p = port.get();
        let f = std::fs::File::create(&log).unwrap();
        let mut child = command(p)
            .stdin(Stdio::null())
            .stdout(f.try_clone().unwrap())
            .stderr(f)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        match ports::wait_up(what, &mut child, p, &log) {
            ports::Start::Up => return Proc(child),
            ports::Start::Taken => {
                let new = ports::candidate();
                for file in files {
                    let t = std::fs::read_to_string(file).unwrap();
                    std::fs::write(file, moved(&t, p, new)).unwrap();
                }
                port.0.set(new);
            }
        }
    }
    panic!("{what}: {} ports in a row were taken", ports::TRIES)
}

/// What a default OpenSSL client (`openssl s_client`, plus `extra` arguments)
/// negotiates with the server on 127.0.0.1:`port`: (protocol, OpenSSL suite name),
/// or what the last try printed when no handshake completes. A worker that is
/// still starting can accept and drop the first connections: tries again, 300 ms
/// apart, for up to 10 s.
pub fn s_client(port: u16, extra: &[&str]) -> Result<(String, String), String> {
    let mut last = String::new();
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end {
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
