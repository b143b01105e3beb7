//! A private nginx: the system binary, started by absolute path with
//! `-p DIR -e DIR/error.log -c DIR/nginx.conf` (`daemon off`, one worker) on a free
//! random 127.0.0.1 port, from a temporary 0700 directory holding a generated
//! certificate and key, the config and its logs. It serves one generated file, so
//! that what a user's TLS lines cost can be measured *through* the server that
//! reads them (`measure::tls::through`), not only in-process.
//!
//! The TLS lines are the caller's (`ssl_protocols`, `ssl_ciphers`, …): only `ssl_`
//! directives are accepted, one per line, so nothing else of a configuration can
//! ride along.
//!
//! As root, the worker runs as `nobody` (`user nobody nogroup;`): the master reads
//! the certificate and key (0600, root's) before it drops privileges, and the
//! served file lives in a second 0700 directory owned by `nobody`, the only thing
//! the worker reads. That directory must be reachable by `nobody`: a private
//! TMPDIR (0700, as tests set it) is not, so it then goes to /tmp or /dev/shm;
//! only where neither can be reached does the worker stay root (`user root
//! root;`), which is acceptable for one generated file served on 127.0.0.1 for
//! the seconds measured. Non-root, nginx runs as the user and the `user` line is
//! left out.
//!
//! Cleanup follows the private sshd (`super::openssh::daemon`): `Drop` stops the
//! master and its worker and removes both directories, so it happens on a normal
//! end, an error and a panic; Ctrl-C only sets a flag, so `Drop` runs too; a hook
//! registered with [`crate::interrupt`] stops it on a forced exit; and directories
//! left by a run that was killed outright are swept at the next start.

use crate::backend::private::{self, Daemon, Layout, Served, Start};
use crate::backend::process::{self, descendants};
use anyhow::{bail, Result};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The path of the served file.
pub const PATH: &str = private::PATH;

/// How private directories are named in the temporary directory.
const PREFIX: &str = "cipherbench-nginx-";
pub use crate::backend::private::Spec;

/// A running private nginx. Dropping it stops it and removes its directories.
pub struct PrivateNginx {
    daemon: Daemon,
}

/// The account the worker runs as when the master is root: (user, group, uid, gid).
#[cfg(test)]
fn unprivileged() -> Result<(String, String, u32, u32)> {
    private::unprivileged("nginx's worker")
}

/// The `*_temp_path` directives this binary knows (every module it was built with
/// that buffers to disk), so that a non-root nginx never touches /var/lib/nginx.
fn temp_paths(binary: &Path, within: Duration) -> Vec<&'static str> {
    let by = crate::deadline::run().min(crate::deadline::Deadline::after(within));
    let v = process::output_by(Command::new(binary).arg("-V"), by)
        .ok()
        .flatten()
        .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
        .unwrap_or_default();
    let mut out = vec!["client_body"];
    for m in ["proxy", "fastcgi", "uwsgi", "scgi"] {
        if !v.contains(&format!("--without-http_{m}_module")) {
            out.push(m);
        }
    }
    out
}

/// Whether `line` is one TLS directive and nothing else.
fn tls_line_ok(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("ssl_") && t.ends_with(';') && t.matches(';').count() == 1 && private::one_line(t)
}

/// The configuration of a private instance: one worker, in the foreground, on
/// 127.0.0.1:`port`, serving `www`, with `tls` (whole `ssl_…;` lines).
pub fn config_text(dir: &Path, www: &Path, port: u16, user: Option<(&str, &str)>, temp: &[&str], tls: &[String]) -> Result<String> {
    if let Some(bad) = tls.iter().find(|l| !tls_line_ok(l)) {
        bail!("not one TLS directive: '{bad}' (the private nginx takes ssl_… lines only)");
    }
    let d = dir.display();
    let mut c = String::from("# cipherbench private nginx\n");
    if let Some((u, g)) = user {
        c.push_str(&format!("user {u} {g};\n"));
    }
    c.push_str(&format!(
        "worker_processes 1;\ndaemon off;\nmaster_process on;\npid {d}/nginx.pid;\nerror_log {d}/error.log error;\nevents {{\n    worker_connections 64;\n}}\nhttp {{\n    access_log off;\n"
    ));
    for t in temp {
        c.push_str(&format!("    {t}_temp_path {d}/tmp/{t};\n"));
    }
    c.push_str(&format!(
        "    keepalive_requests 1000000;\n    keepalive_timeout 60s;\n    default_type application/octet-stream;\n    server {{\n        listen 127.0.0.1:{port} ssl;\n        server_name localhost;\n        root {www};\n        ssl_certificate {d}/cert.pem;\n        ssl_certificate_key {d}/key.pem;\n",
        www = www.display()
    ));
    for l in tls {
        c.push_str(&format!("        {}\n", l.trim()));
    }
    c.push_str("    }\n}\n");
    Ok(c)
}

