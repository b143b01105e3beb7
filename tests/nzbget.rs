//! NZBGet as it is installed: `check` on a real nzbget.conf read with the real
//! OpenSSL parser, and the emitted answer negotiated by the real NZBGet (its own
//! server test, the `testserver` JSON-RPC method) against a private news server
//! on 127.0.0.1 (`cipherbench serve-nntp`, which honours the client's order and
//! says what each handshake negotiated). `check` on a system under a temporary
//! root (`--config-from ROOT/etc/nzbget.conf`): its gain measured through the
//! real NZBGet, its patch (nzbget.conf, the OpenSSL file and the drop-in)
//! applied into the root, and nothing left to change after.

mod common;

use common::check::{apply, check};
use common::{json_of, missing, ports, Proc};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// The 2015 advice, `ServerX.Cipher=RC4-MD5`, is refused by today's OpenSSL:
/// NZBGet cannot connect to that server at all. `check` says so as a finding
/// (exit 1) naming the server, and its fix is a line the real OpenSSL takes.
#[test]
fn refused_cipher_list_is_a_finding_with_its_fix() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("nzbget.conf");
    std::fs::write(
        &conf,
        "MainDir=/tmp/nzbget-never\nServer1.Active=yes\nServer1.Host=plain.example.com\nServer1.Encryption=no\n\
         Server2.Active=yes\nServer2.Name=secure\nServer2.Host=news.example.com\nServer2.Port=563\n\
         Server2.Encryption=yes\nServer2.Cipher=RC4-MD5\n",
    )
    .unwrap();
    let (code, r) = check(&conf, "nzbget", "6");
    assert_eq!(code, 1, "{r:#}");
    let findings = r["findings"].as_array().unwrap();
    let f = findings
        .iter()
        .find(|f| f["kind"] == "negotiation")
        .unwrap_or_else(|| panic!("no negotiation finding: {r:#}"));
    let msg = f["message"].as_str().unwrap();
    for want in [
        "Server2 (news.example.com)",
        "NZBGet cannot connect to it",
        "`RC4-MD5`",
        "no cipher match",
        "fix: Server2.Cipher=",
    ] {
        assert!(msg.contains(want), "{want:?} missing from {msg}");
    }
    let d = &r["diffs"][0];
    assert_eq!(d["nothing_to_change"], false, "{d:#}");
    let fix = d["fix"][0].as_str().unwrap();
    let value = fix.strip_prefix("Server2.Cipher=").unwrap_or_else(|| panic!("{fix}"));
    // The value NZBGet gives SSL_set_cipher_list: the real OpenSSL takes it.
    let out = std::process::Command::new("openssl")
        .args(["ciphers", "-s", "--", value])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl refuses {value}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The installed NZBGet (Debian's 21.0 gives ServerX.Cipher to OpenSSL's TLS
/// ≤1.2 API only) negotiates OpenSSL's default TLS 1.3 suite whatever
/// ServerX.Cipher says; with the emitted ServerX.Cipher and the emitted OpenSSL
/// configuration (OPENSSL_CONF) it negotiates the answer's first TLS 1.3 choice,
/// and against a TLS 1.2-only server the answer's first TLS 1.2 choice. The
/// answer is the one for a CPU without AES instructions (`--cpu-caps no-aesni`),
/// where ChaCha20 comes first and OpenSSL's default (AES-256-GCM) does not.
#[test]
fn the_real_nzbget_negotiates_the_answers_first_choice() {
    if !Path::new(NZBGET).exists() {
        return missing("nzbget is not installed");
    }
    let dir = tempfile::tempdir().unwrap();
    let answer = Answer::no_aesni(dir.path());
    let first13 = answer.tls13[0].clone();
    let cnf = dir.path().join("openssl-cipherbench.cnf");
    std::fs::write(&cnf, &answer.cnf).unwrap();

    // As installed: no ServerX.Cipher, the system's OpenSSL configuration.
    let default13 = openssl_default_tls13();
    let got = negotiate(dir.path(), "installed", None, "", false);
    assert_eq!(got.suite, default13, "as installed: {got:?}");
    assert_ne!(
        first13, default13,
        "the answer's first TLS 1.3 choice is OpenSSL's default: this test could not tell them apart"
    );

    // As emitted: ServerX.Cipher and OPENSSL_CONF naming the emitted file.
    let got = negotiate(dir.path(), "emitted", Some(&cnf), &answer.cipher, false);
    assert_eq!(
        (got.protocol.as_str(), got.suite.as_str()),
        ("TLSv1.3", first13.as_str()),
        "NZBGet with the emitted lines (Server1.Cipher={}, OPENSSL_CONF with {:?}) negotiated {got:?}",
        answer.cipher,
        answer.cnf
    );

    // ServerX.Cipher alone steers TLS 1.2.
    let got = negotiate(dir.path(), "emitted-tls12", Some(&cnf), &answer.cipher, true);
    assert_eq!(got.suite, answer.tls12[0], "against a TLS 1.2-only server: {got:?}");
}

const NZBGET: &str = "/usr/bin/nzbget";

/// What one handshake negotiated, as the news server said.
#[derive(Debug)]
struct Negotiated {
    protocol: String,
    suite: String,
}

/// The emitted answer for NZBGet.
struct Answer {
    /// The Server1.Cipher value.
    cipher: String,
    /// The OpenSSL configuration for NZBGet alone.
    cnf: String,
    tls13: Vec<String>,
    tls12: Vec<String>,
}

impl Answer {
    /// `recommend --for nzbget` on primitives measured with AES instructions masked.
    fn no_aesni(dir: &Path) -> Answer {
        let db = dir.join("h.sqlite");
        // Stored (no --no-store): recommend ranks this run.
        let cb = || {
            let mut c = assert_cmd::Command::cargo_bin("cipherbench").unwrap();
            c.env_remove("NO_COLOR").timeout(Duration::from_secs(120));
            c
        };
        cb().args(["speed", "aes-128-gcm", "aes-256-gcm", "chacha20-poly1305", "--cpu-caps", "no-aesni"])
            .args(["--bytes", "16k", "--budget", "6s", "--quiet", "--db"])
            .arg(&db)
            .assert()
            .success();
        let out = cb()
            .args(["recommend", "--json", "--for", "nzbget", "--db"])
            .arg(&db)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let doc = json_of(&out);
        let r = doc["recommendations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["target"] == "nzbget")
            .unwrap_or_else(|| panic!("no nzbget recommendation: {doc:#}"))
            .clone();
        let lines: Vec<String> = r["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_string())
            .collect();
        let cipher = lines
            .iter()
            .find_map(|l| l.strip_prefix("Server1.Cipher="))
            .unwrap_or_else(|| panic!("no Server1.Cipher line: {lines:#?}"))
            .to_string();
        let start = lines
            .iter()
            .position(|l| l == "# /etc/nzbget/openssl-cipherbench.cnf")
            .unwrap_or_else(|| panic!("no OpenSSL configuration for NZBGet 21: {lines:#?}"));
        let end = lines
            .iter()
            .position(|l| l.starts_with("# /etc/systemd/system/nzbget.service.d/"))
            .unwrap();
        let list = |k: &str| -> Vec<String> {
            r["choice"][k]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect()
        };
        Answer {
            cipher,
            cnf: lines[start + 1..end].join("\n") + "\n",
            tls13: list("tls13_suites"),
            tls12: list("tls12_suites"),
        }
    }
}

/// OpenSSL's own first TLS 1.3 suite (the system configuration, as NZBGet reads it).
fn openssl_default_tls13() -> String {
    let out = Command::new("openssl")
        .env_remove("OPENSSL_CONF")
        .args(["ciphers", "-s", "-stdname", "-tls1_3"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    text.split_whitespace().next().unwrap().to_string()
}

/// Starts a private news server and a private NZBGet (`OPENSSL_CONF=cnf`, or
/// none), runs NZBGet's server test with ServerX.Cipher `cipher` against the
/// news server; it must pass. Returns what the handshake negotiated.
fn negotiate(dir: &Path, name: &str, cnf: Option<&Path>, cipher: &str, tls12_only: bool) -> Negotiated {
    let news_log = dir.join(format!("news-{name}.log"));
    let mut news = Command::new(assert_cmd::cargo::cargo_bin("cipherbench"));
    news.args(["serve-nntp", "--connections", "1", "--seconds", "120"]);
    if tls12_only {
        news.arg("--tls12-only");
    }
    let (news_port, news) = ports::start_reporting("the news server", &news_log, news, |said| {
        said.lines()
            .find_map(|l| l.strip_prefix("listening 127.0.0.1:")?.trim().parse().ok())
    });
    let _news = Proc(news);
    let (control, _nzbget) = nzbget(dir, name, cnf);
    let result = rpc(control, "testserver", json!(["127.0.0.1", news_port, "", "", true, cipher, 30]));
    assert_eq!(
        result,
        json!(""),
        "NZBGet's server test failed ({name}); the news server said:\n{}",
        std::fs::read_to_string(&news_log).unwrap_or_default()
    );
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let said = std::fs::read_to_string(&news_log).unwrap_or_default();
        if let Some(l) = said.lines().find_map(|l| l.strip_prefix("negotiated ")) {
            let f: Vec<&str> = l.split_whitespace().collect();
            return Negotiated {
                protocol: f[0].to_string(),
                suite: f[1].to_string(),
            };
        }
        assert!(Instant::now() < end, "the news server recorded no handshake:\n{said}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A private NZBGet in server mode (`-s`, in the foreground): its own
/// configuration and directories under `dir`, its control port on 127.0.0.1 (a
/// candidate port, another one while it is taken: NZBGet cannot bind port 0).
/// Stopped when the returned guard drops.
fn nzbget(dir: &Path, name: &str, cnf: Option<&Path>) -> (u16, Proc) {
    let main = dir.join(format!("nzbget-{name}"));
    std::fs::create_dir_all(&main).unwrap();
    let conf = main.join("nzbget.conf");
    let log = main.join("stdout.log");
    let (port, child) = ports::start("nzbget", &log, |port| {
        std::fs::write(&conf, nzbget_conf(&main, port)).unwrap();
        let mut c = Command::new(NZBGET);
        c.arg("-c").arg(&conf).arg("-s");
        c.env_remove("OPENSSL_CONF").env_remove("OPENSSL_ia32cap");
        if let Some(cnf) = cnf {
            c.env("OPENSSL_CONF", cnf);
        }
        c
    });
    (port, Proc(child))
}

fn nzbget_conf(main: &Path, port: u16) -> String {
    let m = main.display();
    format!(
        "MainDir={m}\nDestDir={m}/dst\nInterDir={m}/inter\nNzbDir={m}/nzb\nQueueDir={m}/queue\nTempDir={m}/tmp\n\
         ScriptDir={m}/scripts\nLockFile={m}/nzbget.lock\nLogFile={m}/nzbget.log\nWebDir=\n\
         ConfigTemplate=/usr/share/nzbget/webui/nzbget.conf\nControlIP=127.0.0.1\nControlPort={port}\n\
         ControlUsername=\nControlPassword=\nSecureControl=no\nOutputMode=log\nUpdateCheck=none\nWriteLog=append\n"
    )
}

/// NZBGet's JSON-RPC `method(params)` on 127.0.0.1:`port`: its `result`.
fn rpc(port: u16, method: &str, params: Value) -> Value {
    let body = json!({"method": method, "params": params}).to_string();
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "POST /jsonrpc HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (_, json) = out.split_once("\r\n\r\n").unwrap_or_else(|| panic!("not an HTTP answer: {out}"));
    let v: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"));
    v.get("result").cloned().unwrap_or_else(|| panic!("no result: {v:#}"))
}

/// `check --json --for nzbget` on `conf` with AES instructions masked (the
/// guide's receiver: ChaCha20 is then the answer, OpenSSL's default AES-256-GCM
/// is not), its temporary files in `tmp`: (exit code, report).
fn check_masked(conf: &Path, budget: &str, tmp: Option<&Path>) -> (i32, Value) {
    let out = masked_check(conf, budget, tmp).output().unwrap();
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "check exited {code}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (code, json_of(&out.stdout))
}

fn masked_check(conf: &Path, budget: &str, tmp: Option<&Path>) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("cipherbench"));
    c.args([
        "--no-store",
        "check",
        "--json",
        "--for",
        "nzbget",
        "--budget",
        budget,
        "--config-from",
    ])
    .arg(conf)
    .env_remove("NO_COLOR")
    .env_remove("OPENSSL_CONF")
    .env("OPENSSL_ia32cap", NO_AESNI);
    if let Some(t) = tmp {
        c.env("TMPDIR", t);
    }
    c
}

/// `--cpu-caps no-aesni`'s mask (src/discover/cpucaps.rs): AES-NI, PCLMULQDQ, VAES, VPCLMULQDQ.
const NO_AESNI: &str = "~0x200000200000000:~0x60000000000";

/// Whether these tests can run here: NZBGet installed, and an x86 CPU (the mask).
fn can_run() -> bool {
    if !Path::new(NZBGET).exists() {
        missing("nzbget is not installed");
        return false;
    }
    if !cfg!(target_arch = "x86_64") {
        eprintln!("skipped: OPENSSL_ia32cap masks AES instructions on x86 only");
        return false;
    }
    true
}

/// A system under `root` with NZBGet's nzbget.conf (Server1 over TLS with
/// `cipher`): its path.
fn system(root: &Path, cipher: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(root.join("etc")).unwrap();
    let conf = root.join("etc/nzbget.conf");
    std::fs::write(
        &conf,
        format!(
            "MainDir=/tmp/nzbget-never\nServer1.Active=yes\nServer1.Host=news.example.com\nServer1.Port=563\n\
             Server1.Encryption=yes\nServer1.Cipher={cipher}\nServer1.Connections=4\n"
        ),
    )
    .unwrap();
    conf
}

/// The throughput change, measured through the real NZBGet: both figures, a
/// gain with its interval from the paired rounds.
/// The throughput change of a diff: how it was measured.
fn throughput(d: &Value) -> &Value {
    d["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "throughput")
        .unwrap_or_else(|| panic!("no throughput change: {d:#}"))
}

fn throughput_how(d: &Value) -> &str {
    throughput(d)["how"]
        .as_str()
        .unwrap_or_else(|| panic!("not measured through NZBGet: {:#}\n{:#}", throughput(d), d["notes"]))
}

fn assert_through_nzbget(d: &Value) {
    let (t, how) = (throughput(d), throughput_how(d));
    assert!(
        how.starts_with("through a private NZBGet") && how.contains("paired rounds"),
        "{how}"
    );
    for side in ["now", "recommended"] {
        assert!(t[side]["median"].as_f64().unwrap() > 1e6, "{side}: {t:#}");
    }
    let (g, lo, hi) = (
        t["gain"].as_f64().unwrap(),
        t["gain_low"].as_f64().unwrap(),
        t["gain_high"].as_f64().unwrap(),
    );
    assert!(lo <= g && g <= hi, "{t:#}");
}

/// Issue 38: `check` measures NZBGet's gain through the real NZBGet (the
/// installed Server1.Cipher, no OpenSSL file; the emitted lines), its patch
/// creates the OpenSSL file and the drop-in beside the nzbget.conf change, and
/// once applied into the root `check` reads them back (the drop-in, the file it
/// names: ChaCha20 first) and finds nothing left to change.
#[test]
fn check_measures_through_nzbget_and_after_its_patch_nothing_is_left() {
    if !can_run() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let conf = system(root.path(), "");
    let (_, r) = check_masked(&conf, "45s", None);
    let d = &r["diffs"][0];
    assert_eq!(d["now"]["suite"], openssl_default_tls13(), "{d:#}");
    // ChaCha20 as a rule; AES-128-GCM where a loaded machine ties them.
    let rec = d["recommended"]["suite"].as_str().unwrap().to_string();
    assert_ne!(d["now"]["suite"], rec, "{d:#}");
    assert_through_nzbget(d);
    let patch = d["patch"].as_str().unwrap_or_else(|| panic!("no patch: {d:#}"));
    let r0 = root.path().display().to_string();
    let r0 = r0.trim_start_matches('/');
    for want in [
        format!("+++ b/{r0}/etc/nzbget.conf\n"),
        "\n+Server1.Cipher=ECDHE-".to_string(),
        format!("--- /dev/null\n+++ b/{r0}/etc/nzbget/openssl-cipherbench.cnf\n"),
        format!("\n+Ciphersuites = {rec}:"),
        format!("--- /dev/null\n+++ b/{r0}/etc/systemd/system/nzbget.service.d/cipherbench.conf\n"),
        "\n+Environment=OPENSSL_CONF=/etc/nzbget/openssl-cipherbench.cnf\n".to_string(),
    ] {
        assert!(patch.contains(&want), "{want:?} missing from\n{patch}");
    }
    apply(patch);
    assert!(root.path().join("etc/nzbget/openssl-cipherbench.cnf").is_file());

    let (code, again) = check_masked(&conf, "20s", None);
    let d2 = &again["diffs"][0];
    assert_eq!(code, 0, "{again:#}");
    assert!(
        d2["source"]
            .as_str()
            .unwrap()
            .contains("OPENSSL_CONF=/etc/nzbget/openssl-cipherbench.cnf from "),
        "{d2:#}"
    );
    assert_eq!(d2["now"]["suite"], rec.as_str(), "{d2:#}");
    assert_eq!(d2["nothing_to_change"], true, "{d2:#}");
    assert_eq!(d2["fixed"].as_array().unwrap().len(), 0, "{d2:#}");
    assert_read_back(&d2["patch"]);
}

/// After its patch the files were read back: none left to create, no drop-in
/// to change. (Another run may order a tie the other way, two groups or suites
/// this machine cannot tell apart, and say so in the lines: "nothing to change"
/// all the same.)
fn assert_read_back(patch: &Value) {
    if let Some(p) = patch.as_str() {
        assert!(!p.contains("/dev/null"), "a file is still to create:\n{p}");
        assert!(!p.contains("Environment="), "the drop-in is still to change:\n{p}");
    }
}

/// An existing drop-in that sets OPENSSL_CONF to a file of the admin's is read
/// (what NZBGet negotiates comes from that file: over P-256, not OpenSSL's
/// default group), NZBGet's gain is measured from it, and the patch renames
/// that assignment (a drop-in of ours beside it would override it or be
/// overridden) and creates the OpenSSL file; applied, nothing is left.
#[test]
fn an_existing_drop_in_is_read_and_its_assignment_renamed() {
    if !can_run() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let conf = system(root.path(), "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256");
    let dir = root.path().join("etc/systemd/system/nzbget.service.d");
    std::fs::create_dir_all(&dir).unwrap();
    let drop_in = dir.join("override.conf");
    std::fs::write(
        &drop_in,
        "[Service]\nNice=5\nEnvironment=\"NZB=1\" OPENSSL_CONF=/etc/ssl/nzbget-old.cnf\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.path().join("etc/ssl")).unwrap();
    let (system_cnf, init) = system_cnf();
    std::fs::write(
        root.path().join("etc/ssl/nzbget-old.cnf"),
        format!(".include {system_cnf}\n[ {init} ]\nssl_conf = old_ssl\n[ old_ssl ]\nsystem_default = old_tls\n[ old_tls ]\nMinProtocol = TLSv1.2\nCiphersuites = TLS_AES_256_GCM_SHA384\nGroups = P-256\n"),
    )
    .unwrap();
    let (_, r) = check_masked(&conf, "45s", None);
    let d = &r["diffs"][0];
    assert_eq!(d["now"]["suite"], "TLS_AES_256_GCM_SHA384", "{d:#}");
    assert_eq!(d["now"]["group"], "secp256r1", "the drop-in's file was not read: {d:#}");
    let rec = d["recommended"]["suite"].as_str().unwrap().to_string();
    assert_ne!(d["now"]["suite"], rec, "{d:#}");
    assert_through_nzbget(d);
    let patch = d["patch"].as_str().unwrap_or_else(|| panic!("no patch: {d:#}"));
    for want in [
        "\n-Environment=\"NZB=1\" OPENSSL_CONF=/etc/ssl/nzbget-old.cnf\n",
        "\n+Environment=\"NZB=1\" OPENSSL_CONF=/etc/nzbget/openssl-cipherbench.cnf\n",
        "/etc/nzbget/openssl-cipherbench.cnf\n@@ -0,0 +1,",
    ] {
        assert!(patch.contains(want), "{want:?} missing from\n{patch}");
    }
    assert!(
        !patch.contains("cipherbench.conf"),
        "a drop-in beside the one that sets it:\n{patch}"
    );
    apply(patch);
    let (code, again) = check_masked(&conf, "20s", None);
    let d2 = &again["diffs"][0];
    assert_eq!(code, 0, "{again:#}");
    assert_eq!(d2["now"]["suite"], rec.as_str(), "{d2:#}");
    assert_ne!(d2["now"]["group"], "secp256r1", "the renamed drop-in was not read: {d2:#}");
    assert_eq!(d2["nothing_to_change"], true, "{d2:#}");
    assert_read_back(&d2["patch"]);
}

/// The system openssl.cnf and the section its `openssl_conf` names.
fn system_cnf() -> (String, String) {
    let out = Command::new("openssl").args(["version", "-d"]).output().unwrap();
    let dir = String::from_utf8_lossy(&out.stdout).split('"').nth(1).unwrap().to_string();
    let file = format!("{dir}/openssl.cnf");
    let text = std::fs::read_to_string(&file).unwrap();
    let init = text
        .lines()
        .take_while(|l| !l.trim_start().starts_with('['))
        .find_map(|l| {
            let (k, v) = l.split('#').next()?.split_once('=')?;
            (k.trim() == "openssl_conf").then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| "openssl_init".into());
    (file, init)
}

/// A cipherbench killed with SIGKILL while its private NZBGet runs leaves that
/// NZBGet's directory behind (NZBGet itself gets its parent-death signal); the
/// next private NZBGet's start removes it, its owner being gone.
#[test]
fn a_private_nzbget_left_behind_by_sigkill_is_swept_at_the_next_start() {
    if !can_run() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let conf = system(root.path(), "");
    let private = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("cipherbench-nzbget-"))
            .map(|e| e.path())
            .collect()
    };
    let mut run = masked_check(&conf, "45s", Some(tmp.path()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let end = Instant::now() + Duration::from_secs(90);
    let left = loop {
        let found: Vec<_> = private().into_iter().filter(|d| d.join("nzbget.conf").exists()).collect();
        if !found.is_empty() {
            break found;
        }
        assert!(run.try_wait().unwrap().is_none(), "check ended before it started a private NZBGet");
        assert!(Instant::now() < end, "no private NZBGet within 90 s");
        std::thread::sleep(Duration::from_millis(20));
    };
    run.kill().unwrap();
    run.wait().unwrap();
    for d in &left {
        assert!(d.exists(), "{} did not outlive SIGKILL: nothing to sweep", d.display());
        let owner: u32 = std::fs::read_to_string(d.join("owner.pid")).unwrap().trim().parse().unwrap();
        assert_eq!(owner, run.id());
    }
    // Its NZBGet stops by itself (SIGKILL on its parent's death).
    let end = Instant::now() + Duration::from_secs(15);
    while left.iter().any(|d| running_with(&d.join("nzbget.conf"))) {
        assert!(Instant::now() < end, "the private NZBGet outlived its owner");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The next run's private NZBGet removes the leftovers. It only has to start
    // (a loaded machine may leave its 20 s too few rounds to pair: the paired
    // gain is `check_measures_through_nzbget_and_after_its_patch_nothing_is_left`'s).
    let (_, r) = check_masked(&conf, "20s", Some(tmp.path()));
    assert!(
        throughput_how(&r["diffs"][0]).starts_with("through a private NZBGet"),
        "{:#}",
        r["diffs"][0]
    );
    for d in &left {
        assert!(!d.exists(), "{} was not swept", d.display());
    }
    assert!(private().is_empty(), "{:?}", private());
}

/// Whether a process runs with `arg` in its command line.
fn running_with(arg: &Path) -> bool {
    let want = arg.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .any(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c.windows(want.len()).any(|w| w == want.as_bytes())))
}
