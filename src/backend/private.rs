//! What every private TLS server shares (nginx, Apache, HAProxy, stunnel): the
//! system binary started by absolute path in its own process group, from a
//! temporary 0700 directory holding a generated certificate and key (key.pem,
//! cert.pem, and both.pem for the servers that take them in one file), its
//! configuration and its log, on a free random 127.0.0.1 port (another one when
//! the chosen port was taken meanwhile), its configuration first checked by its
//! own parser where it has one.
//!
//! As root a server drops privileges where it does: its children or itself run
//! as `nobody` (the caller's configuration says so with [`Layout::user`]); a
//! served file then lives in a second 0700 directory owned by `nobody`, in a
//! temporary directory `nobody` can reach (a private TMPDIR, 0700 as tests set
//! it, is not: /tmp or /dev/shm then).
//!
//! Cleanup: `Drop` stops the server with everything it forked and removes the
//! directories (a normal end, an error, a panic; Ctrl-C only sets a flag, so
//! `Drop` runs too); a hook registered with [`crate::interrupt`] stops it on a
//! forced exit; and directories left by a run that was killed outright are swept
//! at the next start.
//!
//! [`PlainHttp`]: the plaintext HTTP/1.1 server a TLS proxy (HAProxy, stunnel)
//! fronts, a thread of this process on 127.0.0.1.

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

/// The path of the file a private server serves.
pub const PATH: &str = "/1m.bin";

/// Instances alive in this process, for the forced-exit hook: (pid, directories).
static LIVE: Mutex<Vec<(u32, Vec<PathBuf>)>> = Mutex::new(Vec::new());

/// What to start: the same for every private TLS server.
#[derive(Clone, Copy)]
pub struct Spec<'a> {
    /// The binary, by absolute path.
    pub binary: &'a Path,
    /// The TLS lines, each one whole directive of the software's own syntax.
    pub tls_lines: &'a [String],
    pub identity: &'a Identity,
    /// The body every GET of [`PATH`] gets.
    pub body: &'a [u8],
    /// How long it may take to answer (capped by the run's deadline).
    pub start_within: Duration,
}

/// A running private server, whichever it is.
pub trait Served {
    fn daemon(&self) -> &Daemon;
    fn addr(&self) -> SocketAddr {
        self.daemon().addr()
    }
    /// Its pid while it runs (the master, for a server that forks).
    fn pid(&self) -> Option<u32> {
        self.daemon().pid()
    }
    /// The private directories (configuration, then the served file's).
    #[cfg_attr(not(test), allow(dead_code))]
    fn dirs(&self) -> Vec<PathBuf> {
        self.daemon().dirs()
    }
    /// The processes whose CPU serves the requests: its one process unless
    /// it says otherwise.
    fn serving(&self) -> Vec<u32> {
        self.pid().into_iter().collect()
    }
}

impl Served for Daemon {
    fn daemon(&self) -> &Daemon {
        self
    }
}

/// A private TLS proxy (HAProxy, stunnel) and the plaintext HTTP server of this
/// process it fronts. Dropping it stops both.
pub struct Proxy {
    daemon: Daemon,
    _backend: PlainHttp,
}

impl Proxy {
    /// Starts the plaintext server with `body`, then the proxy `daemon` gives in
    /// front of it.
    pub fn start(body: &[u8], daemon: impl FnOnce(SocketAddr) -> Result<Daemon>) -> Result<Proxy> {
        let backend = PlainHttp::start(body)?;
        Ok(Proxy {
            daemon: daemon(backend.addr())?,
            _backend: backend,
        })
    }
}

impl Served for Proxy {
    fn daemon(&self) -> &Daemon {
        &self.daemon
    }
}

