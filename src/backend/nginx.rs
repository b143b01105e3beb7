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

use crate::backend::openssl::certs::Identity;
use crate::backend::process::{self, descendants, signal, OWNER};
use anyhow::{anyhow, bail, Context, Result};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// The path of the served file.
pub const PATH: &str = "/1m.bin";

/// Instances alive in this process, for the forced-exit hook: (master pid, directories).
static LIVE: Mutex<Vec<(u32, Vec<PathBuf>)>> = Mutex::new(Vec::new());

/// How private directories are named in the temporary directory.
const PREFIX: &str = "cipherbench-nginx-";
/// What to start.
pub struct Spec<'a> {
    /// The nginx binary, by absolute path.
    pub binary: &'a Path,
    /// The TLS directives, each a whole `ssl_…;` line.
    pub tls_lines: &'a [String],
    pub identity: &'a Identity,
    /// The body served at [`PATH`].
    pub body: &'a [u8],
    /// How long it may take to answer (capped by the run's deadline).
    pub start_within: Duration,
}

/// A running private nginx. Dropping it stops it and removes its directories.
pub struct PrivateNginx {
    child: Option<Child>,
    dir: Option<tempfile::TempDir>,
    www: Option<tempfile::TempDir>,
    port: u16,
}

/// The account the worker runs as when the master is root: (user, group, uid, gid).
fn unprivileged() -> Result<(String, String, u32, u32)> {
    let id = |file: &str, name: &str| -> Option<u32> {
        std::fs::read_to_string(file).ok()?.lines().find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.first() == Some(&name) && f.len() > 2).then(|| f[2].parse().ok()).flatten()
        })
    };
    let uid = id("/etc/passwd", "nobody").ok_or_else(|| anyhow!("no user 'nobody' in /etc/passwd for the private nginx's worker"))?;
    let (group, gid) = ["nogroup", "nobody"]
        .into_iter()
        .find_map(|g| id("/etc/group", g).map(|gid| (g, gid)))
        .ok_or_else(|| anyhow!("no group 'nogroup' or 'nobody' in /etc/group for the private nginx's worker"))?;
    Ok(("nobody".into(), group.into(), uid, gid))
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
    t.starts_with("ssl_") && t.ends_with(';') && t.matches(';').count() == 1 && !t.contains(['{', '}', '\n', '#'])
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

/// A free port on 127.0.0.1 (the kernel picks it; nginx binds it right after).
fn free_port() -> Result<u16> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("no free port on 127.0.0.1")?;
    Ok(l.local_addr()?.port())
}

fn private_dir(what: &str, parent: &Path) -> Result<tempfile::TempDir> {
    let d = tempfile::Builder::new()
        .prefix(PREFIX)
        .tempdir_in(parent)
        .with_context(|| format!("cannot create the private nginx's {what} directory in {}", parent.display()))?;
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700))?;
    std::fs::write(d.path().join(OWNER), std::process::id().to_string())?;
    Ok(d)
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    f.write_all(bytes)?;
    Ok(())
}

/// Whether an unprivileged user can reach `dir` (every directory on its path
/// lets others through).
fn reachable(dir: &Path) -> bool {
    let Ok(dir) = dir.canonicalize() else { return false };
    dir.ancestors()
        .all(|d| std::fs::metadata(d).is_ok_and(|m| m.permissions().mode() & 0o001 != 0))
}

/// Where the served file's directory goes when the worker runs as `nobody`: the
/// temporary directory, unless a private one (0700, as tests and CI set TMPDIR)
/// keeps `nobody` out; then /tmp or /dev/shm. `None` when none can be reached.
fn www_parent() -> Option<PathBuf> {
    [std::env::temp_dir(), PathBuf::from("/tmp"), PathBuf::from("/dev/shm")]
        .into_iter()
        .find(|d| reachable(d))
}

fn chown(path: &Path, uid: u32, gid: u32) -> Result<()> {
    std::os::unix::fs::chown(path, Some(uid), Some(gid)).with_context(|| format!("cannot hand {} to the worker's user", path.display()))
}

/// The configuration directory, the document directory and the worker's user and group.
type Prepared = (tempfile::TempDir, tempfile::TempDir, Option<(String, String)>);

