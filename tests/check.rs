//! `cipherbench check` against real programs: a real nginx and a real private sshd
//! started from deliberately poor configurations (CBC suites first, hmac-sha1,
//! diffie-hellman-group14-sha1). The diff must name each fix, what it says is
//! negotiated must be what a real default client negotiates, its lines must apply
//! with `patch` and pass `nginx -t` / `sshd -t`, the patched configuration must
//! leave nothing to change, and an unreadable file must be a clear error.

mod common;

use common::check::{apply, assert_fixes, cb, check, names, negotiated, serve, server_port, ServerPort};
use common::false_alarms::FalseAlarms;
use common::json_of;
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
fn negotiated_with_real_nginx(file: &Path, dir: &Path, port: &ServerPort) -> (String, String) {
    let _nginx = serve("nginx", port, &[file], |_| nginx(file, dir));
    negotiated(port.get())
}

/// The change of `metric` (`throughput`, `server CPU per GB` ...) in a diff.
fn change<'a>(diff: &'a Value, metric: &str) -> &'a Value {
    diff["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} change: {diff:#}"))
}

/// A temporary directory with a certificate and a deliberately poor nginx.conf
/// (TLS 1.0-1.2, CBC and SHA-1 suites first, server order) on a free port.
fn poor_nginx() -> (tempfile::TempDir, PathBuf, ServerPort) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for sub in ["body", "proxy"] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
    }
    common::self_signed(d, &["-newkey", "rsa:2048"]);
    let port = server_port();
    let poor = "        ssl_protocols TLSv1 TLSv1.1 TLSv1.2;\n        ssl_ciphers ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-SHA:AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256;\n        ssl_prefer_server_ciphers on;\n";
    let file = d.join("nginx.conf");
    std::fs::write(&file, nginx_conf(d, port.get(), poor)).unwrap();
    (dir, file, port)
}

#[test]
fn poor_nginx_diff_names_each_fix_matches_reality_and_applies() {
    let (dir, file, port) = poor_nginx();
    let d = dir.path();
    nginx_t(&file, d);

    let (code, r) = check(&file, "nginx", "10s");
    assert_eq!(code, 1, "a poor config is a finding: {r:#}");
    let diff = &r["diffs"][0];
    assert_eq!(diff["software"], "nginx");
    // What cipherbench says is negotiated is what a real default client gets.
    let real = negotiated_with_real_nginx(&file, d, &port);
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
    let thr = change(diff, "throughput");
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
    // what the diff said it would. A check whose only findings are speed ones may
    // have seen the machine move under it: made again, and such false alarms are
    // counted (at most `MAX_FALSE_ALARMS`).
    let (code, again) = FalseAlarms::default().retry("check of the fixed nginx.conf", |_| {
        let (code, again) = check(&file, "nginx", "10s");
        let findings = again["findings"].as_array().map_or(&[][..], Vec::as_slice);
        let only_speed = !findings.is_empty() && findings.iter().all(|f| f["kind"] == "speed");
        let alarm = only_speed.then(|| format!("only speed findings: {findings:?}"));
        ((code, again), alarm)
    });
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
    let real = negotiated_with_real_nginx(&file, d, &port);
    assert_eq!(d2["now"]["version"], real.0.as_str(), "{d2:#}");
    assert_eq!(d2["now"]["openssl_name"], real.1.as_str(), "{d2:#}");
    assert_eq!(diff["recommended"]["suite"], d2["now"]["suite"]);
}

/// The private nginx directories (`cipherbench-nginx-*`) in `dir` that the process
/// `pid` owns (their `owner.pid`), or all of them when `pid` is `None`.
fn private_nginx_dirs(dir: &Path, pid: Option<u32>) -> Vec<PathBuf> {
    private_dirs("nginx", dir, pid)
}

