//! The cached Debian roots for the tests that run cipherbench against a Debian
//! release's own software: Debian 13 (trixie: OpenSSL 3.5, GnuTLS 3.8, OpenSSH 10,
//! nginx 1.26; issue 27, tests/debian13.rs) and Debian forky (testing, the next
//! stable: OpenSSL 3.6, OpenSSH 10.6, nginx 1.30, NZBGet 21; issue 38,
//! tests/forky.rs). Each is built once by `scripts/debian-root.sh SUITE DIR` under
//! its [`Suite::default_dir`] (or its [`Suite::env`]), outside the clone so that
//! every clone and CI run reuses it, and reused; every command runs inside it
//! through the same script, in a private mount namespace.

// Each test crate uses its own part of this module.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The project's checkout.
fn project() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn script() -> PathBuf {
    project().join("scripts/debian-root.sh")
}

/// One Debian release the tests run in.
pub struct Suite {
    /// What the messages call it ("Debian 13").
    pub name: &'static str,
    /// Its codename: the script's SUITE.
    pub codename: &'static str,
    /// The variable naming another DIR.
    pub env: &'static str,
    /// Where the root is cached when [`Suite::env`] is not set (only root builds
    /// it, so a system cache directory; the Makefile's targets agree).
    pub default_dir: &'static str,
    /// The prefix of [`Root::tempdir`]'s directories.
    pub prefix: &'static str,
}

pub const DEBIAN13: Suite = Suite {
    name: "Debian 13",
    codename: "trixie",
    env: "CIPHERBENCH_DEBIAN13_ROOT",
    default_dir: "/var/cache/cipherbench/debian13-root",
    prefix: "cb-deb13-",
};

pub const FORKY: Suite = Suite {
    name: "Debian forky",
    codename: "forky",
    env: "CIPHERBENCH_FORKY_ROOT",
    default_dir: "/var/cache/cipherbench/forky-root",
    prefix: "cb-forky-",
};

/// A finished root of one [`Suite`].
pub struct Root {
    pub dir: PathBuf,
    pub suite: &'static Suite,
}

/// Why a test cannot have the root: not root is a skip everywhere (the machine
/// cannot do it); a failed build skips elsewhere but fails under `CI=true`, where
/// the tests run as root with Debian's mirrors reachable.
fn unavailable(why: &str) -> Option<Root> {
    eprintln!("skipped: {why}");
    None
}

