//! The private `sshd`: started from the system binary by absolute path with
//! `-D -e -f CONFIG`, on a free random 127.0.0.1 port, from a temporary 0700
//! directory holding freshly generated host keys, a client key, its
//! authorized_keys line and the config. Every algorithm the binary supports is
//! enabled so that legacy ones can be measured too.
//!
//! Cleanup is in `Drop` (daemon and its connection children stopped and reaped,
//! directory removed), so it happens on a normal end, on an error and on a panic;
//! Ctrl-C only sets a flag, so the run ends normally and `Drop` runs too. A second
//! Ctrl-C exits at once, and a hook registered with [`crate::interrupt`] cleans up
//! then.
//!
//! The daemon also owns its CPU-accounting cgroup (root only, see `join_cgroup`):
//! made as it starts, removed as it stops. `super::cpu` reads it and never
//! changes it, so the arrow runs one way (cpu → daemon).

use super::OpenSsh;
use crate::backend::process::{self, signal, OWNER};
pub use crate::backend::process::{alive, descendants};
use anyhow::{anyhow, bail, Context, Result};
use std::io::Read;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// Daemons alive in this process, for the forced-exit hook: (pid, directory).
static LIVE: Mutex<Vec<(u32, PathBuf)>> = Mutex::new(Vec::new());

/// A running private sshd. Dropping it stops it and removes its directory.
pub struct PrivateSshd {
    child: Option<Child>,
    dir: Option<tempfile::TempDir>,
    port: u16,
    user: String,
    banner: String,
}

/// The files in the private directory.
pub struct Files {
    pub config: PathBuf,
    pub client_key: PathBuf,
    pub known_hosts: PathBuf,
    pub log: PathBuf,
}

fn files(dir: &Path) -> Files {
    Files {
        config: dir.join("sshd_config"),
        client_key: dir.join("client_ed25519"),
        known_hosts: dir.join("known_hosts"),
        log: dir.join("sshd.log"),
    }
}

/// The login name of the effective user (the only one the daemon lets in).
pub fn current_user() -> String {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    if let Ok(passwd) = std::fs::read_to_string("/etc/passwd") {
        for line in passwd.lines() {
            let f: Vec<&str> = line.split(':').collect();
            if f.len() > 2 && f[2].parse::<u32>().ok() == Some(uid) {
                return f[0].to_string();
            }
        }
    }
    std::env::var("USER").unwrap_or_else(|_| "root".into())
}

