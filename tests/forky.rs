//! The binary under test inside a Debian forky root (issue 38: testing today, the
//! next stable): against forky's OpenSSL 3.6, GnuTLS 3.8.13, OpenSSH 10.6 (whose
//! `sshd -T` prints its keywords capitalised), nginx 1.30, Apache, HAProxy 3.2,
//! stunnel and NZBGet 21, with the checks tests/debian13.rs makes in Debian 13 (the
//! shared ones in tests/common/debian.rs). The root is built once by
//! `scripts/debian-root.sh forky` (three to four minutes from a near mirror) and
//! cached under `/var/cache/cipherbench/forky-root` (`CIPHERBENCH_FORKY_ROOT`);
//! with it cached this file takes about a minute and a half: one main-job run
//! serves every assertion on the emitted lines.
//!
//! Needs root (debootstrap, chroot, mount): otherwise every test prints a
//! `skipped:` line saying so. As root, a root that cannot be built skips with the
//! script's error, and fails under `CI=true`.

#[path = "common/debian.rs"]
mod debian;
#[path = "common/ports.rs"]
mod ports;

use debian::{json, mlkem_kex_measured_and_first, nginx_lines_hold, servers_take_the_lines, sshd_lines_hold, text, Root, BIN};
use serde_json::Value;
use std::sync::Mutex;
use std::time::Duration;

/// The tests measure: one at a time, so none times the others' load.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn root() -> Option<(Root, std::sync::MutexGuard<'static, ()>)> {
    let guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let r = Root::get(&debian::FORKY)?;
    r.install_binary(BIN);
    Some((r, guard))
}