impl Root {
    /// Builds `suite`'s root (minutes, once) or reuses the cached one; `None`
    /// after a `skipped: ...` line when this machine cannot.
    pub fn get(suite: &'static Suite) -> Option<Root> {
        let name = suite.name;
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return unavailable(&format!(
                "a {name} root needs root (debootstrap, chroot and mount): run the test as root"
            ));
        }
        let dir = std::env::var_os(suite.env)
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(suite.default_dir));
        let t = Instant::now();
        let out = Command::new(script())
            .arg(suite.codename)
            .arg(&dir)
            .stdin(Stdio::null())
            .output()
            .expect("scripts/debian-root.sh");
        if !out.status.success() {
            let why = format!(
                "scripts/debian-root.sh {} {} failed ({}):\n{}",
                suite.codename,
                dir.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{why}under CI=true the {name} root must build");
            }
            return unavailable(&why);
        }
        if t.elapsed() > Duration::from_secs(10) {
            eprintln!("built the {name} root {} in {:.0?}", dir.display(), t.elapsed());
        }
        Some(Root { dir, suite })
    }

    /// A path inside the root, from its absolute path there (`/usr/local/bin/x`).
    pub fn path(&self, inside: &str) -> PathBuf {
        self.dir.join(inside.trim_start_matches('/'))
    }

    /// Copies the host's `cipherbench` (the binary under test) to `inside`. Through a
    /// temporary name and a rename, so a copy still running there is never written to.
    pub fn install_binary(&self, inside: &str) {
        let to = self.path(inside);
        let tmp = to.with_extension(format!("tmp{}", std::process::id()));
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(env!("CARGO_BIN_EXE_cipherbench"), &tmp).unwrap();
        std::fs::rename(&tmp, &to).unwrap();
    }

    /// A fresh directory inside the root (under /tmp), removed when dropped; its path
    /// inside the root is `.inside`.
    pub fn tempdir(&self) -> InsideDir {
        let tmp = self.path("/tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let d = tempfile::Builder::new().prefix(self.suite.prefix).tempdir_in(&tmp).unwrap();
        let inside = format!("/tmp/{}", d.path().file_name().unwrap().to_string_lossy());
        InsideDir { dir: d, inside }
    }

    /// Runs `args` inside the root (as root, with /proc, /sys and /dev mounted for
    /// it alone, `HOME=/root`, a clean environment); killed with its whole process
    /// group after `limit`. Returns its output and how long it took.
    pub fn run(&self, args: &[&str], limit: Duration) -> (Output, Duration) {
        let t = Instant::now();
        let out = Command::new("timeout")
            .args(["-k", "5", &format!("{}", limit.as_secs().max(1))])
            .arg(script())
            .arg(self.suite.codename)
            .arg(&self.dir)
            .arg("--")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("timeout(1) and scripts/debian-root.sh");
        (out, t.elapsed())
    }

    /// Runs the script `script(ports)` makes, with [`SERVE`] defined, on `N`
    /// distinct candidate ports ([`crate::ports::candidate`]); again on other ports
    /// while a server in it finds its port taken (status [`PORT_TAKEN`]), up to
    /// [`crate::ports::TRIES`] times. `script` writes whatever configuration names
    /// the ports. Returns the ports of the last run and its output.
    pub fn run_serving<const N: usize>(&self, limit: Duration, mut script: impl FnMut([u16; N]) -> String) -> ([u16; N], Output) {
        let mut last = None;
        for _ in 0..crate::ports::TRIES {
            let mut ports = [0u16; N];
            for i in 0..N {
                ports[i] = loop {
                    let p = crate::ports::candidate();
                    if !ports[..i].contains(&p) {
                        break p;
                    }
                };
            }
            let body = format!("{SERVE} {}", script(ports));
            let (out, _) = self.run(&["/bin/sh", "-c", &body], limit);
            if out.status.code() != Some(PORT_TAKEN) {
                return (ports, out);
            }
            last = Some(out);
        }
        panic!(
            "{} tries in a row found a port taken; the last:\n{}",
            crate::ports::TRIES,
            text(&last.unwrap())
        )
    }

    /// The root's package versions (`.versions`: "package version" lines).
    pub fn version_of(&self, package: &str) -> Option<String> {
        let v = std::fs::read_to_string(self.dir.join(".versions")).ok()?;
        v.lines().find_map(|l| l.strip_prefix(&format!("{package} ")).map(str::to_string))
    }
}

/// A directory under the root's /tmp.
pub struct InsideDir {
    pub dir: tempfile::TempDir,
    /// Its path as seen inside the root.
    pub inside: String,
}