/// The private directories of `software`'s instances in `dir` (of the run `pid`).
fn private_dirs(software: &str, dir: &Path, pid: Option<u32>) -> Vec<PathBuf> {
    let prefix = format!("cipherbench-{software}-");
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                .map(|e| e.path())
                .filter(|p| pid.is_none_or(|pid| std::fs::read_to_string(p.join("owner.pid")).is_ok_and(|o| o.trim() == pid.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// Live processes whose command line mentions `needle` (an nginx master keeps its
/// `-c CONFIG` in its title).
fn processes_mentioning(needle: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().chars().all(|c| c.is_ascii_digit()))
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(needle))
        .collect()
}

/// `cipherbench check --json --for SOFTWARE --budget BUDGET` of `conf`, with
/// `tmp` as its temporary directory, its document to `stdout`, its export to
/// `export`: how it ended (within 240 s) and its pid.
fn check_through(
    software: &str,
    budget: &str,
    conf: &Path,
    tmp: &Path,
    export: &Path,
    stdout: &Path,
    stderr: Stdio,
) -> (std::process::ExitStatus, u32) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("cipherbench"))
        .env("TMPDIR", tmp)
        .args([
            "--no-store",
            "check",
            "--json",
            "--for",
            software,
            "--budget",
            budget,
            "--config-from",
        ])
        .arg(conf)
        .arg("--export-json")
        .arg(export)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(stdout).unwrap())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let pid = child.id();
    let t0 = std::time::Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return (st, pid);
        }
        if t0.elapsed() > Duration::from_secs(240) {
            let _ = child.kill();
            panic!("check did not end within 240 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `check` predicts nginx's gain by measuring through two private nginx
/// instances (one with the file's TLS lines, one with the recommended ones): the
/// throughput change says so, both sides come from records measured through
/// nginx with enough slices, the "now" instance negotiated what a real
/// `openssl s_client` gets from the file, and nothing is left running or on disk.
#[test]
fn poor_nginx_throughput_is_measured_through_private_nginx_and_nothing_is_left() {
    let (dir, file, port) = poor_nginx();
    let d = dir.path();
    // Its own temporary directory, to see what it leaves there.
    let tmp = tempfile::tempdir().unwrap();
    let export = d.join("run.json");
    let stdout = d.join("check.json");
    let (status, pid) = check_through("nginx", "15s", &file, tmp.path(), &export, &stdout, Stdio::null());
    assert_eq!(status.code(), Some(1), "a poor config is a finding");
    let r = json_of(&std::fs::read(&stdout).unwrap());
    let diff = &r["diffs"][0];
    let thr = change(diff, "throughput");
    assert!(
        thr["how"].as_str().is_some_and(|h| h.contains("through a private nginx")),
        "not measured through nginx: {thr:#}\nnotes: {}",
        r["notes"]
    );
    // The server's CPU per GB is the private nginx worker's, through the same instances.
    let cpu = change(diff, "server CPU per GB");
    assert!(cpu["how"].as_str().is_some_and(|h| h.contains("nginx worker")), "{cpu:#}");
    assert!(cpu["now"]["median"].as_f64().unwrap() > 0.0 && cpu["recommended"]["median"].as_f64().unwrap() > 0.0);
    // The records behind it: measured through nginx, apart from loopback ones.
    let doc: Value = serde_json::from_slice(&std::fs::read(&export).unwrap()).unwrap();
    let through: Vec<&Value> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["kind"] == "tls-bulk" && x["metric"] == "bytes_per_sec" && x["subject"]["mode"] == "through-nginx")
        .collect();
    assert_eq!(through.len(), 2, "{through:#?}");
    let worker = |want: &Value| {
        doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["subject"]["mode"] == "server-cpu-per-gb-through-nginx" && x["subject"]["suite"] == want["suite"])
            .unwrap_or_else(|| panic!("no worker CPU record of {want}"))["median"]
            .clone()
    };
    assert_eq!(cpu["now"]["median"], worker(&diff["now"]));
    assert_eq!(cpu["recommended"]["median"], worker(&diff["recommended"]));
    for (side, want) in [("now", &diff["now"]), ("recommended", &diff["recommended"])] {
        let rec = through
            .iter()
            .find(|x| x["subject"]["suite"] == want["suite"] && x["subject"]["protocol"] == want["version"])
            .unwrap_or_else(|| panic!("no through-nginx record of {side} {want}: {through:#?}"));
        assert_eq!(rec["status"], "ok", "{rec:#}");
        assert_eq!(rec["subject"]["op"], "http-get");
        assert!(rec["samples"].as_u64().unwrap() >= 3, "{side}: {rec:#}");
        assert_eq!(
            thr[side]["median"], rec["median"],
            "{side}: the diff's figure is the through-nginx record's"
        );
    }
    // The gain is the median of the paired slices' ratios, stored with the run,
    // inside the interval the two figures alone give.
    let paired = &doc["run"]["settings"]["through_nginx"]["paired_gain"];
    assert!(paired["pairs"].as_u64().unwrap() >= 3, "{paired:#}");
    assert_eq!(thr["gain"], paired["gain"], "{thr:#}");
    assert_eq!((&thr["gain_low"], &thr["gain_high"]), (&paired["gain_low"], &paired["gain_high"]));
    let (g, lo, hi) = (
        paired["gain"].as_f64().unwrap(),
        paired["gain_low"].as_f64().unwrap(),
        paired["gain_high"].as_f64().unwrap(),
    );
    assert!(lo <= g && g <= hi, "{paired:#}");
    // The two figures alone give the gain an interval too (the recommended
    // figure's bounds over the current one's, the widest pairing): both are 95%
    // intervals of the same gain from the same samples, so they must overlap.
    // A paired gain outside what the figures allow (the old bound let +10% be
    // anything from −45% to +65%) is a wrong pairing, not noise.
    let fig = |side: &str, k: &str| thr[side][k].as_f64().unwrap_or_else(|| panic!("{side} {k}: {thr:#}"));
    let by_figures = fig("recommended", "median") / fig("now", "median") - 1.0;
    let (fig_lo, fig_hi) = (
        fig("recommended", "ci95_low") / fig("now", "ci95_high") - 1.0,
        fig("recommended", "ci95_high") / fig("now", "ci95_low") - 1.0,
    );
    assert!(fig_lo <= by_figures && by_figures <= fig_hi, "{thr:#}");
    assert!(
        lo <= fig_hi && fig_lo <= hi,
        "paired {g} ({lo} – {hi}) against the figures' {by_figures} ({fig_lo} – {fig_hi})"
    );
    // The "now" instance negotiated what a real client gets from the file itself.
    let real = negotiated_with_real_nginx(&file, d, &port);
    assert_eq!(real.1, "ECDHE-RSA-AES128-SHA");
    let now = through.iter().find(|x| x["subject"]["suite"] == diff["now"]["suite"]).unwrap();
    assert_eq!(now["subject"]["openssl_name"], real.1.as_str(), "{now:#}");
    assert_eq!(now["subject"]["protocol"], real.0.as_str(), "{now:#}");
    // Every private instance stopped, every private directory gone.
    let tmp_path = tmp.path().display().to_string();
    assert_eq!(processes_mentioning(&tmp_path), Vec::<String>::new());
    assert_eq!(private_nginx_dirs(tmp.path(), None), Vec::<PathBuf>::new());
    for shared in ["/tmp", "/dev/shm"] {
        assert_eq!(private_nginx_dirs(Path::new(shared), Some(pid)), Vec::<PathBuf>::new());
    }
}

