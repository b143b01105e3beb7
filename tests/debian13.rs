//! The binary under test inside a Debian 13 (trixie) root (issue 27): against
//! Debian 13's OpenSSL 3.5, GnuTLS 3.8, OpenSSH 10 and nginx, as a user who
//! upgraded would run it. The root is built once by `scripts/debian13-root.sh`
//! (about a minute and a half from a near mirror) and cached under
//! `/var/cache/cipherbench/debian13-root`; with it cached this file takes about two minutes.
//!
//! Needs root (debootstrap, chroot, mount): otherwise every test prints a
//! `skipped:` line saying so. As root, a root that cannot be built skips with the
//! script's error, and fails under `CI=true`.
//!
//! The host's binary runs there as it is: it links libssl.so.3 and libcrypto.so.3,
//! which Debian 13 ships as libssl3t64 under the same soname, and loads
//! libgnutls.so.30 at run time.

#[path = "common/debian13.rs"]
mod debian13;
#[path = "common/ports.rs"]
mod ports;

use debian13::{negotiated_group, nginx_conf, servers_take_the_lines, text, write_server_confs, Root, CERT};
use serde_json::Value;
use std::sync::Mutex;
use std::time::Duration;

/// The tests measure: one at a time, so none times the others' load.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Where the binary under test is put inside the root.
const BIN: &str = "/usr/local/bin/cipherbench";

fn root() -> Option<(Root, std::sync::MutexGuard<'static, ()>)> {
    let guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let r = Root::get()?;
    r.install_binary(BIN);
    Some((r, guard))
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(out)))
}

#[test]
fn host_binary_runs_against_debian13_libraries() {
    let Some((r, _g)) = root() else { return };
    let (out, _) = r.run(&[BIN, "--version"], Duration::from_secs(30));
    assert!(out.status.success(), "{}", text(&out));

    let (out, _) = r.run(&[BIN, "list", "tls"], Duration::from_secs(60));
    assert!(out.status.success(), "{}", text(&out));
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(t.starts_with("OpenSSL 3.5"), "not Debian 13's OpenSSL: {}", text(&out));
    assert!(t.contains("TLS_AES_128_GCM_SHA256"), "{t}");

    let (out, _) = r.run(&[BIN, "list", "ssh"], Duration::from_secs(60));
    assert!(out.status.success(), "{}", text(&out));
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(t.starts_with("OpenSSH_10."), "not Debian 13's OpenSSH: {}", text(&out));
    assert!(t.contains("mlkem768x25519-sha256"), "OpenSSH 10's default kex not listed: {t}");
}

/// `ssh --host` against the root's sshd: it ran, negotiated what `ssh -v` did, and
/// the server's kex list it read is the server's (OpenSSH 10's sshd offers no
/// finite-field Diffie-Hellman; its client, whose proposal `ssh -vv` prints a
/// second time after NEWKEYS, still does).
fn ssh_host_reads_the_server(real: &std::process::Output, dir: &debian13::InsideDir, kex: &str, cipher: &str) {
    let said = String::from_utf8_lossy(&real.stdout);
    let log = std::fs::read_to_string(dir.path().join("sshd.log")).unwrap_or_default();
    assert!(said.contains("host=0"), "ssh --host failed: {}\nsshd: {log}", text(real));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("host.json")).unwrap()).unwrap();
    let measured = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["status"] == "ok" && x["subject"]["kex"] == kex);
    assert!(measured, "{kex} not measured against the root's sshd: {:#}", doc["results"]);
    let diff = &doc["run"]["settings"]["installed_diff"][0];
    assert_eq!(diff["now"]["kex"], kex, "{diff:#}");
    assert_eq!(diff["now"]["cipher"], cipher, "{diff:#}");
    let offered: Vec<&str> = diff["offered"]
        .as_array()
        .unwrap_or_else(|| panic!("{diff:#}"))
        .iter()
        .filter(|g| g["list"] == "ssh_kex")
        .filter_map(|g| g["name"].as_str())
        .collect();
    assert!(offered.contains(&kex), "{offered:?}");
    assert!(
        !offered.iter().any(|k| k.starts_with("diffie-hellman")),
        "the client's list: {offered:?}"
    );
}

#[test]
fn main_job_ends_within_its_budget_in_debian13() {
    let Some((r, _g)) = root() else { return };
    let (out, took) = r.run(&[BIN, "run", "--budget", "30s", "--no-store", "--json"], Duration::from_secs(90));
    assert!(out.status.success(), "{}", text(&out));
    // The budget is a hard deadline: 30 s and 10%.
    assert!(
        took <= Duration::from_secs(33),
        "the main job took {took:.1?} for --budget 30s\n{}",
        text(&out)
    );
    let d = json(&out);
    let openssl = d["run"]["libraries"]["openssl"].as_str().unwrap_or_default();
    assert!(openssl.starts_with("OpenSSL 3.5"), "{openssl}");
    assert!(
        d["run"]["libraries"]["gnutls"].as_str().is_some_and(|v| v.starts_with("3.8")),
        "{}",
        d["run"]["libraries"]
    );

    // OpenSSH 10's default key exchange, hybrid post-quantum, is measured, and comes
    // first in the lines for sshd and ssh.
    let measured = d["results"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["kind"] == "ssh-handshake" && x["subject"]["kex"] == "mlkem768x25519-sha256" && x["status"] == "ok");
    assert!(measured, "mlkem768x25519-sha256 not measured:\n{}", text(&out));
    for rec in d["recommendations"].as_array().unwrap() {
        if rec["protocol"] == "ssh" {
            assert_eq!(
                rec["choice"]["ssh_kex"][0], "mlkem768x25519-sha256",
                "{}: {}",
                rec["target"], rec["lines"]
            );
        }
    }
}

