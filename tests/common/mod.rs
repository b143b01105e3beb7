//! Set-up shared by the integration tests that run real TLS peers
//! (`tests/tls.rs`, `tests/gnutls_tls.rs`, `tests/recommend.rs`), and in
//! [`check`] by the tests of `cipherbench check` against real servers.

// Each test crate uses its own part of this module.
#![allow(dead_code)]

pub mod check;
pub mod false_alarms;
pub mod ports;

use assert_cmd::Command;
use serde_json::Value;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// `cipherbench --no-store` without colour or the TLS tamper hook, killed after
/// `timeout`.
pub fn cb_tls(timeout: Duration) -> Command {
    let mut c = Command::cargo_bin("cipherbench").unwrap();
    c.env_remove("NO_COLOR").env_remove("CIPHERBENCH_TEST_TLS_TAMPER").arg("--no-store");
    c.timeout(timeout);
    c
}

/// A tool or peer the test needs is not installed: under `CI=true` the test fails
/// (`make test` installs it), elsewhere it says why it skipped.
pub fn missing(what: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{what}, under CI=true: `make test` installs it (scripts/ensure-deps.sh test)");
    }
    eprintln!("skipped: {what}");
}

pub fn json_of(out: &[u8]) -> Value {
    serde_json::from_slice(out).unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(out)))
}

/// Starts the server `command(port)` builds on a port of its own ([`ports::start`]:
/// tried again on another port while its port is taken; its output in `log`), and
/// waits until it listens there; stopped when the returned guard drops.
pub fn start_server(what: &str, log: &Path, command: impl FnMut(u16) -> std::process::Command) -> (u16, Proc) {
    let (port, child) = ports::start(what, log, command);
    (port, Proc(child))
}

/// A child process, killed when the test ends however it ends: SIGTERM first (so
/// nginx's master stops its workers too; SIGKILL would orphan them), then SIGKILL
/// if it is still there after 5 s.
pub struct Proc(pub Child);

impl Drop for Proc {
    fn drop(&mut self) {
        // SAFETY: signals our own child by its pid.
        unsafe { libc::kill(self.0.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits up to 10 s for `child` to accept connections on `port`.
pub fn wait_listening(port: u16, child: &mut Child, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        if let Ok(Some(st)) = child.try_wait() {
            panic!("{what} exited early: {st}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{what} did not listen on {port} within 10 s");
}

/// Runs `openssl ARGS` in `dir`; it must succeed.
pub fn openssl(args: &[&str], dir: &Path) {
    let st = std::process::Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stderr(Stdio::null())
        .status()
        .expect("openssl");
    assert!(st.success(), "openssl {args:?}");
}

/// A self-signed certificate for `CN=localhost` in `dir` (cert.pem, key.pem), with
/// the key `key_args` ask for (`-newkey rsa:2048`, ...).
pub fn self_signed(dir: &Path, key_args: &[&str]) -> (PathBuf, PathBuf) {
    let mut a = vec![
        "req",
        "-x509",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-keyout",
        "key.pem",
        "-out",
        "cert.pem",
    ];
    a.extend_from_slice(key_args);
    openssl(&a, dir);
    (dir.join("cert.pem"), dir.join("key.pem"))
}

/// An ECDSA P-256 self-signed certificate in `dir`: (cert.pem, key.pem).
pub fn p256_cert(dir: &Path) -> (PathBuf, PathBuf) {
    self_signed(dir, &["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"])
}
