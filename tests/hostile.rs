//! Hostile peers and hostile files: fake TLS, HTTP and SSH servers on 127.0.0.1 that
//! put terminal controls, markup and oversize values in every field cipherbench
//! reads, and exports from "another machine" that do the same. Whatever they send,
//! no control byte, line separator or bidi override reaches stdout, stderr or an
//! export (DESIGN.md, "Untrusted input"), and a failed download is exit 3.
//!
//! Every server here serves a bounded number of connections and stops by itself
//! after at most 60 s.

mod common;

use openssl::asn1::Asn1Time;
use openssl::hash::MessageDigest;
use openssl::pkey::PKey;
use openssl::ssl::{SslAcceptor, SslMethod};
use openssl::x509::{X509NameBuilder, X509};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a hostile peer puts in a field: an OSC window title, a screen clear, a
/// cursor move, NEL, a line separator, a bidi override, a zero-width space, markup.
const EVIL: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[1;1H\u{85}\u{2028}\u{202e}\u{200b}<script>alert(1)</script>";

/// Every character that must not reach a terminal raw (line feed and tab aside).
fn hostile_chars(text: &str) -> Vec<(usize, char)> {
    text.char_indices()
        .filter(|(_, c)| {
            (c.is_control() && *c != '\n' && *c != '\t')
                || matches!(*c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
        })
        .collect()
}

fn assert_clean(bytes: &[u8], what: &str) {
    let text = String::from_utf8_lossy(bytes);
    let bad = hostile_chars(&text);
    assert!(
        bad.is_empty(),
        "{what} holds {} raw control/format character(s), first {:?} at byte {}: {}",
        bad.len(),
        bad[0].1,
        bad[0].0,
        text.escape_debug()
    );
}

fn assert_streams_clean(o: &Output, what: &str) {
    assert_clean(&o.stdout, &format!("{what}: stdout"));
    assert_clean(&o.stderr, &format!("{what}: stderr"));
}

fn cb() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("cipherbench").unwrap();
    c.env("NO_COLOR", "1").env_remove("CIPHERBENCH_TEST_TLS_TAMPER");
    c.timeout(Duration::from_secs(120));
    c
}

/// A listener that serves at most `max` connections, each by `serve` on its own
/// thread, and stops after 60 s whatever happens.
fn spawn_server<F>(max: usize, serve: F) -> (u16, Arc<AtomicUsize>)
where
    F: Fn(TcpStream) + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    let serve = Arc::new(serve);
    std::thread::spawn(move || {
        let end = Instant::now() + Duration::from_secs(60);
        while Instant::now() < end && count.load(Ordering::SeqCst) < max {
            match listener.accept() {
                Ok((s, _)) => {
                    count.fetch_add(1, Ordering::SeqCst);
                    let _ = s.set_nonblocking(false);
                    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                    let _ = s.set_write_timeout(Some(Duration::from_secs(5)));
                    let serve = serve.clone();
                    std::thread::spawn(move || serve(s));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    (port, served)
}

/// A self-signed P-256 certificate whose subject and issuer fields carry [`EVIL`].
fn evil_cert() -> (PKey<openssl::pkey::Private>, X509) {
    let group = openssl::ec::EcGroup::from_curve_name(openssl::nid::Nid::X9_62_PRIME256V1).unwrap();
    let key = PKey::from_ec_key(openssl::ec::EcKey::generate(&group).unwrap()).unwrap();
    let mut name = X509NameBuilder::new().unwrap();
    name.append_entry_by_text("CN", &format!("evil{EVIL}.example")).unwrap();
    name.append_entry_by_text("O", EVIL).unwrap();
    let name = name.build();
    let mut b = X509::builder().unwrap();
    b.set_version(2).unwrap();
    b.set_subject_name(&name).unwrap();
    b.set_issuer_name(&name).unwrap();
    b.set_pubkey(&key).unwrap();
    b.set_not_before(&Asn1Time::days_from_now(0).unwrap()).unwrap();
    b.set_not_after(&Asn1Time::days_from_now(2).unwrap()).unwrap();
    b.sign(&key, MessageDigest::sha256()).unwrap();
    (key, b.build())
}

/// A real TLS server (the system OpenSSL) with [`evil_cert`], answering every
/// HTTP request on a connection with `answer`.
fn evil_https(answer: &'static [u8]) -> u16 {
    let (key, cert) = evil_cert();
    let mut a = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls()).unwrap();
    a.set_private_key(&key).unwrap();
    a.set_certificate(&cert).unwrap();
    let acceptor = Arc::new(a.build());
    let (port, _) = spawn_server(2000, move |s| {
        let Ok(mut tls) = acceptor.accept(s) else { return };
        let mut buf = [0u8; 4096];
        let mut got = Vec::new();
        // Keep-alive: as many requests as the client sends, until it goes quiet
        // for 5 s (the read timeout) or the minute is over.
        let end = Instant::now() + Duration::from_secs(60);
        while Instant::now() < end {
            match tls.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
            while let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                got.drain(..i + 4);
                if tls.write_all(answer).is_err() {
                    return;
                }
            }
        }
    });
    port
}

const EVIL_STATUS: &[u8] = b"HTTP/1.1 404 \x1b]0;pwned\x07\x1b[2J\x1b[1;1H<img src=x onerror=alert(1)>\xe2\x80\xae\xc2\x85\r\nContent-Length: 0\r\nX-Evil: \x1b[31m\r\n\r\n";

#[test]
fn a_download_whose_every_get_fails_is_exit_3_and_the_status_line_is_escaped() {
    let port = evil_https(EVIL_STATUS);
    let dir = tempfile::tempdir().unwrap();
    let (csv, md) = (dir.path().join("r.csv"), dir.path().join("r.md"));
    let db = dir.path().join("h.sqlite");
    let out = cb()
        .args([
            "tls",
            "--connect",
            &format!("127.0.0.1:{port}"),
            "--http-get",
            "/",
            "--no-handshakes",
        ])
        .args(["--budget", "8s", "--db"])
        .arg(&db)
        .arg("--export-csv")
        .arg(&csv)
        .arg("--export-markdown")
        .arg(&md)
        .output()
        .unwrap();
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "every GET failed: {}", all.escape_debug());
    assert!(all.contains("every GET / failed"), "{}", all.escape_debug());
    // The peer's words are there, escaped, not dropped.
    assert!(all.contains("\\x1b]0;pwned\\x07"), "{}", all.escape_debug());
    assert_streams_clean(&out, "tls --connect --http-get");
    for f in [&csv, &md] {
        assert_clean(&std::fs::read(f).unwrap(), &f.display().to_string());
    }
    // The stored run shown again, in every format.
    for args in [
        vec!["report"],
        vec!["report", "--format", "md"],
        vec!["report", "--format", "csv"],
        vec!["history"],
    ] {
        let out = cb().args(&args).arg("--db").arg(&db).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert_streams_clean(&out, &format!("{args:?}"));
    }
}

/// A real TLS server that answers a GET with a 1 MB Content-Length, then drips the
/// body a byte every 100 ms (each read well within `--timeout`), for at most a
/// minute. Through every library (the default, OpenSSL; GnuTLS, whose sessions
/// read the socket through GnuTLS's own I/O; rustls), each read of the download
/// keeps the run's deadline (the stream sets the socket's timeout again per read,
/// capped by what is left), so the run is cut at its deadline with the download
/// not measured; a stream that set the timeout once would wait out the drip.
#[test]
fn a_dripped_download_ends_within_the_budget_through_every_library() {
    let (key, cert) = evil_cert();
    let mut a = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls()).unwrap();
    a.set_private_key(&key).unwrap();
    a.set_certificate(&cert).unwrap();
    let acceptor = Arc::new(a.build());
    let (port, _) = spawn_server(200, move |s| {
        let Ok(mut tls) = acceptor.accept(s) else { return };
        let mut buf = [0u8; 4096];
        let mut got = Vec::new();
        // The scan's handshakes send nothing: those connections end here.
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            match tls.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
            if got.len() > 64 << 10 {
                return;
            }
        }
        if tls.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n").is_err() {
            return;
        }
        for _ in 0..600 {
            if tls.write_all(b"x").and_then(|_| tls.flush()).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    for lib in ["openssl", "gnutls", "rustls"] {
        let t0 = Instant::now();
        let out = cb()
            .args(["tls", "--lib", lib, "--connect", &format!("127.0.0.1:{port}")])
            .args(["--protocols", "1.3", "--suites", "TLS_AES_128_GCM_SHA256", "--groups", "x25519"])
            .args([
                "--no-handshakes",
                "--http-get",
                "/",
                "--timeout",
                "2s",
                "--budget",
                "3s",
                "--no-store",
                "--json",
            ])
            .output()
            .unwrap();
        let took = t0.elapsed();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            took < Duration::from_secs(20),
            "{lib}: the drip held the run {took:?}: {}",
            err.escape_debug()
        );
        // Cut at the deadline (exit 0, status partial), or every GET failed (exit 3).
        assert!(matches!(out.status.code(), Some(0 | 3)), "{lib}: {}", err.escape_debug());
        if out.status.code() == Some(0) {
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["run"]["status"], "partial", "{lib}: {v:#}");
            let gets: Vec<&Value> = v["results"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["subject"]["op"] == "http-get")
                .collect();
            assert_eq!(gets.len(), 1, "{lib}: {v:#}");
            assert_eq!(gets[0]["subject"]["library"], lib, "{lib}: {v:#}");
            assert_ne!(gets[0]["status"], "ok", "{lib}: {v:#}");
        }
    }
}

