//! `cipherbench check` against the real Apache, HAProxy and stunnel (issue 17's
//! bar: real parts, as tests/check.rs does for nginx and sshd). Each is started as
//! a private instance on 127.0.0.1 from a deliberately poor configuration (CBC and
//! SHA-1 suites first, TLS 1.0 allowed) with a generated certificate, and:
//! - `check --config-from FILE` exits 1 and names each fix with its grade and
//!   cited reason, introducing none;
//! - what it says is negotiated now is what a real default `openssl s_client`
//!   gets from the live server;
//! - its unified diff applies with `patch`, and the patched file passes the
//!   software's own checker (`apache2 -t`, `haproxy -c`; stunnel has none, so it is
//!   started from the patched file);
//! - the patched server gives a default client what the diff recommended, a client
//!   offering only the recommended suite completes a handshake, and a second
//!   `check` says nothing to change with exit 0.
//!
//! The last test checks that the terminal groups many findings per software and
//! cited reason, while `--verbose` and `--json` keep every one.

mod common;

use common::check::{apply, assert_fixes, cb, check, negotiated, s_client, serve, server_port, ServerPort};
use common::{json_of, self_signed, Proc};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Each `check` run's time budget: enough to measure the two choices, small
/// enough to keep a test near 20 s.
const BUDGET: &str = "4s";

/// The poor cipher list the three servers start with (server order enforced).
const POOR_CIPHERS: &str = "ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-SHA:AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256";

/// What the diff of every poor configuration must fix.
const FIXES: &[&str] = &[
    "TLSv1",
    "TLSv1.1",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA",
];

/// One software's round trip.
struct Case<'a> {
    software: &'a str,
    /// The file given to `--config-from`.
    file: PathBuf,
    /// Where it listens (moved when a start finds it taken).
    port: &'a ServerPort,
    /// Starts the real server from `file`.
    start: &'a dyn Fn() -> Proc,
    /// The software's own check of `file`, where it has one.
    validate: Option<&'a dyn Fn()>,
    /// A poor line (as written, indentation included) the diff must replace.
    replaced: &'a str,
}

fn program(candidates: &[&str]) -> String {
    candidates
        .iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or_else(|| panic!("none of {candidates:?} is installed: scripts/ensure-deps.sh test installs it"))
        .to_string()
}