/// The directories and account of one private server, for its configuration.
pub struct Layout {
    /// The configuration directory (0700): key.pem, cert.pem, both.pem, the log.
    pub dir: PathBuf,
    /// The served file's directory, when it serves one.
    pub www: Option<PathBuf>,
    /// The user and group it drops to (as root); `None`: it runs as the user.
    pub user: Option<(String, String)>,
    /// Its log (and the child's stdout and stderr).
    pub log: PathBuf,
}

/// A command on a layout and its configuration file.
pub type CommandFor<'a> = dyn Fn(&Layout, &Path) -> Command + 'a;

/// How to start one kind of private server.
pub struct Start<'a> {
    /// Its name in messages: `nginx`, `Apache`.
    pub what: &'static str,
    /// How its private directories are named in the temporary directory.
    pub prefix: &'static str,
    /// The binary, by absolute path.
    pub binary: &'a Path,
    pub identity: &'a Identity,
    /// The file it serves at `/` + [`Start::file`], when it serves one itself.
    pub body: Option<&'a [u8]>,
    /// The served file's name in `www`.
    pub file: &'static str,
    /// How long it may take to answer (capped by the run's deadline).
    pub start_within: Duration,
    /// The configuration's name in the directory.
    pub config_file: &'static str,
    /// The configuration for a port.
    pub config: &'a dyn Fn(&Layout, u16) -> Result<String>,
    /// Its parser on the configuration, run once before the first start.
    pub check: Option<&'a CommandFor<'a>>,
    /// Words that mark the line of its parser's refusal worth quoting.
    pub refusal: &'a [&'a str],
    /// The command that runs it in the foreground.
    pub command: &'a CommandFor<'a>,
    /// Besides accepting connections, whether it is ready (given its pid).
    pub ready: &'a dyn Fn(u32) -> bool,
}

/// A running private server. Dropping it stops it and removes its directories.
pub struct Daemon {
    child: Option<Child>,
    dirs: Vec<tempfile::TempDir>,
    port: u16,
}

/// The account a server drops to when started as root: (user, group, uid, gid).
pub fn unprivileged(what: &str) -> Result<(String, String, u32, u32)> {
    let id = |file: &str, name: &str| -> Option<u32> {
        std::fs::read_to_string(file).ok()?.lines().find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.first() == Some(&name) && f.len() > 2).then(|| f[2].parse().ok()).flatten()
        })
    };
    let uid = id("/etc/passwd", "nobody").ok_or_else(|| anyhow!("no user 'nobody' in /etc/passwd for the private {what}"))?;
    let (group, gid) = ["nogroup", "nobody"]
        .into_iter()
        .find_map(|g| id("/etc/group", g).map(|gid| (g, gid)))
        .ok_or_else(|| anyhow!("no group 'nogroup' or 'nobody' in /etc/group for the private {what}"))?;
    Ok(("nobody".into(), group.into(), uid, gid))
}

/// A free port on 127.0.0.1 (the kernel picks it; the server binds it right after).
pub fn free_port() -> Result<u16> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("no free port on 127.0.0.1")?;
    Ok(l.local_addr()?.port())
}

