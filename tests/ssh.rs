//! `cipherbench ssh` against real OpenSSH: a private sshd on 127.0.0.1, the real
//! `ssh` client, real signals. Volumes and budgets are tiny to keep this fast.

#[path = "common/ports.rs"]
mod ports;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The grace a budget gets on top (src/deadline.rs `grace`, docs/deadlines.md):
/// 1 s plus 5%.
fn grace(budget: f64) -> f64 {
    1.0 + 0.05 * budget
}

/// Seconds allowed for starting the binary under test (exec, loading, before its
/// deadline starts to count) on a loaded machine.
const LAUNCH: f64 = 0.5;

fn cb() -> Command {
    let mut c = Command::cargo_bin("cipherbench").unwrap();
    c.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
    c
}

fn json_of(out: &[u8]) -> Value {
    serde_json::from_slice(out).unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(out)))
}

/// A small, fast selection: one plain cipher with one MAC, one AEAD, one kex, one host key.
/// The budget covers starting the daemon and the feature check too (seconds each
/// when tests run in parallel), so it leaves room for those.
const SMALL: &[&str] = &[
    "ssh",
    "--ciphers",
    "aes128-ctr,chacha20-poly1305@openssh.com",
    "--macs",
    "hmac-sha2-256",
    "--kex",
    "curve25519-sha256",
    "--hostkeys",
    "ssh-ed25519",
    "--budget",
    "10s",
    "--no-store",
];

fn results<'a>(doc: &'a Value, kind: &str) -> Vec<&'a Value> {
    doc["results"].as_array().unwrap().iter().filter(|r| r["kind"] == kind).collect()
}

/// The `ssh-bulk` throughput records (each measured pair also has a server CPU
/// per GB record of the same kind, for the private sshd).
fn bulk_rates(doc: &Value) -> Vec<&Value> {
    results(doc, "ssh-bulk")
        .into_iter()
        .filter(|r| r["metric"] == "bytes_per_sec")
        .collect()
}

/// The `ssh-bulk` server CPU per GB records.
fn server_cpu(doc: &Value) -> Vec<&Value> {
    results(doc, "ssh-bulk")
        .into_iter()
        .filter(|r| r["subject"]["mode"] == "server-cpu-per-gb")
        .collect()
}

#[test]
fn list_ssh_shows_the_local_openssh() {
    cb().args(["list", "ssh"])
        .assert()
        .success()
        .stdout(predicate::str::contains("OpenSSH_").and(predicate::str::contains("AEAD: MAC implicit")));
    let out = cb().args(["list", "ssh", "--json"]).assert().success().get_output().stdout.clone();
    let v = json_of(&out);
    let ciphers = v["ciphers"].as_array().unwrap();
    let aead = |n: &str| ciphers.iter().find(|c| c["name"] == n).map(|c| c["aead"].as_bool().unwrap());
    assert_eq!(aead("chacha20-poly1305@openssh.com"), Some(true));
    assert_eq!(aead("aes128-ctr"), Some(false));
    assert!(v["sshd"].as_str().is_some_and(|p| p.starts_with('/')), "{v}");
    assert!(!v["kex"].as_array().unwrap().is_empty() && !v["macs"].as_array().unwrap().is_empty());
}