#[test]
fn check_reads_debian13_sshd() {
    let Some((r, _g)) = root() else { return };
    let (out, took) = r.run(
        &[BIN, "check", "--for", "sshd", "--budget", "10s", "--no-store", "--json"],
        Duration::from_secs(60),
    );
    // 0: nothing to change; 1: findings (Debian 13's sshd still offers umac-64 and
    // hmac-sha1, which policy intermediate refuses).
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", text(&out));
    assert!(took <= Duration::from_secs(11), "check took {took:.1?} for --budget 10s");
    let d = json(&out);
    let diff = &d["diffs"][0];
    assert_eq!(diff["software"], "sshd", "{diff:#}");
    assert_eq!(diff["file"], "/etc/ssh/sshd_config", "{diff:#}");
    // Nothing OpenSSH 10 dropped comes back (its finite-field Diffie-Hellman).
    let adds = diff["adds"].as_array().unwrap_or_else(|| panic!("{diff:#}"));
    assert!(!adds.iter().any(|a| a.as_str().unwrap().contains("diffie-hellman")), "{adds:?}");

    // "now" is what Debian 13's ssh really negotiates with Debian 13's sshd; and
    // `ssh --host` against that sshd (its own configuration, a private port, a key
    // for root) reads the server's proposal, not the client's second one.
    let dir = r.tempdir();
    let (_, real) = r.run_serving(Duration::from_secs(60), |[port]| {
        format!(
            "cd {d}; mkdir -p /run/sshd; rm -f user user.pub; ssh-keygen -q -t ed25519 -N '' -f {d}/user && cp {d}/user.pub {d}/authorized_keys; \
             serve sshd {port} /usr/sbin/sshd -D -e -o ListenAddress=127.0.0.1 -o Port={port} -o PidFile={d}/sshd.pid \
             -o AuthorizedKeysFile={d}/authorized_keys -o StrictModes=no -o UsePAM=no; \
             ssh -v -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
             -o PreferredAuthentications=none -p {port} nobody@127.0.0.1 true; \
             {BIN} ssh --json --no-store --host root@127.0.0.1 --port {port} --identity {d}/user \
             -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null --budget 8s > {d}/host.json; echo host=$?; kill $sshd_pid",
            d = dir.inside
        )
    });
    let err = String::from_utf8_lossy(&real.stderr);
    let kex = err
        .lines()
        .find_map(|l| l.split("kex: algorithm: ").nth(1))
        .unwrap_or_else(|| panic!("no kex in ssh -v:\n{err}"))
        .trim();
    let cipher = err
        .lines()
        .find_map(|l| l.split("kex: client->server cipher: ").nth(1))
        .and_then(|v| v.split_whitespace().next())
        .unwrap_or_else(|| panic!("no cipher in ssh -v:\n{err}"));
    assert_eq!(kex, "mlkem768x25519-sha256", "OpenSSH 10's default");
    assert_eq!(diff["now"]["kex"], kex, "{diff:#}");
    assert_eq!(diff["now"]["cipher"], cipher, "{diff:#}");
    ssh_host_reads_the_server(&real, &dir, kex, cipher);

    // The lines are accepted by Debian 13's sshd.
    let lines: Vec<&str> = diff["lines"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    // Policy intermediate accepts every kex of OpenSSH 10's sshd defaults: the line
    // would restate them, so it is the note (else the hybrid comes first).
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("KexAlgorithms mlkem768x25519-sha256,") || *l == "# KexAlgorithms: the default already does this"),
        "{lines:?}"
    );
    let installed = std::fs::read_to_string(r.path("/etc/ssh/sshd_config")).unwrap();
    let file = dir.path().join("sshd_config");
    // Global lines go before the first Match block: Debian's file has none active.
    std::fs::write(&file, format!("{}\n{}\n", lines.join("\n"), installed)).unwrap();
    let t = format!("{}/sshd_config", dir.inside);
    let (out, _) = r.run(&["/usr/sbin/sshd", "-t", "-f", &t], Duration::from_secs(30));
    assert!(out.status.success(), "sshd -t refused the lines {lines:?}:\n{}", text(&out));
}