/// Makes the private configuration and document directories and writes the
/// key, the certificate and the served file; picks the user the worker runs as
/// (`None`: nginx's own default, when not root).
fn prepare(spec: &Spec) -> Result<Prepared> {
    let tmp = std::env::temp_dir();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    // As root, the worker runs as `nobody`, which must reach the served file;
    // where no temporary directory lets it through, the worker stays root
    // (it serves one generated file on 127.0.0.1 for the seconds measured).
    let www_in = if root { www_parent() } else { Some(tmp.clone()) };
    for d in std::iter::once(&tmp).chain(www_in.iter()) {
        sweep_leftovers(d);
    }
    let dir = private_dir("configuration", &tmp)?;
    let www = private_dir("document", www_in.as_deref().unwrap_or(&tmp))?;
    std::fs::create_dir(dir.path().join("tmp"))?;
    write_private(&dir.path().join("key.pem"), &spec.identity.key.private_key_to_pem_pkcs8()?)?;
    write_private(&dir.path().join("cert.pem"), &spec.identity.cert.to_pem()?)?;
    write_private(&www.path().join(PATH.trim_start_matches('/')), spec.body)?;
    let user = match (root, &www_in) {
        (true, Some(_)) => {
            let (u, g, uid, gid) = unprivileged()?;
            // The worker reads the served file and nothing else of ours.
            chown(www.path(), uid, gid)?;
            chown(&www.path().join(PATH.trim_start_matches('/')), uid, gid)?;
            Some((u, g))
        }
        (true, None) => Some(("root".to_string(), "root".to_string())),
        (false, _) => None,
    };
    Ok((dir, www, user))
}

/// Starts the nginx master in its own process group, all output to `log`.
fn spawn_master(binary: &Path, dir: &Path, log: &Path, config: &Path) -> Result<Child> {
    Command::new(binary)
        .arg("-p")
        .arg(format!("{}/", dir.display()))
        .arg("-e")
        .arg(log)
        .arg("-c")
        .arg(config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own process group: a terminal's Ctrl-C reaches cipherbench,
        // which stops it in order, not nginx mid-sample.
        .process_group(0)
        .spawn()
        .with_context(|| format!("cannot start {}", binary.display()))
}

impl PrivateNginx {
    /// Writes the directories and config, checks the config with `nginx -t`,
    /// starts nginx and waits until it accepts connections. Retries on another
    /// port if the chosen one was taken meanwhile. A config nginx refuses, or an
    /// nginx that does not answer within `spec.start_within`, is an error that
    /// carries nginx's own words.
    pub fn start(spec: &Spec) -> Result<PrivateNginx> {
        if !spec.binary.is_absolute() {
            bail!("nginx must be started by absolute path, got '{}'", spec.binary.display());
        }
        let (dir, www, user) = prepare(spec)?;
        let temp = temp_paths(spec.binary, spec.start_within);
        let config = dir.path().join("nginx.conf");
        let log = dir.path().join("error.log");
        let mut last_err = anyhow!("nginx did not start");
        for attempt in 0..3 {
            let port = free_port()?;
            let text = config_text(
                dir.path(),
                www.path(),
                port,
                user.as_ref().map(|(u, g)| (u.as_str(), g.as_str())),
                &temp,
                spec.tls_lines,
            )?;
            std::fs::write(&config, text)?;
            if attempt == 0 {
                test_config(spec.binary, dir.path(), &config, spec.start_within)?;
            }
            let _ = std::fs::remove_file(&log);
            let child = spawn_master(spec.binary, dir.path(), &log, &config)?;
            LIVE.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((child.id(), vec![dir.path().to_path_buf(), www.path().to_path_buf()]));
            crate::interrupt::at_forced_exit(forced_cleanup);
            let mut n = PrivateNginx {
                child: Some(child),
                dir: None,
                www: None,
                port,
            };
            match n.wait_ready(crate::deadline::op(spec.start_within), &log) {
                Ok(()) => {
                    n.dir = Some(dir);
                    n.www = Some(www);
                    return Ok(n);
                }
                Err(e) => {
                    let said = std::fs::read_to_string(&log).unwrap_or_default();
                    drop(n);
                    last_err = e;
                    if !said.contains("Address already in use") {
                        break;
                    }
                }
            }
        }
        Err(last_err)
    }

    /// Polls the port until nginx accepts and its worker is there, or it exits.
    fn wait_ready(&mut self, by: crate::deadline::Deadline, log: &Path) -> Result<()> {
        let (pid, addr) = (self.pid(), self.addr());
        let worker = || pid.is_some_and(|p| !descendants(p).is_empty());
        process::wait_ready("nginx", &mut self.child, addr, log, by, |_| worker().then_some(()))
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// The master's pid while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// The worker's pid (the master's one child).
    pub fn worker(&self) -> Option<u32> {
        descendants(self.pid()?).into_iter().min()
    }

    /// The private directories (configuration, then the served file's).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn dirs(&self) -> Vec<PathBuf> {
        [&self.dir, &self.www]
            .into_iter()
            .flatten()
            .map(|d| d.path().to_path_buf())
            .collect()
    }

    /// Stops the master and its worker, and reaps the master.
    fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pid = child.id();
        let kids = descendants(pid);
        // SIGTERM: nginx's fast shutdown (the master stops its worker, then exits).
        signal(pid, libc::SIGTERM);
        process::reap(&mut child, &kids);
        LIVE.lock().unwrap_or_else(|e| e.into_inner()).retain(|(p, _)| *p != pid);
    }
}