#[test]
fn private_sshd_sweep_records_accept_bulk_and_handshake() {
    // Three times SMALL's budget: three sessions per pair must fit even while
    // the other tests of this file, and another test binary, keep both CPUs busy
    // (20 s once gave two samples at a load of 8).
    let args = SMALL.iter().map(|&a| if a == "10s" { "30s" } else { a });
    let out = cb().args(args).arg("--json").assert().success().get_output().clone();
    let doc = json_of(&out.stdout);
    assert_eq!(doc["run"]["command"], "ssh");
    assert!(doc["run"]["settings"]["target"]
        .as_str()
        .unwrap()
        .starts_with("private sshd on 127.0.0.1:"));
    // Feature check: 2 ciphers + 1 MAC + 1 kex + 1 host key, all accepted.
    let acc = results(&doc, "ssh-accept");
    assert_eq!(acc.len(), 5, "{acc:#?}");
    assert!(acc.iter().all(|r| r["metric"] == "accepted" && r["median"] == 1.0));
    // Bulk: aes128-ctr with its MAC, chacha20-poly1305 once with the MAC implicit.
    let bulk = bulk_rates(&doc);
    assert_eq!(bulk.len(), 2, "{bulk:#?}");
    for r in &bulk {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["metric"], "bytes_per_sec");
        assert_eq!(r["subject"]["kex"], "curve25519-sha256");
        // More than 1 MB/s through a real ssh, and the client's CPU time was read.
        assert!(r["median"].as_f64().unwrap() > 1e6, "{r}");
        assert!(r["cpu_median"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["samples"].as_u64().unwrap() >= 3, "{r}");
    }
    let aead = bulk
        .iter()
        .find(|r| r["subject"]["cipher"] == "chacha20-poly1305@openssh.com")
        .unwrap();
    assert!(aead["subject"].get("mac").is_none(), "AEAD MAC must be implicit: {aead}");
    // The private sshd's CPU per GB beside each pair's throughput.
    let cpu = server_cpu(&doc);
    assert_eq!(cpu.len(), 2, "{cpu:#?}");
    for r in &cpu {
        assert_eq!((&r["status"], &r["metric"]), (&Value::from("ok"), &Value::from("seconds")), "{r}");
        assert!(r["median"].as_f64().unwrap() > 0.0, "{r}");
        assert!(bulk.iter().any(|b| b["subject"]["cipher"] == r["subject"]["cipher"]), "{r}");
    }
    let hs = results(&doc, "ssh-handshake");
    assert_eq!(hs.len(), 1);
    assert_eq!(hs[0]["metric"], "seconds");
    let t = hs[0]["median"].as_f64().unwrap();
    assert!(t > 1e-4 && t < 10.0, "{t}");
}

#[test]
fn verify_proves_the_bytes_crossed() {
    // The far side runs sha256sum over everything it received; a mismatch fails
    // the subject (the unit test far_side_hash_must_match_and_can_fail shows it can).
    // One subject ends after its three sessions (about 5 s here), but the daemon's
    // start and four feature checks come first: on a loaded CI machine 8 s left
    // no time for a session at all, so the budget is roomy.
    let out = cb()
        .args(["ssh", "--ciphers", "aes256-ctr", "--macs", "umac-64-etm@openssh.com"])
        .args(["--kex", "curve25519-sha256", "--hostkeys", "ssh-ed25519", "--no-handshakes"])
        .args(["--budget", "20s", "--no-store", "--verify", "--json"])
        .assert()
        .success()
        .get_output()
        .clone();
    let doc = json_of(&out.stdout);
    assert_eq!(doc["run"]["settings"]["verify"], true);
    let bulk = bulk_rates(&doc);
    assert_eq!(bulk.len(), 1);
    assert_eq!(bulk[0]["status"], "ok", "{}", bulk[0]);
}

#[test]
fn unknown_algorithms_are_exit_2_with_suggestions() {
    cb().args(["ssh", "--ciphers", "aes128-crt", "--no-store"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown cipher 'aes128-crt'").and(predicate::str::contains("aes128-ctr")));
    cb().args(["ssh", "--macs", "hmac-sha2-265", "--no-store"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown MAC").and(predicate::str::contains("hmac-sha2-256")));
    cb().args(["ssh", "--kex", "curve25519", "--no-store"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("curve25519-sha256"));
}

#[test]
fn missing_sshd_names_the_package() {
    cb().args(SMALL)
        .env("CIPHERBENCH_SSHD", "/nonexistent/sbin/sshd")
        .assert()
        .code(3)
        .stderr(predicate::str::contains("sshd not found").and(predicate::str::contains("openssh-server")));
}

/// Processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(c) = std::fs::read(format!("/proc/{pid}/cmdline")) {
            if String::from_utf8_lossy(&c).contains(needle) {
                out.push(pid);
            }
        }
    }
    out
}

/// (pid, parent, command name) of every process.
fn process_table() -> Vec<(u32, u32, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = stat[open + 1..close].to_string();
        let ppid = stat[close + 2..]
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        out.push((pid, ppid, name));
    }
    out
}

fn descendants(root: u32) -> Vec<(u32, String)> {
    let table = process_table();
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (c, pp, name) in &table {
            if *pp == p {
                out.push((*c, name.clone()));
                frontier.push(*c);
            }
        }
    }
    out
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s[s.rfind(')').unwrap() + 2..].starts_with('Z'))
        .unwrap_or(false)
}

