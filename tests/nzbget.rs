//! NZBGet as it is installed: `check` on a real nzbget.conf read with the real
//! OpenSSL parser, and the emitted answer negotiated by the real NZBGet (its own
//! server test, the `testserver` JSON-RPC method) against a private news server
//! on 127.0.0.1 (`cipherbench serve-nntp`, which honours the client's order and
//! says what each handshake negotiated).

mod common;

use common::check::check;
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
