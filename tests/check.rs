//! `cipherbench check` against real programs: a real nginx and a real private sshd
//! started from deliberately poor configurations (CBC suites first, hmac-sha1,
//! diffie-hellman-group14-sha1). The diff must name each fix, what it says is
//! negotiated must be what a real default client negotiates, its lines must apply
//! with `patch` and pass `nginx -t` / `sshd -t`, the patched configuration must
//! leave nothing to change, and an unreadable file must be a clear error.

mod common;

use common::check::{apply, assert_fixes, cb, check, names, negotiated, serve, server_port};
use common::{free_port, json_of};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

fn nginx_conf(d: &Path, port: u16, tls: &str) -> String {
    format!(
        "pid {d}/nginx.pid;\nerror_log {d}/error.log;\ndaemon off;\nevents {{}}\nhttp {{\n    access_log off;\n    client_body_temp_path {d}/body;\n    proxy_temp_path {d}/proxy;\n    server {{\n        listen 127.0.0.1:{port} ssl;\n        ssl_certificate {d}/cert.pem;\n        ssl_certificate_key {d}/key.pem;\n{tls}    }}\n}}\n",
        d = d.display()
    )
}

/// The real nginx with its prefix, error log and configuration in `dir`.
fn nginx(file: &Path, dir: &Path) -> Command {
    let mut c = Command::new("nginx");
    c.arg("-p").arg(dir).arg("-e").arg(dir.join("error.log")).arg("-c").arg(file);
    c
}