fn keygen(args: &[&str], path: &Path) -> Result<()> {
    let mut cmd = Command::new("ssh-keygen");
    cmd.args(["-q", "-N", "", "-C", "cipherbench"]).args(args).arg("-f").arg(path);
    let out = process::output_within(&mut cmd, process::QUERY_LIMIT)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENOENT) => anyhow!("cannot run ssh-keygen: {e}; install the package openssh-client"),
            _ => anyhow!("cannot run ssh-keygen: {e}"),
        })?
        .ok_or_else(|| anyhow!("ssh-keygen {} did not finish in time and was stopped", args.join(" ")))?;
    if !out.status.success() {
        bail!(
            "ssh-keygen {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// A free port on 127.0.0.1 (the kernel picks it; sshd binds it right after).
fn free_port() -> Result<u16> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("no free port on 127.0.0.1")?;
    Ok(l.local_addr()?.port())
}

/// The algorithms a private daemon offers.
#[derive(Debug, Clone, Copy)]
pub enum Offer<'a> {
    /// Every algorithm the binary supports (legacy ones too): what is measured.
    Every,
    /// Given `sshd_config` lines (`Ciphers`, `MACs`, `KexAlgorithms`,
    /// `HostKeyAlgorithms`, comments) and sshd's own defaults for every list they
    /// do not set: an emitted sshd block as sshd will run it, or (no lines)
    /// sshd as installed, a client's usual peer.
    Lines(&'a [String]),
}

/// The daemon config offering `offer` (with [`Offer::Every`] every algorithm
/// the binary supports), keys only, one user.
pub fn config_text(dir: &Path, port: u16, user: &str, ssh: &OpenSsh, as_root: bool, offer: Offer) -> String {
    let join = |v: &[String]| v.join(",");
    let mut c = String::new();
    c.push_str(&format!("# cipherbench private sshd ({})\n", ssh.version));
    c.push_str(&format!("ListenAddress 127.0.0.1\nPort {port}\nAddressFamily inet\n"));
    for k in ["host_ed25519", "host_ecdsa", "host_rsa"] {
        c.push_str(&format!("HostKey {}\n", dir.join(k).display()));
    }
    c.push_str(&format!("PidFile {}\n", dir.join("sshd.pid").display()));
    c.push_str(&format!("AuthorizedKeysFile {}\n", dir.join("authorized_keys").display()));
    c.push_str(&format!("AllowUsers {user}\n"));
    if as_root {
        c.push_str("PermitRootLogin prohibit-password\n");
    }
    c.push_str(
        "StrictModes no\nUsePAM no\nPubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
         HostbasedAuthentication no\nPermitEmptyPasswords no\nUseDNS no\nPrintMotd no\nPrintLastLog no\nX11Forwarding no\n\
         AllowTcpForwarding no\nAllowAgentForwarding no\nAllowStreamLocalForwarding no\nPermitTunnel no\nPermitTTY no\n\
         PermitUserEnvironment no\nCompression no\nMaxStartups 200:30:400\nMaxSessions 50\nMaxAuthTries 6\nLoginGraceTime 30\n\
         ClientAliveInterval 0\nLogLevel ERROR\n",
    );
    if let Offer::Lines(lines) = offer {
        // sshd takes the first value of a keyword: the lines come once, after
        // the settings above (none of which they set), before nothing else.
        for l in lines {
            c.push_str(l.trim());
            c.push('\n');
        }
        return c;
    }
    c.push_str(&format!("Ciphers {}\n", join(&ssh.ciphers)));
    c.push_str(&format!("MACs {}\n", join(&ssh.macs)));
    c.push_str(&format!("KexAlgorithms {}\n", join(&ssh.kex)));
    if !ssh.hostkey_algorithms.is_empty() {
        c.push_str(&format!("HostKeyAlgorithms {}\n", join(&ssh.hostkey_algorithms)));
    }
    if !ssh.pubkey_algorithms.is_empty() {
        c.push_str(&format!("PubkeyAcceptedAlgorithms {}\n", join(&ssh.pubkey_algorithms)));
    }
    c
}

/// The private directory (0700, marked with our pid) with fresh host keys, a
/// client key and its authorized_keys line; old ones left by a killed run are
/// swept first.
fn key_dir() -> Result<tempfile::TempDir> {
    sweep_leftovers(&std::env::temp_dir());
    let dir = tempfile::Builder::new()
        .prefix(PREFIX)
        .tempdir()
        .context("cannot create the private sshd directory")?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))?;
    std::fs::write(dir.path().join(OWNER), std::process::id().to_string())?;
    let f = files(dir.path());
    keygen(&["-t", "ed25519"], &dir.path().join("host_ed25519"))?;
    keygen(&["-t", "ecdsa", "-b", "256"], &dir.path().join("host_ecdsa"))?;
    keygen(&["-t", "rsa", "-b", "3072"], &dir.path().join("host_rsa"))?;
    keygen(&["-t", "ed25519"], &f.client_key)?;
    let client_pub = std::fs::read_to_string(f.client_key.with_extension("pub"))?;
    std::fs::write(dir.path().join("authorized_keys"), client_pub)?;
    Ok(dir)
}

/// known_hosts for the client: our own host keys on `port`, so checking stays on.
fn write_known_hosts(dir: &Path, port: u16, known_hosts: &Path) -> Result<()> {
    let mut kh = String::new();
    for k in ["host_ed25519", "host_ecdsa", "host_rsa"] {
        let pubkey = std::fs::read_to_string(dir.join(format!("{k}.pub")))?;
        kh.push_str(&format!("[127.0.0.1]:{port} {}\n", pubkey.trim()));
    }
    std::fs::write(known_hosts, kh)?;
    Ok(())
}