#[test]
fn a_certificate_full_of_controls_is_measured_and_shown_escaped() {
    let port = evil_https(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
    let out = cb()
        .args(["tls", "--connect", &format!("127.0.0.1:{port}"), "--http-get", "/"])
        .args(["--budget", "8s", "--no-store", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr).escape_debug());
    assert_clean(&out.stderr, "stderr");
    // JSON keeps the peer's bytes as data (escaped by the serializer).
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let gets = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["subject"]["op"] == "http-get" && r["status"] == "ok")
        .count();
    assert!(gets > 0, "the download was measured: {v:#}");
    // The terminal summary of the same kind of run.
    let out = cb()
        .args(["tls", "--connect", &format!("127.0.0.1:{port}"), "--budget", "5s", "--no-store"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr).escape_debug());
    assert_streams_clean(&out, "tls --connect");
}

#[test]
fn a_server_that_answers_controls_instead_of_tls_is_exit_3_and_escaped() {
    let (port, served) = spawn_server(200, |mut s| {
        let _ = s.write_all(format!("{EVIL}\r\n{EVIL}\r\n").as_bytes());
        let mut b = [0u8; 512];
        let _ = s.read(&mut b);
    });
    let out = cb()
        .args(["tls", "--connect", &format!("127.0.0.1:{port}"), "--budget", "4s", "--no-store"])
        .output()
        .unwrap();
    assert!(served.load(Ordering::SeqCst) > 0, "cipherbench never connected");
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr).escape_debug()
    );
    assert_streams_clean(&out, "tls --connect to a non-TLS peer");
}