#[test]
fn check_reads_nginx_with_debian13_tls_defaults() {
    let Some((r, _g)) = root() else { return };
    let dir = r.tempdir();
    let d = dir.inside.clone();
    let defaults = "ssl_protocols TLSv1.2 TLSv1.3;\n        ssl_prefer_server_ciphers off;";
    let (out, _) = r.run(
        &[
            "openssl",
            "req",
            "-x509",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-keyout",
            &format!("{d}/key.pem"),
            "-out",
            &format!("{d}/cert.pem"),
        ],
        Duration::from_secs(30),
    );
    assert!(out.status.success(), "{}", text(&out));
    let conf = format!("{d}/nginx.conf");

    // `check` while the real nginx 1.26 runs: its "now" is a real handshake by
    // OpenSSL 3.5's default client; then what `openssl s_client` gets.
    let ([port], real) = r.run_serving(Duration::from_secs(60), |[port]| {
        std::fs::write(dir.path().join("nginx.conf"), nginx_conf(&d, port, defaults)).unwrap();
        format!(
            "cd {d}; serve nginx {port} nginx -c {conf} -g 'daemon off;' || exit 1; \
             t0=$(date +%s%N); {BIN} check --for nginx --budget 8s --no-store --json --config-from {conf} > {d}/check.json; \
             echo check=$? took-ms=$(( ($(date +%s%N) - t0) / 1000000 )); \
             echo Q | openssl s_client -connect 127.0.0.1:{port} 2>&1; kill $nginx_pid"
        )
    });
    let s = String::from_utf8_lossy(&real.stdout);
    assert!(s.contains("check=0") || s.contains("check=1"), "{}", text(&real));
    let took: u64 = s
        .split_whitespace()
        .find_map(|w| w.strip_prefix("took-ms="))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{}", text(&real)));
    // The user sees the budget and the documented grace (docs/exit-codes.md).
    assert!(took <= 12_000, "check took {took} ms for --budget 8s");
    let j: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("check.json")).unwrap()).unwrap();
    let diff = &j["diffs"][0];
    assert_eq!(diff["software"], "nginx", "{diff:#}");
    let peer = diff["peer"].as_str().unwrap_or_default();
    assert!(peer.contains(&format!("a real handshake with 127.0.0.1:{port}")), "{diff:#}");
    let suite = s
        .lines()
        .find_map(|l| l.split(", Cipher is ").nth(1))
        .unwrap_or_else(|| panic!("no handshake with nginx:\n{}", text(&real)))
        .trim();
    assert_eq!(diff["now"]["version"], "TLSv1.3", "{diff:#}");
    assert_eq!(diff["now"]["suite"], suite, "{diff:#}");
    // and its group: OpenSSL 3.5's default client and server settle on the hybrid.
    let group = s.lines().find_map(|l| l.strip_prefix("Negotiated TLS1.3 group: "));
    assert_eq!(group, Some("X25519MLKEM768"), "{s}");
    assert_eq!(diff["now"]["group"], "X25519MLKEM768", "{diff:#}");

    // nginx stopped: the model, said so, still on the hybrid.
    let (out, _) = r.run(
        &[
            BIN,
            "check",
            "--for",
            "nginx",
            "--budget",
            "5s",
            "--no-store",
            "--json",
            "--config-from",
            &conf,
        ],
        Duration::from_secs(30),
    );
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", text(&out));
    let modelled = &json(&out)["diffs"][0];
    assert!(modelled["peer"].as_str().unwrap_or_default().contains("modelled"), "{modelled:#}");
    assert_eq!(modelled["now"]["group"], "X25519MLKEM768", "{modelled:#}");

    // The recommended lines in place of the defaults pass `nginx -t`.
    let lines: Vec<&str> = diff["lines"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(!lines.is_empty(), "{diff:#}");
    std::fs::write(dir.path().join("after.conf"), nginx_conf(&d, port, &lines.join("\n        "))).unwrap();
    let (t, _) = r.run(&["nginx", "-t", "-c", &format!("{d}/after.conf")], Duration::from_secs(30));
    assert!(t.status.success(), "nginx -t refused {lines:?}:\n{}", text(&t));
}

/// `check` asks running Apache, HAProxy and stunnel servers (Debian 13's TLS
/// defaults) at the addresses their own configuration gives: a real handshake by
/// OpenSSL 3.5's default client (the hybrid with Apache and HAProxy; stunnel's own
/// default list has none); a stopped one is the model, said so.
#[test]
fn check_asks_running_apache_haproxy_and_stunnel() {
    let Some((r, _g)) = root() else { return };
    let dir = r.tempdir();
    let d = &dir.inside;
    let check =
        |t: &str, f: &str| format!("{BIN} check --for {t} --config-from {d}/{f} --budget 3s --no-store --json > {t}.json; echo {t}=$?;");
    let (ports, out) = r.run_serving(Duration::from_secs(90), |ports| {
        write_server_confs(&dir, [&[], &[], &[]], ports);
        format!(
            "cd {d}; {CERT} serve apache {} apache2 -f {d}/apache.conf -DFOREGROUND; serve haproxy {} haproxy -db -f haproxy.cfg; \
             serve stunnel {} stunnel stunnel.conf; {} {} {} kill $apache_pid $haproxy_pid $stunnel_pid; wait; {}",
            ports[0],
            ports[1],
            ports[2],
            check("apache", "apache.conf"),
            check("haproxy", "haproxy.cfg"),
            check("stunnel", "stunnel.conf"),
            check("haproxy", "haproxy.cfg").replace("haproxy.json", "stopped.json")
        )
    });
    let diff = |f: &str| -> Value {
        let j: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join(f)).unwrap_or_default())
            .unwrap_or_else(|e| panic!("{f}: {e}\n{}", text(&out)));
        j["diffs"][0].clone()
    };
    for (t, port, group) in [
        ("apache", ports[0], "X25519MLKEM768"),
        ("haproxy", ports[1], "X25519MLKEM768"),
        ("stunnel", ports[2], "x25519"),
    ] {
        let x = diff(&format!("{t}.json"));
        let peer = x["peer"].as_str().unwrap_or_default();
        assert!(peer.contains(&format!("a real handshake with 127.0.0.1:{port}")), "{t}: {x:#}");
        assert_eq!(x["now"]["group"], group, "{t}: {x:#}");
    }
    let stopped = diff("stopped.json");
    let peer = stopped["peer"].as_str().unwrap_or_default();
    assert!(
        peer.contains(&format!("modelled (127.0.0.1:{} not reachable", ports[1])),
        "{stopped:#}"
    );
}