/// Starts `sshd -D -e -f CONFIG` in its own process group, its stderr to the log.
fn spawn_daemon(sshd: &Path, f: &Files) -> Result<Child> {
    let log = std::fs::File::create(&f.log)?;
    let mut cmd = Command::new(sshd);
    if let Some(p) = super::placement::placement() {
        super::placement::pin(&mut cmd, &p.server);
    }
    cmd.arg("-D")
        .arg("-e")
        .arg("-f")
        .arg(&f.config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        // Its own process group: a terminal's Ctrl-C reaches cipherbench,
        // which stops it in order, not the daemon mid-sample.
        .process_group(0)
        .spawn()
        .with_context(|| format!("cannot start {}", sshd.display()))
}

impl PrivateSshd {
    /// Generates keys and config, starts `sshd` and waits until it answers with its
    /// banner. Retries on another port if the chosen one was taken meanwhile.
    pub fn start(sshd: &Path, ssh: &OpenSsh) -> Result<PrivateSshd> {
        // Not cut short by the run's deadline: a sweep whose budget is spent
        // skips its subjects and says so, and that needs the daemon (it starts
        // in a few seconds even on a busy machine; the docs give the smallest
        // budget `ssh` keeps). Ctrl-C still stops the wait.
        Self::start_by(sshd, ssh, Offer::Every, crate::deadline::Deadline::after(Duration::from_secs(15)))
    }

    /// [`PrivateSshd::start`] offering `offer` (an emitted sshd block, or sshd's
    /// defaults), waiting at most `within` (and never past the run's deadline)
    /// for its banner.
    pub fn start_offering(sshd: &Path, ssh: &OpenSsh, offer: Offer, within: Duration) -> Result<PrivateSshd> {
        Self::start_by(sshd, ssh, offer, crate::deadline::op(within))
    }

    fn start_by(sshd: &Path, ssh: &OpenSsh, offer: Offer, by: crate::deadline::Deadline) -> Result<PrivateSshd> {
        if !sshd.is_absolute() {
            bail!("sshd must be started by absolute path, got '{}'", sshd.display());
        }
        let dir = key_dir()?;
        let f = files(dir.path());
        // SAFETY: geteuid has no preconditions.
        let as_root = unsafe { libc::geteuid() } == 0;
        if as_root {
            ensure_privsep_dir()?;
        }
        let user = current_user();
        let mut last_err = anyhow!("sshd did not start");
        for _ in 0..3 {
            let port = free_port()?;
            write_known_hosts(dir.path(), port, &f.known_hosts)?;
            std::fs::write(&f.config, config_text(dir.path(), port, &user, ssh, as_root, offer))?;
            let child = spawn_daemon(sshd, &f)?;
            LIVE.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((child.id(), dir.path().to_path_buf()));
            // Before it forks anything to be measured (see `join_cgroup`).
            join_cgroup(child.id());
            crate::interrupt::at_forced_exit(forced_cleanup);
            let mut d = PrivateSshd {
                child: Some(child),
                dir: None,
                port,
                user: user.clone(),
                banner: String::new(),
            };
            match d.wait_ready(by, &f.log) {
                Ok(banner) => {
                    d.banner = banner;
                    d.dir = Some(dir);
                    return Ok(d);
                }
                Err(e) => {
                    let log = std::fs::read_to_string(&f.log).unwrap_or_default();
                    drop(d);
                    last_err = e;
                    if !log.contains("Address already in use") {
                        break;
                    }
                }
            }
        }
        Err(last_err)
    }

    /// Polls the port until sshd accepts and sends its `SSH-2.0-` banner, or exits.
    fn wait_ready(&mut self, by: crate::deadline::Deadline, log: &Path) -> Result<String> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        process::wait_ready("sshd", &mut self.child, addr, log, by, |mut s| {
            s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
            let mut buf = [0u8; 256];
            let mut got = Vec::new();
            while !got.contains(&b'\n') && got.len() < 255 {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            let line = String::from_utf8_lossy(&got).trim().to_string();
            line.starts_with("SSH-2.0-").then_some(line)
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }
    pub fn user(&self) -> &str {
        &self.user
    }
    /// The server's `SSH-2.0-...` identification line.
    pub fn banner(&self) -> &str {
        &self.banner
    }
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }
    pub fn dir(&self) -> &Path {
        self.dir.as_ref().expect("started").path()
    }
    pub fn files(&self) -> Files {
        files(self.dir())
    }

    /// Stops the daemon and its connection children, and reaps it.
    fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let pid = child.id();
        // Connection children run in their own sessions (sshd calls setsid), so
        // find them by parentage before the listener goes.
        let kids = descendants(pid);
        signal(pid, libc::SIGTERM);
        for k in &kids {
            signal(*k, libc::SIGTERM);
        }
        // Connection children were re-parented when the listener left; they get a
        // moment to go, then are killed.
        process::reap(&mut child, &kids);
        // Its CPU-accounting cgroup (an empty one left behind now is removed by the
        // next daemon's start).
        release_cgroup(pid);
        LIVE.lock().unwrap_or_else(|e| e.into_inner()).retain(|(p, _)| *p != pid);
    }
}

impl Drop for PrivateSshd {
    fn drop(&mut self) {
        self.stop();
        if let Some(d) = self.dir.take() {
            let _ = d.close();
        }
    }
}

/// How the daemons' CPU-accounting cgroups are named (`cipherbench-sshd-PID`).
const CGROUP_PREFIX: &str = "cipherbench-sshd-";

/// Where the cgroup v2 hierarchy is mounted, from /proc/mounts.
fn cgroup2_root() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(2) == Some(&"cgroup2")).then(|| PathBuf::from(f[1]))
    })
}