#[test]
fn a_hostile_ssh_banner_never_reaches_the_terminal_raw() {
    let banners: [&'static str; 3] = [
        // A version line with controls in the software version.
        "SSH-2.0-Evil\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}\r\n",
        // Lines before the version line (RFC 4253 4.2) full of controls.
        "\u{1b}[2J\u{1b}]0;pwned\u{7}\r\nwelcome \u{85}\u{2028}\r\nSSH-2.0-OpenSSH_9.9\u{1b}[31m\r\n",
        // Not SSH at all.
        "HTTP/1.1 400 \u{1b}]0;pwned\u{7}\r\n\r\n",
    ];
    for banner in banners {
        let (port, served) = spawn_server(50, move |mut s| {
            let _ = s.write_all(banner.as_bytes());
            let mut b = [0u8; 4096];
            // Read the client's version and KEXINIT, answer garbage, close.
            let _ = s.read(&mut b);
            let _ = s.write_all(format!("\0\0\0\x0c{EVIL}").as_bytes());
            std::thread::sleep(Duration::from_millis(200));
        });
        let home = tempfile::tempdir().unwrap();
        let out = cb()
            .env("HOME", home.path())
            .args(["ssh", "--host", "nobody@127.0.0.1", "--port", &port.to_string()])
            .args(["--budget", "6s", "--no-store", "-o", "StrictHostKeyChecking=no"])
            .arg("-o")
            .arg(format!("UserKnownHostsFile={}", home.path().join("kh").display()))
            .output()
            .unwrap();
        assert!(served.load(Ordering::SeqCst) > 0, "cipherbench never connected");
        assert!(!out.status.success(), "{}", String::from_utf8_lossy(&out.stderr).escape_debug());
        assert_streams_clean(&out, &format!("ssh --host against {}", banner.escape_debug()));
    }
}