fn private_dir(s: &Start, what: &str, parent: &Path) -> Result<tempfile::TempDir> {
    let d = tempfile::Builder::new()
        .prefix(s.prefix)
        .tempdir_in(parent)
        .with_context(|| format!("cannot create the private {}'s {what} directory in {}", s.what, parent.display()))?;
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

/// Where the served file's directory goes when the server runs as `nobody`: the
/// temporary directory, unless a private one keeps `nobody` out; then /tmp or
/// /dev/shm. `None` when none can be reached.
fn www_parent() -> Option<PathBuf> {
    [std::env::temp_dir(), PathBuf::from("/tmp"), PathBuf::from("/dev/shm")]
        .into_iter()
        .find(|d| reachable(d))
}

fn chown(path: &Path, uid: u32, gid: u32) -> Result<()> {
    std::os::unix::fs::chown(path, Some(uid), Some(gid)).with_context(|| format!("cannot hand {} to the server's user", path.display()))
}

/// The configuration directory, the document directory and the user and group.
type Prepared = (tempfile::TempDir, Option<tempfile::TempDir>, Option<(String, String)>);

/// Makes the private directories and writes the key, the certificate and the
/// served file; picks the user it drops to as root (`root` where `nobody`
/// reaches no temporary directory for the served file).
fn prepare(s: &Start) -> Result<Prepared> {
    let tmp = std::env::temp_dir();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let www_in = if root && s.body.is_some() {
        www_parent()
    } else {
        Some(tmp.clone())
    };
    for d in std::iter::once(&tmp).chain(www_in.iter()) {
        sweep_leftovers(d, s.prefix, s.config_file);
    }
    let dir = private_dir(s, "configuration", &tmp)?;
    let key = s.identity.key.private_key_to_pem_pkcs8()?;
    let cert = s.identity.cert.to_pem()?;
    write_private(&dir.path().join("key.pem"), &key)?;
    write_private(&dir.path().join("cert.pem"), &cert)?;
    write_private(&dir.path().join("both.pem"), &[cert, key].concat())?;
    let www = match s.body {
        Some(body) => {
            let w = private_dir(s, "document", www_in.as_deref().unwrap_or(&tmp))?;
            write_private(&w.path().join(s.file), body)?;
            Some(w)
        }
        None => None,
    };
    let user = match (root, &www_in) {
        (true, Some(_)) => {
            let (u, g, uid, gid) = unprivileged(s.what)?;
            // It reads the served file and nothing else of ours.
            if let Some(w) = &www {
                chown(w.path(), uid, gid)?;
                chown(&w.path().join(s.file), uid, gid)?;
            }
            Some((u, g))
        }
        (true, None) => Some(("root".to_string(), "root".to_string())),
        (false, _) => None,
    };
    Ok((dir, www, user))
}

/// Starts `cmd` in its own process group (a terminal's Ctrl-C reaches
/// cipherbench, which stops it in order), its output appended to `log`.
fn spawn(what: &str, mut cmd: Command, log: &Path) -> Result<Child> {
    let out = std::fs::OpenOptions::new().create(true).append(true).open(log)?;
    cmd.stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .process_group(0)
        .spawn()
        .with_context(|| format!("cannot start the private {what}"))
}

impl Daemon {
    /// Writes the directories and configuration, checks it with the server's
    /// own parser, starts it and waits until it accepts connections (and
    /// `ready`). Retries on another port if the chosen one was taken meanwhile.
    /// A configuration it refuses, or a server that does not answer within
    /// `start_within`, is an error that carries its own words.
    pub fn start(s: &Start) -> Result<Daemon> {
        if !s.binary.is_absolute() {
            bail!("{} must be started by absolute path, got '{}'", s.what, s.binary.display());
        }
        let (dir, www, user) = prepare(s)?;
        let layout = Layout {
            dir: dir.path().to_path_buf(),
            www: www.as_ref().map(|w| w.path().to_path_buf()),
            user,
            log: dir.path().join("error.log"),
        };
        let config = dir.path().join(s.config_file);
        let mut last_err = anyhow!("{} did not start", s.what);
        for attempt in 0..3 {
            let port = free_port()?;
            std::fs::write(&config, (s.config)(&layout, port)?)?;
            if let (0, Some(check)) = (attempt, s.check) {
                check_config(s.what, check(&layout, &config), &layout, s.refusal, s.start_within)?;
            }
            let _ = std::fs::remove_file(&layout.log);
            let child = spawn(s.what, (s.command)(&layout, &config), &layout.log)?;
            let mut dirs = vec![dir.path().to_path_buf()];
            dirs.extend(layout.www.clone());
            LIVE.lock().unwrap_or_else(|e| e.into_inner()).push((child.id(), dirs));
            crate::interrupt::at_forced_exit(forced_cleanup);
            let mut d = Daemon {
                child: Some(child),
                dirs: Vec::new(),
                port,
            };
            let (pid, addr) = (child_pid(&d), d.addr());
            let ready = process::wait_ready(s.what, &mut d.child, addr, &layout.log, crate::deadline::op(s.start_within), |_| {
                (s.ready)(pid).then_some(())
            });
            match ready {
                Ok(()) => {
                    d.dirs.push(dir);
                    d.dirs.extend(www);
                    return Ok(d);
                }
                Err(e) => {
                    let said = std::fs::read_to_string(&layout.log).unwrap_or_default();
                    drop(d);
                    last_err = e;
                    if !said.contains("Address already in use") {
                        break;
                    }
                }
            }
        }
        Err(last_err)
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// Its pid while it runs (the master, for a server that forks).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// The private directories (configuration, then the served file's).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn dirs(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.path().to_path_buf()).collect()
    }

    /// Stops it (SIGTERM, then what [`process::reap`] does) with its descendants.
    fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pid = child.id();
        let kids = descendants(pid);
        signal(pid, libc::SIGTERM);
        process::reap(&mut child, &kids);
        LIVE.lock().unwrap_or_else(|e| e.into_inner()).retain(|(p, _)| *p != pid);
    }
}