/// The first diff a successful run keeps in its document (`run.settings.installed_diff`).
/// Whether `check`'s closing line counts speed findings only ("check: 2 finding(s)
/// in sshd (2 speed)").
fn only_speed_findings(text: &str) -> bool {
    text.lines()
        .filter(|l| l.starts_with("check: ") && l.contains(" finding(s) in "))
        .filter_map(|l| l.split_once(" (")?.1.split_once(')').map(|(kinds, _)| kinds.to_string()))
        .any(|kinds| kinds.split(", ").all(|k| k.ends_with(" speed")))
}

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

/// What a default ssh client (`-F /dev/null`) negotiates with a real sshd started from `file`:
/// (cipher, MAC, kex) from `ssh -v` (the key exchange happens before authentication,
/// which fails in BatchMode without a key).
fn negotiated_with_real_sshd(file: &Path, port: &ServerPort) -> (String, String, String) {
    let _d = serve("sshd", port, &[], |port| {
        let mut c = Command::new(sshd());
        c.args(["-D", "-e", "-f"]).arg(file).args(["-o", &format!("Port={port}")]);
        c
    });
    let port = port.get();
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
    let real = negotiated_with_real_sshd(&file, &port);
    assert_eq!(diff["now"]["cipher"], real.0.as_str(), "{diff:#}");
    assert_eq!(diff["now"]["mac"], real.1.as_str(), "{diff:#}");
    assert_eq!(diff["now"]["kex"], real.2.as_str(), "{diff:#}");
    assert_fixes(diff, &["aes128-cbc", "aes256-cbc", "hmac-sha1", "diffie-hellman-group14-sha1"]);
    // The server's CPU per GB (the private sshd's CPU over the bulk sessions) comes
    // with every throughput figure, now and recommended, each with its interval.
    let (thr, cpu) = (change(diff, "throughput"), change(diff, "server CPU per GB"));
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

    // Applied once: nothing to change, and check exits 0. A check whose only findings
    // are speed ones may have seen the machine's speed move under it: it is made
    // again, and such false alarms are counted (at most `MAX_FALSE_ALARMS`).
    let out = FalseAlarms::default().retry("check of the fixed sshd_config", |_| {
        let out = cb()
            .args(["check", "--for", "sshd", "--budget", "20s", "--config-from"])
            .arg(&file)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let alarm = (out.status.code() == Some(1) && only_speed_findings(&text)).then_some(text);
        (out, alarm)
    });
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("nothing to change"), "{text}");
    assert!(text.contains("check: no finding"), "{text}");
    let real = negotiated_with_real_sshd(&file, &port);
    assert!(
        !real.0.contains("cbc") && real.1 != "hmac-sha1" && !real.2.ends_with("sha1"),
        "{real:?}"
    );
}

