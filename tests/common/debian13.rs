//! A cached Debian 13 (trixie) root for the tests that run cipherbench against
//! Debian 13's OpenSSL 3.5, GnuTLS 3.8, OpenSSH 10 and nginx (issue 27). It is built
//! once by `scripts/debian13-root.sh` under [`DEFAULT_DIR`] (or
//! `CIPHERBENCH_DEBIAN13_ROOT`), outside the clone so that every clone and CI run
//! reuses it, and reused; every command runs inside it through the
//! same script, in a private mount namespace.

// Each test crate uses its own part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The project's checkout.
fn project() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn script() -> PathBuf {
    project().join("scripts/debian13-root.sh")
}

/// Where the root is cached when `CIPHERBENCH_DEBIAN13_ROOT` is not set (only root
/// builds it, so a system cache directory; the Makefile's `debian13-root` agrees).
pub const DEFAULT_DIR: &str = "/var/cache/cipherbench/debian13-root";

/// A finished Debian 13 root.
pub struct Root {
    pub dir: PathBuf,
}

/// Why a test cannot have the root: not root is a skip everywhere (the machine
/// cannot do it); a failed build skips elsewhere but fails under `CI=true`, where
/// the tests run as root with Debian's mirrors reachable.
fn unavailable(why: &str) -> Option<Root> {
    eprintln!("skipped: {why}");
    None
}

impl Root {
    /// Builds the root (minutes, once) or reuses the cached one; `None` after a
    /// `skipped: ...` line when this machine cannot.
    pub fn get() -> Option<Root> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return unavailable("a Debian 13 root needs root (debootstrap, chroot and mount): run the test as root");
        }
        let dir = std::env::var_os("CIPHERBENCH_DEBIAN13_ROOT")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(DEFAULT_DIR));
        let t = Instant::now();
        let out = Command::new(script())
            .arg(&dir)
            .stdin(Stdio::null())
            .output()
            .expect("scripts/debian13-root.sh");
        if !out.status.success() {
            let why = format!(
                "scripts/debian13-root.sh {} failed ({}):\n{}",
                dir.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("{why}under CI=true the Debian 13 root must build");
            }
            return unavailable(&why);
        }
        if t.elapsed() > Duration::from_secs(10) {
            eprintln!("built the Debian 13 root {} in {:.0?}", dir.display(), t.elapsed());
        }
        Some(Root { dir })
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
        let d = tempfile::Builder::new().prefix("cb-deb13-").tempdir_in(&tmp).unwrap();
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
            .arg(&self.dir)
            .arg("--")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("timeout(1) and scripts/debian13-root.sh");
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
/// host, a `bind … ssl` frontend, a service), each with its `lines` (none: Debian
/// 13's defaults), on 127.0.0.1 at `ports` (in that order).
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

/// Apache 2.4, HAProxy 3.0 and stunnel 5 of Debian 13 take the lines emitted for
/// them (`apache`, `haproxy`, `stunnel`), each through its own parser, and serve
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

/// A TLS server block with Debian 13's TLS defaults (its nginx.conf sets
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
