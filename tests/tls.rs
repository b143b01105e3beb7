//! `cipherbench tls` against real peers on 127.0.0.1: nginx from Debian,
//! `openssl s_server`, its own loopback server, and sockets that misbehave.

use assert_cmd::Command;
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Stdio;
use std::time::Duration;

mod common;
use common::{json_of, ports, self_signed, start_server, Proc};

fn cb() -> Command {
    common::cb_tls(Duration::from_secs(60))
}

/// A server process and its directory, killed (then removed) when the test ends.
struct Peer {
    _child: Proc,
    _dir: tempfile::TempDir,
}

fn records<'a>(doc: &'a Value, kind: &str) -> Vec<&'a Value> {
    doc["results"].as_array().unwrap().iter().filter(|r| r["kind"] == kind).collect()
}

fn accepted(doc: &Value, field: &str) -> BTreeSet<(String, String)> {
    records(doc, "tls-accept")
        .into_iter()
        .filter(|r| r["median"] == 1.0 && r["subject"].get(field).is_some())
        .filter(|r| field != "protocol" || r["subject"].as_object().unwrap().len() == 1)
        .map(|r| {
            (
                r["subject"]["protocol"].as_str().unwrap().to_string(),
                r["subject"][field].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn set(items: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    items.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

/// The usual server block's opening: TLS on `@PORT` with the prefix's certificate,
/// TLS 1.2 and 1.3, files from `@P/www`.
const TLS_SERVER: &str = "listen 127.0.0.1:@PORT ssl;
    ssl_certificate @P/cert.pem;
    ssl_certificate_key @P/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    root @P/www;";

/// nginx in a temporary prefix; `servers` are server blocks where `@TLS` is
/// `TLS_SERVER`, `@P` the prefix (holding cert.pem, key.pem and www/blob) and
/// `@PORT` the port, one of its own (tried again on another while it is taken);
/// returns that port.
fn start_nginx(servers: &str) -> (u16, Peer) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    self_signed(d, &["-newkey", "rsa:2048"]);
    std::fs::create_dir(d.join("www")).unwrap();
    std::fs::create_dir(d.join("tmp")).unwrap();
    let blob: Vec<u8> = (0..300_000u32).map(|i| (i * 31 + i / 997) as u8).collect();
    std::fs::write(d.join("www/blob"), blob).unwrap();
    // SAFETY: geteuid has no preconditions.
    let user = if unsafe { libc::geteuid() } == 0 { "user root;" } else { "" };
    let p = d.display();
    let conf = format!(
        "{user}
worker_processes 1;
error_log {p}/error.log;
events {{ worker_connections 64; }}
http {{
  access_log off;
  client_body_temp_path {p}/tmp; proxy_temp_path {p}/tmp; fastcgi_temp_path {p}/tmp;
  uwsgi_temp_path {p}/tmp; scgi_temp_path {p}/tmp;
{servers}
}}
",
        // `@PORT` first: `@P` is its prefix.
        servers = servers
            .replace("@TLS", TLS_SERVER)
            .replace("@PORT", "<port>")
            .replace("@P", &p.to_string())
    );
    let (port, child) = start_server("nginx", &d.join("nginx.log"), |port| {
        std::fs::write(d.join("nginx.conf"), conf.replace("<port>", &port.to_string())).unwrap();
        let mut c = std::process::Command::new("nginx");
        c.arg("-p")
            .arg(d)
            .arg("-e")
            .arg(d.join("error.log"))
            .arg("-c")
            .arg(d.join("nginx.conf"))
            .arg("-g")
            .arg(format!("daemon off; pid {p}/nginx.pid;"));
        c
    });
    (port, Peer { _child: child, _dir: dir })
}

/// nginx with a known ssl_ciphers, ssl_protocols and ssl_ecdh_curve: the scan finds
/// exactly that set, no more and no less, and the order nginx imposes.
#[test]
fn nginx_accepts_exactly_its_configured_set() {
    let (port, _nginx) = start_nginx(
        "server {
    @TLS
    ssl_ciphers ECDHE-RSA-CHACHA20-POLY1305:ECDHE-RSA-AES128-GCM-SHA256:AES256-SHA;
    ssl_conf_command Ciphersuites TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256;
    ssl_ecdh_curve X25519:secp384r1;
    ssl_prefer_server_ciphers on;
  }",
    );
    let doc = json_of(
        &cb()
            .args([
                "tls",
                "--connect",
                &format!("127.0.0.1:{port}"),
                "--no-handshakes",
                "--http-get",
                "/blob",
                // 4 s: the scan and five downloads; at 2 s a loaded CI machine
                // (another test binary beside this one) cut the last download.
                "--budget",
                "4s",
                "--timeout",
                "3s",
                "--json",
            ])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    assert_eq!(accepted(&doc, "protocol"), set(&[("TLSv1.2", "TLSv1.2"), ("TLSv1.3", "TLSv1.3")]));
    assert_eq!(
        accepted(&doc, "suite"),
        set(&[
            ("TLSv1.2", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"),
            ("TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
            ("TLSv1.2", "TLS_RSA_WITH_AES_256_CBC_SHA"),
            ("TLSv1.3", "TLS_AES_256_GCM_SHA384"),
            ("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256"),
        ])
    );
    assert_eq!(
        accepted(&doc, "group"),
        set(&[
            ("TLSv1.2", "X25519"),
            ("TLSv1.2", "P-384"),
            ("TLSv1.3", "X25519"),
            ("TLSv1.3", "P-384")
        ])
    );
    // Refusals are recorded, not errors: many suites and groups were offered.
    let refused = records(&doc, "tls-accept").into_iter().filter(|r| r["median"] == 0.0).count();
    assert!(refused > 20, "{refused} refusals");
    let orders = doc["run"]["settings"]["server_order"].as_array().unwrap();
    let tls12 = orders.iter().find(|o| o["protocol"] == "TLSv1.2").unwrap();
    assert_eq!(tls12["honours_client_order"], false);
    assert_eq!(
        tls12["server_preference"],
        serde_json::json!([
            "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_RSA_WITH_AES_256_CBC_SHA"
        ])
    );
    // One HTTP/1.1 download per accepted suite, each a real transfer.
    let bulk = records(&doc, "tls-bulk");
    assert_eq!(bulk.len(), 5);
    for b in bulk {
        assert_eq!(b["status"], "ok", "{b}");
        assert!(b["median"].as_f64().unwrap() > 1e6, "{b}");
    }
}

/// A name-based nginx that refuses handshakes without the right server name: no
/// SNI (an address) is a failed handshake and a clear error; `--sni` gets through.
#[test]
fn failed_handshake_is_a_clear_error_and_sni_is_sent() {
    let (port, _nginx) = start_nginx(
        "ssl_protocols TLSv1.2 TLSv1.3;
  server {
    listen 127.0.0.1:@PORT ssl default_server;
    ssl_reject_handshake on;
  }
  server {
    listen 127.0.0.1:@PORT ssl;
    server_name good.test;
    ssl_certificate @P/cert.pem;
    ssl_certificate_key @P/key.pem;
    root @P/www;
  }",
    );
    let target = format!("127.0.0.1:{port}");
    cb().args(["tls", "--connect", &target, "--timeout", "3s"])
        .assert()
        .code(3)
        .stderr(predicates::str::contains(format!("{target} refused a TLS handshake")));
    let doc = json_of(
        &cb()
            .args([
                "tls",
                "--connect",
                &target,
                "--sni",
                "good.test",
                "--suites",
                "TLS_AES_128_GCM_SHA256",
            ])
            .args(["--no-handshakes", "--timeout", "3s", "--json"])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    assert_eq!(doc["run"]["settings"]["sni"], "good.test");
    assert_eq!(accepted(&doc, "suite"), set(&[("TLSv1.3", "TLS_AES_128_GCM_SHA256")]));
    assert_eq!(accepted(&doc, "protocol"), set(&[("TLSv1.2", "TLSv1.2"), ("TLSv1.3", "TLSv1.3")]));
}

/// `openssl s_server` on a port it binds itself (port 0) and reports (`ACCEPT`,
/// which `-quiet` would not print); returns that port.
fn start_s_server(extra: &[&str], key_args: &[&str]) -> (u16, Peer) {
    let dir = tempfile::tempdir().unwrap();
    self_signed(dir.path(), key_args);
    std::fs::write(dir.path().join("blob"), vec![7u8; 200_000]).unwrap();
    let mut args = vec!["s_server", "-accept", "127.0.0.1:0", "-cert", "cert.pem", "-key", "key.pem"];
    args.extend_from_slice(extra);
    let mut c = std::process::Command::new("openssl");
    c.args(&args).current_dir(dir.path());
    let (port, child) = ports::start_reporting("openssl s_server", &dir.path().join("s_server.log"), c, ports::s_server_port);
    (
        port,
        Peer {
            _child: Proc(child),
            _dir: dir,
        },
    )
}

/// Handshake rates and latency per accepted suite against `openssl s_server`,
/// and HTTP downloads from its -WWW mode.
#[test]
fn s_server_handshakes_and_download() {
    let (port, _s) = start_s_server(
        &[
            "-WWW",
            "-ciphersuites",
            "TLS_AES_128_GCM_SHA256",
            "-cipher",
            "ECDHE-ECDSA-AES256-GCM-SHA384",
        ],
        &["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"],
    );
    let doc = json_of(
        &cb()
            .args([
                "tls",
                "--connect",
                &format!("127.0.0.1:{port}"),
                "--protocols",
                "1.2,1.3",
                "--groups",
                "x25519,p-256",
            ])
            .args(["--http-get", "/blob", "--budget", "2s", "--json"])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    assert_eq!(
        accepted(&doc, "suite"),
        set(&[
            ("TLSv1.2", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"),
            ("TLSv1.3", "TLS_AES_128_GCM_SHA256")
        ])
    );
    let hs = records(&doc, "tls-handshake");
    assert_eq!(
        hs.len(),
        8,
        "rate and latency of full and resumed handshakes for each accepted suite"
    );
    for r in &hs {
        assert_eq!(r["status"], "ok", "{r}");
        if r["metric"] == "handshakes_per_sec" {
            assert!(r["median"].as_f64().unwrap() > 10.0, "{r}");
        } else {
            let (m, p95) = (r["median"].as_f64().unwrap(), r["p95"].as_f64().unwrap());
            assert!(m > 0.0 && m < 1.0 && p95 >= m, "{r}");
        }
    }
    // s_server resumes: TLS 1.2 with a ticket, TLS 1.3 with a PSK from its tickets.
    let resumed: BTreeSet<String> = hs
        .iter()
        .filter(|r| r["subject"]["op"] == "resumed" && r["metric"] == "handshakes_per_sec")
        .map(|r| r["subject"]["protocol"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(resumed, ["TLSv1.2".to_string(), "TLSv1.3".to_string()].into());
    let bulk = records(&doc, "tls-bulk");
    assert_eq!(bulk.len(), 2);
    for b in bulk {
        assert_eq!(b["status"], "ok", "{b}");
        assert_eq!(b["subject"]["path"], "/blob");
        // -WWW answers HTTP/1.0 without a length: the body runs to the close.
        assert_eq!(b["subject"]["bytes"], 200_000, "{b}");
    }
}

/// `tls --lib LIB --connect 127.0.0.1:PORT ARGS --json`, which must succeed: its document.
fn connect_json(lib: &str, port: u16, args: &[&str]) -> Value {
    let out = cb()
        .args(["tls", "--lib", lib, "--connect", &format!("127.0.0.1:{port}")])
        .args(args)
        .arg("--json")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    json_of(&out)
}

/// The groups the s_server of these tests accepts (X25519 and P-256 on both
/// protocols), and each suite's acceptance record made through `lib`: those records.
fn groups_and_library<'a>(doc: &'a Value, lib: &str) -> Vec<&'a Value> {
    assert_eq!(
        accepted(doc, "group"),
        set(&[
            ("TLSv1.2", "X25519"),
            ("TLSv1.2", "P-256"),
            ("TLSv1.3", "X25519"),
            ("TLSv1.3", "P-256")
        ])
    );
    let acc = records(doc, "tls-accept");
    for r in acc.iter().filter(|r| r["subject"].get("suite").is_some()) {
        assert_eq!(r["subject"]["library"], lib, "{r}");
    }
    acc
}

/// The `--http-get /blob` downloads of a run through `lib`, each checked whole
/// (200,000 bytes, ok, through that library): their (protocol, suite), one each.
fn downloads(doc: &Value, lib: &str) -> BTreeSet<(String, String)> {
    let bulk = records(doc, "tls-bulk");
    let got: BTreeSet<(String, String)> = bulk
        .iter()
        .map(|b| {
            assert_eq!(b["status"], "ok", "{b}");
            assert_eq!(b["subject"]["library"], lib, "{b}");
            assert_eq!(b["subject"]["op"], "http-get", "{b}");
            assert_eq!(b["subject"]["path"], "/blob", "{b}");
            assert_eq!(b["subject"]["bytes"], 200_000, "{b}");
            assert!(b["median"].as_f64().unwrap() > 0.0, "{b}");
            let s = &b["subject"];
            (
                s["protocol"].as_str().unwrap().to_string(),
                s["suite"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(got.len(), bulk.len(), "one download per suite: {bulk:#?}");
    got
}

/// `--lib rustls --connect`: the remote pass through rustls against `openssl
/// s_server` limited to one TLS 1.3 suite (ChaCha20), two TLS 1.2 ones (one of
/// them CBC, which rustls lacks) and two groups. rustls finds exactly the suites
/// it can offer that the peer accepts, times their handshakes, reports a group
/// the peer lacks as refused, and records what it cannot offer (TLS 1.0, the CBC
/// suite, ffdhe2048) as unsupported, never accepted or refused. The `--http-get`
/// downloads run through rustls too: the 200 000-byte file that s_server's -WWW
/// mode serves, whole, per accepted suite. GnuTLS goes through the same pass
/// (without `--priority`): all three suites, its downloads whole, a suite it
/// lacks not offered, and the diff of what to change there.
#[test]
fn rustls_connect_finds_what_s_server_accepts() {
    let (port, _s) = start_s_server(
        &[
            "-WWW",
            "-ciphersuites",
            "TLS_CHACHA20_POLY1305_SHA256",
            "-cipher",
            "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-SHA",
            "-groups",
            "X25519:P-256",
        ],
        &["-newkey", "rsa:2048"],
    );
    let doc = connect_json(
        "rustls",
        port,
        &[
            "--groups",
            "x25519,p-256,p-384,x25519mlkem768,ffdhe2048",
            "--http-get",
            "/blob",
            "--budget",
            "3s",
        ],
    );
    assert_eq!(doc["run"]["settings"]["library"], "rustls");
    assert_eq!(
        accepted(&doc, "suite"),
        set(&[
            ("TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
            ("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256")
        ])
    );
    assert_eq!(accepted(&doc, "protocol"), set(&[("TLSv1.2", "TLSv1.2"), ("TLSv1.3", "TLSv1.3")]));
    let acc = groups_and_library(&doc, "rustls");
    let find = |protocol: &str, field: &str, name: &str| {
        acc.iter()
            .find(|r| r["subject"]["protocol"] == protocol && r["subject"][field] == name)
            .copied()
            .unwrap_or_else(|| panic!("no {protocol} {field} {name}"))
    };
    // Groups rustls offers and the peer lacks: refused.
    for (p, g) in [("TLSv1.3", "P-384"), ("TLSv1.3", "X25519MLKEM768"), ("TLSv1.2", "P-384")] {
        let r = find(p, "group", g);
        assert_eq!((r["status"].as_str(), r["median"].as_f64()), (Some("ok"), Some(0.0)), "{r}");
    }
    // What rustls cannot offer: not tried, said.
    for (p, field, name, why) in [
        ("TLSv1.2", "suite", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "CBC"),
        ("TLSv1.3", "group", "ffdhe2048", "ffdhe2048"),
    ] {
        let r = find(p, field, name);
        assert_eq!(r["status"], "unsupported", "{r}");
        assert!(r["reason"].as_str().unwrap().contains(why), "{r}");
    }
    let old = acc
        .iter()
        .find(|r| r["subject"]["protocol"] == "TLSv1" && r["subject"].get("suite").is_none())
        .unwrap();
    assert_eq!(old["status"], "unsupported", "{old}");
    // Full and resumed handshakes per accepted suite, through rustls.
    let hs = records(&doc, "tls-handshake");
    assert_eq!(
        hs.len(),
        8,
        "rate and latency of full and resumed handshakes for each accepted suite"
    );
    for r in &hs {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["subject"]["library"], "rustls", "{r}");
        if r["metric"] == "handshakes_per_sec" {
            assert!(r["median"].as_f64().unwrap() > 10.0, "{r}");
        }
    }
    // The downloads, through rustls: one per accepted suite, each the whole file
    // (-WWW answers HTTP/1.0 without a length: the body runs to the close).
    assert_eq!(
        downloads(&doc, "rustls"),
        accepted(&doc, "suite"),
        "one download per accepted suite"
    );
    // GnuTLS through the same generic pass: its streams download the whole file
    // per accepted suite (it has the CBC suite rustls lacks), what it cannot offer
    // is recorded as not offered, and the run ends with what to change there.
    let doc = connect_json(
        "gnutls",
        port,
        &[
            "--protocols",
            "1.2,1.3",
            "--groups",
            "x25519,p-256,p-384",
            "--http-get",
            "/blob",
            "--budget",
            "4s",
        ],
    );
    assert_eq!(doc["run"]["settings"]["library"], "gnutls");
    let suites = set(&[
        ("TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
        ("TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"),
        ("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256"),
    ]);
    assert_eq!(accepted(&doc, "suite"), suites);
    let acc = groups_and_library(&doc, "gnutls");
    // A suite GnuTLS lacks: not tried, said.
    let aria = acc
        .iter()
        .find(|r| r["subject"]["suite"] == "TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256")
        .unwrap_or_else(|| panic!("no ARIA record in {acc:#?}"));
    assert_eq!(aria["status"], "unsupported", "{aria}");
    assert!(aria["reason"].as_str().unwrap().contains("GnuTLS"), "{aria}");
    let hs = records(&doc, "tls-handshake");
    assert!(hs.iter().any(|r| r["subject"]["op"] == "full" && r["status"] == "ok"), "{hs:#?}");
    for r in &hs {
        assert_eq!(r["subject"]["library"], "gnutls", "{r}");
    }
    assert_eq!(downloads(&doc, "gnutls"), suites, "one download per accepted suite");
    // What to change there, from this scan: the CBC suite it accepts is refused
    // by the policy.
    let diffs = doc["run"]["settings"]["installed_diff"].as_array().expect("installed_diff");
    let nginx = diffs
        .iter()
        .find(|d| d["software"] == "nginx")
        .unwrap_or_else(|| panic!("{diffs:#?}"));
    let offered = nginx["offered"].as_array().unwrap();
    assert!(
        offered
            .iter()
            .any(|o| o["name"] == "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA" && o["allowed"] == false),
        "{nginx:#}"
    );
    // With --priority, GnuTLS walks that string instead: --http-get is for a run without it.
    cb().args([
        "tls",
        "--lib",
        "gnutls",
        "--priority",
        "NORMAL",
        "--connect",
        &format!("127.0.0.1:{port}"),
        "--http-get",
        "/blob",
    ])
    .assert()
    .code(2)
    .stderr(predicates::str::contains("--http-get are for a run without --priority"));
    // One client library, and --priority only where a library takes such text.
    cb().args(["tls", "--lib", "rustls,openssl", "--connect", &format!("127.0.0.1:{port}")])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("one client library").and(predicates::str::contains("--lib rustls")));
    cb().args([
        "tls",
        "--lib",
        "rustls",
        "--priority",
        "NORMAL",
        "--connect",
        &format!("127.0.0.1:{port}"),
    ])
    .assert()
    .code(2)
    .stderr(predicates::str::contains("--priority is a library's own configuration text"));
}

/// nginx without tickets or a session cache does not resume: the resumed subjects
/// say so (unsupported, with the reason) and the run succeeds. A body that nginx
/// sends chunked (sub_filter drops Content-Length) is read to its last chunk.
#[test]
fn nginx_without_resumption_and_a_chunked_body() {
    let (port, _nginx) = start_nginx(
        "server {
    @TLS
    ssl_ciphers ECDHE-RSA-AES128-GCM-SHA256;
    ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;
    ssl_session_tickets off;
    ssl_session_cache off;
    location = /chunked {
      alias @P/www/blob;
      sub_filter_types *;
      sub_filter 'no-such-text' 'x';
    }
  }",
    );
    let target = format!("127.0.0.1:{port}");
    // The body really is chunked.
    let out = std::process::Command::new("openssl")
        .args(["s_client", "-quiet", "-connect", &target])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .and_then(|mut c| {
            c.stdin
                .take()
                .unwrap()
                .write_all(b"GET /chunked HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")?;
            c.wait_with_output()
        })
        .unwrap();
    let head = String::from_utf8_lossy(&out.stdout[..out.stdout.len().min(400)]).to_ascii_lowercase();
    assert!(head.contains("transfer-encoding: chunked"), "{head}");
    let doc = json_of(
        &cb()
            .args(["tls", "--connect", &target, "--groups", "x25519", "--http-get", "/chunked"])
            .args(["--budget", "3s", "--timeout", "3s", "--json"])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    let hs = records(&doc, "tls-handshake");
    assert_eq!(hs.len(), 8, "{hs:?}");
    for r in hs {
        if r["subject"]["op"] == "full" {
            assert_eq!(r["status"], "ok", "{r}");
        } else {
            assert_eq!(r["status"], "unsupported", "{r}");
            let why = r["reason"].as_str().unwrap();
            assert!(why.contains("did not resume") || why.contains("no session ticket"), "{why}");
        }
    }
    let bulk = records(&doc, "tls-bulk");
    assert_eq!(bulk.len(), 2);
    for b in bulk {
        assert_eq!(b["status"], "ok", "{b}");
        assert_eq!(b["subject"]["bytes"], 300_000, "{b}");
        assert!(b["median"].as_f64().unwrap() > 1e6, "{b}");
    }
}

/// The bulk path: the far side hashes what came out of TLS and the client checks
/// it, in both directions; a flipped byte must make the check fail.
#[test]
fn loopback_bulk_is_verified_by_the_far_side() {
    let args = [
        "tls",
        "--protocols",
        "1.3",
        "--suites",
        "TLS_AES_128_GCM_SHA256",
        "--no-handshakes",
        "--verify",
        "--both-directions",
        "--write-size",
        "4k",
        "--budget",
        "3s",
        "--json",
    ];
    let doc = json_of(&cb().args(args).assert().success().get_output().stdout);
    let bulk = records(&doc, "tls-bulk");
    assert_eq!(bulk.len(), 6, "throughput, client and server CPU per GB, per direction");
    for r in &bulk {
        assert_eq!(r["status"], "ok", "{r}");
        assert!(r["median"].as_f64().unwrap() > 0.0, "{r}");
    }
    let dirs: BTreeSet<&str> = bulk.iter().map(|r| r["subject"]["op"].as_str().unwrap()).collect();
    assert_eq!(dirs, ["client-to-server", "server-to-client"].into_iter().collect());

    let doc = json_of(
        &cb()
            .args(args)
            .env("CIPHERBENCH_TEST_TLS_TAMPER", "1")
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    for r in records(&doc, "tls-bulk") {
        assert_eq!(r["status"], "failed", "{r}");
        assert!(r["reason"].as_str().unwrap().contains("SHA-256 mismatch"), "{r}");
    }
}

/// Bulk subjects are measured in interleaved slices, each a fresh connection: every
/// bulk figure is over at least 3 slices, its interval holds its median, the data
/// is still verified by the far side, and the run's settings say so.
#[test]
fn loopback_bulk_is_sliced() {
    let doc = json_of(
        &cb()
            .args([
                "tls",
                "--protocols",
                "1.2",
                "--suites",
                "ECDHE-ECDSA-AES128-GCM-SHA256,ECDHE-ECDSA-CHACHA20-POLY1305",
                "--certs",
                "ecdsa-p256",
                "--groups",
                "x25519",
                "--no-handshakes",
                "--verify",
                // 0.9 s per subject: three slices each.
                "--budget",
                "2s",
                "--json",
            ])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    let sliced = doc["run"]["settings"]["bulk_slices"].as_str().unwrap_or_default();
    assert!(sliced.contains("interleaved") && sliced.contains("fresh connection"), "{sliced}");
    let bulk = records(&doc, "tls-bulk");
    assert_eq!(bulk.len(), 6, "throughput, client and server CPU per GB, per suite");
    let suites: BTreeSet<&str> = bulk.iter().map(|r| r["subject"]["suite"].as_str().unwrap()).collect();
    assert_eq!(suites.len(), 2, "{suites:?}");
    for r in &bulk {
        assert_eq!(r["status"], "ok", "{r}");
        let n = r["samples"].as_u64().unwrap();
        assert!(n >= 3, "{n} slices: {r}");
        let f = |k: &str| r[k].as_f64().unwrap();
        assert!(f("ci95_low") <= f("median") && f("median") <= f("ci95_high"), "{r}");
        assert!(f("min") <= f("median") && f("median") <= f("max") && f("median") > 0.0, "{r}");
    }
}

/// The order of spending at a tiny budget: every suite the policy allows gets
/// at least 3 interleaved rounds (the same round keys) before a refused one is
/// measured (its rounds belong to a later sweep), and the groups' handshakes
/// are measured in rounds too, so that `recommend` can pair them.
#[test]
fn loopback_spends_on_the_allowed_first_in_rounds() {
    let doc = json_of(
        &cb()
            .args(["tls", "--protocols", "1.3", "--certs", "ecdsa-p256", "--groups", "x25519,p-256"])
            // CCM is refused by the default policy, the other two allowed.
            .args([
                "--suites",
                "TLS_AES_128_CCM_SHA256,TLS_AES_128_GCM_SHA256,TLS_CHACHA20_POLY1305_SHA256",
            ])
            // Room for 3 rounds of each class on a loaded CI machine: a run's
            // budget is a hard deadline, and no round starts that it has no room
            // for (at 4 s a busy machine left the groups 2 rounds).
            .args(["--budget", "8s", "--no-store", "--json"])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    // A round key is `KIND-SWEEP#ROUND`; sweeps are numbered in the order they began.
    let rounds = |r: &Value| -> Vec<(String, u64, u64)> {
        r["rounds"]
            .as_array()
            .map(|v| {
                v.iter()
                    .map(|x| {
                        let key = x["round"].as_str().unwrap();
                        let (head, round) = key.rsplit_once('#').unwrap();
                        let (kind, sweep) = head.rsplit_once('-').unwrap();
                        (kind.to_string(), sweep.parse().unwrap(), round.parse().unwrap())
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let rate = |kind: &str, field: &str, name: &str| -> Value {
        records(&doc, kind)
            .into_iter()
            .find(|r| r["metric"] != "seconds" && r["subject"][field] == name && r["subject"]["op"] != "resumed")
            .unwrap_or_else(|| panic!("no {kind} record for {name}"))
            .clone()
    };
    let mut allowed_sweeps = BTreeSet::new();
    let mut allowed_keys = Vec::new();
    for s in ["TLS_AES_128_GCM_SHA256", "TLS_CHACHA20_POLY1305_SHA256"] {
        let r = rate("tls-bulk", "suite", s);
        let k = rounds(&r);
        assert!(k.len() >= 3 && k.iter().all(|x| x.0 == "tls-bulk"), "{r}");
        assert_eq!(k.iter().map(|x| x.2).take(3).collect::<Vec<_>>(), [1, 2, 3], "{r}");
        allowed_sweeps.extend(k.iter().map(|x| x.1));
        allowed_keys.push(k);
    }
    assert_eq!(allowed_sweeps.len(), 1, "both allowed suites in one sweep: {allowed_keys:?}");
    assert_eq!(allowed_keys[0][..3], allowed_keys[1][..3], "the same rounds");
    let refused = rate("tls-bulk", "suite", "TLS_AES_128_CCM_SHA256");
    assert_eq!(refused["status"], "ok", "{refused}");
    let later = rounds(&refused);
    assert!(
        !later.is_empty() && later.iter().all(|x| x.1 > allowed_sweeps.iter().copied().max().unwrap()),
        "{refused}"
    );
    // Groups: full handshakes in rounds, X25519 and P-256 in the same ones.
    let g: Vec<Vec<(String, u64, u64)>> = ["X25519", "P-256"]
        .iter()
        .map(|n| rounds(&rate("tls-handshake", "group", n)))
        .collect();
    for k in &g {
        assert!(k.len() >= 3 && k.iter().all(|x| x.0 == "tls-handshake"), "{g:?}");
    }
    assert_eq!(g[0][..3], g[1][..3], "{g:?}");
}

/// A budget too small for the whole plan leaves no subject out silently: every
/// suite and group asked for has its record, measured or said to be skipped for
/// want of time (as the SSH sweep records its own), and a skip is warned of.
/// (Before, the refused suites the comparison samples were simply left out
/// when the allowed ones had spent the budget.)
#[test]
fn a_cut_loopback_run_records_what_it_did_not_reach() {
    let out = cb()
        .args(["tls", "--protocols", "1.2,1.3", "--certs", "ecdsa-p256,rsa-2048"])
        .args(["--groups", "x25519,p-256,p-384,p-521,ffdhe2048"])
        .args(["--budget", "1s", "--no-store", "--json"])
        .assert()
        .success()
        .get_output()
        .clone();
    let doc = json_of(&out.stdout);
    let rate = |kind: &str| -> Vec<&Value> {
        records(&doc, kind)
            .into_iter()
            .filter(|r| r["metric"] != "seconds" && r["subject"]["op"] != "resumed")
            .collect()
    };
    let bulk = rate("tls-bulk");
    let hands = rate("tls-handshake");
    let named = |rs: &[&Value], field: &str| -> BTreeSet<String> {
        rs.iter().filter_map(|r| r["subject"][field].as_str().map(str::to_string)).collect()
    };
    for (p, suite) in [("TLSv1.3", "TLS_AES_128_GCM_SHA256"), ("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256")] {
        assert!(
            bulk.iter().any(|r| r["subject"]["protocol"] == p && r["subject"]["suite"] == suite),
            "no tls-bulk record for {suite}: {:?}",
            named(&bulk, "suite")
        );
    }
    // The groups the default policy allows (the refused ones are sampled, one per axis).
    for g in ["X25519", "P-256", "P-384"] {
        assert!(
            named(&hands, "group").contains(g),
            "no tls-handshake record for {g}: {:?}",
            named(&hands, "group")
        );
    }
    // Of the refused suites, the ones the comparison samples (one per protocol and
    // axis) get their records too, though the allowed ones spent the budget.
    let refused = |s: &str| ["CCM", "CBC", "ARIA", "CAMELLIA"].iter().any(|x| s.contains(x));
    assert!(named(&bulk, "suite").iter().any(|s| refused(s)), "{:?}", named(&bulk, "suite"));
    let skipped = bulk
        .iter()
        .chain(&hands)
        .filter(|r| r["reason"].as_str().is_some_and(|x| x.starts_with("skipped")))
        .count();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warnings = stderr.matches("tls: the budget was spent before").count();
    assert!(warnings <= 1, "one warning for the run, not one per pass: {stderr}");
    let warned = warnings == 1;
    assert_eq!(
        skipped > 0,
        warned,
        "{skipped} skipped; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Handshakes sweep key exchange × group × certificate on loopback, with
/// resumption, and the terminal report shows the TLS tables.
#[test]
fn loopback_handshakes_sweep_kx_group_and_cert() {
    let doc = json_of(
        &cb()
            .args([
                "tls",
                "--protocols",
                "1.2",
                "--groups",
                "x25519,ffdhe2048",
                "--certs",
                "rsa-2048,ecdsa-p256",
            ])
            .args(["--no-bulk", "--budget", "8s", "--threads", "2", "--json"])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    let rates: Vec<&Value> = records(&doc, "tls-handshake")
        .into_iter()
        .filter(|r| r["metric"] == "handshakes_per_sec")
        .collect();
    let got: BTreeSet<(String, String, String, String)> = rates
        .iter()
        .map(|r| {
            let s = &r["subject"];
            assert_eq!(r["status"], "ok", "{r}");
            assert_eq!(s["threads"], 2);
            let f = |k: &str| s[k].as_str().unwrap_or("-").to_string();
            (f("kex"), f("group"), f("cert"), f("op"))
        })
        .collect();
    let want: BTreeSet<(String, String, String, String)> = [
        ("ECDHE", "X25519", "rsa-2048", "full"),
        ("ECDHE", "X25519", "ecdsa-p256", "full"),
        ("DHE", "ffdhe2048", "rsa-2048", "full"),
        ("RSA", "-", "rsa-2048", "full"),
        ("ECDHE", "X25519", "rsa-2048", "resumed"),
    ]
    .iter()
    .map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), d.to_string()))
    .collect();
    assert_eq!(got, want);

    let out = cb()
        .args([
            "tls",
            "--protocols",
            "1.3",
            "--groups",
            "p-256",
            "--certs",
            "ed25519",
            "--suites",
            "TLS_CHACHA20_POLY1305_SHA256",
            "--budget",
            "1s",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("TLS handshakes"), "{text}");
    assert!(text.contains("TLS bulk"), "{text}");
    assert!(text.contains("TLS_CHACHA20_POLY1305_SHA256"), "{text}");
}

/// `--full-matrix`: every suite × group × certificate gets handshakes (full and
/// resumed) and bulk.
#[test]
fn full_matrix_is_the_cross_product() {
    let doc = json_of(
        &cb()
            .args([
                "tls",
                "--full-matrix",
                "--protocols",
                "1.3",
                "--suites",
                "TLS_AES_128_GCM_SHA256,TLS_CHACHA20_POLY1305_SHA256",
            ])
            .args([
                "--groups",
                "x25519,p-256",
                "--certs",
                "ecdsa-p256,ed25519",
                "--write-size",
                "4k",
                "--budget",
                "6s",
                "--json",
            ])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    let mut seen = BTreeSet::new();
    for r in doc["results"].as_array().unwrap() {
        assert_eq!(r["status"], "ok", "{r}");
        if r["metric"] == "handshakes_per_sec" || r["metric"] == "bytes_per_sec" {
            let s = &r["subject"];
            seen.insert(format!("{} {} {} {} {}", r["kind"], s["suite"], s["group"], s["cert"], s["op"]));
        }
    }
    // 2 suites × 2 groups × 2 certs × (full, resumed, bulk).
    assert_eq!(seen.len(), 24, "{seen:#?}");
}

#[test]
fn refused_port_is_a_clear_error() {
    let (_closed, port) = ports::closed_port();
    cb().args(["tls", "--connect", &format!("127.0.0.1:{port}"), "--timeout", "2s"])
        .assert()
        .code(3)
        .stderr(predicates::str::contains(format!("cannot connect to 127.0.0.1:{port}")).and(predicates::str::contains("refused")));
}

/// A plain TCP service that answers a ClientHello with text, and one that never answers.
#[test]
fn non_tls_and_silent_ports_are_clear_errors() {
    let garbage = TcpListener::bind("127.0.0.1:0").unwrap();
    let gport = garbage.local_addr().unwrap().port();
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let sport = silent.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in garbage.incoming().take(4) {
            let Ok(mut s) = s else { continue };
            let mut b = [0u8; 512];
            let _ = s.read(&mut b);
            let _ = s.write_all(b"220 mail.example ESMTP this is not TLS at all\r\n");
            std::thread::sleep(Duration::from_millis(300));
        }
    });
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in silent.incoming().take(4) {
            held.push(s);
        }
    });
    cb().args(["tls", "--connect", &format!("127.0.0.1:{gport}"), "--timeout", "2s"])
        .assert()
        .code(3)
        .stderr(predicates::str::contains(format!("127.0.0.1:{gport} does not speak TLS")));
    cb().args(["tls", "--connect", &format!("127.0.0.1:{sport}"), "--timeout", "1s"])
        .assert()
        .code(3)
        .stderr(predicates::str::contains(format!(
            "127.0.0.1:{sport} accepted the connection but sent nothing for"
        )));
}

#[test]
fn unknown_names_exit_2_with_suggestions() {
    cb().args(["tls", "--suites", "TLS_AES_128_GCM_SHA265"]).assert().code(2).stderr(
        predicates::str::contains("unknown TLS suite 'TLS_AES_128_GCM_SHA265'").and(predicates::str::contains("TLS_AES_128_GCM_SHA256")),
    );
    cb().args(["tls", "--suites", "ecdhe-rsa-aes128-gcm-sha265"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("ECDHE-RSA-AES128-GCM-SHA256"));
    cb().args(["tls", "--groups", "x2559"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("x25519"));
    cb().args(["tls", "--connect", "127.0.0.1"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("HOST:PORT"));
}

use predicates::prelude::PredicateBooleanExt;