fn child_pid(d: &Daemon) -> u32 {
    d.pid().unwrap_or(0)
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.stop();
        for d in self.dirs.drain(..) {
            let _ = d.close();
        }
    }
}

/// CPU seconds (user + system) a process has used, from /proc/PID/stat.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    Some(crate::proc::Stat::read(pid)?.own_ticks() as f64 / crate::proc::ticks_per_second())
}

/// The server's parser on its configuration (`cmd`): a refusal is an error in its
/// own words (the first line holding one of `refusal`, from its output and log).
pub fn check_config(what: &str, mut cmd: Command, layout: &Layout, refusal: &[&str], within: Duration) -> Result<()> {
    // Waited for only until the run's deadline or `within`, as every child is.
    let by = crate::deadline::run().min(crate::deadline::Deadline::after(within));
    let program = cmd.get_program().to_string_lossy().into_owned();
    let said = process::output_by(&mut cmd, by).with_context(|| format!("cannot run {program}"))?;
    let Some(said) = said else {
        let doing = format!("checking the private {what} configuration ({program})");
        if crate::deadline::run_expired() || crate::interrupt::requested() {
            return Err(crate::deadline::DeadlinePassed::new(doing).into());
        }
        bail!("{doing}: no answer within {:.1} s", within.as_secs_f64());
    };
    if said.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}{}{}",
        String::from_utf8_lossy(&said.stderr),
        String::from_utf8_lossy(&said.stdout),
        std::fs::read_to_string(layout.dir.join("test.log")).unwrap_or_default(),
        std::fs::read_to_string(&layout.log).unwrap_or_default()
    );
    let line = text
        .lines()
        .find(|l| refusal.iter().any(|w| l.contains(w)))
        .unwrap_or_else(|| text.trim())
        .trim()
        .to_string();
    bail!("{what} refused the private configuration with these TLS lines: {line}");
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

/// Removes what a cipherbench stopped outright left in `tmp`: private
/// directories named `prefix…` of this user whose owner process is gone, and a
/// server still running with a `config` from one of them. Directories whose
/// owner is alive, or without an owner file yet, are left alone. Returns how
/// many directories were removed. (As root, a served file's directory belongs
/// to `nobody`; it is found by its owner file's owner, root.)
pub fn sweep_leftovers(tmp: &Path, prefix: &str, config: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(tmp) else { return 0 };
    let mut dirs = crate::privdir::own(tmp, prefix);
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    for e in entries.flatten() {
        use std::os::unix::fs::MetadataExt;
        let p = e.path();
        if e.file_name().to_string_lossy().starts_with(prefix)
            && !dirs.contains(&p)
            && std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir())
            && std::fs::symlink_metadata(p.join(OWNER)).is_ok_and(|m| m.uid() == uid && m.is_file())
        {
            dirs.push(p);
        }
    }
    process::sweep_orphans(dirs, |d| d.join(config))
}