impl InsideDir {
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Output as text, for assertion messages.
pub fn text(out: &Output) -> String {
    format!(
        "{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The status a script run by [`Root::run_serving`] ends with when a server in it
/// found its port taken.
pub const PORT_TAKEN: i32 = 75;

/// For the scripts run by [`Root::run_serving`] (the root shares the host's
/// network): `serve NAME PORT CMD...` starts CMD in the background (stdin empty,
/// its output in `NAME.log` in the current directory, its pid in `$NAME_pid`) and
/// waits, up to 30 s, until the socket listening on 127.0.0.1:PORT is its own
/// (`ss -p`: not merely something answering there), then prints `NAME-up`. When
/// its port is taken ("Address already in use" in its log) it prints `port-taken
/// NAME PORT`, stops every server it started and ends the script with status 75,
/// for [`Root::run_serving`] to run it again on other ports. A server killed by a
/// signal before it listened is said and started again (three starts in all). When
/// the server exits first, or is not listening by then, it prints why (its exit
/// status) and its log, and returns 1.
pub const SERVE: &str = r#"serve() {
  _sn=$1; _sp=$2; shift 2; _stry=1
  "$@" > "$_sn.log" 2>&1 < /dev/null &
  _spid=$!; eval "${_sn}_pid=$_spid"; _served="$_served $_spid"
  _send=$(( $(date +%s) + 30 ))
  while :; do
    if ss -ltnpH "sport = :$_sp" 2>/dev/null | grep -q "pid=$_spid,"; then echo "$_sn-up"; return 0; fi
    if grep -q 'Address already in use' "$_sn.log"; then
      echo "port-taken $_sn $_sp"; kill $_served 2>/dev/null; wait; exit 75
    fi
    if ! kill -0 "$_spid" 2>/dev/null; then
      wait "$_spid"; _sst=$?
      if [ "$_sst" -gt 128 ] && [ "${_stry:-1}" -lt 3 ]; then
        # Killed by a signal before it listened (Debian 13's stunnel once died of
        # SIGSEGV with an empty log, and the same lines then started): said, and
        # started again, at most three starts in all. A refused line exits with
        # a status of its own, never a signal.
        _stry=$(( ${_stry:-1} + 1 ))
        echo "$_sn crashed (status $_sst) before it listened; starting it again (start $_stry of 3)"
        "$@" > "$_sn.log" 2>&1 < /dev/null &
        _spid=$!; eval "${_sn}_pid=$_spid"; _served="$_served $_spid"
        continue
      fi
      echo "$_sn exited (status $_sst) before it listened on 127.0.0.1:$_sp; its log $PWD/$_sn.log:"; cat "$_sn.log"; return 1
    fi
    if [ "$(date +%s)" -ge "$_send" ]; then
      echo "$_sn did not listen on 127.0.0.1:$_sp within 30 s; its log $PWD/$_sn.log:"; cat "$_sn.log"; return 1
    fi
    sleep 0.05
  done
};"#;

/// A shell command that stops the server whose pid is in `pidfile` and waits, up to
/// 10 s, until it is gone (its pid file with it).
pub fn stop(pidfile: &str) -> String {
    format!("p=$(cat {pidfile}) && kill $p && timeout 10 sh -c \"while kill -0 $p 2>/dev/null; do sleep 0.05; done\"; rm -f {pidfile}")
}

/// A certificate in the current directory (key.pem, cert.pem, both.pem for HAProxy)
/// unless there is one.
pub const CERT: &str = "[ -s cert.pem ] || openssl req -x509 -nodes -days 1 -subj /CN=localhost -newkey ec \
     -pkeyopt ec_paramgen_curve:P-256 -keyout key.pem -out cert.pem 2>/dev/null; cat cert.pem key.pem > both.pem;";

/// Writes apache.conf, haproxy.cfg and stunnel.conf under `dir` (a TLS virtual
/// host, a `bind … ssl` frontend, a service), each with its `lines` (none: the
/// root's defaults), on 127.0.0.1 at `ports` (in that order).
pub fn write_server_confs(dir: &InsideDir, [apache, haproxy, stunnel]: [&[String]; 3], ports: [u16; 3]) {
    let d = &dir.inside;
    let apache_conf = format!(
        "ServerRoot /etc/apache2\nServerName localhost\nUser www-data\nGroup www-data\nPidFile {d}/apache.pid\n\
         DefaultRuntimeDir {d}\nErrorLog {d}/apache-error.log\n{}\nListen 127.0.0.1:{p}\n<VirtualHost 127.0.0.1:{p}>\n\
         SSLEngine on\nSSLCertificateFile {d}/cert.pem\nSSLCertificateKeyFile {d}/key.pem\n{}\n</VirtualHost>\n",
        ["mpm_event", "authz_core", "socache_shmcb", "ssl"]
            .map(|m| format!("LoadModule {m}_module /usr/lib/apache2/modules/mod_{m}.so"))
            .join("\n"),
        apache.join("\n"),
        p = ports[0]
    );
    let haproxy_conf = format!(
        "global\n  {}\ndefaults\n  mode http\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\n\
         frontend f\n  bind 127.0.0.1:{} ssl crt {d}/both.pem\n  http-request return status 200\n",
        haproxy.join("\n  "),
        ports[1]
    );
    let stunnel_conf = format!(
        "foreground = yes\npid =\n[t]\naccept = 127.0.0.1:{}\nexec = /bin/cat\ncert = {d}/cert.pem\nkey = {d}/key.pem\n{}\n",
        ports[2],
        stunnel.join("\n")
    );
    for (name, conf) in [
        ("apache.conf", apache_conf),
        ("haproxy.cfg", haproxy_conf),
        ("stunnel.conf", stunnel_conf),
    ] {
        std::fs::write(dir.path().join(name), conf).unwrap();
    }
}

/// Apache 2.4, HAProxy (3.0 in Debian 13, 3.2 in forky) and stunnel 5 of the root
/// take the lines emitted for them (`apache`, `haproxy`, `stunnel`), each through its own parser, and serve
/// with them: `apache2 -t` and a start (mod_ssl applies `SSLOpenSSLConfCmd` only
/// when it starts: `-t` alone takes a bad group), `haproxy -c` and a start, stunnel's
/// own check as it starts ("Configuration successful"); a default `openssl s_client`
/// ends on X25519MLKEM768 with each, and one whose first key share is X25519 does too
/// with Apache and HAProxy. All in one script inside the root (a few seconds).
pub fn servers_take_the_lines(r: &Root, dir: &InsideDir, [apache, haproxy, stunnel]: [&[String]; 3]) {
    let d = &dir.inside;
    let (_, out) = r.run_serving(Duration::from_secs(90), |ports| {
        write_server_confs(dir, [apache, haproxy, stunnel], ports);
        format!(
            "cd {d}; {CERT} \
             g() {{ echo Q | openssl s_client $3 -connect 127.0.0.1:$2 2>&1 | sed -n \"s/^Negotiated TLS1.3 group: /$1 /p\"; }}; \
             apache2 -t -f {d}/apache.conf 2>&1; echo apache-t=$?; \
             serve apache {pa} apache2 -f {d}/apache.conf -DFOREGROUND && \
             {{ g apache {pa} ''; g apache-x25519 {pa} '-groups X25519:X25519MLKEM768'; kill $apache_pid; }}; \
             haproxy -c -q -f {d}/haproxy.cfg 2>&1; echo haproxy-c=$?; \
             serve haproxy {ph} haproxy -db -f {d}/haproxy.cfg && \
             {{ g haproxy {ph} ''; g haproxy-x25519 {ph} '-groups X25519:X25519MLKEM768'; kill $haproxy_pid; }}; \
             serve stunnel {ps} stunnel {d}/stunnel.conf && {{ g stunnel {ps} ''; kill $stunnel_pid; }}; \
             wait; grep -h -E 'Configuration|\\[!\\]' stunnel.log; cat apache-error.log 2>/dev/null | grep -i -E 'error|emerg' | head -5",
            pa = ports[0],
            ph = ports[1],
            ps = ports[2]
        )
    });
    let said = String::from_utf8_lossy(&out.stdout);
    let has = |l: &str| said.lines().any(|x| x.trim() == l);
    for want in [
        "apache-t=0",
        "apache-up",
        "apache X25519MLKEM768",
        "apache-x25519 X25519MLKEM768",
        "haproxy-c=0",
        "haproxy-up",
        "haproxy X25519MLKEM768",
        "haproxy-x25519 X25519MLKEM768",
        "stunnel-up",
        "stunnel X25519MLKEM768",
    ] {
        assert!(
            has(want),
            "no `{want}` with apache {apache:?}, haproxy {haproxy:?}, stunnel {stunnel:?}:\n{}",
            text(&out)
        );
    }
    assert!(said.contains("Configuration successful"), "stunnel: {}", text(&out));
}

/// A TLS server block with Debian 13's and forky's TLS defaults (their nginx.conf sets
/// `ssl_protocols TLSv1.2 TLSv1.3; ssl_prefer_server_ciphers off;` at the http
/// level), or `tls` in their place; private paths under `dir` (inside the root).
pub fn nginx_conf(dir: &str, port: u16, tls: &str) -> String {
    format!(
        "worker_processes 1;\npid {dir}/nginx.pid;\nerror_log {dir}/error.log;\nevents {{ worker_connections 64; }}\n\
         http {{\n    access_log off;\n    client_body_temp_path {dir}/body;\n    proxy_temp_path {dir}/proxy;\n    \
         fastcgi_temp_path {dir}/fastcgi;\n    uwsgi_temp_path {dir}/uwsgi;\n    scgi_temp_path {dir}/scgi;\n    \
         server {{\n        listen 127.0.0.1:{port} ssl;\n        ssl_certificate {dir}/cert.pem;\n        \
         ssl_certificate_key {dir}/key.pem;\n        {tls}\n        root {dir};\n    }}\n}}\n"
    )
}

/// The group `openssl s_client ARGS` ends on against 127.0.0.1:`port`.
pub fn negotiated_group(r: &Root, port: u16, args: &str) -> String {
    let script = format!("echo Q | openssl s_client {args} -connect 127.0.0.1:{port} 2>&1");
    let (out, _) = r.run(&["/bin/sh", "-c", &script], Duration::from_secs(30));
    let s = String::from_utf8_lossy(&out.stdout);
    // A hybrid group is printed as such; a classic one as the peer's temporary key.
    let group = s.lines().find_map(|l| l.strip_prefix("Negotiated TLS1.3 group: ")).or_else(|| {
        s.lines()
            .find_map(|l| l.strip_prefix("Peer Temp Key: "))
            .and_then(|v| v.split(',').next())
    });
    group
        .unwrap_or_else(|| panic!("no TLS 1.3 group from s_client {args}:\n{s}"))
        .trim()
        .to_string()
}

/// OpenSSH 10's default key exchange, hybrid post-quantum, was measured by the
/// main job whose export is `doc` (`out` its output), and comes first in every
/// SSH target's lines.
pub fn mlkem_kex_measured_and_first(doc: &Value, out: &Output) {
    let measured = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["kind"] == "ssh-handshake" && x["subject"]["kex"] == "mlkem768x25519-sha256" && x["status"] == "ok");
    assert!(measured, "mlkem768x25519-sha256 not measured:\n{}", text(out));
    for rec in doc["recommendations"].as_array().unwrap() {
        if rec["protocol"] == "ssh" {
            assert_eq!(
                rec["choice"]["ssh_kex"][0], "mlkem768x25519-sha256",
                "{}: {}",
                rec["target"], rec["lines"]
            );
        }
    }
}

/// Where the binary under test is put inside a root.
pub const BIN: &str = "/usr/local/bin/cipherbench";

/// `out`'s standard output as JSON.
pub fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(out)))
}