/// `nginx -t` of `config` under the prefix `dir`.
fn test_command(binary: &Path, dir: &Path, config: &Path) -> Command {
    let mut c = Command::new(binary);
    c.arg("-t")
        .arg("-q")
        .arg("-p")
        .arg(format!("{}/", dir.display()))
        .arg("-e")
        .arg(dir.join("test.log"))
        .arg("-c")
        .arg(config);
    c
}

impl PrivateNginx {
    /// Writes the directories and config, checks the config with `nginx -t`,
    /// starts nginx and waits until it accepts connections and has its worker
    /// (`backend::private`: another port if the chosen one was taken). A config
    /// nginx refuses, or an nginx that does not answer within
    /// `spec.start_within`, is an error that carries nginx's own words.
    pub fn start(spec: &Spec) -> Result<PrivateNginx> {
        if let Some(bad) = spec.tls_lines.iter().find(|l| !tls_line_ok(l)) {
            bail!("not one TLS directive: '{bad}' (the private nginx takes ssl_… lines only)");
        }
        let temp = if spec.binary.is_absolute() {
            temp_paths(spec.binary, spec.start_within)
        } else {
            Vec::new()
        };
        let config = |l: &Layout, port: u16| -> Result<String> {
            std::fs::create_dir_all(l.dir.join("tmp"))?;
            let www = l.www.as_deref().unwrap_or(&l.dir);
            let user = l.user.as_ref().map(|(u, g)| (u.as_str(), g.as_str()));
            config_text(&l.dir, www, port, user, &temp, spec.tls_lines)
        };
        let check = |l: &Layout, conf: &Path| test_command(spec.binary, &l.dir, conf);
        let command = |l: &Layout, conf: &Path| {
            let mut c = Command::new(spec.binary);
            c.arg("-p")
                .arg(format!("{}/", l.dir.display()))
                .arg("-e")
                .arg(&l.log)
                .arg("-c")
                .arg(conf);
            c
        };
        let daemon = Daemon::start(&Start {
            what: "nginx",
            prefix: PREFIX,
            binary: spec.binary,
            identity: spec.identity,
            body: Some(spec.body),
            file: PATH.trim_start_matches('/'),
            start_within: spec.start_within,
            config_file: "nginx.conf",
            config: &config,
            check: Some(&check),
            refusal: &["[emerg]"],
            command: &command,
            // Its worker is there.
            ready: &|pid| !descendants(pid).is_empty(),
        })?;
        Ok(PrivateNginx { daemon })
    }

    /// The worker's pid (the master's one child).
    pub fn worker(&self) -> Option<u32> {
        descendants(self.pid()?).into_iter().min()
    }
}

impl Served for PrivateNginx {
    fn daemon(&self) -> &Daemon {
        &self.daemon
    }
    /// Its worker.
    fn serving(&self) -> Vec<u32> {
        self.worker().into_iter().collect()
    }
}