/// The daemon owns its CPU-accounting cgroup: where a cgroup v2 hierarchy is
/// writable (root), the listener `pid` is moved into a cgroup of its own as it
/// starts, so every process it forks for a connection is counted in that
/// cgroup's `cpu.stat` (what `super::cpu` reads, through [`cgroup_of`]); it is
/// removed when the daemon stops. Cgroups of earlier runs, empty now, are
/// removed here. False where cgroup v2 is not writable (then `super::cpu` reads
/// the listener's reaped children instead).
fn join_cgroup(pid: u32) -> bool {
    let Some(root) = cgroup2_root() else {
        return false;
    };
    if let Ok(rd) = std::fs::read_dir(&root) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            // Not one whose daemon lives (it may be about to join it); removing
            // one in use fails, so it is kept.
            if let Some(owner) = name.strip_prefix(CGROUP_PREFIX).and_then(|p| p.parse::<u32>().ok()) {
                if !alive(owner) {
                    let _ = std::fs::remove_dir(e.path());
                }
            }
        }
    }
    let dir = root.join(format!("{CGROUP_PREFIX}{pid}"));
    // One left by an earlier daemon of the same pid is empty: reused.
    match std::fs::create_dir(&dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return false,
        _ => {}
    }
    if std::fs::write(dir.join("cgroup.procs"), pid.to_string()).is_err() {
        let _ = std::fs::remove_dir(&dir);
        return false;
    }
    true
}

/// The cgroup a private sshd's listener `pid` was moved into at its start (by
/// this process or by the `cipherbench ssh serve` that started it), if it was.
pub fn cgroup_of(pid: u32) -> Option<PathBuf> {
    let root = cgroup2_root()?;
    let path = crate::proc::cgroup_v2(pid)?;
    path.rsplit('/')
        .next()
        .is_some_and(|n| n.starts_with(CGROUP_PREFIX))
        .then(|| root.join(path.trim_start_matches('/')))
}

/// Removes the cgroup of a stopped listener `pid` (after its last process exited).
fn release_cgroup(pid: u32) {
    if let Some(root) = cgroup2_root() {
        let _ = std::fs::remove_dir(root.join(format!("{CGROUP_PREFIX}{pid}")));
    }
}

/// How private directories are named in the temporary directory.
const PREFIX: &str = "cipherbench-sshd-";

/// Removes what a cipherbench stopped outright (SIGKILL, a crash of the machine)
/// left in `tmp`: private directories of this user whose owner process is gone,
/// and a daemon still listening with a config from one of them. Directories
/// whose owner is alive (a run going on beside this one) are left alone, and so
/// are those without an owner file (one being set up). Returns how many
/// directories were removed.
fn sweep_leftovers(tmp: &Path) -> usize {
    process::sweep_orphans(crate::privdir::own(tmp, PREFIX), |d| files(d).config)
}