/// F1: OpenSSL 3.5 has X25519MLKEM768 and uses it by default; the loopback sweep
/// finds it in the library and measures it (handshakes/s, CPU, the ClientHello's
/// bytes).
#[test]
fn tls_measures_x25519mlkem768_in_debian13() {
    let Some((r, _g)) = root() else { return };
    let (out, _) = r.run(&[BIN, "tls", "--budget", "10s", "--no-store", "--json"], Duration::from_secs(60));
    assert!(out.status.success(), "{}", text(&out));
    let j = json(&out);
    // GnuTLS 3.8.9's groups are stored even in a cut run: none is ML-KEM (the TLS table says so).
    let gnutls = j["run"]["capabilities"]["gnutls_groups"]
        .as_array()
        .unwrap_or_else(|| panic!("{:#}", j["run"]));
    assert!(
        gnutls.iter().any(|g| g == "GROUP-X25519") && !gnutls.iter().any(|g| g.to_string().contains("MLKEM")),
        "{gnutls:?}"
    );
    let results = j["results"].as_array().unwrap_or_else(|| panic!("no results: {j:#}"));
    let hs = |group: &str| {
        results
            .iter()
            .find(|x| {
                x["kind"] == "tls-handshake"
                    && x["metric"] == "handshakes_per_sec"
                    && x["subject"]["group"] == group
                    && x["subject"]["op"] == "full"
            })
            .unwrap_or_else(|| panic!("no {group} handshake measured: {}", text(&out)))
    };
    let pq = hs("X25519MLKEM768");
    assert_eq!(pq["status"], "ok", "{pq:#}");
    assert!(pq["median"].as_f64().is_some_and(|m| m > 0.0), "{pq:#}");
    assert!(pq["cpu_median"].as_f64().is_some(), "{pq:#}");
    let pq_hello = pq["client_hello_bytes"].as_u64().unwrap_or_else(|| panic!("{pq:#}"));
    let classic_hello = hs("X25519")["client_hello_bytes"].as_u64().unwrap();
    // One key share each (the group asked for): 1,216 bytes of X25519MLKEM768 key
    // share against 32 of X25519's (1394 B against 218 B on 3.5.x).
    assert!(
        pq_hello > 1200 && pq_hello > classic_hello + 1000,
        "{pq_hello} against {classic_hello}"
    );
    // The HelloRetryRequest: an X25519 key share first, the server taking only
    // the hybrid; both ClientHellos are counted.
    let hrr = results
        .iter()
        .find(|x| {
            x["kind"] == "tls-handshake"
                && x["metric"] == "handshakes_per_sec"
                && x["subject"]["group"] == "X25519MLKEM768"
                && x["subject"]["op"] == "hrr"
        })
        .unwrap_or_else(|| panic!("no HelloRetryRequest measured: {}", text(&out)));
    assert_eq!(hrr["status"], "ok", "{hrr:#}");
    assert!(hrr["median"].as_f64().is_some_and(|m| m > 0.0), "{hrr:#}");
    assert!(hrr["cpu_median"].as_f64().is_some(), "{hrr:#}");
    let retried = hrr["client_hello_bytes"].as_u64().unwrap_or_else(|| panic!("{hrr:#}"));
    assert!(retried > pq_hello + 100, "two ClientHellos {retried} B against one {pq_hello} B");
}