/// `ssh --host` against the root's sshd: it ran, negotiated what `ssh -v` did, and
/// the server's kex list it read is the server's (OpenSSH 10's sshd offers no
/// finite-field Diffie-Hellman; its client, whose proposal `ssh -vv` prints a
/// second time after NEWKEYS, still does).
fn ssh_host_reads_the_server(real: &Output, dir: &InsideDir, kex: &str, cipher: &str) {
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

/// `check --for sshd` reads the root's sshd through `sshd -T` (OpenSSH 10.6 prints
/// its keywords capitalised), says what the root's ssh really negotiates with it,
/// adds none of the finite-field Diffie-Hellman OpenSSH 10 dropped, and its lines
/// pass `sshd -t`; `ssh --host` against that sshd reads the server's proposal.
pub fn check_reads_sshd(r: &Root) {
    let (out, took) = r.run(
        &[BIN, "check", "--for", "sshd", "--budget", "10s", "--no-store", "--json"],
        Duration::from_secs(60),
    );
    // 0: nothing to change; 1: findings (Debian 13's and forky's sshd still offer
    // umac-64 and hmac-sha1, which policy intermediate refuses).
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", text(&out));
    assert!(took <= Duration::from_secs(11), "check took {took:.1?} for --budget 10s");
    let d = json(&out);
    let diff = &d["diffs"][0];
    assert_eq!(diff["software"], "sshd", "{diff:#}");
    assert_eq!(diff["file"], "/etc/ssh/sshd_config", "{diff:#}");
    // Read from sshd itself (`sshd -T`, whatever the case of its keywords), not
    // from the client's lists.
    assert_eq!(diff["source"], "/usr/sbin/sshd -T -f /etc/ssh/sshd_config", "{diff:#}");
    assert!(!text(&out).contains("printed no ciphers line"), "{}", text(&out));
    // Nothing OpenSSH 10 dropped comes back (its finite-field Diffie-Hellman).
    let adds = diff["adds"].as_array().unwrap_or_else(|| panic!("{diff:#}"));
    assert!(!adds.iter().any(|a| a.as_str().unwrap().contains("diffie-hellman")), "{adds:?}");

    // "now" is what the root's ssh really negotiates with the root's sshd; and
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

    // The lines are accepted by the root's sshd.
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

/// `check --for nginx` with the root's TLS defaults: while the root's nginx runs,
/// its "now" is a real handshake by the root's default OpenSSL client (the hybrid);
/// stopped, the model, said so; its lines pass `nginx -t`.
pub fn check_reads_nginx(r: &Root) {
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

    // `check` while the real nginx (1.26, 1.30) runs: its "now" is a real handshake
    // by OpenSSL's default client (3.5, 3.6); then what `openssl s_client` gets.
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
    // and its group: OpenSSL 3.5's and 3.6's default client and server settle on
    // the hybrid.
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

/// The names of `list` in a built-in policy's `only` list (data/policies/).
pub fn policy_list(policy: &str, list: &str) -> Vec<String> {
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
pub fn ssh_list(lines: &[String], keyword: &str) -> Vec<String> {
    let l = lines
        .iter()
        .find_map(|l| l.strip_prefix(keyword).and_then(|v| v.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no {keyword} in {lines:?}"));
    l.split(',').map(str::to_string).collect()
}

/// sshd: within `sshd -T`'s defaults, all of the defaults modern accepts, hybrid
/// post-quantum kex first; `sshd -t` takes them and ssh-audit finds no FAIL.
pub fn sshd_lines_hold(r: &Root, d: &str, lines: &[String]) {
    let (out, _) = r.run(
        &["/usr/sbin/sshd", "-T", "-f", "/dev/null", "-h", "/etc/ssh/ssh_host_ed25519_key"],
        Duration::from_secs(30),
    );
    assert!(out.status.success(), "{}", text(&out));
    let defaults = String::from_utf8_lossy(&out.stdout).into_owned();
    for (keyword, list) in [("KexAlgorithms", "ssh_kex"), ("Ciphers", "ssh_ciphers"), ("MACs", "ssh_macs")] {
        let (default, allowed) = (sshd_default(&defaults, keyword), policy_list("modern", list));
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

/// nginx: `nginx -t` takes the lines; a default OpenSSL (3.5, 3.6) client and one whose
/// first key share is X25519 both end on X25519MLKEM768 (the flat list the lines
/// replaced leaves the second on X25519: the control that this can fail);
/// testssl.sh 3.2 lists the KEM as offered.
pub fn nginx_lines_hold(r: &Root, dir: &InsideDir, lines: &[String]) {
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
        r.run(&["/bin/sh", "-c", &stop(&format!("{d}/nginx.pid"))], Duration::from_secs(10));
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

/// The list `sshd -T` printed (`defaults`) for `keyword`: OpenSSH 10.0 prints it in
/// lower case (`kexalgorithms`), 10.6 as written (`KexAlgorithms`; `Macs`).
pub fn sshd_default(defaults: &str, keyword: &str) -> Vec<String> {
    let l = defaults
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            k.eq_ignore_ascii_case(keyword).then_some(v)
        })
        .unwrap_or_else(|| panic!("no {keyword} line from sshd -T:\n{defaults}"));
    l.trim().split(',').map(str::to_string).collect()
}
