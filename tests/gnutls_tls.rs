//! `cipherbench tls --lib gnutls` and library pairs against real peers on
//! 127.0.0.1: its own loopback servers, `gnutls-serv` and `gnutls-cli` from
//! Debian's gnutls-bin.

use assert_cmd::Command;
use openssl::sha::sha256;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

mod common;
use common::{json_of, start_server, Proc};

fn cb() -> Command {
    common::cb_tls(Duration::from_secs(120))
}

/// The headline records (rates and throughputs) of a run.
fn headline(doc: &Value) -> Vec<&Value> {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"] == "bytes_per_sec" || r["metric"] == "handshakes_per_sec")
        .collect()
}

fn pair(r: &Value) -> (String, String) {
    (
        r["subject"]["library"].as_str().unwrap_or("").to_string(),
        r["subject"]["server_library"].as_str().unwrap_or("").to_string(),
    )
}

/// GnuTLS on both ends: bulk both ways with every byte hashed on the far side;
/// flipping one plaintext byte must turn every bulk result into a SHA-256 failure.
#[test]
fn gnutls_loopback_bulk_verified_by_hash() {
    // 6 s: the budget is a hard deadline, and four verified 1 MiB slices per
    // subject need that much on a loaded machine.
    let args = [
        "--budget",
        "6s",
        "tls",
        "--lib",
        "gnutls",
        "--suites",
        "TLS_AES_128_GCM_SHA256,ECDHE-RSA-AES128-GCM-SHA256",
        "--groups",
        "x25519",
        "--certs",
        "rsa-2048",
        "--no-handshakes",
        "--both-directions",
        "--verify",
        "--bytes",
        "1M",
        "--json",
    ];
    let out = cb().args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = json_of(&out.stdout);
    let bulk = headline(&doc);
    assert_eq!(bulk.len(), 4, "2 suites × 2 directions: {bulk:#?}");
    for r in &bulk {
        assert_eq!(r["kind"], "tls-bulk");
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(pair(r), ("gnutls".into(), "gnutls".into()));
        assert!(r["median"].as_f64().unwrap() > 1e6, "{r}");
    }
    let suites: Vec<&str> = bulk.iter().map(|r| r["subject"]["suite"].as_str().unwrap()).collect();
    assert!(suites.contains(&"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256") && suites.contains(&"TLS_AES_128_GCM_SHA256"));

    let out = cb().args(args).env("CIPHERBENCH_TEST_TLS_TAMPER", "1").output().unwrap();
    let doc = json_of(&out.stdout);
    let bulk = headline(&doc);
    assert_eq!(bulk.len(), 4);
    for r in &bulk {
        assert_eq!(r["status"], "failed", "{r}");
        assert!(r["reason"].as_str().unwrap().contains("SHA-256 mismatch"), "{r}");
    }
}