/// OpenSSL 3.5 has ML-KEM and ML-DSA: `speed` times them per operation, after
/// their known-answer checks, and the judge grades them.
#[test]
fn speed_measures_ml_kem_and_ml_dsa_in_debian13() {
    let Some((r, _g)) = root() else { return };
    let (out, _) = r.run(
        &[BIN, "speed", "ml-kem-768", "ml-dsa-65", "--budget", "6s", "--no-store", "--json"],
        Duration::from_secs(60),
    );
    assert!(out.status.success(), "{}", text(&out));
    let j = json(&out);
    let results = j["results"].as_array().unwrap_or_else(|| panic!("no results: {j:#}"));
    for (alg, ops) in [
        ("ml-kem-768", ["keygen", "encaps", "decaps"]),
        ("ml-dsa-65", ["keygen", "sign", "verify"]),
    ] {
        for op in ops {
            let r = results
                .iter()
                .find(|x| x["subject"]["algorithm"] == alg && x["subject"]["op"] == op)
                .unwrap_or_else(|| panic!("no {alg} {op}: {}", text(&out)));
            assert_eq!(r["metric"], "ops_per_sec", "{r:#}");
            assert_eq!(r["status"], "ok", "{r:#}");
            assert!(r["median"].as_f64().is_some_and(|m| m > 0.0), "{r:#}");
            assert!(r["subject"].get("bytes").is_none(), "{r:#}");
        }
        let v = j["verdicts"]
            .as_array()
            .and_then(|v| v.iter().find(|v| v["subject"]["name"] == alg))
            .unwrap_or_else(|| panic!("no verdict for {alg}: {j:#}"));
        assert_eq!(v["level"], "secure", "{v:#}");
    }
}