/// `nginx -t` of the config: a refusal is an error in nginx's own words.
#[cfg(test)]
fn test_config(binary: &Path, dir: &Path, config: &Path, within: Duration) -> Result<()> {
    let layout = Layout {
        dir: dir.to_path_buf(),
        www: None,
        user: None,
        log: dir.join("error.log"),
    };
    private::check_config("nginx", test_command(binary, dir, config), &layout, &["[emerg]"], within)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::openssl::certs::CertType;
    use crate::backend::openssl::certs::Identity;
    use crate::backend::private::Served;
    use crate::backend::process::{alive, processes_with_arg};
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;
    use std::process::Stdio;
    use std::time::Duration;
    use std::time::Instant;

    fn nginx() -> Option<PathBuf> {
        ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
    }

    const TLS: [&str; 3] = [
        "ssl_protocols TLSv1.2;",
        "ssl_ciphers ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256;",
        "ssl_prefer_server_ciphers on;",
    ];

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// The generated configuration passes nginx's own parser (`nginx -t`), as root
    /// (with the worker's user) and without; other directives than `ssl_…` lines
    /// are refused before nginx sees them.
    #[test]
    fn generated_config_passes_nginx_t() {
        let Some(bin) = nginx() else {
            crate::testing::missing("nginx is not installed");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("tmp")).unwrap();
        let id = Identity::generate(CertType::Rsa2048).unwrap();
        std::fs::write(d.join("key.pem"), id.key.private_key_to_pem_pkcs8().unwrap()).unwrap();
        std::fs::write(d.join("cert.pem"), id.cert.to_pem().unwrap()).unwrap();
        let root = unsafe { libc::geteuid() } == 0;
        let user = root.then(|| unprivileged().unwrap());
        let text = config_text(
            d,
            d,
            // `nginx -t` binds nothing: any port does.
            8443,
            user.as_ref().map(|(u, g, _, _)| (u.as_str(), g.as_str())),
            &temp_paths(&bin, Duration::from_secs(10)),
            &lines(&TLS),
        )
        .unwrap();
        assert!(text.contains("worker_processes 1;") && text.contains("daemon off;") && text.contains("access_log off;"));
        assert!(
            text.contains("listen 127.0.0.1:") && text.contains("        ssl_protocols TLSv1.2;\n"),
            "{text}"
        );
        assert_eq!(text.contains("user nobody "), root, "{text}");
        let conf = d.join("nginx.conf");
        std::fs::write(&conf, &text).unwrap();
        test_config(&bin, d, &conf, Duration::from_secs(10)).unwrap_or_else(|e| panic!("nginx -t refused:\n{text}\n{e:#}"));
        // A TLS line nginx refuses: its own words come back.
        std::fs::write(&conf, config_text(d, d, 1, None, &[], &lines(&["ssl_protocols TLSv9;"])).unwrap()).unwrap();
        let e = format!("{:#}", test_config(&bin, d, &conf, Duration::from_secs(10)).unwrap_err());
        assert!(e.contains("TLSv9") && e.contains("emerg"), "{e}");
        // Anything but one ssl_ directive per line never reaches nginx.
        for bad in [
            "root /;",
            "ssl_ciphers X; root /;",
            "ssl_ciphers X",
            "ssl_ciphers X; } server { listen 80;",
        ] {
            assert!(config_text(d, d, 1, None, &[], &lines(&[bad])).is_err(), "{bad}");
        }
    }

    /// It starts, serves the file over TLS, and leaves nothing behind: no master,
    /// no worker, no directory.
    #[test]
    fn starts_serves_and_leaves_nothing_behind() {
        let Some(bin) = nginx() else {
            crate::testing::missing("nginx is not installed");
            return;
        };
        let id = Identity::generate(CertType::Rsa2048).unwrap();
        let body = vec![42u8; 4096];
        let tls = lines(&TLS);
        let n = PrivateNginx::start(&Spec {
            binary: &bin,
            tls_lines: &tls,
            identity: &id,
            body: &body,
            start_within: Duration::from_secs(10),
        })
        .unwrap();
        let (pid, worker, dirs) = (n.pid().unwrap(), n.worker().unwrap(), n.dirs());
        assert_eq!(dirs.len(), 2);
        for d in &dirs {
            let mode = std::fs::metadata(d).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", d.display());
        }
        assert!(alive(pid) && alive(worker));
        // What s_client gets: the configured suite, and the file's length.
        let out = Command::new("openssl")
            .args(["s_client", "-quiet", "-ign_eof", "-connect"])
            .arg(n.addr().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin
                    .take()
                    .unwrap()
                    .write_all(b"GET /1m.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
                c.wait_with_output()
            })
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        assert!(text.contains("Content-Length: 4096"), "{text}");
        drop(n);
        assert!(
            !alive(pid) && !alive(worker),
            "nginx {pid} or its worker {worker} outlived its owner"
        );
        for d in dirs {
            assert!(!d.exists(), "{} outlived its owner", d.display());
        }
    }

    /// A TLS line nginx refuses is a clear error naming nginx's message, at once.
    /// An nginx that never answers `-t` holds nothing: the start gives up after
    /// `start_within` with a clear error, and leaves no process behind.
    #[test]
    fn an_nginx_that_hangs_is_given_up_in_time() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("nginx");
        std::fs::write(&fake, "#!/bin/sh\nexec sleep 60\n").unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let id = Identity::generate(CertType::EcdsaP256).unwrap();
        let t0 = Instant::now();
        let e = PrivateNginx::start(&Spec {
            binary: &fake,
            tls_lines: &lines(&["ssl_protocols TLSv1.3;"]),
            identity: &id,
            body: b"ok",
            start_within: Duration::from_millis(800),
        })
        .err()
        .expect("a hanging nginx is an error");
        let took = t0.elapsed();
        assert!(took < Duration::from_secs(5), "{took:?}");
        assert!(format!("{e:#}").contains("no answer within 0.8 s"), "{e:#}");
        assert!(
            processes_with_arg(&fake.display().to_string()).is_empty(),
            "the fake nginx outlived the start"
        );
    }

    #[test]
    fn a_refused_config_is_a_clear_error() {
        let Some(bin) = nginx() else {
            crate::testing::missing("nginx is not installed");
            return;
        };
        let id = Identity::generate(CertType::EcdsaP256).unwrap();
        let tls = lines(&["ssl_ciphers NO-SUCH-SUITE;", "ssl_protocols TLSv1.2;"]);
        let t0 = Instant::now();
        let e = PrivateNginx::start(&Spec {
            binary: &bin,
            tls_lines: &tls,
            identity: &id,
            body: b"x",
            start_within: Duration::from_secs(10),
        })
        .err()
        .expect("nginx refuses a cipher list that matches nothing");
        let e = format!("{e:#}");
        assert!(e.contains("nginx refused") && e.contains("NO-SUCH-SUITE"), "{e}");
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    }
}