/// `--lib openssl,gnutls`: every client→server pair hands over verified bytes and
/// resumes sessions; a suite GnuTLS lacks is `unsupported` for the GnuTLS pairs only;
/// the terminal report shows the matrix.
#[test]
fn interop_matrix_openssl_gnutls_both_ways() {
    let out = cb()
        .args([
            "--budget",
            "6s",
            "tls",
            "--lib",
            "openssl,gnutls",
            "--protocols",
            "1.3,1.2",
            "--suites",
            "TLS_CHACHA20_POLY1305_SHA256,ECDHE-ECDSA-AES128-SHA,ECDHE-ECDSA-ARIA128-GCM-SHA256",
            "--groups",
            "x25519",
            "--certs",
            "ecdsa-p256",
            "--verify",
            "--export-json",
            "-",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let start = text.find("\n{").map(|i| i + 1).unwrap_or(0);
    let doc = json_of(&text.as_bytes()[start..]);
    let rs = headline(&doc);
    let pairs = [
        ("openssl", "openssl"),
        ("openssl", "gnutls"),
        ("gnutls", "openssl"),
        ("gnutls", "gnutls"),
    ];
    for (c, s) in pairs {
        for (suite, protocol) in [
            ("TLS_CHACHA20_POLY1305_SHA256", "TLSv1.3"),
            ("TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "TLSv1.2"),
        ] {
            let mine: Vec<&&Value> = rs
                .iter()
                .filter(|r| pair(r) == (c.into(), s.into()) && r["subject"]["suite"] == suite)
                .collect();
            // full and resumed handshakes, bulk
            assert_eq!(mine.len(), 3, "{c}→{s} {suite}: {mine:#?}");
            for r in mine {
                assert_eq!(r["status"], "ok", "{c}→{s}: {r}");
                assert_eq!(r["subject"]["protocol"], protocol);
            }
        }
        let aria: Vec<&&Value> = rs
            .iter()
            .filter(|r| pair(r) == (c.into(), s.into()) && r["subject"]["suite"] == "TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256")
            .collect();
        assert_eq!(aria.len(), 1);
        let want = if (c, s) == ("openssl", "openssl") { "ok" } else { "unsupported" };
        assert_eq!(aria[0]["status"], want, "{c}→{s}: {}", aria[0]);
    }
    assert!(text.contains("TLS interop matrix"), "{text}");
    assert!(text.contains("gnutls→openssl") && text.contains("openssl→gnutls"), "{text}");
}

/// A handshake one pair cannot complete is a failure with the library's reason,
/// while the pairs that can still run.
#[test]
fn interop_failure_is_recorded_with_reason() {
    let out = cb()
        .args([
            "--budget",
            "3s",
            "tls",
            "--lib",
            "openssl,gnutls",
            "--priority",
            "NORMAL:-VERS-ALL:+VERS-TLS1.2:-KX-ALL:+RSA",
            "--certs",
            "ecdsa-p256",
            "--no-bulk",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = json_of(&out.stdout);
    assert_eq!(doc["run"]["settings"]["priority"], "NORMAL:-VERS-ALL:+VERS-TLS1.2:-KX-ALL:+RSA");
    let rs = headline(&doc);
    for r in &rs {
        match pair(r) {
            (c, s) if c == "openssl" && s == "openssl" => assert_eq!(r["status"], "ok", "{r}"),
            // GnuTLS offers only static RSA key exchange; the server has an ECDSA key.
            _ => {
                assert_eq!(r["status"], "failed", "{r}");
                // The client's view, then the server library's own reason.
                let why = r["reason"].as_str().unwrap();
                let server_says = if pair(r).1 == "gnutls" {
                    "No supported cipher suites"
                } else {
                    "no shared cipher"
                };
                assert!(why.contains("handshake refused") && why.contains(server_says), "{r}");
            }
        }
    }
    assert_eq!(rs.len(), 8, "full + resumed per pair: {rs:#?}");
}

/// A typo in the priority string is bad input: exit 2 with GnuTLS's position.
#[test]
fn invalid_priority_exits_2_with_position() {
    for args in [
        vec!["tls", "--lib", "gnutls", "--priority", "NORMAL:+FOO"],
        vec!["list", "tls", "--lib", "gnutls", "--priority", "NORMAL:+FOO"],
    ] {
        let out = cb().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("position 7") && err.contains("+FOO"), "{err}");
    }
    let out = cb().args(["tls", "--priority", "NORMAL"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--lib gnutls"));
    let out = cb().args(["tls", "--lib", "gnutls", "--priority", "NONE"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // GnuTLS 3.7 refuses a string without suites at once; older ones parse it and
    // cipherbench then says it enables no suite.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("insufficient priorities") || err.contains("enables no cipher suite"),
        "{err}"
    );
}

/// `list tls --lib gnutls --priority X` lists exactly the suites `gnutls-cli
/// --priority X -l` prints, with IANA names.
#[test]
fn list_tls_gnutls_matches_gnutls_cli() {
    let prio = "NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+CHACHA20-POLY1305:+AES-128-CBC";
    let out = cb()
        .args(["list", "tls", "--lib", "gnutls", "--priority", prio, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = json_of(&out.stdout);
    let ours: Vec<String> = doc["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["gnutls"].as_str().unwrap().to_string())
        .collect();
    let cli = std::process::Command::new("gnutls-cli")
        .args(["--priority", prio, "-l"])
        .output()
        .unwrap();
    let theirs: Vec<String> = String::from_utf8_lossy(&cli.stdout)
        .lines()
        .filter(|l| l.starts_with("TLS_") && l.contains("0x"))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    assert!(!theirs.is_empty());
    assert_eq!(ours, theirs);
    let iana: Vec<&str> = doc["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["iana"].as_str().unwrap())
        .collect();
    assert!(iana.contains(&"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"), "{iana:?}");
    assert!(iana.contains(&"TLS_CHACHA20_POLY1305_SHA256"));
    let mut protocols: Vec<&str> = doc["protocols"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    protocols.sort();
    assert_eq!(protocols, ["TLS1.2", "TLS1.3"]);
    assert!(doc["groups"].as_array().unwrap().iter().any(|g| g == "X25519"));
}

fn cert_files(dir: &Path) -> (String, String) {
    let (cert, key) = common::p256_cert(dir);
    (cert.to_string_lossy().into(), key.to_string_lossy().into())
}

/// `cipherbench tls --lib gnutls --connect` against Debian's `gnutls-serv` that
/// only allows TLS 1.3 with AES-256-GCM: that suite is accepted and timed, the others
/// in our priority string are refused.
#[test]
fn connect_to_gnutls_serv() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = cert_files(dir.path());
    let (port, _serv) = start_server("gnutls-serv", &dir.path().join("gnutls-serv.log"), |port| {
        let mut c = std::process::Command::new("gnutls-serv");
        c.args([
            "--echo",
            "--port",
            &port.to_string(),
            "--x509certfile",
            &cert,
            "--x509keyfile",
            &key,
        ])
        .args(["--priority", "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-256-GCM"]);
        c
    });
    let out = cb()
        .args(["--budget", "3s", "tls", "--lib", "gnutls", "--connect"])
        .arg(format!("127.0.0.1:{port}"))
        .args(["--priority", "NORMAL:-VERS-ALL:+VERS-TLS1.3", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = json_of(&out.stdout);
    let results = doc["results"].as_array().unwrap();
    let accept: Vec<(&str, f64)> = results
        .iter()
        .filter(|r| r["kind"] == "tls-accept")
        .map(|r| (r["subject"]["suite"].as_str().unwrap(), r["median"].as_f64().unwrap()))
        .collect();
    assert!(accept.contains(&("TLS_AES_256_GCM_SHA384", 1.0)), "{accept:?}");
    assert!(accept.contains(&("TLS_AES_128_GCM_SHA256", 0.0)), "{accept:?}");
    assert!(accept.contains(&("TLS_CHACHA20_POLY1305_SHA256", 0.0)), "{accept:?}");
    let hs: Vec<&Value> = results.iter().filter(|r| r["metric"] == "handshakes_per_sec").collect();
    assert_eq!(hs.len(), 1, "{hs:#?}");
    assert_eq!(hs[0]["status"], "ok");
    assert_eq!(hs[0]["subject"]["suite"], "TLS_AES_256_GCM_SHA384");
    assert_eq!(hs[0]["subject"]["library"], "gnutls");
    assert!(hs[0]["median"].as_f64().unwrap() > 1.0);

    // A rustls client, then a GnuTLS one without --priority (the same generic
    // pass), through the same server: TLS 1.2 refused, of TLS 1.3 only
    // AES-256-GCM accepted, and its handshakes timed through that library.
    for lib in ["rustls", "gnutls"] {
        connect_scan_of_gnutls_serv(port, lib);
    }

    // Nobody listening: a clear error, exit 3 (could not measure), with or
    // without --priority.
    drop(_serv);
    for priority in [&[][..], &["--priority", "NORMAL"][..]] {
        let out = cb()
            .args(["tls", "--lib", "gnutls", "--connect"])
            .arg(format!("127.0.0.1:{port}"))
            .args(priority)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{priority:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("cannot connect"),
            "{priority:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `tls --lib LIB --connect` (the generic scan and remote pass) against the
/// `gnutls-serv` of [`connect_to_gnutls_serv`]: TLS 1.2 refused, of TLS 1.3 only
/// AES-256-GCM accepted, its handshakes timed through `lib`, and the diff of
/// what to change there.
fn connect_scan_of_gnutls_serv(port: u16, lib: &str) {
    let out = cb()
        .args(["--budget", "3s", "tls", "--lib", lib, "--connect"])
        .arg(format!("127.0.0.1:{port}"))
        .args(["--protocols", "1.2,1.3", "--groups", "x25519,p-256", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{lib}: {}", String::from_utf8_lossy(&out.stderr));
    let doc = json_of(&out.stdout);
    assert_eq!(doc["run"]["settings"]["library"], lib);
    let diffs = doc["run"]["settings"]["installed_diff"].as_array().expect("installed_diff");
    assert!(diffs.iter().any(|d| d["software"] == "nginx"), "{lib}: {diffs:#?}");
    let results = doc["results"].as_array().unwrap();
    let said = |f: &dyn Fn(&Value) -> bool| -> Vec<(String, f64)> {
        results
            .iter()
            .filter(|r| r["kind"] == "tls-accept" && f(&r["subject"]))
            .map(|r| {
                (
                    r["subject"]["protocol"].as_str().unwrap().to_string(),
                    r["median"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let protocols = said(&|s| s.as_object().unwrap().len() == 1);
    assert_eq!(protocols, [("TLSv1.2".to_string(), 0.0), ("TLSv1.3".to_string(), 1.0)]);
    let accepted: Vec<&str> = results
        .iter()
        .filter(|r| r["kind"] == "tls-accept" && r["median"] == 1.0)
        .filter_map(|r| r["subject"]["suite"].as_str())
        .collect();
    assert_eq!(accepted, ["TLS_AES_256_GCM_SHA384"]);
    let refused = said(&|s| s["suite"] == "TLS_AES_128_GCM_SHA256");
    assert_eq!(refused, [("TLSv1.3".to_string(), 0.0)]);
    let hs: Vec<&Value> = results.iter().filter(|r| r["metric"] == "handshakes_per_sec").collect();
    assert!(!hs.is_empty(), "{hs:#?}");
    for h in hs {
        assert_eq!(h["subject"]["library"], lib);
        assert_eq!(h["subject"]["suite"], "TLS_AES_256_GCM_SHA384");
        if h["subject"]["op"] == "full" {
            assert_eq!(h["status"], "ok", "{h}");
            assert!(h["median"].as_f64().unwrap() > 1.0, "{h}");
        }
    }
}

/// `gnutls-cli` against `cipherbench tls --serve --lib gnutls`: the handshake
/// completes, and an upload command sent through gnutls-cli comes back with a
/// receipt holding the SHA-256 of exactly those bytes.
#[test]
fn gnutls_cli_against_cipherbench_serve() {
    let mut serve = std::process::Command::new(assert_cmd::cargo::cargo_bin("cipherbench"))
        .args([
            "--no-store",
            "tls",
            "--serve",
            "127.0.0.1:0",
            "--lib",
            "gnutls",
            "--certs",
            "ecdsa-p256",
        ])
        .args(["--priority", "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+CHACHA20-POLY1305"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(serve.stderr.take().unwrap()).lines();
    let banner = lines.next().unwrap().unwrap();
    let _serve = Proc(serve);
    let port: u16 = banner
        .rsplit_once("127.0.0.1:")
        .and_then(|(_, r)| r.split(';').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in '{banner}'"));

    let payload: Vec<u8> = (0..5000u32).map(|i| (i * 7 + 3) as u8).collect();
    let mut cmd = vec![b'U'];
    cmd.extend_from_slice(&(payload.len() as u64).to_be_bytes());
    cmd.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    cmd.push(1);
    cmd.extend_from_slice(&payload);

    let logfile = tempfile::NamedTempFile::new().unwrap();
    let mut cli = std::process::Command::new("gnutls-cli")
        .args(["--insecure", "--port", &port.to_string(), "127.0.0.1", "--logfile"])
        .arg(logfile.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = cli.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        // 'k' after the handshake, then the 40-byte receipt.
        while got.len() < 41 {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
        got
    });
    // Written at once: the pipe holds it until gnutls-cli, its handshake done,
    // reads its input (no guessed wait for the handshake).
    let mut stdin = cli.stdin.take().unwrap();
    stdin.write_all(&cmd).unwrap();
    stdin.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    while !reader.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    // End of input: gnutls-cli says goodbye and exits, flushing its log file.
    drop(stdin);
    let mut cli = Proc(cli);
    let deadline = Instant::now() + Duration::from_secs(10);
    while cli.0.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let got = reader.join().unwrap();
    assert!(got.len() >= 41, "got {} bytes: {got:?}", got.len());
    let tail = &got[got.len() - 40..];
    assert_eq!(got[got.len() - 41], b'k');
    assert_eq!(
        &tail[8..],
        &sha256(&payload)[..],
        "the receipt's SHA-256 is of the bytes gnutls-cli sent"
    );
    let log = std::fs::read_to_string(logfile.path()).unwrap();
    assert!(log.contains("Handshake was completed"), "{log}");
    assert!(log.contains("CHACHA20-POLY1305"), "{log}");
    // The server logged the connection with the negotiated suite.
    let line = lines.next().unwrap().unwrap();
    assert!(line.contains("TLSv1.3 TLS_CHACHA20_POLY1305_SHA256"), "{line}");
}