/// The prediction for a legacy sshd is what a default client (`ssh -F /dev/null`,
/// sshd's usual peer) will negotiate with the installed and with the emitted
/// configuration, not what this machine's configured client would: here the
/// client's own configuration puts AES-GCM first (as `recommend --for ssh`'s
/// Host block does on a machine with AES instructions), a default client puts
/// chacha20-poly1305 first, and the predicted after-subject is the default
/// client's pick with the patched file, as the real sshd and ssh then negotiate.
#[test]
fn legacy_sshd_is_predicted_with_what_a_default_client_then_picks() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let key = d.join("host_ed25519");
    let st = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&key)
        .status()
        .unwrap();
    assert!(st.success());
    // This machine's client, configured: every `ssh` cipherbench runs without
    // `-F` reads this file (a system ssh_config with a Host * block).
    let client_conf = d.join("ssh_config");
    std::fs::write(
        &client_conf,
        "Host *\n    Ciphers aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com,aes128-ctr,aes256-ctr\n",
    )
    .unwrap();
    let wrapper = d.join("ssh");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = -F ] && exec ssh \"$@\"; done\nexec ssh -F {} \"$@\"\n",
            client_conf.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let port = server_port();
    let file = d.join("sshd_config");
    std::fs::write(
        &file,
        format!(
            "ListenAddress 127.0.0.1\nHostKey {}\nPidFile {}/sshd.pid\nUsePAM no\nCiphers aes128-cbc,aes256-cbc,aes128-ctr,aes256-ctr\nMACs hmac-sha1,hmac-sha2-256\nKexAlgorithms diffie-hellman-group14-sha1,diffie-hellman-group14-sha256,curve25519-sha256\n",
            key.display(),
            d.display()
        ),
    )
    .unwrap();
    sshd_t(&file);
    let out = cb()
        .env("CIPHERBENCH_SSH", &wrapper)
        .args(["check", "--json", "--for", "sshd", "--budget", "15s", "--config-from"])
        .arg(&file)
        .output()
        .unwrap();
    let r = json_of(&out.stdout);
    let diff = &r["diffs"][0];
    let real_now = negotiated_with_real_sshd(&file, &port);
    assert_eq!(diff["now"]["cipher"], real_now.0.as_str(), "{diff:#}");
    apply(diff["patch"].as_str().expect("a unified diff"));
    sshd_t(&file);
    let real_after = negotiated_with_real_sshd(&file, &port);
    // The configured client would pick AES-GCM with the emitted lines; the
    // prediction is the default client's pick.
    assert_ne!(real_after.0, "aes128-gcm@openssh.com", "a default client picks its own first");
    assert_eq!(diff["recommended"]["cipher"], real_after.0.as_str(), "{diff:#}");
    assert_eq!(diff["recommended"]["kex"], real_after.2.as_str(), "{diff:#}");
    assert!(
        diff["peer"]
            .as_str()
            .is_some_and(|p| p.starts_with("a default ssh client (ssh -F /dev/null")),
        "{diff:#}"
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
    let port = server_port();
    let file = d.join("sshd_config");
    std::fs::write(
        &file,
        format!(
            "ListenAddress 127.0.0.1\nPort {}\nHostKey {d}/host\nPidFile {d}/sshd.pid\nAuthorizedKeysFile {d}/authorized_keys\nStrictModes no\nUsePAM no\nCiphers aes128-cbc,aes128-ctr\nMACs hmac-sha1,hmac-sha2-256\nKexAlgorithms diffie-hellman-group14-sha1,diffie-hellman-group14-sha256\n",
            port.get(),
            d = d.display()
        ),
    )
    .unwrap();
    let _ = std::fs::create_dir_all("/run/sshd");
    let _sshd = serve("sshd", &port, &[&file], |_| {
        let mut c = Command::new(sshd());
        c.args(["-D", "-e", "-f"]).arg(&file);
        c
    });
    let port = port.get();
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
    let port = server_port();
    let tls = format!(
        "        root {}/www;\n        ssl_protocols TLSv1.2;\n        ssl_ciphers ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256;\n        ssl_prefer_server_ciphers on;\n",
        d.display()
    );
    let mut conf = nginx_conf(d, port.get(), &tls);
    if unsafe { libc::geteuid() } == 0 {
        conf = format!("user root;\n{conf}");
    }
    let file = d.join("nginx.conf");
    std::fs::write(&file, conf).unwrap();
    let _nginx = serve("nginx", &port, &[&file], |_| nginx(&file, d));
    let port = port.get();
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
    let thr = change(diff, "throughput");
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
        let err = String::from_utf8_lossy(&out.stderr);
        let n = diffs
            .iter()
            .find(|d| d["software"] == "nginx")
            .unwrap_or_else(|| panic!("no nginx diff in {diffs:#?}\n{text}\n{err}"));
        assert!(text.contains("nginx — /etc/nginx/nginx.conf"), "{text}");
        assert!(n["now"]["suite"].is_string(), "{n:#}");
        // Its negotiated choice was measured in the run.
        let thr = change(n, "throughput");
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

/// A poor configuration of `software` (TLS 1.0 to 1.2, a CBC suite first, the
/// server's order): `check` predicts its gain by measuring through two private
/// instances of the real software (one with the file's TLS lines, one with the
/// recommended ones), with paired slices, and leaves nothing running or on disk.
fn poor_server_is_measured_through_the_real_software(software: &str, shown: &str, programs: &[&str], file: &str, text: &str) {
    if !programs
        .iter()
        .any(|p| ["/usr/sbin", "/usr/bin"].iter().any(|d| Path::new(d).join(p).exists()))
    {
        return common::missing(&format!("{software} is not installed"));
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tmp = tempfile::tempdir().unwrap();
    let (conf, export, stdout) = (d.join(file), d.join("run.json"), d.join("check.json"));
    std::fs::write(&conf, text).unwrap();
    // More than nginx's 15 s: three of these may run side by side, and the
    // step through the server gets only what the first pass left.
    let err = std::fs::File::create(d.join("check.err")).unwrap();
    let (status, pid) = check_through(software, "20s", &conf, tmp.path(), &export, &stdout, err.into());
    assert_eq!(status.code(), Some(1), "a poor config is a finding");
    let r = json_of(&std::fs::read(&stdout).unwrap());
    let diff = &r["diffs"][0];
    assert_eq!(diff["now"]["openssl_name"], "ECDHE-RSA-AES128-SHA", "{diff:#}");
    let thr = change(diff, "throughput");
    assert!(
        thr["how"]
            .as_str()
            .is_some_and(|h| h.contains(&format!("through a private {shown} "))),
        "not measured through {shown}: {thr:#}\nits stderr: {}",
        std::fs::read_to_string(d.join("check.err")).unwrap_or_default()
    );
    let cpu = change(diff, "server CPU per GB");
    assert!(
        cpu["how"]
            .as_str()
            .is_some_and(|h| h.contains(&format!("through a private {shown} "))),
        "{cpu:#}"
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&export).unwrap()).unwrap();
    let mode = format!("through-{software}");
    let through: Vec<&Value> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["kind"] == "tls-bulk" && x["metric"] == "bytes_per_sec" && x["subject"]["mode"] == mode.as_str())
        .collect();
    assert_eq!(through.len(), 2, "{through:#?}");
    for (side, want) in [("now", &diff["now"]), ("recommended", &diff["recommended"])] {
        let rec = through
            .iter()
            .find(|x| x["subject"]["suite"] == want["suite"] && x["subject"]["protocol"] == want["version"])
            .unwrap_or_else(|| panic!("no {mode} record of {side} {want}: {through:#?}"));
        assert_eq!(rec["status"], "ok", "{rec:#}");
        assert!(rec["samples"].as_u64().unwrap() >= 3, "{side}: {rec:#}");
        assert_eq!(
            thr[side]["median"], rec["median"],
            "{side}: the diff's figure is the {mode} record's"
        );
    }
    let paired = &doc["run"]["settings"][format!("through_{software}").as_str()]["paired_gain"];
    assert!(paired["pairs"].as_u64().unwrap() >= 3, "{paired:#}");
    assert_eq!(thr["gain"], paired["gain"], "{thr:#}");
    assert_eq!(processes_mentioning(&tmp.path().display().to_string()), Vec::<String>::new());
    assert_eq!(private_dirs(software, tmp.path(), None), Vec::<PathBuf>::new());
    for shared in ["/tmp", "/dev/shm"] {
        assert_eq!(private_dirs(software, Path::new(shared), Some(pid)), Vec::<PathBuf>::new());
    }
}