/// Run by the interrupt handler on a second Ctrl-C, just before exiting.
fn forced_cleanup() {
    let live = std::mem::take(&mut *LIVE.lock().unwrap_or_else(|e| e.into_inner()));
    for (pid, dir) in live {
        for k in descendants(pid) {
            signal(k, libc::SIGKILL);
        }
        signal(pid, libc::SIGKILL);
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// sshd's privilege-separation directory (`ChrootDirectory` of its unprivileged
/// child), which the openssh-server unit makes at start (`RuntimeDirectory=sshd`).
pub const PRIVSEP_DIR: &str = "/run/sshd";

/// The private directory needs no privileges, but sshd running as root insists on
/// its privilege-separation directory (normally made by the openssh-server
/// service), even for `sshd -T`: as root, makes it (mode 0755, root's, as the
/// unit would) when it is missing; nothing otherwise.
pub fn ensure_privsep_dir() -> Result<()> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(());
    }
    let p = Path::new(PRIVSEP_DIR);
    if !p.exists() {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(p)
            .with_context(|| format!("sshd as root needs its privilege-separation directory {PRIVSEP_DIR}, and it cannot be created"))?;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::process::processes_with_arg;
    use std::time::Instant;

    #[test]
    fn leftovers_of_dead_runs_are_swept_and_live_ones_kept() {
        let root = tempfile::tempdir().unwrap();
        let mk = |name: &str, owner: Option<u32>| {
            let d = root.path().join(name);
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("sshd_config"), "# test\n").unwrap();
            if let Some(pid) = owner {
                std::fs::write(d.join(OWNER), pid.to_string()).unwrap();
            }
            d
        };
        // A pid that is certainly gone: a child that has exited and been reaped.
        let mut gone = Command::new("true").spawn().unwrap();
        gone.wait().unwrap();
        let dead = mk("cipherbench-sshd-dead", Some(gone.id()));
        let live = mk("cipherbench-sshd-live", Some(std::process::id()));
        let young = mk("cipherbench-sshd-young", None);
        let other = mk("something-else", Some(gone.id()));
        // The dead run's "daemon": a process still holding its config path.
        let mut daemon = Command::new("tail")
            .arg("-f")
            .arg(dead.join("sshd_config"))
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        // Until it has exec'd, its command line is still ours.
        let t0 = Instant::now();
        while !processes_with_arg(&dead.join("sshd_config").to_string_lossy()).contains(&daemon.id()) {
            assert!(t0.elapsed() < Duration::from_secs(5), "tail did not start");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(sweep_leftovers(root.path()), 1);
        assert!(!dead.exists());
        assert!(live.exists() && young.exists() && other.exists());
        use std::os::unix::process::ExitStatusExt;
        let st = daemon.wait().unwrap();
        assert_eq!(st.signal(), Some(libc::SIGKILL), "the dead run's daemon was stopped: {st:?}");
        assert_eq!(sweep_leftovers(root.path()), 0, "nothing more to sweep");
    }

    #[test]
    fn starts_answers_and_leaves_nothing_behind() {
        let ssh = crate::discover::openssh::discover().unwrap();
        let sshd = crate::discover::openssh::find_sshd().unwrap();
        let d = PrivateSshd::start(&sshd, &ssh).unwrap();
        assert!(d.banner().starts_with("SSH-2.0-OpenSSH"), "{}", d.banner());
        let mode = std::fs::metadata(d.dir()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let cfg = std::fs::read_to_string(d.files().config).unwrap();
        assert!(cfg.contains(&format!("Port {}", d.port())));
        assert!(cfg.contains("3des-cbc") || !ssh.ciphers.iter().any(|c| c == "3des-cbc"));
        let (pid, dir) = (d.pid().unwrap(), d.dir().to_path_buf());
        assert!(alive(pid));
        drop(d);
        assert!(!alive(pid), "sshd {pid} outlived its owner");
        assert!(!dir.exists(), "{} outlived its owner", dir.display());
    }
}