/// A copy of an export with every non-empty string `evil(original)`, except the
/// values of the keys in `keep` (names results are paired by).
fn hostile_copy(v: &Value, key: &str, keep: &[&str], evil: &dyn Fn(&str) -> String) -> Value {
    match v {
        Value::String(s) if !s.is_empty() && !keep.contains(&key) => Value::String(evil(s)),
        Value::Array(a) => Value::Array(a.iter().map(|x| hostile_copy(x, key, keep, evil)).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), hostile_copy(x, k, keep, evil))).collect()),
        other => other.clone(),
    }
}

fn real_export(dir: &Path) -> Value {
    let f = dir.join("real.json");
    let out = cb()
        .args([
            "speed",
            "aes-128-gcm",
            "sha256",
            "--bytes",
            "1k",
            "--budget",
            "2s",
            "--no-store",
            "--export-json",
        ])
        .arg(&f)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap()
}

#[test]
fn compare_and_report_of_a_hostile_export_print_no_control_byte() {
    let dir = tempfile::tempdir().unwrap();
    let real = real_export(dir.path());
    // Free text (CPU model, library versions, reasons, notes) gets the payload;
    // fields that are names keep their value, so results still pair up.
    let keep = [
        "schema",
        "kind",
        "metric",
        "status",
        "algorithm",
        "op",
        "library",
        "level",
        "id",
        "command",
        "started_at",
        "finished_at",
    ];
    let evil = hostile_copy(&real, "", &keep, &|s| format!("{s}{EVIL}\n=cmd|' /C calc'!A0"));
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    std::fs::write(&a, serde_json::to_vec(&real).unwrap()).unwrap();
    std::fs::write(&b, serde_json::to_vec(&evil).unwrap()).unwrap();
    let out = cb().args(["compare"]).arg(&a).arg(&b).output().unwrap();
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&out.stderr).escape_debug()
    );
    assert_streams_clean(&out, "compare");
    // Names changed too: every string, keys aside.
    let all_evil = hostile_copy(&real, "", &[], &|s| format!("{EVIL}{s}"));
    let c = dir.path().join("c.json");
    std::fs::write(&c, serde_json::to_vec(&all_evil).unwrap()).unwrap();
    let out = cb().args(["compare"]).arg(&a).arg(&c).output().unwrap();
    assert_streams_clean(&out, "compare with every string hostile");
}