const POOR_CIPHERS: &str = "ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-SHA:AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256";

#[test]
fn poor_apache_throughput_is_measured_through_private_apache_and_nothing_is_left() {
    let text = format!(
        "<VirtualHost 127.0.0.1:8443>\nSSLEngine on\nSSLProtocol -all +TLSv1 +TLSv1.1 +TLSv1.2\nSSLCipherSuite {POOR_CIPHERS}\nSSLHonorCipherOrder on\n</VirtualHost>\n"
    );
    poor_server_is_measured_through_the_real_software("apache", "Apache", &["apache2", "httpd"], "apache2.conf", &text);
}

#[test]
fn poor_haproxy_throughput_is_measured_through_private_haproxy_and_nothing_is_left() {
    let text = format!(
        "global\n    ssl-default-bind-ciphers {POOR_CIPHERS}\n    ssl-default-bind-options ssl-min-ver TLSv1.0 ssl-max-ver TLSv1.2\n\
         defaults\n    mode http\n    timeout connect 5s\n    timeout client 5s\n    timeout server 5s\n\
         frontend f\n    bind 127.0.0.1:8443 ssl crt /etc/ssl/site.pem\n"
    );
    poor_server_is_measured_through_the_real_software("haproxy", "HAProxy", &["haproxy"], "haproxy.cfg", &text);
}

#[test]
fn poor_stunnel_throughput_is_measured_through_private_stunnel_and_nothing_is_left() {
    let text = format!(
        "[https]\naccept = 127.0.0.1:8443\nconnect = 127.0.0.1:80\ncert = /etc/ssl/site.pem\nsslVersionMax = TLSv1.2\nciphers = {POOR_CIPHERS}\noptions = CIPHER_SERVER_PREFERENCE\n"
    );
    poor_server_is_measured_through_the_real_software("stunnel", "stunnel", &["stunnel4", "stunnel"], "stunnel.conf", &text);
}