/// The names of `list` in a built-in policy's `only` list (data/policies/).
fn policy_list(policy: &str, list: &str) -> Vec<String> {
    let path = format!("{}/data/policies/{policy}.toml", env!("CARGO_MANIFEST_DIR"));
    let v: toml::Value = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v[list]["only"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// The comma-separated value of the line that starts with `keyword `.
fn ssh_list(lines: &[String], keyword: &str) -> Vec<String> {
    let l = lines
        .iter()
        .find_map(|l| l.strip_prefix(keyword).and_then(|v| v.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no {keyword} in {lines:?}"));
    l.split(',').map(str::to_string).collect()
}

/// Issue 27, "never below the installed defaults", with Debian 13's own software:
/// the lines `run --policy modern` emits for sshd, nginx and GnuTLS load there, keep
/// every default the policy accepts and add nothing those defaults leave out.
#[test]
fn emitted_lines_hold_against_debian13s_own_software() {
    let Some((r, _g)) = root() else { return };
    let dir = r.tempdir();
    let d = dir.inside.clone();
    let doc = format!("{d}/doc.json");
    let (out, _) = r.run(
        &[
            BIN,
            "run",
            "--budget",
            "25s",
            "--policy",
            "modern",
            "--for",
            "sshd,nginx,gnutls,apache,haproxy,stunnel",
        ]
        .into_iter()
        .chain(["--db", &format!("{d}/history.sqlite"), "--quiet", "--export-json", &doc])
        .collect::<Vec<_>>(),
        Duration::from_secs(90),
    );
    assert!(out.status.success(), "{}", text(&out));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("doc.json")).unwrap()).unwrap();
    let lines = |target: &str| -> Vec<String> {
        let rec = doc["recommendations"].as_array().unwrap().iter().find(|x| x["target"] == target);
        let rec = rec.unwrap_or_else(|| panic!("no lines for {target}: {:#}", doc["recommendations"]));
        rec["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_string())
            .collect()
    };
    nginx_lines_hold(&r, &dir, &lines("nginx"));
    // The hybrid, then X25519, then the NIST curves in measured order (or tied).
    let tiered = ["secp256r1:secp384r1", "secp384r1:secp256r1"].map(|n| format!("*X25519MLKEM768/*x25519:{n}"));
    for target in ["apache", "haproxy", "stunnel"] {
        let ok = lines(target)
            .iter()
            .any(|l| l.rsplit(' ').next().is_some_and(|v| tiered.iter().any(|t| t == v)));
        assert!(ok, "{target}: {:?}", lines(target));
    }
    servers_take_the_lines(&r, &dir, [&lines("apache"), &lines("haproxy"), &lines("stunnel")]);

    // GnuTLS 3.8.9 has no ML-KEM group: its own parser takes the string.
    let gnutls = lines("gnutls");
    let (out, _) = r.run(&["gnutls-cli", "--priority", &gnutls[0], "-l"], Duration::from_secs(30));
    assert!(
        out.status.success() && text(&out).contains("Cipher suites"),
        "{gnutls:?}: {}",
        text(&out)
    );
    assert!(!gnutls[0].contains("MLKEM"), "{gnutls:?}");

    fleet_on_this_host_keeps_the_debian13_class(&dir.path().join("doc.json"));
    auto_is_said_not_written(&r, &dir);
    sshd_lines_hold(&r, &d, &lines("sshd"));
}

/// OpenSSL 3.5's default groups (ssl/t1_lib.c's `DEFAULT_GROUP_LIST`).
const OPENSSL35_DEFAULT_GROUPS: &[&str] = &[
    "X25519MLKEM768",
    "x25519",
    "secp256r1",
    "x448",
    "secp384r1",
    "secp521r1",
    "ffdhe2048",
    "ffdhe3072",
    // Not asked (a handshake costs over half a second): counted as in the default.
    "ffdhe4096",
    "ffdhe6144",
    "ffdhe8192",
];

/// With a policy that accepts exactly OpenSSL 3.5's default groups, the nginx group
/// line would restate `auto`: it is a note, and with the lines a default client
/// and one whose first key share is X25519 still end on X25519MLKEM768.
fn auto_is_said_not_written(r: &Root, dir: &debian13::InsideDir) {
    let d = &dir.inside;
    let none = std::fs::read_to_string(format!("{}/data/policies/none.toml", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let quoted: Vec<String> = OPENSSL35_DEFAULT_GROUPS.iter().map(|g| format!("\"{g}\"")).collect();
    let policy = format!(
        "{}\n[groups]\nonly = [{}]\n",
        none.replace("name = \"none\"", "name = \"auto-groups\""),
        quoted.join(", ")
    );
    std::fs::write(dir.path().join("auto.toml"), policy).unwrap();
    let (out, _) = r.run(
        &[
            BIN,
            "recommend",
            "--db",
            &format!("{d}/history.sqlite"),
            "--policy",
            &format!("{d}/auto.toml"),
        ]
        .into_iter()
        .chain(["--for", "nginx,apache,haproxy,stunnel", "--json"])
        .collect::<Vec<_>>(),
        Duration::from_secs(60),
    );
    assert!(out.status.success(), "{}", text(&out));
    let doc = json(&out);
    let of = |target: &str| -> Vec<String> {
        let rec = doc["recommendations"].as_array().unwrap().iter().find(|x| x["target"] == target);
        rec.unwrap_or_else(|| panic!("no {target}: {doc:#}"))["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap().to_string())
            .collect()
    };
    let lines = of("nginx");
    // Apache's and HAProxy's group lines would restate OpenSSL 3.5's default too:
    // notes, which their parsers take as comments (and the default still lands on
    // the hybrid). stunnel's is written: without one it sets its own list, which
    // has no hybrid (a default client then ends on X25519).
    let others = [of("apache"), of("haproxy"), of("stunnel")];
    for (l, note) in others.iter().zip([
        "# SSLOpenSSLConfCmd Curves: the default already does this",
        "# ssl-default-bind-curves: the default already does this",
    ]) {
        assert!(l.contains(&note.to_string()), "{l:?}");
    }
    assert!(
        others[2].iter().any(|l| l.starts_with("curves = *X25519MLKEM768/")),
        "{:?}",
        others[2]
    );
    servers_take_the_lines(r, dir, [&others[0], &others[1], &others[2]]);
    assert!(
        lines.contains(&"# ssl_ecdh_curve: the default (auto) already does this".to_string()),
        "{lines:?}"
    );
    assert!(!lines.iter().any(|l| l.starts_with("ssl_ecdh_curve ")), "{lines:?}");
    let ([port], up) = r.run_serving(Duration::from_secs(60), |[port]| {
        std::fs::write(dir.path().join("nginx.conf"), nginx_conf(d, port, &lines.join("\n        "))).unwrap();
        format!("cd {d}; serve nginx {port} nginx -c {d}/nginx.conf -g 'daemon off;'")
    });
    assert!(up.status.success(), "{}", text(&up));
    let (a, b) = (
        negotiated_group(r, port, ""),
        negotiated_group(r, port, "-groups X25519:X25519MLKEM768"),
    );
    r.run(
        &["/bin/sh", "-c", &debian13::stop(&format!("{d}/nginx.pid"))],
        Duration::from_secs(10),
    );
    assert_eq!((a.as_str(), b.as_str()), ("X25519MLKEM768", "X25519MLKEM768"), "{lines:?}");
}

/// The Debian 13 export merged by `fleet` on this machine (the host: Debian 12,
/// OpenSSL 3.0, no X25519MLKEM768): the class's answer is that host's, from the
/// capabilities its export stored, not this machine's.
fn fleet_on_this_host_keeps_the_debian13_class(export: &std::path::Path) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(export, dir.path().join("trixie.json")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cipherbench"))
        .args(["fleet", "--policy", "modern", "--for", "nginx,sshd,gnutls", "--no-store", "--json"])
        .arg(dir.path().join("trixie.json"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let f = json(&out);
    let class = &f["classes"][0];
    let lines = |target: &str| -> Vec<String> {
        let l = class["lines"].as_array().unwrap().iter().find(|x| x["target"] == target);
        let l = l.unwrap_or_else(|| panic!("no {target} lines: {class:#}"));
        l["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect()
    };
    let nginx = lines("nginx");
    assert!(nginx.iter().any(|l| l.starts_with("ssl_ecdh_curve *X25519MLKEM768/")), "{nginx:?}");
    assert!(!lines("gnutls")[0].contains("MLKEM"), "{:?}", lines("gnutls"));
    let sshd = lines("sshd");
    assert!(!sshd.iter().any(|l| l.contains("diffie-hellman")), "{sshd:?}");
}

/// sshd: within `sshd -T`'s defaults, all of the defaults modern accepts, hybrid
/// post-quantum kex first; `sshd -t` takes them and ssh-audit finds no FAIL.
fn sshd_lines_hold(r: &Root, d: &str, lines: &[String]) {
    let (out, _) = r.run(
        &["/usr/sbin/sshd", "-T", "-f", "/dev/null", "-h", "/etc/ssh/ssh_host_ed25519_key"],
        Duration::from_secs(30),
    );
    assert!(out.status.success(), "{}", text(&out));
    let defaults = String::from_utf8_lossy(&out.stdout).into_owned();
    let default_list = |word: &str| -> Vec<String> {
        let l = defaults.lines().find_map(|l| l.strip_prefix(word)).unwrap();
        l.trim().split(',').map(str::to_string).collect()
    };
    for (keyword, word, list) in [
        ("KexAlgorithms", "kexalgorithms ", "ssh_kex"),
        ("Ciphers", "ciphers ", "ssh_ciphers"),
        ("MACs", "macs ", "ssh_macs"),
    ] {
        let (default, allowed) = (default_list(word), policy_list("modern", list));
        // A list that would restate sshd's default is a note (OpenSSH 10's Ciphers
        // under modern): every default is then one the policy accepts.
        if lines.contains(&format!("# {keyword}: the default already does this")) {
            assert!(!lines.iter().any(|l| l.starts_with(&format!("{keyword} "))), "{lines:?}");
            assert!(
                default.iter().all(|a| allowed.contains(a)),
                "{keyword}: {default:?} against {allowed:?}"
            );
            continue;
        }
        let emitted = ssh_list(lines, keyword);
        for a in &emitted {
            assert!(default.contains(a), "{keyword}: {a} is not among sshd's defaults {default:?}");
        }
        for a in default.iter().filter(|a| allowed.contains(a)) {
            assert!(
                emitted.contains(a),
                "{keyword}: the default {a} that modern accepts is missing: {emitted:?}"
            );
        }
    }
    assert_eq!(ssh_list(lines, "KexAlgorithms")[0], "mlkem768x25519-sha256", "{lines:?}");

    let conf = format!(
        "{}\nHostKey /etc/ssh/ssh_host_ed25519_key\nHostKey /etc/ssh/ssh_host_rsa_key\nPidFile {d}/sshd.pid\n",
        lines.join("\n")
    );
    std::fs::write(r.path(&format!("{d}/sshd_config")), conf).unwrap();
    let (out, _) = r.run(
        &["/usr/sbin/sshd", "-t", "-f", &format!("{d}/sshd_config")],
        Duration::from_secs(30),
    );
    assert!(out.status.success(), "sshd -t refused {lines:?}:\n{}", text(&out));
    let (_, out) = r.run_serving(Duration::from_secs(60), |[port]| {
        format!(
            "cd {d}; mkdir -p /run/sshd; \
             serve sshd {port} /usr/sbin/sshd -D -e -f {d}/sshd_config -o Port={port} -o ListenAddress=127.0.0.1 || exit 1; \
             ssh-audit -n -p {port} 127.0.0.1; kill $sshd_pid"
        )
    });
    let audit = String::from_utf8_lossy(&out.stdout);
    let kex: Vec<&str> = audit.lines().filter_map(|l| l.strip_prefix("(kex) ")).collect();
    assert!(
        kex.first().is_some_and(|k| k.starts_with("mlkem768x25519-sha256 ")),
        "first kex:\n{audit}"
    );
    let fails: Vec<&str> = audit.lines().filter(|l| l.contains("[fail]")).collect();
    assert!(fails.is_empty(), "ssh-audit 3.3 fails:\n{}", fails.join("\n"));
}

/// nginx: `nginx -t` takes the lines; a default OpenSSL 3.5 client and one whose
/// first key share is X25519 both end on X25519MLKEM768 (the flat list the lines
/// replaced leaves the second on X25519: the control that this can fail);
/// testssl.sh 3.2 lists the KEM as offered.
fn nginx_lines_hold(r: &Root, dir: &debian13::InsideDir, lines: &[String]) {
    let d = dir.inside.clone();
    let (out, _) = r.run(
        &[
            "/bin/sh",
            "-c",
            &format!(
                "openssl req -x509 -nodes -days 1 -subj /CN=localhost -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
             -keyout {d}/key.pem -out {d}/cert.pem"
            ),
        ],
        Duration::from_secs(30),
    );
    assert!(out.status.success(), "{}", text(&out));
    let x25519_first = "-groups X25519:X25519MLKEM768";
    let serve = |tls: &str, then: &dyn Fn(u16)| {
        let conf = format!("{d}/nginx.conf");
        let ([port], up) = r.run_serving(Duration::from_secs(60), |[port]| {
            std::fs::write(dir.path().join("nginx.conf"), nginx_conf(&d, port, tls)).unwrap();
            format!("cd {d}; nginx -t -c {conf} 2>&1 || exit 1; serve nginx {port} nginx -c {conf} -g 'daemon off;'")
        });
        assert!(
            up.status.success(),
            "nginx -t refused {tls}, or nginx did not start:\n{}",
            text(&up)
        );
        then(port);
        r.run(
            &["/bin/sh", "-c", &debian13::stop(&format!("{d}/nginx.pid"))],
            Duration::from_secs(10),
        );
    };
    let flat = "ssl_protocols TLSv1.3;\n        ssl_ecdh_curve X25519MLKEM768:x25519:secp256r1:secp384r1;";
    serve(flat, &|port| assert_eq!(negotiated_group(r, port, x25519_first), "X25519"));
    serve(&lines.join("\n        "), &|port| {
        assert_eq!(negotiated_group(r, port, ""), "X25519MLKEM768", "{lines:?}");
        assert_eq!(negotiated_group(r, port, x25519_first), "X25519MLKEM768", "{lines:?}");
        let (out, _) = r.run(
            &["testssl", "--quiet", "--color", "0", "--fs", &format!("127.0.0.1:{port}")],
            Duration::from_secs(180),
        );
        let said = String::from_utf8_lossy(&out.stdout);
        let kems = said.lines().find(|l| l.trim_start().starts_with("KEMs offered"));
        assert!(kems.is_some_and(|l| l.contains("X25519MLKEM768")), "testssl --fs:\n{said}");
    });
}

/// `cargo build --locked` works with Debian 13's own cargo (Rust 1.85): the
/// sources are copied into the root and built there, with the crates and the
/// compiled dependencies kept in the root (`/root/.cargo`, `/build/target`), so
/// only the first build downloads and compiles them all.
#[test]
fn builds_with_debian13s_own_cargo() {
    let Some((r, _g)) = root() else { return };
    let src = r.path("/src/cipherbench");
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(&src).unwrap();
    let project = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let cp = std::process::Command::new("cp")
        .arg("-a")
        .args(["Cargo.toml", "Cargo.lock", "rustfmt.toml", "src", "data"].map(|p| project.join(p)))
        .arg(&src)
        .status()
        .unwrap();
    assert!(cp.success());
    // Behind a TLS-intercepting proxy cargo needs the host's CA bundle (the root
    // trusts only Debian's ca-certificates).
    let ca = std::path::Path::new("/etc/ssl/certs/ca-certificates.crt");
    let cainfo = if ca.exists() {
        std::fs::copy(ca, r.path("/src/host-ca.crt")).unwrap();
        "CARGO_HTTP_CAINFO=/src/host-ca.crt"
    } else {
        "CARGO_TERM_COLOR=never"
    };
    let (out, took) = r.run(
        &[
            "env",
            "CARGO_HOME=/root/.cargo",
            "CARGO_TARGET_DIR=/build/target",
            cainfo,
            "sh",
            "-c",
            "cd /src/cipherbench && cargo --version && nice cargo build --locked 2>&1",
        ],
        Duration::from_secs(3600),
    );
    let said = text(&out);
    assert!(out.status.success(), "Debian 13's cargo did not build it:\n{said}");
    assert!(said.contains("cargo 1.85"), "not Debian 13's cargo: {said}");
    assert!(!said.contains("warning:"), "{said}");
    eprintln!("built with Debian 13's cargo in {took:.0?}");
}

/// The crate's unit-test binary (`cargo test --no-run --bin cipherbench`, the
/// profile of this test's own binary): nothing to build when `cargo test` or
/// scripts/run-tests.sh already built every test binary.
fn unit_test_binary() -> std::path::PathBuf {
    let mut cargo = std::process::Command::new(env!("CARGO"));
    cargo
        .args([
            "test",
            "--locked",
            "--no-run",
            "--bin",
            "cipherbench",
            "--message-format=json-render-diagnostics",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::null());
    if env!("CARGO_BIN_EXE_cipherbench").contains("/release/") {
        cargo.arg("--release");
    }
    let out = cargo.output().expect("cargo");
    assert!(out.status.success(), "cargo test --no-run: {}", text(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "cipherbench" && m["profile"]["test"] == true)
        .find_map(|m| m["executable"].as_str().map(std::path::PathBuf::from))
        .unwrap_or_else(|| panic!("cargo named no unit-test binary: {}", text(&out)))
}

/// The ML-KEM and ML-DSA known-answer tests (the ML-KEM seed vector and a changed
/// seed, the KEM and signature probes' real work) skip on OpenSSL before 3.5, so a
/// Debian 12 host never runs them: here the crate's own unit-test binary runs them
/// in the Debian 13 root (OpenSSL 3.5), and each must have run and passed, none
/// skipped.
#[test]
fn ml_kem_and_ml_dsa_known_answer_tests_run_and_pass_in_debian13() {
    let Some((r, _g)) = root() else { return };
    const UNIT: &str = "/usr/local/bin/cipherbench-unit-tests";
    let to = r.path(UNIT);
    let tmp = to.with_extension(format!("tmp{}", std::process::id()));
    std::fs::copy(unit_test_binary(), &tmp).unwrap();
    std::fs::rename(&tmp, &to).unwrap();
    let tests = [
        "measure::kat::tests::the_ml_kem_seed_vector_passes_and_a_changed_seed_fails",
        "measure::pq::tests::kem_probes_do_real_work",
        "measure::pq::tests::signature_probes_do_real_work",
    ];
    let mut args = vec![UNIT, "--exact", "--nocapture", "--test-threads=1"];
    args.extend(tests);
    let (out, _) = r.run(&args, Duration::from_secs(300));
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    for t in tests {
        assert!(said.contains(&format!("test {t} ... ok")), "{t} did not run and pass:\n{said}");
    }
    assert!(said.contains("test result: ok. 3 passed"), "{said}");
    assert!(!said.contains("skipped"), "a known-answer test skipped in Debian 13:\n{said}");
}