/// Whether `line` is one directive of a server's own syntax and nothing more:
/// one line, no comment, no block, no continuation, no second statement.
pub fn one_line(line: &str) -> bool {
    !line.trim().is_empty() && !line.contains(['\n', '\r', '#', '{', '}', '<', '>', '\\', '\0'])
}

/// A plaintext HTTP/1.1 server on 127.0.0.1 in a thread of this process: every
/// GET is answered with the one body, keep-alive, for a TLS proxy to front.
/// Dropping it stops it (the connections a proxy still holds end when the proxy
/// closes them, or after a minute without a request).
pub struct PlainHttp {
    addr: SocketAddr,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl PlainHttp {
    pub fn start(body: &[u8]) -> Result<PlainHttp> {
        use std::sync::atomic::{AtomicBool, Ordering};
        let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("no free port on 127.0.0.1 for the plaintext backend")?;
        let addr = l.local_addr()?;
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let body: std::sync::Arc<[u8]> = body.into();
        let flag = stop.clone();
        let thread = std::thread::Builder::new().name("plain-http".into()).spawn(move || {
            for conn in l.incoming() {
                if flag.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(c) = conn else { continue };
                let (body, flag) = (body.clone(), flag.clone());
                let _ = std::thread::Builder::new()
                    .name("plain-http-conn".into())
                    .spawn(move || serve_plain(c, &body, &flag));
            }
        })?;
        Ok(PlainHttp {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

/// Answers one connection's GETs with `body` until it closes, asks to, idles
/// for a minute, or the server stops.
fn serve_plain(mut c: std::net::TcpStream, body: &[u8], stop: &std::sync::atomic::AtomicBool) {
    use std::io::{Read, Write};
    let _ = c.set_read_timeout(Some(Duration::from_secs(60)));
    let _ = c.set_nodelay(true);
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            match c.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) if buf.len() + n <= 64 * 1024 => buf.extend_from_slice(&chunk[..n]),
                Ok(_) => return,
            }
            continue;
        };
        let request = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
        buf.drain(..end + 4);
        if c.write_all(head.as_bytes()).and_then(|_| c.write_all(body)).is_err() {
            return;
        }
        if request.contains("\r\nconnection: close") {
            return;
        }
    }
}

impl Drop for PlainHttp {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        // Wakes the accept loop, which then sees the flag.
        let _ = std::net::TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The first of `names` installed in sbin or bin (a missing one is said,
    /// and fails under CI=true).
    pub fn program(names: &[&str]) -> Option<PathBuf> {
        let found = names
            .iter()
            .flat_map(|n| ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"].map(|d| Path::new(d).join(n)))
            .find(|p| p.exists());
        if found.is_none() {
            crate::testing::missing(&format!("{} is not installed", names[0]));
        }
        found
    }

    /// A private server's case: the programs, TLS lines that give
    /// ECDHE-RSA-AES128-SHA over TLS 1.2, a line the software refuses and a word
    /// of its refusal, and lines that must never reach it.
    pub struct Case<'a> {
        pub programs: &'a [&'a str],
        pub good: &'a [&'a str],
        pub refused: &'a str,
        pub said: &'a str,
        pub outside: &'a [&'a str],
    }

    /// `start` with the case's good lines serves a GET over TLS with them (the
    /// body, the suite), and leaves nothing behind (no process of its tree, no
    /// directory); the refused line comes back in the software's words; the
    /// outside lines never reach it.
    pub fn starts_serves_refuses_and_leaves_nothing_behind<S: Served>(start: impl Fn(&Spec) -> Result<S>, c: &Case) {
        let Some(bin) = program(c.programs) else { return };
        let id = Identity::generate(crate::backend::openssl::certs::CertType::Rsa2048).unwrap();
        let lines = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let good = lines(c.good);
        let spec = Spec {
            binary: &bin,
            tls_lines: &good,
            identity: &id,
            body: b"served privately",
            start_within: Duration::from_secs(10),
        };
        let s = start(&spec).unwrap();
        let pid = s.pid().unwrap();
        let (tree, dirs) = ([vec![pid], descendants(pid)].concat(), s.dirs());
        let (cipher, got) = get_over_tls(s.addr(), PATH);
        assert!(
            got.starts_with("HTTP/1.1 200") && got.ends_with("\r\n\r\nserved privately"),
            "{got}"
        );
        assert_eq!(cipher, "ECDHE-RSA-AES128-SHA");
        drop(s);
        assert!(tree.iter().all(|p| !process::alive(*p)), "{} outlived its owner", c.programs[0]);
        for d in dirs {
            assert!(!d.exists(), "{} outlived its owner", d.display());
        }
        let bad = lines(&[c.refused]);
        let e = start(&Spec { tls_lines: &bad, ..spec }).err().expect("refused");
        assert!(format!("{e:#}").contains(c.said), "{e:#}");
        for bad in c.outside {
            let l = lines(&[bad]);
            assert!(start(&Spec { tls_lines: &l, ..spec }).is_err(), "{bad}");
        }
    }

    /// One GET of `path` over TLS (libssl's defaults, no verification):
    /// the cipher negotiated (OpenSSL's name) and the whole response.
    pub fn get_over_tls(addr: SocketAddr, path: &str) -> (String, String) {
        use std::io::{Read, Write};
        let mut b = openssl::ssl::SslConnector::builder(openssl::ssl::SslMethod::tls()).unwrap();
        b.set_verify(openssl::ssl::SslVerifyMode::NONE);
        let tcp = std::net::TcpStream::connect(addr).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut s = b.build().connect("localhost", tcp).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").unwrap();
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got);
        let cipher = s.ssl().current_cipher().map(|c| c.name().to_string()).unwrap_or_default();
        (cipher, String::from_utf8_lossy(&got).into_owned())
    }

    #[test]
    fn leftovers_of_dead_runs_are_swept() {
        let root = tempfile::tempdir().unwrap();
        let mut gone = Command::new("true").spawn().unwrap();
        gone.wait().unwrap();
        let dead = root.path().join("cipherbench-x-dead");
        let live = root.path().join("cipherbench-x-live");
        for (d, pid) in [(&dead, gone.id()), (&live, std::process::id())] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join(OWNER), pid.to_string()).unwrap();
        }
        assert_eq!(sweep_leftovers(root.path(), "cipherbench-x-", "x.conf"), 1);
        assert!(!dead.exists() && live.exists());
    }

    #[test]
    fn cpu_seconds_of_a_process() {
        let me = cpu_seconds(std::process::id()).unwrap();
        assert!(me >= 0.0);
        assert!(cpu_seconds(u32::MAX - 1).is_none());
    }

    /// The plaintext backend answers keep-alive GETs with the body, and stops.
    #[test]
    fn the_plaintext_backend_answers_keep_alive_gets() {
        use std::io::{Read, Write};
        let p = PlainHttp::start(b"hello").unwrap();
        let mut c = std::net::TcpStream::connect(p.addr()).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(b"GET /x HTTP/1.1\r\nHost: a\r\n\r\nGET /y HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut got = String::new();
        c.read_to_string(&mut got).unwrap();
        assert_eq!(got.matches("HTTP/1.1 200 OK").count(), 2, "{got}");
        assert!(got.ends_with("\r\n\r\nhello"), "{got}");
        let addr = p.addr();
        drop(p);
        assert!(std::net::TcpStream::connect(addr).is_err(), "still listening after drop");
    }
}