/// The lines of `target`'s recommendation in `doc`.
fn lines_of(doc: &Value, target: &str) -> Vec<String> {
    let rec = doc["recommendations"].as_array().unwrap().iter().find(|x| x["target"] == target);
    let rec = rec.unwrap_or_else(|| panic!("no lines for {target}: {:#}", doc["recommendations"]));
    rec["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

/// One main job (`run --policy modern`, 30 s) in forky, and every assertion on it:
/// it ends within its budget, on forky's OpenSSL 3.6 and GnuTLS 3.8; OpenSSH 10's
/// hybrid kex is measured and first; and its lines hold in forky's own software.
/// sshd (OpenSSH 10.6): within the defaults `sshd -T` prints, none of the
/// finite-field Diffie-Hellman (group14, group16, group18, group exchange) its
/// sshd no longer offers, `sshd -t` takes them and ssh-audit finds no FAIL;
/// nginx 1.30: `nginx -t`, the hybrid for a default and an X25519-first client,
/// testssl.sh; Apache, HAProxy and stunnel: their own checks, a start and the
/// hybrid; GnuTLS 3.8.13: its own parser.
#[test]
fn main_job_within_its_budget_and_its_lines_hold_in_forky() {
    let Some((r, _g)) = root() else { return };
    let dir = r.tempdir();
    let d = dir.inside.clone();
    let (out, took) = r.run(
        &[
            BIN,
            "run",
            "--budget",
            "30s",
            "--policy",
            "modern",
            "--for",
            "sshd,nginx,gnutls,apache,haproxy,stunnel",
            "--db",
            &format!("{d}/history.sqlite"),
            "--json",
        ],
        Duration::from_secs(90),
    );
    assert!(out.status.success(), "{}", text(&out));
    // The budget is a hard deadline: 30 s and 10%.
    assert!(
        took <= Duration::from_secs(33),
        "the main job took {took:.1?} for --budget 30s\n{}",
        text(&out)
    );
    let doc = json(&out);
    let libraries = &doc["run"]["libraries"];
    let openssl = libraries["openssl"].as_str().unwrap_or_default();
    // 3.6 when the root was built (2026-11); forky moves on, the root is rebuilt on
    // a new machine from the mirror as it then is: 3.6 or later.
    assert!(
        version_at_least(openssl.strip_prefix("OpenSSL "), (3, 6)),
        "not forky's OpenSSL: {libraries}"
    );
    assert!(libraries["gnutls"].as_str().is_some_and(|v| v.starts_with("3.8")), "{libraries}");
    mlkem_kex_measured_and_first(&doc, &out);

    // OpenSSH 10.6: the lines come from the installed sshd's own lists, read with
    // its capitalised keywords; nothing its default dropped is added back.
    let sshd = lines_of(&doc, "sshd");
    for dropped in [
        "diffie-hellman-group14",
        "diffie-hellman-group16",
        "diffie-hellman-group18",
        "diffie-hellman-group-exchange",
    ] {
        assert!(!sshd.iter().any(|l| l.contains(dropped)), "{dropped} re-added: {sshd:?}");
    }
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!said.contains("printed no ciphers line"), "sshd -T not read:\n{said}");
    sshd_lines_hold(&r, &d, &sshd);

    nginx_lines_hold(&r, &dir, &lines_of(&doc, "nginx"));
    // The hybrid, then X25519, then the NIST curves in measured order (or tied).
    let tiered = ["secp256r1:secp384r1", "secp384r1:secp256r1"].map(|n| format!("*X25519MLKEM768/*x25519:{n}"));
    for target in ["apache", "haproxy", "stunnel"] {
        let ok = lines_of(&doc, target)
            .iter()
            .any(|l| l.rsplit(' ').next().is_some_and(|v| tiered.iter().any(|t| t == v)));
        assert!(ok, "{target}: {:?}", lines_of(&doc, target));
    }
    servers_take_the_lines(
        &r,
        &dir,
        [&lines_of(&doc, "apache"), &lines_of(&doc, "haproxy"), &lines_of(&doc, "stunnel")],
    );

    let gnutls = lines_of(&doc, "gnutls");
    let (out, _) = r.run(&["gnutls-cli", "--priority", &gnutls[0], "-l"], Duration::from_secs(30));
    assert!(
        out.status.success() && text(&out).contains("Cipher suites"),
        "{gnutls:?}: {}",
        text(&out)
    );
}

#[test]
fn check_reads_forky_sshd() {
    let Some((r, _g)) = root() else { return };
    debian::check_reads_sshd(&r);
}

#[test]
fn check_reads_nginx_with_forky_tls_defaults() {
    let Some((r, _g)) = root() else { return };
    debian::check_reads_nginx(&r);
}

/// NZBGet 21 as forky ships it gives ServerX.Cipher to OpenSSL's TLS ≤1.2 API
/// only. The answer for a CPU without AES instructions (`--cpu-caps no-aesni`:
/// ChaCha20 first, not OpenSSL's default AES-256-GCM) is validated by what the
/// real NZBGet negotiates: `recommend` runs NZBGet's own server test with the
/// emitted lines against a private news server on 127.0.0.1 (`serve-nntp`'s
/// server, which honours the client's order) and calls the lines accepted only
/// when NZBGet negotiated the answer's first TLS 1.3 choice. That choice is not
/// OpenSSL's default: an NZBGet the lines did not steer would be refused. (A
/// forky that has moved on to NZBGet 25.4 or later, which takes TLS 1.3 names in
/// ServerX.Cipher, gets no OpenSSL configuration, and the same server test.)
#[test]
fn nzbget_21_negotiates_the_answer_in_forky() {
    let Some((r, _g)) = root() else { return };
    let dir = r.tempdir();
    let d = &dir.inside;
    let (out, _) = r.run(
        &["/bin/sh", "-c", "nzbget -v; openssl ciphers -s -stdname -tls1_3"],
        Duration::from_secs(30),
    );
    assert!(out.status.success(), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    let nzbget = said
        .lines()
        .find_map(|l| l.strip_prefix("nzbget version: "))
        .unwrap_or_else(|| panic!("no NZBGet in forky: {said}"));
    // NZBGet 25.4 and later take the TLS 1.3 names in ServerX.Cipher themselves.
    let before_25_4 = !version_at_least(Some(nzbget), (25, 4));
    let default13 = said
        .lines()
        .last()
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("{said}"))
        .to_string();

    let db = format!("{d}/nzbget.sqlite");
    let (out, _) = r.run(
        &[
            BIN,
            "speed",
            "aes-128-gcm",
            "aes-256-gcm",
            "chacha20-poly1305",
            "--cpu-caps",
            "no-aesni",
            "--bytes",
            "16k",
            "--budget",
            "6s",
            "--quiet",
            "--db",
            &db,
        ],
        Duration::from_secs(60),
    );
    assert!(out.status.success(), "{}", text(&out));
    let (out, _) = r.run(
        &[BIN, "recommend", "--json", "--for", "nzbget", "--db", &db],
        Duration::from_secs(90),
    );
    assert!(out.status.success(), "{}", text(&out));
    let doc = json(&out);
    let rec = doc["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["target"] == "nzbget")
        .unwrap_or_else(|| panic!("no nzbget recommendation: {doc:#}"));
    let first13 = rec["choice"]["tls13_suites"][0].as_str().unwrap_or_else(|| panic!("{rec:#}"));
    assert_ne!(
        first13, default13,
        "the answer's first TLS 1.3 choice is OpenSSL's default: this test could not tell them apart"
    );
    let lines: Vec<&str> = rec["lines"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert_eq!(
        lines.contains(&"# /etc/nzbget/openssl-cipherbench.cnf"),
        before_25_4,
        "an OpenSSL configuration for NZBGet {nzbget} or not: {lines:#?}"
    );
    let v = &rec["validated"];
    assert_eq!(v["status"], "accepted", "{v:#}\n{lines:#?}");
    let detail = v["detail"].as_str().unwrap_or_default();
    // "openssl ciphers; NZBGet's server test negotiates TLSv1.3
    // TLS_CHACHA20_POLY1305_SHA256 over X25519MLKEM768 (the answer's first choice)".
    assert!(
        detail.contains(&format!("NZBGet's server test negotiates TLSv1.3 {first13} ")) && detail.ends_with("(the answer's first choice)"),
        "{v:#}"
    );
}

/// Whether `version` ("3.6.5 29 Sep 2026", "21.0") is `at_least` (major, minor).
fn version_at_least(version: Option<&str>, at_least: (u32, u32)) -> bool {
    let Some(v) = version.and_then(|v| v.split_whitespace().next()) else {
        return false;
    };
    let mut n = v.split(['.', '-', '~']).map(|x| x.parse::<u32>().unwrap_or(0));
    (n.next().unwrap_or(0), n.next().unwrap_or(0)) >= at_least
}
