//! Hostile values for the commands that hand outside values to other programs or
//! read a configuration: a host that starts with '-', a relative or bare
//! `--config-from`, a configuration that is a device, a FIFO, a directory or too
//! big, and an `Include`d file whose lines the tool quotes back. Each runs the
//! real binary against the real ssh, openssl, nginx, sshd, Apache and HAProxy.
//!
//! - No outside value reaches a child process as an option: a host starting with
//!   '-' is refused with exit 2 and runs nothing.
//! - `--config-from` is the file the user typed, relative to the cwd.
//! - A configuration that is not a regular file, or is larger than 16 MiB, is
//!   refused by name with exit 2 before it is read, within the run's budget.
//! - Nothing from a file the user did not name reaches stdout or stderr: a tool's
//!   message that quotes an included file is relayed as that file and line.

mod common;

use common::check::cb;
use common::json_of;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The marker each hostile included file holds on every line.
const MARK: &str = "SECRET-MARKER-xyz";

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("cipherbench")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Runs `cipherbench ARGS` in `cwd` with `stdin`, its address space capped at
/// 2 GiB (a reader without bounds dies there instead of taking the machine's
/// memory), killed after `limit`: (output, how long it took, whether it had to
/// be killed).
fn run_capped(args: &[&str], cwd: &Path, stdin: Stdio, limit: Duration) -> (Output, Duration, bool) {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; it only lowers this child's own limit.
    unsafe {
        cmd.pre_exec(|| {
            let cap = libc::rlimit {
                rlim_cur: 2 << 30,
                rlim_max: 2 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &cap) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let t0 = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let o = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let e = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let mut killed = false;
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if t0.elapsed() > limit {
            killed = true;
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = t0.elapsed();
    let output = Output {
        status,
        stdout: o.join().unwrap(),
        stderr: e.join().unwrap(),
    };
    (output, took, killed)
}

// ---------------------------------------------------------------- 3: hosts as options

#[test]
fn a_host_that_starts_with_a_dash_is_refused_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let proof = dir.path().join("x");
    let touch = format!("-oProxyCommand=touch {}", proof.display());
    let cases: Vec<Vec<String>> = vec![
        vec!["ssh".into(), format!("--host={touch}")],
        vec!["ssh".into(), format!("--host=me@{touch}")],
        vec!["ssh".into(), format!("--host={touch}"), "--port".into(), "22".into()],
        vec!["tls".into(), format!("--connect={touch}:443")],
        vec!["tls".into(), "--connect".into(), "127.0.0.1:9".into(), format!("--sni={touch}")],
    ];
    for case in cases {
        let mut args: Vec<&str> = case.iter().map(String::as_str).collect();
        args.extend(["--budget", "5s", "--no-store"]);
        let (out, _, killed) = run_capped(&args, dir.path(), Stdio::null(), Duration::from_secs(60));
        let (stdout, stderr) = text(&out);
        assert!(!killed, "{args:?} still ran after 60 s");
        assert!(!proof.exists(), "{args:?} ran the ProxyCommand: {stderr}");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stdout}\n{stderr}");
        assert!(stderr.contains("must not start with '-'"), "{args:?}: {stderr}");
    }
}

// ---------------------------------------------------------------- 4: relative --config-from

/// An nginx.conf that `nginx -T` loads, with `ciphers` for its TLS 1.2 listener.
fn nginx_conf(d: &Path, ciphers: &str) -> String {
    format!(
        "pid {d}/nginx.pid;\nerror_log {d}/error.log;\nevents {{}}\nhttp {{\n    access_log off;\n    server {{\n        listen 127.0.0.1:9 ssl;\n        ssl_certificate {d}/cert.pem;\n        ssl_certificate_key {d}/key.pem;\n        ssl_protocols TLSv1.2;\n        ssl_ciphers {ciphers};\n    }}\n}}\n",
        d = d.display()
    )
}

/// The TLS 1.2 suites the first diff of a check report says are offered now.
fn offered_tls12(report: &serde_json::Value) -> Vec<String> {
    report["diffs"][0]["offered"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["list"] == "tls12_suites")
        .map(|o| o["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_relative_or_bare_config_from_is_the_file_typed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rel = d.join("rel");
    std::fs::create_dir_all(rel.join("rel")).unwrap();
    common::self_signed(d, &["-newkey", "rsa:2048"]);
    // The file named, and a decoy where `nginx -p rel/ -c rel/nginx.conf` would look.
    std::fs::write(rel.join("nginx.conf"), nginx_conf(d, "AES128-SHA")).unwrap();
    std::fs::write(rel.join("rel/nginx.conf"), nginx_conf(d, "AES256-SHA")).unwrap();
    for (cwd, typed) in [
        (d.to_path_buf(), "rel/nginx.conf"),
        (rel.clone(), "nginx.conf"),
        (rel.clone(), "./nginx.conf"),
    ] {
        let out = cb()
            .current_dir(&cwd)
            .args(["check", "--json", "--for", "nginx", "--budget", "3s", "--config-from", typed])
            .output()
            .unwrap();
        let (stdout, stderr) = text(&out);
        let code = out.status.code();
        assert!(
            code == Some(0) || code == Some(1),
            "{typed} in {}: exit {code:?}\n{stderr}",
            cwd.display()
        );
        let r = json_of(stdout.as_bytes());
        let diff = &r["diffs"][0];
        // Read by nginx itself (not the fallback that parses the file alone), from the file typed.
        assert!(diff["source"].as_str().unwrap().starts_with("nginx -T"), "{typed}: {diff:#}");
        assert_eq!(offered_tls12(&r), ["TLS_RSA_WITH_AES_128_CBC_SHA"], "{typed}: the decoy was read");
        // The report names it as typed or as its absolute form.
        let named = diff["file"].as_str().unwrap();
        assert!(named == typed || Path::new(named) == rel.join("nginx.conf"), "{typed}: {named}");
    }
}

// ---------------------------------------------------------------- 5: reads without bounds

#[test]
fn a_config_that_is_no_regular_file_or_too_big_is_refused_by_name_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fifo = d.join("fifo.conf");
    let c = std::ffi::CString::new(fifo.display().to_string()).unwrap();
    // SAFETY: a NUL-terminated path we own.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // One byte over the 16 MiB limit (sparse: nothing is written).
    let big = d.join("big.conf");
    std::fs::File::create(&big).unwrap().set_len((16 << 20) + 1).unwrap();
    let cases: [(&str, &str, &str); 5] = [
        ("/dev/zero", "sshd", "a character device"),
        (fifo.to_str().unwrap(), "nginx", "a FIFO"),
        (d.to_str().unwrap(), "sshd", "a directory"),
        (big.to_str().unwrap(), "sshd", "over the limit of 16 MiB"),
        ("/dev/stdin", "nginx", "a FIFO"),
    ];
    for (file, software, why) in cases {
        // stdin: a pipe that stays open and says nothing (`sleep 30 |`).
        let (out, took, killed) = run_capped(
            &["check", "--for", software, "--budget", "5s", "--no-store", "--config-from", file],
            d,
            Stdio::piped(),
            Duration::from_secs(30),
        );
        let (_, stderr) = text(&out);
        assert!(!killed, "{file}: still running after 30 s (budget 5 s)");
        assert!(took < Duration::from_secs(10), "{file}: {took:?} for a 5 s budget");
        assert_eq!(out.status.code(), Some(2), "{file}: {stderr}");
        assert!(
            stderr.contains(&format!("cannot read the configuration file {file}")),
            "{file}: {stderr}"
        );
        assert!(stderr.contains(why), "{file}: {stderr}");
    }
}

// ---------------------------------------------------------------- 6: included files' lines

/// A file of lines a tool quotes back when it refuses them, each with the marker.
fn secret_file(d: &Path) -> PathBuf {
    let f = d.join("secret.inc");
    std::fs::write(
        &f,
        format!("{MARK}-1;\nCiphers {MARK}-2\nroot:{MARK}-3:19000:0:99999:7:::\nMACs {MARK}-4\n"),
    )
    .unwrap();
    f
}

fn assert_not_relayed(o: &Output, secret: &Path, what: &str) {
    let (stdout, stderr) = text(o);
    for (stream, t) in [("stdout", &stdout), ("stderr", &stderr)] {
        // sshd and ssh lower-case an unknown keyword when they quote it.
        assert!(
            !t.to_ascii_lowercase().contains(&MARK.to_ascii_lowercase()),
            "{what}: {stream} quotes the included file:\n{t}"
        );
    }
    assert!(
        stderr.contains(&format!("{} line ", secret.display())) || stdout.contains(&format!("{} line ", secret.display())),
        "{what}: the included file is not named:\n{stdout}\n{stderr}"
    );
}

#[test]
fn a_tools_error_names_an_included_file_and_line_but_never_quotes_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let secret = secret_file(d);
    let s = secret.display();
    let files = [
        ("sshd", "sshd_config", format!("Port 22\nInclude {s}\nCiphers aes128-ctr\n")),
        ("ssh", "ssh_config", format!("Include {s}\nHost x\n    Ciphers aes128-ctr\n")),
        ("nginx", "nginx.conf", format!("events {{}}\nhttp {{\n    include {s};\n}}\n")),
        (
            "apache",
            "apache2.conf",
            format!("ServerRoot /etc/apache2\nInclude /etc/apache2/mods-enabled/mpm*.load\nInclude {s}\n"),
        ),
    ];
    for (software, name, body) in files {
        let f = d.join(name);
        std::fs::write(&f, body).unwrap();
        let out = cb()
            .args(["check", "--for", software, "--budget", "3s", "--config-from"])
            .arg(&f)
            .output()
            .unwrap();
        assert_not_relayed(&out, &secret, software);
        // sshd and nginx refuse the configuration: bad input.
        if software == "sshd" || software == "nginx" {
            assert_eq!(out.status.code(), Some(2), "{software}: {}", text(&out).1);
        }
    }
}

// ---------------------------------------------------------------- 3: cipher strings as options

#[test]
fn a_cipher_string_that_starts_with_a_dash_is_never_an_option() {
    // OpenSSL reads a leading '-' of a cipher string as "remove"; `openssl ciphers`
    // would read it as an option (and `-provider-path=DIR` is one).
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("openssl.cnf");
    std::fs::write(
        &f,
        "openssl_conf = openssl_init\n[openssl_init]\nssl_conf = ssl_sect\n[ssl_sect]\nsystem_default = sd\n[sd]\nMinProtocol = TLSv1.2\nCipherString = -ALL:ECDHE-RSA-AES128-GCM-SHA256\n",
    )
    .unwrap();
    let out = cb()
        .args(["check", "--json", "--for", "openssl", "--budget", "3s", "--config-from"])
        .arg(&f)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(!stderr.contains("Unknown option"), "{stderr}");
    let code = out.status.code();
    assert!(code == Some(0) || code == Some(1), "exit {code:?}: {stderr}");
    let r = json_of(stdout.as_bytes());
    assert_eq!(offered_tls12(&r), ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"], "{stderr}");
}