impl Drop for PrivateNginx {
    fn drop(&mut self) {
        self.stop();
        for d in [self.dir.take(), self.www.take()].into_iter().flatten() {
            let _ = d.close();
        }
    }
}

/// `nginx -t` of the config: a refusal is an error in nginx's own words.
fn test_config(binary: &Path, dir: &Path, config: &Path, within: Duration) -> Result<()> {
    // Waited for only until the run's deadline or `within`, as every child is.
    let by = crate::deadline::run().min(crate::deadline::Deadline::after(within));
    let said = process::output_by(
        Command::new(binary)
            .arg("-t")
            .arg("-q")
            .arg("-p")
            .arg(format!("{}/", dir.display()))
            .arg("-e")
            .arg(dir.join("test.log"))
            .arg("-c")
            .arg(config),
        by,
    )
    .with_context(|| format!("cannot run {} -t", binary.display()))?;
    let Some(said) = said else {
        let doing = format!("checking the private nginx configuration ({} -t)", binary.display());
        if crate::deadline::run_expired() || crate::interrupt::requested() {
            return Err(crate::deadline::DeadlinePassed::new(doing).into());
        }
        bail!("{doing}: no answer within {:.1} s", within.as_secs_f64());
    };
    let status = said.status;
    if !status.success() {
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&said.stderr),
            std::fs::read_to_string(dir.join("test.log")).unwrap_or_default()
        );
        let line = said
            .lines()
            .find(|l| l.contains("[emerg]"))
            .unwrap_or_else(|| said.trim())
            .trim()
            .to_string();
        bail!("nginx refused the private configuration with these TLS lines: {line}");
    }
    Ok(())
}

/// CPU seconds (user + system) a process has used, from /proc/PID/stat.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    Some(crate::proc::Stat::read(pid)?.own_ticks() as f64 / crate::proc::ticks_per_second())
}

/// Run by the interrupt handler on a forced exit, just before exiting.
fn forced_cleanup() {
    let live = std::mem::take(&mut *LIVE.lock().unwrap_or_else(|e| e.into_inner()));
    for (pid, dirs) in live {
        for k in descendants(pid) {
            signal(k, libc::SIGKILL);
        }
        signal(pid, libc::SIGKILL);
        for d in dirs {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Removes what a cipherbench stopped outright left in `tmp`: private directories
/// of this user whose owner process is gone, and an nginx still running with a
/// config from one of them. Directories whose owner is alive, or without an owner
/// file yet, are left alone. Returns how many directories were removed. (As root,
/// the served file's directory belongs to `nobody`; it is found by its owner
/// file's owner, root.)
fn sweep_leftovers(tmp: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(tmp) else { return 0 };
    let mut dirs = crate::privdir::own(tmp, PREFIX);
    // The document directories handed to `nobody`: by their owner file's owner.
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    for e in entries.flatten() {
        use std::os::unix::fs::MetadataExt;
        let p = e.path();
        if e.file_name().to_string_lossy().starts_with(PREFIX)
            && !dirs.contains(&p)
            && std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir())
            && std::fs::symlink_metadata(p.join(OWNER)).is_ok_and(|m| m.uid() == uid && m.is_file())
        {
            dirs.push(p);
        }
    }
    process::sweep_orphans(dirs, |d| d.join("nginx.conf"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::openssl::certs::CertType;
    use crate::backend::process::{alive, processes_with_arg};
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

    #[test]
    fn leftovers_of_dead_runs_are_swept() {
        let root = tempfile::tempdir().unwrap();
        let mut gone = Command::new("true").spawn().unwrap();
        gone.wait().unwrap();
        let dead = root.path().join(format!("{PREFIX}dead"));
        let live = root.path().join(format!("{PREFIX}live"));
        for (d, pid) in [(&dead, gone.id()), (&live, std::process::id())] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join(OWNER), pid.to_string()).unwrap();
        }
        assert_eq!(sweep_leftovers(root.path()), 1);
        assert!(!dead.exists() && live.exists());
    }

    #[test]
    fn cpu_seconds_of_a_process() {
        let me = cpu_seconds(std::process::id()).unwrap();
        assert!(me >= 0.0);
        assert!(cpu_seconds(u32::MAX - 1).is_none());
    }
}