fn nginx_t(file: &Path, dir: &Path) {
    let out = nginx(file, dir).arg("-t").output().unwrap();
    assert!(
        out.status.success(),
        "nginx -t refused {}:\n{}\n{}",
        file.display(),
        std::fs::read_to_string(file).unwrap(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What a default OpenSSL client negotiates with a real nginx: (protocol, OpenSSL suite name).
fn negotiated_with_real_nginx(file: &Path, dir: &Path, port: u16) -> (String, String) {
    let _nginx = serve(&mut nginx(file, dir), port, "nginx");
    negotiated(port)
}

#[test]
fn poor_nginx_diff_names_each_fix_matches_reality_and_applies() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for sub in ["body", "proxy"] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
    }
    common::self_signed(d, &["-newkey", "rsa:2048"]);
    let port = server_port();
    let poor = "        ssl_protocols TLSv1 TLSv1.1 TLSv1.2;\n        ssl_ciphers ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-SHA:AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256;\n        ssl_prefer_server_ciphers on;\n";
    let file = d.join("nginx.conf");
    std::fs::write(&file, nginx_conf(d, port, poor)).unwrap();
    nginx_t(&file, d);

    let (code, r) = check(&file, "nginx", "10s");
    assert_eq!(code, 1, "a poor config is a finding: {r:#}");
    let diff = &r["diffs"][0];
    assert_eq!(diff["software"], "nginx");
    // What cipherbench says is negotiated is what a real default client gets.
    let real = negotiated_with_real_nginx(&file, d, port);
    assert_eq!(diff["now"]["version"], real.0.as_str(), "{diff:#}");
    assert_eq!(diff["now"]["openssl_name"], real.1.as_str(), "{diff:#}");
    assert_eq!(real.1, "ECDHE-RSA-AES128-SHA");
    // Each fix is named, with a grade and a cited reason; nothing is introduced.
    assert_fixes(
        diff,
        &[
            "TLSv1",
            "TLSv1.1",
            "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
            "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
            "TLS_RSA_WITH_AES_128_CBC_SHA",
        ],
    );
    // The recommendation is measured against the same probes, with intervals.
    let thr = diff["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "throughput")
        .unwrap();
    assert!(thr["now"]["median"].as_f64().unwrap() > 0.0, "{thr}");
    assert!(thr["recommended"]["median"].as_f64().unwrap() > 0.0, "{thr}");
    let findings: Vec<&str> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert!(
        findings.iter().any(|f| f.contains("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA")),
        "{findings:?}"
    );

    // The lines apply cleanly and nginx accepts them.
    let patch = diff["patch"].as_str().expect("a unified diff against the file");
    assert!(patch.contains("-        ssl_ciphers ECDHE-RSA-AES128-SHA:"), "{patch}");
    apply(patch);
    nginx_t(&file, d);
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(!after.contains("AES128-SHA:"), "{after}");

    // Applied once, the policy has nothing left to refuse, and a real client gets
    // what the diff said it would.
    let (code, again) = check(&file, "nginx", "10s");
    let d2 = &again["diffs"][0];
    assert_eq!(code, 0, "{again:#}");
    assert_eq!(d2["nothing_to_change"], true, "{d2:#}");
    let policy: Vec<&Value> = again["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "policy")
        .collect();
    assert!(policy.is_empty(), "{policy:?}");
    let real = negotiated_with_real_nginx(&file, d, port);
    assert_eq!(d2["now"]["version"], real.0.as_str(), "{d2:#}");
    assert_eq!(d2["now"]["openssl_name"], real.1.as_str(), "{d2:#}");
    assert_eq!(diff["recommended"]["suite"], d2["now"]["suite"]);
}

/// The first diff a successful run keeps in its document (`run.settings.installed_diff`).
fn first_diff(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    json_of(&out.stdout)["run"]["settings"]["installed_diff"][0].clone()
}

fn sshd() -> PathBuf {
    ["/usr/sbin/sshd", "/usr/local/sbin/sshd"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("sshd")
}

fn sshd_t(file: &Path) {
    if unsafe { libc::geteuid() } == 0 {
        let _ = std::fs::create_dir_all("/run/sshd");
    }
    let t = Command::new(sshd()).arg("-t").arg("-f").arg(file).output().unwrap();
    assert!(
        t.status.success(),
        "sshd -t refused:\n{}\n{}",
        std::fs::read_to_string(file).unwrap(),
        String::from_utf8_lossy(&t.stderr)
    );
}

/// What this machine's ssh client negotiates with a real sshd started from `file`:
/// (cipher, MAC, kex) from `ssh -v` (the key exchange happens before authentication,
/// which fails in BatchMode without a key).
fn negotiated_with_real_sshd(file: &Path, port: u16) -> (String, String, String) {
    let _d = serve(
        Command::new(sshd())
            .args(["-D", "-e", "-f"])
            .arg(file)
            .args(["-o", &format!("Port={port}")]),
        port,
        "sshd",
    );
    let out = Command::new("ssh")
        .args(["-v", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no"])
        .args(["-o", "UserKnownHostsFile=/dev/null", "-o", "ConnectTimeout=10", "-p"])
        .arg(port.to_string())
        .args(["nobody@127.0.0.1", "true"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // "debug1: kex: client->server cipher: aes128-ctr MAC: hmac-sha2-256 compression: none"
    let line = err
        .lines()
        .find(|l| l.contains("kex: client->server cipher:"))
        .unwrap_or_else(|| panic!("no kex in ssh -v:\n{err}"));
    let f: Vec<&str> = line.split_whitespace().collect();
    let at = |k: &str| f[f.iter().position(|x| *x == k).unwrap() + 1].to_string();
    let kex = err
        .lines()
        .find_map(|l| l.split("kex: algorithm: ").nth(1))
        .unwrap_or_else(|| panic!("no kex algorithm:\n{err}"))
        .trim()
        .to_string();
    (at("cipher:"), at("MAC:"), kex)
}

#[test]
fn poor_sshd_diff_names_each_fix_matches_reality_applies_and_then_nothing_to_change() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let key = d.join("host_ed25519");
    let st = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&key)
        .status()
        .unwrap();
    assert!(st.success());
    let port = server_port();
    let file = d.join("sshd_config");
    std::fs::write(
        &file,
        format!(
            "ListenAddress 127.0.0.1\nHostKey {}\nPidFile {}/sshd.pid\nUsePAM no\nCiphers aes128-cbc,aes256-cbc,aes128-ctr\nMACs hmac-sha1,hmac-sha2-256\nKexAlgorithms diffie-hellman-group14-sha1,diffie-hellman-group14-sha256\n\nMatch User nobody\n    X11Forwarding no\n",
            key.display(),
            d.display()
        ),
    )
    .unwrap();
    sshd_t(&file);

    let (code, r) = check(&file, "sshd", "20s");
    assert_eq!(code, 1, "{r:#}");
    let diff = &r["diffs"][0];
    let real = negotiated_with_real_sshd(&file, port);
    assert_eq!(diff["now"]["cipher"], real.0.as_str(), "{diff:#}");
    assert_eq!(diff["now"]["mac"], real.1.as_str(), "{diff:#}");
    assert_eq!(diff["now"]["kex"], real.2.as_str(), "{diff:#}");
    assert_fixes(diff, &["aes128-cbc", "aes256-cbc", "hmac-sha1", "diffie-hellman-group14-sha1"]);
    // The server's CPU per GB (the private sshd's CPU over the bulk sessions) comes
    // with every throughput figure, now and recommended, each with its interval.
    let change = |metric: &str| {
        diff["changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["metric"] == metric)
            .unwrap_or_else(|| panic!("no {metric} change: {diff:#}"))
            .clone()
    };
    let (thr, cpu) = (change("throughput"), change("server CPU per GB"));
    let measured: Vec<&str> = ["now", "recommended"].into_iter().filter(|s| !thr[*s].is_null()).collect();
    assert!(!measured.is_empty(), "nothing measured in 20 s: {thr}");
    for side in measured {
        let f = &cpu[side];
        let (lo, m, hi) = (f["ci95_low"].as_f64(), f["median"].as_f64(), f["ci95_high"].as_f64());
        assert!(
            matches!((lo, m, hi), (Some(lo), Some(m), Some(hi)) if m > 0.0 && lo <= m && m <= hi && lo < hi),
            "{side}: throughput {thr} but server CPU per GB {cpu}"
        );
    }
    let patch = diff["patch"].as_str().expect("a unified diff");
    assert!(patch.contains("-Ciphers aes128-cbc,aes256-cbc,aes128-ctr\n"), "{patch}");
    apply(patch);
    sshd_t(&file);
    let after = std::fs::read_to_string(&file).unwrap();
    // The Match block still ends the file: global lines went before it.
    assert!(after.trim_end().ends_with("Match User nobody\n    X11Forwarding no"), "{after}");

    // Applied once: nothing to change, and check exits 0.
    let out = cb()
        .args(["check", "--for", "sshd", "--budget", "20s", "--config-from"])
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("nothing to change"), "{text}");
    assert!(text.contains("check: no finding"), "{text}");
    let real = negotiated_with_real_sshd(&file, port);
    assert!(
        !real.0.contains("cbc") && real.1 != "hmac-sha1" && !real.2.ends_with("sha1"),
        "{real:?}"
    );
}

#[test]
fn unreadable_config_is_a_clear_error_naming_the_file() {
    let out = cb()
        .args(["check", "--for", "nginx", "--config-from", "/nonexistent/dir/nginx.conf"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot read the configuration file /nonexistent/dir/nginx.conf"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = cb()
        .args(["check", "--for", "sshd", "--config-from"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&dir.path().display().to_string()), "{err}");
    // A file whose software cannot be told is bad input too, naming --for.
    let f = dir.path().join("mystery.txt");
    std::fs::write(&f, "hello\n").unwrap();
    let out = cb().args(["check", "--config-from"]).arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--for"));
}

#[test]
fn min_gain_is_validated() {
    let out = cb().args(["check", "--min-gain", "lots"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("percentage"));
}

/// `ssh --host` reports the same diff for a remote server: its offer from the wire,
/// what this machine's client negotiates there, and what to drop. Needs root (a
/// real sshd that logs this user in from a private authorized_keys file).
#[test]
fn remote_sshd_gets_the_same_diff() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root to run a real sshd that logs this user in");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for k in ["host", "user"] {
        let st = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(d.join(k))
            .status()
            .unwrap();
        assert!(st.success());
    }
    std::fs::copy(d.join("user.pub"), d.join("authorized_keys")).unwrap();
    let port = free_port();
    let file = d.join("sshd_config");
    std::fs::write(
        &file,
        format!(
            "ListenAddress 127.0.0.1\nPort {port}\nHostKey {d}/host\nPidFile {d}/sshd.pid\nAuthorizedKeysFile {d}/authorized_keys\nStrictModes no\nUsePAM no\nCiphers aes128-cbc,aes128-ctr\nMACs hmac-sha1,hmac-sha2-256\nKexAlgorithms diffie-hellman-group14-sha1,diffie-hellman-group14-sha256\n",
            d = d.display()
        ),
    )
    .unwrap();
    let _ = std::fs::create_dir_all("/run/sshd");
    let _sshd = serve(Command::new(sshd()).args(["-D", "-e", "-f"]).arg(&file), port, "sshd");
    let out = cb()
        .args([
            "ssh",
            "--json",
            "--host",
            "root@127.0.0.1",
            "--port",
            &port.to_string(),
            "--identity",
        ])
        .arg(d.join("user"))
        .args(["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null"])
        .args(["--ciphers", "aes128-cbc,aes128-ctr", "--macs", "hmac-sha1,hmac-sha2-256"])
        .args([
            "--kex",
            "diffie-hellman-group14-sha1,diffie-hellman-group14-sha256",
            "--budget",
            "12s",
        ])
        .output()
        .unwrap();
    let diff = &first_diff(&out);
    assert_eq!(diff["now"]["cipher"], "aes128-ctr", "{diff:#}");
    assert_eq!(diff["now"]["mac"], "hmac-sha2-256", "{diff:#}");
    assert_eq!(diff["now"]["kex"], "diffie-hellman-group14-sha256", "{diff:#}");
    let fixed = names(&diff["fixed"]);
    for want in ["aes128-cbc", "hmac-sha1", "diffie-hellman-group14-sha1"] {
        assert!(fixed.contains(&want.to_string()), "{want} not among {fixed:?}");
    }
    // The change is counted within what the server accepts now; its lines drop
    // what the policy refuses.
    assert_eq!(diff["recommended"]["cipher"], "aes128-ctr", "{diff:#}");
    assert_eq!(diff["recommended"]["kex"], "diffie-hellman-group14-sha256", "{diff:#}");
    let lines: Vec<&str> = diff["lines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    let ciphers = lines.iter().find(|l| l.starts_with("Ciphers ")).expect("a Ciphers line");
    assert!(ciphers.contains("aes128-ctr") && !ciphers.contains("cbc"), "{lines:?}");
}

/// `tls --connect` reports the same diff for a server: its accepted list from the
/// scan, what a default OpenSSL client negotiates there, and the change measured
/// by real downloads (`--http-get`), within what the server accepts.
#[test]
fn remote_tls_server_gets_the_same_diff() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for sub in ["body", "proxy", "www"] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
    }
    std::fs::write(d.join("www/1m.bin"), vec![7u8; 1 << 20]).unwrap();
    common::self_signed(d, &["-newkey", "rsa:2048"]);
    let port = free_port();
    let tls = format!(
        "        root {}/www;\n        ssl_protocols TLSv1.2;\n        ssl_ciphers ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256;\n        ssl_prefer_server_ciphers on;\n",
        d.display()
    );
    let mut conf = nginx_conf(d, port, &tls);
    if unsafe { libc::geteuid() } == 0 {
        conf = format!("user root;\n{conf}");
    }
    let file = d.join("nginx.conf");
    std::fs::write(&file, conf).unwrap();
    let _nginx = serve(&mut nginx(&file, d), port, "nginx");
    let out = cb()
        .args([
            "tls",
            "--json",
            "--connect",
            &format!("127.0.0.1:{port}"),
            "--http-get",
            "/1m.bin",
            "--budget",
            "12s",
        ])
        .output()
        .unwrap();
    let diff = &first_diff(&out);
    assert_eq!(diff["now"]["openssl_name"], "ECDHE-RSA-AES128-SHA", "{diff:#}");
    assert_eq!(diff["now"]["version"], "TLSv1.2");
    assert_eq!(diff["recommended"]["suite"], "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "{diff:#}");
    assert!(
        names(&diff["fixed"]).contains(&"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA".to_string()),
        "{diff:#}"
    );
    let thr = diff["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "throughput")
        .unwrap();
    assert!(
        thr["now"]["median"].as_f64().unwrap() > 0.0 && thr["recommended"]["median"].as_f64().unwrap() > 0.0,
        "{thr}"
    );
}

/// The main job ends with the diff section for the software it found, and keeps it
/// in the document (`run.settings.installed_diff`); `recommend` shows it too.
#[test]
fn main_job_and_recommend_end_with_the_diff() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("run.json");
    let db = dir.path().join("h.sqlite");
    let mut c = assert_cmd::Command::cargo_bin("cipherbench").unwrap();
    c.env("NO_COLOR", "1")
        .env("XDG_DATA_HOME", dir.path())
        .timeout(Duration::from_secs(240));
    let out = c
        .args(["--for", "nginx", "--budget", "15s", "--db"])
        .arg(&db)
        .arg("--export-json")
        .arg(&export)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("What to change here"), "{text}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&export).unwrap()).unwrap();
    let diffs = doc["run"]["settings"]["installed_diff"].as_array().expect("installed_diff").clone();
    let nginx_installed = Path::new("/etc/nginx/nginx.conf").exists();
    if nginx_installed {
        let n = diffs.iter().find(|d| d["software"] == "nginx").expect("nginx's diff");
        assert!(text.contains("nginx — /etc/nginx/nginx.conf"), "{text}");
        assert!(n["now"]["suite"].is_string(), "{n:#}");
        // Its negotiated choice was measured in the run.
        let thr = n["changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["metric"] == "throughput")
            .unwrap();
        assert!(thr["now"]["median"].as_f64().unwrap_or(0.0) > 0.0, "{thr}");
    }
    let mut c = assert_cmd::Command::cargo_bin("cipherbench").unwrap();
    c.env("NO_COLOR", "1").timeout(Duration::from_secs(60));
    let out = c.args(["recommend", "--for", "nginx", "--db"]).arg(&db).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("What to change here"), "{text}");
    if nginx_installed {
        assert!(text.contains("nginx — /etc/nginx/nginx.conf"), "{text}");
    }
}