fn private_dirs(tmp: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("cipherbench-sshd-"))
        .collect()
}

#[test]
fn sigint_mid_transfer_leaves_no_sshd_and_no_temp_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("h.sqlite");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("cipherbench"))
        .args([
            "ssh",
            "--ciphers",
            "aes128-ctr",
            "--macs",
            "hmac-sha2-256",
            "--kex",
            "curve25519-sha256",
        ])
        .args(["--hostkeys", "ssh-ed25519", "--no-handshakes", "--budget", "60s", "--json", "--db"])
        .arg(&db)
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until a bulk transfer runs: the private daemon has a session whose far
    // side is `cat`, and it is still there a moment later (not the preflight,
    // whose `cat` reads an empty stdin and ends at once). Each bulk session lasts
    // under a second, so the moment is short.
    let t0 = Instant::now();
    let (daemon, tree) = loop {
        assert!(t0.elapsed() < Duration::from_secs(30), "no transfer started");
        let dirs = private_dirs(tmp.path());
        if let Some(dir) = dirs.first() {
            let config = dir.join("sshd_config");
            if let Some(&d) = processes_mentioning(&config.to_string_lossy()).iter().min() {
                let tree = descendants(d);
                if tree.iter().any(|(_, n)| n == "cat") {
                    std::thread::sleep(Duration::from_millis(150));
                    let tree = descendants(d);
                    if tree.iter().any(|(_, n)| n == "cat") {
                        break (d, tree);
                    }
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(alive(daemon));
    // SAFETY: plain kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let out = {
        let t0 = Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(t0.elapsed() < Duration::from_secs(20), "cipherbench did not stop after SIGINT");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    assert_eq!(out.code(), Some(130), "interrupted runs exit 130");
    let mut stdout = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .lines()
        .for_each(|l| stdout.push_str(&l.unwrap()));
    let doc = json_of(stdout.as_bytes());
    assert_eq!(doc["run"]["status"], "interrupted");
    // The transfer under way when Ctrl-C came ended its sample and was kept (or,
    // if Ctrl-C came during its warm-up, left out: nothing had been measured).
    let bulk = bulk_rates(&doc);
    assert!(bulk.len() <= 1, "{doc}");
    assert!(bulk.iter().all(|r| r["status"] == "ok"), "{doc}");
    // Nothing outlives the run: not the daemon, not its connection children, not the directory.
    assert!(!alive(daemon), "sshd {daemon} outlived the run");
    for (pid, name) in &tree {
        assert!(!alive(*pid), "{name} ({pid}) from the private sshd outlived the run");
    }
    assert!(private_dirs(tmp.path()).is_empty(), "temporary directory left behind");
    assert!(processes_mentioning(&tmp.path().to_string_lossy()).is_empty());
}

/// `ssh --serve` (hidden): a private daemon that offers only some algorithms,
/// measured through the remote-host path with the user's-config code path.
struct Served {
    child: std::process::Child,
    info: Value,
}

impl Served {
    fn start(ciphers: &str) -> Served {
        Served::spawn(&["--ciphers", ciphers], None)
    }
    /// Served with its private directory under `tmp` (TMPDIR).
    fn start_in(tmp: &Path) -> Served {
        Served::spawn(&[], Some(tmp))
    }
    fn spawn(args: &[&str], tmp: Option<&Path>) -> Served {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("cipherbench"));
        cmd.args(["ssh", "--serve"]).args(args);
        if let Some(t) = tmp {
            cmd.env("TMPDIR", t);
        }
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        Served {
            child,
            info: json_of(line.as_bytes()),
        }
    }
    fn s(&self, k: &str) -> String {
        self.info[k].as_str().map(String::from).unwrap_or_else(|| self.info[k].to_string())
    }
    fn dir(&self) -> PathBuf {
        PathBuf::from(self.s("dir"))
    }
    fn sshd(&self) -> u32 {
        self.info["pid"].as_u64().unwrap() as u32
    }
    /// Sends `sig` to the serving cipherbench and waits for it to end.
    fn stop(&mut self, sig: i32) -> std::process::ExitStatus {
        // SAFETY: plain kill(2) on our own child, not yet reaped.
        unsafe {
            libc::kill(self.child.id() as i32, sig);
        }
        self.child.wait().unwrap()
    }
    /// `cipherbench ssh` against this daemon as a remote host, with every login
    /// counted in `log` (ssh runs a LocalCommand after each successful login).
    fn counted(&self, log: &Path) -> Command {
        let mut c = cb();
        c.args(["ssh", "--host", &format!("{}@127.0.0.1", self.s("user"))])
            .args(["--port", &self.s("port"), "--identity", &self.s("identity")])
            .args(["-o", &format!("UserKnownHostsFile={}", self.s("known_hosts"))])
            .args(["-o", "GlobalKnownHostsFile=/dev/null", "-o", "PermitLocalCommand=yes"])
            .args(["-o", &format!("LocalCommand=echo x >> {}", log.display())]);
        c
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.stop(libc::SIGINT);
        }
    }
}

#[test]
fn remote_host_mode_records_refusals_and_explains_failures() {
    let served = Served::start("aes128-ctr,aes256-ctr,aes128-gcm@openssh.com");
    let dest = format!("{}@127.0.0.1", served.s("user"));
    let known = format!("UserKnownHostsFile={}", served.s("known_hosts"));
    let remote = |c: &mut Command| {
        c.args([
            "ssh",
            "--host",
            &dest,
            "--port",
            &served.s("port"),
            "-o",
            &known,
            "-o",
            "GlobalKnownHostsFile=/dev/null",
        ]);
    };
    // aes192-ctr is not offered by this server: recorded as refused, the run goes on.
    let mut c = cb();
    remote(&mut c);
    c.args(["--identity", &served.s("identity")])
        .args([
            "--ciphers",
            "aes128-ctr,aes192-ctr",
            "--macs",
            "hmac-sha2-256",
            "--kex",
            "curve25519-sha256",
        ])
        .args(["--no-handshakes", "--budget", "8s", "--no-store", "--json"]);
    let out = c.assert().success().get_output().clone();
    let doc = json_of(&out.stdout);
    let acc = results(&doc, "ssh-accept");
    let refused: Vec<_> = acc.iter().filter(|r| r["median"] == 0.0).collect();
    assert_eq!(refused.len(), 1, "{acc:#?}");
    assert_eq!(refused[0]["subject"]["cipher"], "aes192-ctr");
    assert!(
        refused[0]["reason"].as_str().unwrap().contains("no matching cipher"),
        "{}",
        refused[0]
    );
    let bulk = bulk_rates(&doc);
    let st = |c: &str| bulk.iter().find(|r| r["subject"]["cipher"] == c).unwrap()["status"].clone();
    assert_eq!(st("aes128-ctr"), "ok");
    assert_eq!(st("aes192-ctr"), "unsupported");
    // A remote server's CPU is not observable: no figure is made up for it.
    assert!(server_cpu(&doc).is_empty(), "{:#?}", server_cpu(&doc));

    // A key the server does not know: a clear authentication error.
    let stranger = tempfile::tempdir().unwrap();
    let key = stranger.path().join("id");
    assert!(std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&key)
        .status()
        .unwrap()
        .success());
    let mut c = cb();
    remote(&mut c);
    c.arg("--identity").arg(&key).args(["--ciphers", "aes128-ctr", "--no-store"]);
    c.assert().code(3).stderr(predicate::str::contains("authentication failed"));

    // Nobody listening: unreachable.
    let (_closed, port) = ports::closed_port();
    cb().args(["ssh", "--host", "127.0.0.1", "--port", &port.to_string(), "--no-store"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("host unreachable"));
}

#[test]
fn small_budget_is_kept_and_what_it_cannot_reach_is_skipped_saying_so() {
    // Every cipher, one MAC, one kex, one host key: 10 bulk subjects and one
    // handshake, each needing its own sessions; 5 s cannot fit all of them on a
    // busy machine, and whatever does not fit is skipped, not overrun.
    let budget = 5.0;
    let t0 = Instant::now();
    let out = cb()
        .args([
            "ssh",
            "--macs",
            "hmac-sha2-256",
            "--kex",
            "curve25519-sha256",
            "--hostkeys",
            "ssh-ed25519",
        ])
        .args(["--budget", "5s", "--no-store", "--json"])
        .assert()
        .success()
        .get_output()
        .clone();
    let took = t0.elapsed().as_secs_f64();
    // What the user sees: the run ends within the budget plus its grace (1 s + 5%,
    // src/deadline.rs, docs/deadlines.md), counted from the process's start, the
    // private sshd's start included; LAUNCH for starting the process itself. A
    // run that overran the budget (10 subjects, each with its own sessions) would
    // take several times as long.
    let doc = json_of(&out.stdout);
    // The run's own start and end (from its process's start), to tell a slow
    // launch from an overrun when this fails.
    assert!(
        took <= budget + grace(budget) + LAUNCH,
        "took {took:.2} s for a {budget} s budget (+ {:.2} s grace + {LAUNCH} s to start the process); \
         the run says it started {} and finished {}:\n{}",
        grace(budget),
        doc["run"]["started_at"],
        doc["run"]["finished_at"],
        String::from_utf8_lossy(&out.stderr)
    );
    let bulk = bulk_rates(&doc);
    assert_eq!(bulk.len(), 10, "every subject has a record: {bulk:#?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let skipped: Vec<_> = bulk.iter().filter(|r| r["status"] != "ok").collect();
    for r in &skipped {
        assert_eq!(r["status"], "failed", "{r}");
        assert!(r["reason"].as_str().unwrap().starts_with("skipped: the budget was spent"), "{r}");
    }
    assert_eq!(!skipped.is_empty(), stderr.contains("budget was spent"), "{stderr}");
    // A budget too small for anything: everything skipped, exit 0. (Starting the
    // daemon cannot be skipped: that alone can take seconds on a busy machine.)
    let t0 = Instant::now();
    let out = cb()
        .args(["ssh", "--ciphers", "aes128-ctr,aes256-ctr", "--macs", "hmac-sha1"])
        .args(["--kex", "curve25519-sha256", "--hostkeys", "ssh-ed25519", "--bytes", "1M"])
        .args(["--budget", "0.2s", "--no-store", "--json"])
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(t0.elapsed().as_secs_f64() < 6.0, "{:?}", t0.elapsed());
    let doc = json_of(&out.stdout);
    let bulk = bulk_rates(&doc);
    assert!(
        bulk.iter().all(|r| r["reason"].as_str().is_some_and(|s| s.starts_with("skipped:"))),
        "{bulk:#?}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("budget was spent"));
}

#[test]
fn fixed_volume_sessions_are_all_samples_none_thrown_away() {
    // Count the sessions: ssh runs a LocalCommand after every successful login.
    let served = Served::start("aes128-ctr,aes256-ctr");
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("logins");
    let out = served
        .counted(&log)
        .args([
            "--ciphers",
            "aes128-ctr,aes256-ctr",
            "--macs",
            "hmac-sha1",
            "--kex",
            "curve25519-sha256",
        ])
        .args(["--full-matrix", "--bytes", "1M", "--budget", "60s", "--no-store", "--json"])
        .assert()
        .success()
        .get_output()
        .clone();
    let doc = json_of(&out.stdout);
    let bulk = bulk_rates(&doc);
    assert_eq!(bulk.len(), 2);
    for r in &bulk {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["samples"], 1, "the brute force takes one session per combination: {r}");
    }
    // Preflight 1 + feature check (1 kex, 2 ciphers, 1 MAC) 4 + one session per
    // combination 2: no calibration session.
    let logins = std::fs::read_to_string(&log).unwrap().lines().count();
    assert_eq!(logins, 7, "sessions: {logins}");
}

#[test]
fn bulk_samples_are_whole_sessions_and_fixed_volume_measures_the_cipher() {
    // Two AEAD ciphers (no MAC check), one kex, no handshakes, on a served daemon
    // whose logins are counted: ssh runs a LocalCommand after every login.
    let served = Served::start("aes128-gcm@openssh.com,chacha20-poly1305@openssh.com");
    let tmp = tempfile::tempdir().unwrap();
    let run = |log: &Path, extra: &[&str]| -> Value {
        let out = served
            .counted(log)
            .args(["--ciphers", "aes128-gcm@openssh.com,chacha20-poly1305@openssh.com"])
            .args(["--kex", "curve25519-sha256", "--no-handshakes", "--no-store", "--json"])
            .args(extra)
            .assert()
            .success()
            .get_output()
            .clone();
        json_of(&out.stdout)
    };
    let logins = |log: &Path| std::fs::read_to_string(log).unwrap().lines().count();
    let medians = |doc: &Value| -> Vec<(String, f64, u64)> {
        let bulk = bulk_rates(doc);
        assert_eq!(bulk.len(), 2, "{bulk:#?}");
        bulk.iter()
            .map(|r| {
                assert_eq!(r["status"], "ok", "{r}");
                let n = r["samples"].as_u64().unwrap();
                // Never a degenerate interval, however few the sessions.
                assert!(r["ci95_low"].as_f64().unwrap() < r["ci95_high"].as_f64().unwrap(), "{r}");
                (
                    r["subject"]["cipher"].as_str().unwrap().to_string(),
                    r["median"].as_f64().unwrap(),
                    n,
                )
            })
            .collect()
    };
    // Adaptive: every sample is one session, and the budget gives each pair three
    // (12 s: the daemon's start and the primitives of the two ciphers come first,
    // and on a loaded CI machine 8 s left one of them two).
    let log = tmp.path().join("adaptive");
    let doc = run(&log, &["--budget", "12s"]);
    assert!(
        doc["run"]["settings"]["ssh_bulk_samples"]
            .as_str()
            .is_some_and(|s| s.starts_with("one per session")),
        "{}",
        doc["run"]["settings"]
    );
    let adaptive = medians(&doc);
    for (c, _, n) in &adaptive {
        assert!(*n >= 3, "{c}: {n} sessions");
    }
    // Preflight 1 + feature check (1 kex, 2 ciphers) 3 + one login per sample,
    // and at most one more: the session the deadline cut (sessions run one at a
    // time, and a cut one is no sample: `BulkProbe::slice`).
    let sessions: u64 = adaptive.iter().map(|a| a.2).sum();
    let n = logins(&log) as u64;
    assert!(
        (4 + sessions..=5 + sessions).contains(&n),
        "every bulk sample is its own session: {n} logins for {sessions} samples"
    );
    // Fixed volume: 64 MiB per session, timed after the start-up stall until the far
    // side has read it all, is the cipher's speed, not the session's start-up
    // (which alone made it a quarter of this or less). (At 16 MiB, under 20 ms
    // of transfer once client and daemon run on CPUs of their own, one stray
    // 20–60 ms stall of the VM halves a session's figure.)
    let log = tmp.path().join("fixed");
    let fixed = medians(&run(&log, &["--bytes", "64M", "--budget", "12s"]));
    for (c, m, _) in &fixed {
        let (_, a, _) = adaptive.iter().find(|a| &a.0 == c).unwrap();
        assert!(
            *m >= 0.5 * a,
            "{c}: {:.0} MB/s at --bytes 16M against {:.0} MB/s adaptive",
            m / 1e6,
            a / 1e6
        );
    }
}

/// Known answers for the private sshd's CPU per GB (fixed volume, so each
/// session's timed part is the same bytes): above zero, below what the CPUs
/// could give in the wall time (server CPU ≤ wall × CPUs, sample by sample, so
/// median by median), and 3DES, tens of times slower than AES-GCM in software
/// (`openssl speed -evp des-ede3-cbc` against `aes-128-gcm`), costs the server
/// more per GB, not less.
#[test]
fn server_cpu_per_gb_is_bounded_and_orders_a_slow_cipher() {
    let out = cb()
        .args(["ssh", "--ciphers", "aes128-gcm@openssh.com,3des-cbc", "--macs", "hmac-sha2-256"])
        .args(["--kex", "curve25519-sha256", "--hostkeys", "ssh-ed25519", "--no-handshakes"])
        .args(["--bytes", "16M", "--budget", "20s", "--no-store", "--json"])
        .assert()
        .success()
        .get_output()
        .clone();
    let doc = json_of(&out.stdout);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let figure = |cipher: &str| -> (f64, f64) {
        let find = |v: Vec<&Value>| -> Value {
            v.into_iter()
                .find(|r| r["subject"]["cipher"] == cipher)
                .unwrap_or_else(|| panic!("{cipher}: no record"))
                .clone()
        };
        let (rate, cpu) = (find(bulk_rates(&doc)), find(server_cpu(&doc)));
        assert_eq!(rate["status"], "ok", "{rate}");
        assert_eq!(cpu["status"], "ok", "{cpu}");
        assert_eq!(cpu["samples"], rate["samples"], "one server reading per session: {cpu}");
        let (lo, med, hi) = (
            cpu["ci95_low"].as_f64().unwrap(),
            cpu["median"].as_f64().unwrap(),
            cpu["ci95_high"].as_f64().unwrap(),
        );
        assert!(lo <= med && med <= hi && lo < hi, "{cpu}");
        let wall_per_gb = 1e9 / rate["median"].as_f64().unwrap();
        assert!(med > 0.0, "{cipher}: the server did work: {cpu}");
        assert!(
            med <= wall_per_gb * cpus,
            "{cipher}: {med:.3} s of server CPU per GB in {wall_per_gb:.3} s per GB on {cpus} CPUs"
        );
        (med, wall_per_gb)
    };
    let (gcm, _) = figure("aes128-gcm@openssh.com");
    let (des, _) = figure("3des-cbc");
    assert!(
        des > 3.0 * gcm,
        "3des-cbc {des:.3} s/GB against aes128-gcm {gcm:.3} s/GB on the server"
    );
}

/// A run stopped outright (SIGKILL: no handler runs) leaves its daemon and
/// directory behind; the next run that starts a private sshd removes them, and
/// leaves a run that is still going alone.
#[test]
fn a_run_killed_outright_is_cleaned_up_by_the_next() {
    let tmp = tempfile::tempdir().unwrap();
    let mut running = Served::start_in(tmp.path());
    let mut killed = Served::start_in(tmp.path());
    let (dir, sshd) = (killed.dir(), killed.sshd());
    killed.stop(libc::SIGKILL);
    assert!(dir.exists() && alive(sshd), "SIGKILL runs no clean-up: the leftovers are there");
    let mut next = Served::start_in(tmp.path());
    let t0 = Instant::now();
    while alive(sshd) && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(sshd), "the killed run's sshd {sshd} was not stopped");
    assert!(!dir.exists(), "{} was not removed", dir.display());
    assert!(running.dir().exists() && alive(running.sshd()), "a run still going was disturbed");
    for served in [&mut next, &mut running] {
        // Serving until Ctrl-C is its job: that is a normal end.
        assert_eq!(served.stop(libc::SIGINT).code(), Some(0));
        assert!(!served.dir().exists());
    }
    assert!(private_dirs(tmp.path()).is_empty(), "{:?}", private_dirs(tmp.path()));
}