/// The software's own check (`cmd`) must accept the configuration; `shown` is the
/// file printed when it does not.
fn accepted(cmd: &mut Command, shown: &Path, what: &str) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{what} refused:\n{}\n{}",
        std::fs::read_to_string(shown).unwrap(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A plain TCP port that accepts connections (into its backlog) for as long as the
/// test holds it: the backend a TLS proxy connects to after the handshake. A
/// closed port would make stunnel drop the connection, sometimes before the client
/// has read the end of the handshake.
struct Backend(TcpListener);

impl Backend {
    fn new() -> Backend {
        Backend(TcpListener::bind("127.0.0.1:0").unwrap())
    }
    fn port(&self) -> u16 {
        self.0.local_addr().unwrap().port()
    }
}

fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

fn round_trip(c: &Case) {
    let (code, r) = check(&c.file, c.software, BUDGET);
    assert_eq!(code, 1, "a poor config is a finding: {r:#}");
    let diff = &r["diffs"][0];
    assert_eq!(diff["software"], c.software, "{diff:#}");
    // Each fix is named, with a grade and a cited reason; nothing is introduced.
    assert_fixes(diff, FIXES);

    // What cipherbench says is negotiated is what a real default client gets.
    {
        let _server = (c.start)();
        let real = negotiated(c.port.get());
        assert_eq!(real, ("TLSv1.2".to_string(), "ECDHE-RSA-AES128-SHA".to_string()));
        assert_eq!(diff["now"]["version"], real.0.as_str(), "{diff:#}");
        assert_eq!(diff["now"]["openssl_name"], real.1.as_str(), "{diff:#}");
    }

    // The diff applies and the software accepts the result.
    let patch = diff["patch"].as_str().unwrap_or_else(|| panic!("no unified diff: {diff:#}"));
    assert!(patch.contains(&format!("\n-{}\n", c.replaced)), "{patch}");
    apply(patch);
    if let Some(validate) = c.validate {
        validate();
    }

    // Applied once: nothing to change, and check exits 0.
    let (code, again) = check(&c.file, c.software, BUDGET);
    let d2 = &again["diffs"][0];
    assert_eq!(code, 0, "{again:#}");
    assert_eq!(d2["nothing_to_change"], true, "{d2:#}");
    assert!(again["findings"].as_array().unwrap().is_empty(), "{again:#}");

    // The patched server: a default client gets what the diff recommended, and a
    // client that offers only the recommended suite completes a handshake.
    let _server = (c.start)();
    let real = negotiated(c.port.get());
    assert_eq!(d2["now"]["version"], real.0.as_str(), "{d2:#}");
    assert_eq!(d2["now"]["openssl_name"], real.1.as_str(), "{d2:#}");
    assert_eq!(diff["recommended"]["openssl_name"], real.1.as_str(), "{diff:#}");
    let rec = diff["recommended"]["openssl_name"].as_str().unwrap();
    let only: Vec<&str> = if diff["recommended"]["version"] == "TLSv1.3" {
        vec!["-ciphersuites", rec]
    } else {
        vec!["-tls1_2", "-cipher", rec]
    };
    let got = s_client(c.port.get(), &only).unwrap_or_else(|e| panic!("no handshake offering only {rec}:\n{e}"));
    assert_eq!(got.1, rec);
}

#[test]
fn poor_apache_diff_names_each_fix_matches_reality_and_applies() {
    let apache = program(&["/usr/sbin/apache2", "/usr/sbin/httpd"]);
    let modules = ["/usr/lib/apache2/modules", "/usr/lib64/httpd/modules", "/usr/lib/httpd/modules"]
        .into_iter()
        .find(|p| Path::new(p).join("mod_ssl.so").exists())
        .expect("mod_ssl.so");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    self_signed(d, &["-newkey", "rsa:2048"]);
    let port = server_port();
    // The TLS lines are in an included file, as on a real server (sites-enabled).
    let site = d.join("ssl-site.conf");
    let poor = format!("    SSLCipherSuite {POOR_CIPHERS}");
    std::fs::write(
        &site,
        format!(
            "<VirtualHost 127.0.0.1:{port}>\n    SSLEngine on\n    SSLCertificateFile {d}/cert.pem\n    SSLCertificateKeyFile {d}/key.pem\n    SSLProtocol -all +TLSv1 +TLSv1.1 +TLSv1.2\n{poor}\n    SSLOpenSSLConfCmd Ciphersuites TLS_AES_256_GCM_SHA384\n    SSLHonorCipherOrder on\n</VirtualHost>\n",
            d = d.display()
        ),
    )
    .unwrap();
    // Root must name an unprivileged user for the workers (Apache refuses root).
    let user = if is_root() { "User nobody\nGroup nogroup\n" } else { "" };
    let file = d.join("apache2.conf");
    std::fs::write(
        &file,
        format!(
            "ServerRoot {d}\nDefaultRuntimeDir {d}\nPidFile {d}/apache2.pid\nErrorLog {d}/error.log\nServerName 127.0.0.1\nDocumentRoot {d}\n{user}LoadModule mpm_event_module {modules}/mod_mpm_event.so\nLoadModule ssl_module {modules}/mod_ssl.so\nListen 127.0.0.1:{port}\nInclude {site}\n",
            d = d.display(),
            site = site.display()
        ),
    )
    .unwrap();
    let validate = || accepted(Command::new(&apache).arg("-t").arg("-f").arg(&file), &site, "apache2 -t");
    validate();
    let start = || {
        serve("apache2", &port, &[&file, &site], |_| {
            let mut c = Command::new(&apache);
            c.args(["-D", "FOREGROUND", "-f"]).arg(&file);
            c
        })
    };
    round_trip(&Case {
        software: "apache",
        file: file.clone(),
        port: &port,
        start: &start,
        validate: Some(&validate),
        replaced: &poor,
    });
    // The TLS 1.3 list set with SSLOpenSSLConfCmd (which mod_ssl applies last) was
    // replaced, not left to override the new line.
    let after = std::fs::read_to_string(&site).unwrap();
    assert!(!after.contains("SSLOpenSSLConfCmd Ciphersuites"), "{after}");
}

#[test]
fn poor_haproxy_diff_names_each_fix_matches_reality_and_applies() {
    let haproxy = program(&["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (cert, key) = self_signed(d, &["-newkey", "rsa:2048"]);
    let pem = [std::fs::read(cert).unwrap(), std::fs::read(key).unwrap()].concat();
    std::fs::write(d.join("site.pem"), pem).unwrap();
    let port = server_port();
    let backend = Backend::new();
    let poor = "    ssl-default-bind-options ssl-min-ver TLSv1.0 ssl-max-ver TLSv1.2 no-tls-tickets";
    let file = d.join("haproxy.cfg");
    std::fs::write(
        &file,
        format!(
            "global\n    pidfile {d}/haproxy.pid\n    ssl-default-bind-ciphers {POOR_CIPHERS}\n{poor}\n\ndefaults\n    mode tcp\n    timeout connect 5s\n    timeout client 5s\n    timeout server 5s\n\nfrontend tls\n    bind 127.0.0.1:{port} ssl crt {d}/site.pem\n    default_backend plain\n\nbackend plain\n    server backend 127.0.0.1:{backend}\n",
            d = d.display(),
            backend = backend.port()
        ),
    )
    .unwrap();
    let validate = || accepted(Command::new(&haproxy).arg("-c").arg("-f").arg(&file), &file, "haproxy -c");
    validate();
    let start = || {
        serve("haproxy", &port, &[&file], |_| {
            let mut c = Command::new(&haproxy);
            c.arg("-db").arg("-f").arg(&file);
            c
        })
    };
    round_trip(&Case {
        software: "haproxy",
        file: file.clone(),
        port: &port,
        start: &start,
        validate: Some(&validate),
        replaced: poor,
    });
}

#[test]
fn poor_stunnel_diff_names_each_fix_matches_reality_and_applies() {
    let stunnel = program(&["/usr/bin/stunnel4", "/usr/bin/stunnel", "/usr/sbin/stunnel"]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    self_signed(d, &["-newkey", "rsa:2048"]);
    let port = server_port();
    let backend = Backend::new();
    let poor = format!("ciphers = {POOR_CIPHERS}");
    let file = d.join("stunnel.conf");
    std::fs::write(
        &file,
        format!(
            "; a private instance\nforeground = yes\npid = {d}/stunnel.pid\n\n[tls]\naccept = 127.0.0.1:{port}\nconnect = 127.0.0.1:{backend}\ncert = {d}/cert.pem\nkey = {d}/key.pem\noptions = NO_TICKET\n{poor}\nsslVersionMin = TLSv1\nsslVersionMax = TLSv1.2\noptions = CIPHER_SERVER_PREFERENCE\n",
            d = d.display(),
            backend = backend.port()
        ),
    )
    .unwrap();
    // stunnel has no check mode: starting it from the patched file is the check.
    let start = || {
        serve("stunnel", &port, &[&file], |_| {
            let mut c = Command::new(&stunnel);
            c.arg(&file);
            c
        })
    };
    round_trip(&Case {
        software: "stunnel",
        file: file.clone(),
        port: &port,
        start: &start,
        validate: None,
        replaced: &poor,
    });
    // Its other options stay.
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(after.contains("\noptions = NO_TICKET\n"), "{after}");
}

/// A system OpenSSL configuration whose list (ALL) offers dozens of suites the
/// policy refuses: the terminal groups them (one `FINDING` line for the software,
/// each cited reason once), `--verbose` prints one line per finding, and `--json`
/// keeps every finding with its option and reason.
#[test]
fn check_groups_many_findings_and_verbose_lists_each() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("openssl.cnf");
    std::fs::write(
        &file,
        "openssl_conf = init\n\n[init]\nssl_conf = ssl\n\n[ssl]\nsystem_default = sd\n\n[sd]\nMinProtocol = TLSv1\nCipherString = ALL:@SECLEVEL=0\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let out = cb()
            .env("NO_COLOR", "1")
            .args(["check", "--for", "openssl", "--budget", "3s", "--config-from"])
            .arg(&file)
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let report = json_of(run(&["--json"]).as_bytes());
    let findings = report["findings"].as_array().unwrap();
    let policy: Vec<_> = findings.iter().filter(|f| f["kind"] == "policy").collect();
    assert!(policy.len() >= 20, "{findings:#?}");
    for f in &policy {
        assert!(f["option"].is_string() && f["reason"].is_string() && f["list"].is_string(), "{f}");
    }

    let grouped = run(&[]);
    // The policy findings are the same in every run; a speed finding depends on
    // each run's measurements (one line each, at most one per run here).
    let heads: Vec<&str> = grouped.lines().filter(|l| l.starts_with("FINDING")).collect();
    assert!(heads.len() <= 3, "one line per software and kind: {heads:#?}");
    assert!(
        heads.contains(&format!("FINDING openssl: offers {} options that policy intermediate refuses", policy.len()).as_str()),
        "{grouped}"
    );
    // Each cited reason once; the section after the diff is far shorter than the findings.
    let section = &grouped[grouped.find("FINDING").unwrap()..];
    assert!(section.lines().count() * 2 < policy.len(), "{section}");
    let mut reasons: Vec<&str> = policy.iter().map(|f| f["reason"].as_str().unwrap()).collect();
    reasons.sort();
    reasons.dedup();
    for r in reasons {
        let first_words: String = r.split(' ').take(3).collect::<Vec<_>>().join(" ");
        assert!(section.contains(&first_words), "{r} missing:\n{section}");
    }
    // Within 80 columns, but for a speed finding's one line.
    let grouped_lines = section.lines().filter(|l| !l.contains("on the table"));
    assert!(grouped_lines.clone().all(|l| l.chars().count() <= 80), "{section}");
    let last = section.lines().last().unwrap();
    assert!(
        last.starts_with("check: ") && last.contains(&format!("({} policy", policy.len())),
        "{last}"
    );

    let verbose = run(&["--verbose"]);
    let each: Vec<&str> = verbose.lines().filter(|l| l.starts_with("FINDING")).collect();
    assert_eq!(
        each.iter().filter(|l| l.contains("refused by policy")).count(),
        policy.len(),
        "{verbose}"
    );
    assert!(each.len() <= policy.len() + 2, "{verbose}");
}
