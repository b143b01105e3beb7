//! The real `ssh` client, run as a child process: one command line per algorithm
//! choice, bytes pumped from memory into its stdin, its CPU time read from the
//! kernel, and its failures sorted into errors a user can act on.
//!
//! Every `ssh` child keeps the run's deadline (`crate::deadline`): a handshake
//! is waited for on a pidfd in slices, a transfer has a watchdog, and either
//! kills the child's process group when the deadline passes or Ctrl-C comes.
//! Before the first `ssh` to a remote host, [`Client::reach`] reads the host's
//! banner itself, so a host that accepts and stays silent, drips bytes, or
//! speaks something else is named as such (not "unreachable").

use crate::units::Seconds;
use anyhow::{bail, Result};
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Where the client connects.
#[derive(Debug, Clone)]
pub enum Destination {
    /// The private daemon: its own key and known_hosts, no user configuration.
    Private {
        port: u16,
        user: String,
        key: PathBuf,
        known_hosts: PathBuf,
    },
    /// A remote host, through the user's own ssh configuration and keys.
    Remote {
        destination: String,
        port: Option<u16>,
        identity: Option<PathBuf>,
        /// Extra `-o` options the user asked for.
        options: Vec<String>,
    },
}

/// The algorithms forced for one connection; `None` leaves the client's default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Algorithms {
    pub cipher: Option<String>,
    pub mac: Option<String>,
    pub kex: Option<String>,
    pub hostkey: Option<String>,
}

/// What went wrong with one ssh run, in the user's terms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SshError {
    /// The two sides have no algorithm in common: recorded as rejected, not fatal.
    #[error("refused: {0}")]
    Refused(String),
    #[error("authentication failed: {0} (cipherbench runs ssh with BatchMode=yes: use a key, e.g. --identity FILE, or ssh-agent)")]
    Auth(String),
    #[error("host key verification failed: {0} (connect once with plain ssh to check and accept the host key; cipherbench never turns checking off for a remote host)")]
    HostKey(String),
    #[error("host unreachable: {0}")]
    Unreachable(String),
    /// Accepted the TCP connection, then sent nothing, or too little, in time.
    #[error("{0}")]
    Stalled(String),
    /// Answered with something that is not an SSH banner.
    #[error("{0}")]
    NotSsh(String),
    /// The run's deadline passed while ssh ran; it was stopped.
    #[error("{0}")]
    Deadline(String),
    #[error("interrupted")]
    Interrupted,
    #[error("the far side cannot run `{command}`: {detail}")]
    NoCommand { command: String, detail: String },
    #[error("ssh failed ({status}): {detail}")]
    Failed { status: String, detail: String },
}

impl SshError {
    /// Errors that end the whole run (nothing else would work either).
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            SshError::Auth(_)
                | SshError::HostKey(_)
                | SshError::Unreachable(_)
                | SshError::NoCommand { .. }
                | SshError::Stalled(_)
                | SshError::NotSsh(_)
                | SshError::Deadline(_)
                | SshError::Interrupted
        )
    }
}

/// Sorts a finished ssh run: `None` when it succeeded.
pub fn classify(status: ExitStatus, stderr: &str, command: &str) -> Option<SshError> {
    if status.success() {
        return None;
    }
    let detail = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Warning: Permanently added"))
        .collect::<Vec<_>>()
        .join("; ");
    let has = |s: &str| stderr.contains(s);
    Some(
        if has("Unable to negotiate")
            || has("no matching")
            || has("Unknown cipher type")
            || has("Unsupported KEX")
            || has("Unsupported MAC")
            || has("Bad SSH2 cipher spec")
            || has("Bad SSH2 Mac spec")
            || has("Bad key types")
            || has("Bad SSH2 KexAlgorithms")
        {
            SshError::Refused(detail)
        } else if has("Permission denied") || has("Too many authentication failures") {
            SshError::Auth(detail)
        } else if has("Host key verification failed")
            || has("REMOTE HOST IDENTIFICATION HAS CHANGED")
            || has("No ED25519 host key is known")
            || has("host key is known")
        {
            SshError::HostKey(detail)
        } else if has("banner exchange") && (has("timed out") || has("Connection timed out")) {
            SshError::Stalled(format!(
                "accepted the connection but sent no complete SSH banner in time: too slow to measure ({detail})"
            ))
        } else if has("kex_exchange_identification: Connection closed") || has("kex_exchange_identification: read: Connection reset") {
            SshError::Stalled(format!(
                "accepted the connection, then closed it before sending an SSH banner ({detail})"
            ))
        } else if has("Bad remote protocol version identification")
            || has("banner line contains invalid characters")
            || has("Protocol major versions differ")
            || has("Invalid SSH identification string")
        {
            SshError::NotSsh(format!("answered with something that is not SSH ({detail})"))
        } else if has("Could not resolve hostname")
            || has("Connection refused")
            || has("Connection timed out")
            || has("No route to host")
            || has("Network is unreachable")
            || has("Name or service not known")
            || has("Temporary failure in name resolution")
        {
            SshError::Unreachable(detail)
        } else if status.code() == Some(127) || has("command not found") {
            SshError::NoCommand {
                command: command.to_string(),
                detail: if detail.is_empty() { "exit status 127".into() } else { detail },
            }
        } else {
            SshError::Failed {
                status: status.to_string(),
                detail: if detail.is_empty() { "no message".into() } else { detail },
            }
        },
    )
}

/// Runs the `ssh` binary against one target.
#[derive(Debug, Clone)]
pub struct Client {
    pub ssh: PathBuf,
    pub target: Destination,
}

impl Client {
    /// The full command line for `remote` under `algs`.
    pub fn command(&self, algs: &Algorithms, remote: &str) -> Command {
        let mut c = Command::new(&self.ssh);
        self.options(&mut c);
        if let Some(k) = &algs.kex {
            c.arg("-o").arg(format!("KexAlgorithms={k}"));
        }
        if let Some(h) = &algs.hostkey {
            c.arg("-o").arg(format!("HostKeyAlgorithms={h}"));
        }
        if let Some(ci) = &algs.cipher {
            c.arg("-c").arg(ci);
        }
        if let Some(m) = &algs.mac {
            c.arg("-m").arg(m);
        }
        self.destination_args(&mut c);
        c.arg(remote);
        // Own process group: a terminal's Ctrl-C goes to cipherbench, which ends
        // the current sample cleanly, instead of killing ssh mid-transfer.
        c.process_group(0);
        c
    }

    /// The `-o` options: batch mode, no multiplexing or forwarding, a connect
    /// timeout within the run's deadline, and for the private daemon its key only.
    fn options(&self, c: &mut Command) {
        let mut o = |opt: &str| {
            c.arg("-o").arg(opt);
        };
        match &self.target {
            Destination::Private { .. } => {
                o("BatchMode=yes");
                o("IdentitiesOnly=yes");
                o("IdentityAgent=none");
                o("PasswordAuthentication=no");
                o("KbdInteractiveAuthentication=no");
                o("GlobalKnownHostsFile=/dev/null");
                // Our own daemon's host keys are written into known_hosts: full checking.
                o("StrictHostKeyChecking=yes");
                o("CheckHostIP=no");
                o("UpdateHostKeys=no");
            }
            Destination::Remote { .. } => {
                // The user's config and keys; host-key checking stays as configured.
                o("BatchMode=yes");
            }
        }
        // A multiplexed session would reuse a master connection's algorithms.
        o("ControlMaster=no");
        o("ControlPath=none");
        o("Compression=no");
        // Covers the TCP connect and the banner exchange; never past the run's deadline.
        let left = crate::deadline::run().left().as_secs_f64().ceil().clamp(1.0, 10.0);
        o(&format!("ConnectTimeout={left}"));
        o("RequestTTY=no");
        o("ForwardAgent=no");
        o("ForwardX11=no");
        o("ClearAllForwardings=yes");
    }

    /// The destination: the private daemon on 127.0.0.1, or the user's host.
    fn destination_args(&self, c: &mut Command) {
        match &self.target {
            Destination::Private {
                port,
                user,
                key,
                known_hosts,
            } => {
                if let Some(p) = super::placement::placement() {
                    super::placement::pin(c, &p.client);
                }
                c.arg("-F").arg("/dev/null");
                c.arg("-o").arg(format!("UserKnownHostsFile={}", known_hosts.display()));
                c.arg("-i").arg(key);
                c.arg("-p").arg(port.to_string());
                c.arg("-l").arg(user);
                c.arg("127.0.0.1");
            }
            Destination::Remote {
                destination,
                port,
                identity,
                options,
            } => {
                for opt in options {
                    c.arg("-o").arg(opt);
                }
                if let Some(p) = port {
                    c.arg("-p").arg(p.to_string());
                }
                if let Some(i) = identity {
                    c.arg("-i").arg(i).arg("-o").arg("IdentitiesOnly=yes");
                }
                c.arg("--").arg(destination);
            }
        }
    }

    /// Runs `remote` with no input (a handshake: connect, authenticate, run).
    /// Stopped (its whole process group) at the run's deadline or on Ctrl-C.
    pub fn run(&self, algs: &Algorithms, remote: &str) -> Result<(), SshError> {
        let mut child = self
            .command(algs, remote)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| SshError::Failed {
                status: "not started".into(),
                detail: format!("cannot run {}: {e}", self.ssh.display()),
            })?;
        // ssh prints little on stderr; a thread keeps the pipe from filling up.
        let stderr = child.stderr.take().map(|mut r| {
            std::thread::spawn(move || {
                let mut v = Vec::new();
                let _ = r.read_to_end(&mut v);
                v
            })
        });
        let status = wait_bounded(&mut child);
        let err = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
        match classify(status?, &String::from_utf8_lossy(&err), remote) {
            None => Ok(()),
            Some(e) => Err(e),
        }
    }

    /// For a remote host: connects to the address and port ssh would use (from
    /// `ssh -G`) and reads the SSH banner within 10 s (capped by the run's
    /// deadline), so the first failure names its real cause: refused,
    /// unreachable, silent, too slow or not SSH. Skipped when ssh goes through a
    /// proxy (ProxyJump, ProxyCommand): ssh's own messages then tell.
    pub fn reach(&self) -> Result<(), SshError> {
        let Destination::Remote {
            destination,
            port,
            options,
            ..
        } = &self.target
        else {
            return Ok(());
        };
        let mut g = Command::new(&self.ssh);
        g.arg("-G");
        for opt in options {
            g.arg("-o").arg(opt);
        }
        if let Some(p) = port {
            g.arg("-p").arg(p.to_string());
        }
        g.arg("--").arg(destination);
        let out = crate::backend::process::output_within(&mut g, crate::backend::process::QUERY_LIMIT);
        let Some(out) = out.ok().flatten().filter(|o| o.status.success()) else {
            return Ok(()); // ssh itself will say what is wrong with the destination
        };
        let text = String::from_utf8_lossy(&out.stdout);
        // Keywords in any case (OpenSSH 10.6 capitalises them).
        let get = |k: &str| super::dump_value(&text, k).map(str::to_string);
        let proxied = get("proxyjump").is_some_and(|v| v != "none") || get("proxycommand").is_some_and(|v| v != "none");
        let (Some(host), Some(port)) = (get("hostname"), get("port").and_then(|p| p.parse::<u16>().ok())) else {
            return Ok(());
        };
        if proxied {
            return Ok(());
        }
        read_banner(&host, port, Duration::from_secs(10))
    }
    /// Starts `remote` with stdin open for [`Transfer::send`].
    pub fn transfer(&self, algs: &Algorithms, remote: &str, verify: bool) -> Result<Transfer, SshError> {
        let mut child = self
            .command(algs, remote)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| SshError::Failed {
                status: "not started".into(),
                detail: format!("cannot run {}: {e}", self.ssh.display()),
            })?;
        let drain = |mut r: Box<dyn Read + Send>| {
            std::thread::spawn(move || {
                let mut v = Vec::new();
                let _ = r.read_to_end(&mut v);
                v
            })
        };
        let stdout = child.stdout.take();
        let stderr = child.stderr.take().map(|s| drain(Box::new(s)));
        let watch = Watchdog::start(child.id());
        Ok(Transfer {
            watch,
            stdin: child.stdin.take(),
            child: Some(child),
            stdout,
            stderr,
            hasher: verify.then(openssl::sha::Sha256::new),
            sent: 0,
            command: remote.to_string(),
            early: Vec::new(),
            checked: 0,
        })
    }
}

/// One running `ssh HOST COMMAND` fed from memory.
pub struct Transfer {
    /// Kills ssh at the run's deadline or on Ctrl-C (a stalled peer blocks `send`).
    watch: Watchdog,
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    /// Read directly: the far side prints little (a ready line, a hash).
    stdout: Option<ChildStdout>,
    stderr: Option<JoinHandle<Vec<u8>>>,
    hasher: Option<openssl::sha::Sha256>,
    sent: u64,
    command: String,
    /// Output lines already read by [`Transfer::end_input_and_wait`], kept for
    /// [`Transfer::finish`] (the far side's hash in verify mode).
    early: Vec<u8>,
    /// Bytes already confirmed by a checkpoint (verify mode: the hash restarts after them).
    checked: u64,
}

impl Transfer {
    /// Writes `buf` into ssh's stdin (blocks while ssh is busy: that is the timing).
    pub fn send(&mut self, buf: &[u8]) -> Result<()> {
        let Some(stdin) = self.stdin.as_mut() else {
            bail!("transfer already closed");
        };
        if let Err(e) = stdin.write_all(buf) {
            // ssh went away: its exit status and stderr say why.
            self.stdin = None;
            if let Some(why) = self.watch.fired() {
                let _ = self.collect();
                return Err(why.into());
            }
            let why = self.collect().err().map(|e| format!("{e:#}")).unwrap_or_default();
            bail!("ssh stopped reading after {} bytes ({e}): {why}", self.sent);
        }
        if let Some(h) = self.hasher.as_mut() {
            h.update(buf);
        }
        self.sent += buf.len() as u64;
        Ok(())
    }

    /// The far side's next output line, without its newline (what there is at EOF).
    fn next_line(&mut self) -> Vec<u8> {
        let mut got = Vec::new();
        if let Some(out) = self.stdout.as_mut() {
            let mut b = [0u8; 1];
            while got.len() < 4096 {
                match out.read(&mut b) {
                    Ok(1) if b[0] == b'\n' => break,
                    Ok(1) => got.push(b[0]),
                    _ => break,
                }
            }
        }
        got
    }

    /// Reads the far side's first line and checks it is `line` (the session is up
    /// and the remote command runs). When ssh ends instead, says why.
    pub fn wait_for_line(&mut self, line: &str) -> Result<()> {
        let got = self.next_line();
        if got == line.as_bytes() {
            return Ok(());
        }
        self.stdin = None;
        self.collect()?;
        bail!("the far side did not start (it printed {:?})", String::from_utf8_lossy(&got))
    }

    /// Waits for the far side's next line, which it prints once it has read a
    /// known part of the input (`head -c N`): `line` exactly, or in verify mode the
    /// SHA-256 of everything sent so far, which must match (the hash then starts
    /// over for the rest). When ssh ends instead, says why.
    pub fn wait_for_checkpoint(&mut self, line: &str) -> Result<()> {
        let got = self.next_line();
        let what = String::from_utf8_lossy(&got).into_owned();
        let bytes = self.sent - self.checked;
        let ok = match self.hasher.as_mut() {
            Some(h) => {
                let local = hex::encode(h.clone().finish());
                let remote = what.split_whitespace().next().unwrap_or("");
                if !remote.is_empty() && remote.len() == local.len() && remote != local {
                    self.stdin = None;
                    let _ = self.collect();
                    bail!("the far side received different bytes: sha256 there {remote:?}, sha256 of the first {bytes} bytes sent {local}");
                }
                if remote == local {
                    *h = openssl::sha::Sha256::new();
                }
                remote == local
            }
            None => got == line.as_bytes(),
        };
        if ok {
            self.checked = self.sent;
            return Ok(());
        }
        self.stdin = None;
        self.collect()?;
        bail!("the far side did not confirm the first {bytes} bytes (it printed {what:?})")
    }

    /// Closes ssh's stdin (EOF to the far side) and waits for the far side's next
    /// line, which it prints once it has read everything: `line` exactly, or with
    /// `None` any non-empty line (in verify mode its hash, kept for
    /// [`Transfer::finish`] to check). ssh itself is left running: `finish` reaps
    /// it. A far side that ends without that line is an error.
    pub fn end_input_and_wait(&mut self, line: Option<&str>) -> Result<()> {
        self.stdin = None;
        let got = self.next_line();
        let ok = match line {
            Some(l) => got == l.as_bytes(),
            None => !got.is_empty(),
        };
        if ok {
            self.early.extend_from_slice(&got);
            self.early.push(b'\n');
            return Ok(());
        }
        self.collect()?;
        bail!(
            "the far side ended without saying it had read all {} bytes (it printed {:?})",
            self.sent,
            String::from_utf8_lossy(&got)
        )
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// CPU time the live ssh client has used so far.
    pub fn cpu_time(&self) -> Option<Seconds> {
        process_cpu(self.pid()?)
    }

    /// Closes stdin, waits for ssh to finish and checks how it ended. In verify
    /// mode the far side's SHA-256 of what it received must match what was sent.
    pub fn finish(mut self) -> Result<()> {
        self.stdin = None;
        let mut stdout = std::mem::take(&mut self.early);
        stdout.extend(self.collect()?);
        if let Some(h) = self.hasher.take() {
            let local = hex::encode(h.finish());
            let remote = String::from_utf8_lossy(&stdout);
            let remote = remote.split_whitespace().next().unwrap_or("");
            if remote != local {
                bail!(
                    "the far side received different bytes: sha256 there {remote:?}, sha256 of the {} bytes sent {local}",
                    self.sent - self.checked
                );
            }
        }
        Ok(())
    }

    /// Waits for ssh and returns its stdout, or the classified error.
    fn collect(&mut self) -> Result<Vec<u8>> {
        let Some(mut child) = self.child.take() else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        if let Some(mut s) = self.stdout.take() {
            let _ = s.read_to_end(&mut out);
        }
        let status = child.wait()?;
        // Reaped: its pid may be reused, so the watchdog must not signal it any more.
        self.watch.disarm();
        let err = self.stderr.take().and_then(|h| h.join().ok()).unwrap_or_default();
        if let Some(why) = self.watch.fired() {
            return Err(why.into());
        }
        match classify(status, &String::from_utf8_lossy(&err), &self.command) {
            None => Ok(out),
            Some(e) => Err(e.into()),
        }
    }
}

impl Drop for Transfer {
    fn drop(&mut self) {
        self.stdin = None;
        if crate::interrupt::requested() || crate::deadline::run_expired() {
            if let Some(child) = self.child.as_ref() {
                kill_group(child.id());
            }
        }
        if let Some(mut child) = self.child.take() {
            // EOF normally ends the remote `cat` and ssh within milliseconds.
            let soon = crate::deadline::Deadline::after(Duration::from_secs(2));
            let _ = crate::deadline::wait_child_by(&mut child, true, soon);
        }
    }
}

/// SIGKILL to the process group `pid` leads (every `ssh` runs in its own group).
fn kill_group(pid: u32) {
    // SAFETY: kill(2) on a group we created; no memory involved.
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
}

/// What stopped a child: the run's deadline, or Ctrl-C.
fn stop_reason() -> Option<SshError> {
    if crate::interrupt::by_user() {
        Some(SshError::Interrupted)
    } else if crate::deadline::run_expired() {
        Some(SshError::Deadline(format!("ssh was stopped at {}", crate::deadline::describe())))
    } else {
        None
    }
}

/// Waits for `child` (see [`crate::deadline::wait_child`]), naming why it was
/// stopped when it was.
fn wait_bounded(child: &mut Child) -> Result<ExitStatus, SshError> {
    match crate::deadline::wait_child(child, true) {
        Ok(Some(st)) => Ok(st),
        Ok(None) => Err(stop_reason().unwrap_or(SshError::Interrupted)),
        Err(e) => Err(SshError::Failed {
            status: "unknown".into(),
            detail: e.to_string(),
        }),
    }
}

/// Kills a transfer's ssh at the run's deadline or on Ctrl-C, from a thread
/// (the main thread may be blocked writing into ssh's stdin).
struct Watchdog {
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    fired: std::sync::Arc<std::sync::Mutex<Option<SshError>>>,
}

impl Watchdog {
    fn start(pid: u32) -> Watchdog {
        use std::sync::atomic::Ordering;
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let fired = std::sync::Arc::new(std::sync::Mutex::new(None));
        let (d, f) = (done.clone(), fired.clone());
        std::thread::spawn(move || {
            while !d.load(Ordering::SeqCst) {
                if let Some(why) = stop_reason() {
                    *f.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                    if !d.load(Ordering::SeqCst) {
                        kill_group(pid);
                    }
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        Watchdog { done, fired }
    }

    fn disarm(&self) {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    fn fired(&self) -> Option<SshError> {
        self.fired.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.disarm();
    }
}

/// Reads an SSH server's banner at `host:port` within `limit` (capped by the
/// run's deadline), reading a slice at a time, and says what went wrong in the
/// user's terms.
pub fn read_banner(host: &str, port: u16, limit: Duration) -> Result<(), SshError> {
    use std::net::ToSocketAddrs;
    let t0 = Instant::now();
    let addrs: Vec<std::net::SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| SshError::Unreachable(format!("cannot resolve {host}: {e}")))?
        .collect();
    let Some(addr) = addrs.first() else {
        return Err(SshError::Unreachable(format!("{host} has no address")));
    };
    let dl = crate::deadline::op(limit);
    let mut tcp = crate::backend::openssl::tls::tcp(*addr, limit).map_err(|e| match e {
        crate::backend::openssl::tls::ConnectError::Interrupted => SshError::Interrupted,
        e => SshError::Unreachable(format!("{host} port {port}: {e}")),
    })?;
    let mut got: Vec<u8> = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        // RFC 4253 4.2: lines before the version line are allowed; the version
        // line starts with "SSH-" and ends with a newline.
        let mut lines: Vec<&[u8]> = got.split(|&b| b == b'\n').collect();
        lines.pop(); // what follows the last newline is not a complete line
        if lines.iter().any(|l| l.starts_with(b"SSH-")) {
            return Ok(());
        }
        let printable = |b: &u8| matches!(b, b'\r' | b'\n' | b'\t' | 0x20..=0x7e);
        if !got.iter().all(printable) || lines.len() > 4 || got.len() > 8192 {
            let shown: String = String::from_utf8_lossy(&got[..got.len().min(40)]).escape_default().to_string();
            return Err(SshError::NotSsh(format!(
                "{host} port {port} accepted the connection but answered with something that is not SSH: \"{shown}\""
            )));
        }
        let Some(slice) = dl.slice() else {
            if crate::interrupt::by_user() {
                return Err(SshError::Interrupted);
            }
            let secs = t0.elapsed().as_secs_f64();
            return Err(SshError::Stalled(if got.is_empty() {
                format!("{host} port {port} accepted the connection but sent nothing for {secs:.1} s")
            } else {
                format!(
                    "{host} port {port} accepted the connection but sent {} bytes in {secs:.1} s without a complete SSH banner: too slow to measure",
                    got.len()
                )
            }));
        };
        let _ = tcp.set_read_timeout(Some(slice));
        match tcp.read(&mut buf) {
            Ok(0) => {
                return Err(SshError::Stalled(format!(
                    "{host} port {port} accepted the connection, then closed it after {} bytes, without an SSH banner",
                    got.len()
                )))
            }
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(SshError::Unreachable(format!("{host} port {port}: {e}"))),
        }
    }
}

/// What the first key exchange of one connection chose, as `ssh -v` reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chosen {
    pub kex: String,
    pub hostkey: String,
    pub cipher: String,
    /// `None`: implicit in an AEAD cipher (`MAC: <implicit>`).
    pub mac: Option<String>,
}

/// The first key exchange's choice in `ssh -v` output (`kex: algorithm:`,
/// `kex: host key algorithm:`, `kex: client->server cipher: C MAC: M ...`); a
/// rekey's later lines are not read. `None` when one of them is missing.
pub fn chosen(debug: &str) -> Option<Chosen> {
    let after = |key: &str| debug.lines().find_map(|l| l.split_once(key).map(|(_, v)| v.trim()));
    let kex = after("kex: algorithm: ")?;
    let hostkey = after("kex: host key algorithm: ")?;
    let f: Vec<&str> = after("kex: client->server cipher: ")?.split_whitespace().collect();
    let cipher = f.first()?;
    let mac = f.iter().position(|x| *x == "MAC:").and_then(|i| f.get(i + 1))?;
    Some(Chosen {
        kex: kex.to_string(),
        hostkey: hostkey.to_string(),
        cipher: cipher.to_string(),
        mac: (*mac != "<implicit>").then(|| mac.to_string()),
    })
}

/// One login of the real `ssh` into a private sshd on 127.0.0.1:`port`, with no
/// algorithm option on its command line: its algorithms come from `config` (an
/// emitted `Host` block) or, with `/dev/null`, are the client's own defaults (a
/// server's usual peer). Its key and known_hosts are the daemon's; `ssh -v`
/// says what was negotiated. Stopped after `within` (and at the run's deadline).
pub fn negotiate_with_private(
    ssh: &std::path::Path,
    config: &std::path::Path,
    files: &super::daemon::Files,
    port: u16,
    user: &str,
    within: Duration,
) -> Result<Chosen> {
    use crate::backend::process::{run_bounded, Stop};
    let mut c = Command::new(ssh);
    c.arg("-v").arg("-F").arg(config);
    for o in [
        "BatchMode=yes",
        "IdentitiesOnly=yes",
        "IdentityAgent=none",
        "PasswordAuthentication=no",
        "KbdInteractiveAuthentication=no",
        "GlobalKnownHostsFile=/dev/null",
        "StrictHostKeyChecking=yes",
        "CheckHostIP=no",
        "UpdateHostKeys=no",
        "ControlMaster=no",
        "ControlPath=none",
        "RequestTTY=no",
    ] {
        c.arg("-o").arg(o);
    }
    let secs = within.as_secs_f64().ceil().clamp(1.0, 10.0);
    c.arg("-o").arg(format!("ConnectTimeout={secs}"));
    c.arg("-o").arg(format!("UserKnownHostsFile={}", files.known_hosts.display()));
    c.arg("-i").arg(&files.client_key);
    c.arg("-p").arg(port.to_string()).arg("-l").arg(user).arg("127.0.0.1").arg("true");
    let (status, _, err) = run_bounded(&mut c, crate::deadline::op(within), Stop::Requested)
        .map_err(|e| anyhow::anyhow!("cannot run {}: {e}", ssh.display()))?;
    let err = String::from_utf8_lossy(&err);
    let Some(status) = status else {
        bail!("ssh did not finish within {:.0} s and was stopped", within.as_secs_f64());
    };
    if let Some(e) = classify(status, &err, "true") {
        // What a refusal said is ssh's own words; the debug lines are left out.
        let said: String = err
            .lines()
            .filter(|l| !l.starts_with("debug") && !l.starts_with("OpenSSH_"))
            .collect::<Vec<_>>()
            .join("; ");
        return Err(match e {
            SshError::Refused(_) => anyhow::anyhow!("refused: {said}"),
            _ => anyhow::anyhow!("{e}"),
        });
    }
    chosen(&err).ok_or_else(|| anyhow::anyhow!("`ssh -v` did not say what it negotiated"))
}

/// CPU time (user + system) of a live process, from /proc/PID/schedstat (ns), or
/// /proc/PID/stat (clock ticks) where schedstat is missing.
pub fn process_cpu(pid: u32) -> Option<Seconds> {
    if let Some(ns) = crate::proc::schedstat_ns(pid) {
        return Some(Seconds(ns as f64 * 1e-9));
    }
    let ticks = crate::proc::Stat::read(pid)?.own_ticks();
    Some(Seconds(ticks as f64 / crate::proc::ticks_per_second()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn exit(code: i32) -> ExitStatus {
        ExitStatus::from_raw(code << 8)
    }

    #[test]
    fn classifies_what_users_see() {
        let c = |code, s: &str| classify(exit(code), s, "cat > /dev/null");
        assert_eq!(c(0, ""), None);
        assert!(matches!(
            c(
                255,
                "Unable to negotiate with 10.0.0.1 port 22: no matching cipher found. Their offer: aes128-ctr"
            ),
            Some(SshError::Refused(_))
        ));
        assert!(matches!(c(255, "root@h: Permission denied (publickey)."), Some(SshError::Auth(_))));
        assert!(matches!(c(255, "Host key verification failed."), Some(SshError::HostKey(_))));
        assert!(matches!(
            c(255, "ssh: connect to host 127.0.0.1 port 1: Connection refused"),
            Some(SshError::Unreachable(_))
        ));
        assert!(matches!(
            c(255, "ssh: Could not resolve hostname nowhere.invalid: Name or service not known"),
            Some(SshError::Unreachable(_))
        ));
        assert!(matches!(
            c(127, "bash: line 1: cat: command not found"),
            Some(SshError::NoCommand { .. })
        ));
        assert!(matches!(c(1, "something else"), Some(SshError::Failed { .. })));
        assert!(SshError::Auth(String::new()).is_fatal());
        assert!(!SshError::Refused(String::new()).is_fatal());
    }

    #[test]
    fn remote_command_line_keeps_the_users_checking() {
        let cl = Client {
            ssh: "ssh".into(),
            target: Destination::Remote {
                destination: "me@example.org".into(),
                port: Some(2222),
                identity: None,
                options: vec!["ProxyJump=gw".into()],
            },
        };
        let algs = Algorithms {
            cipher: Some("aes128-ctr".into()),
            mac: Some("hmac-sha1".into()),
            kex: Some("curve25519-sha256".into()),
            hostkey: None,
        };
        let cmd = cl.command(&algs, "cat > /dev/null");
        let args: Vec<String> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        let line = args.join(" ");
        assert!(line.contains("BatchMode=yes") && line.contains("-c aes128-ctr") && line.contains("-m hmac-sha1"));
        assert!(line.contains("KexAlgorithms=curve25519-sha256") && line.contains("-p 2222") && line.contains("-o ProxyJump=gw"));
        assert!(!line.contains("StrictHostKeyChecking"), "{line}");
        assert!(!line.contains("-F"), "remote mode must use the user's config: {line}");
        assert!(line.ends_with("-- me@example.org cat > /dev/null"), "{line}");
    }

    #[test]
    fn reads_the_first_key_exchanges_choice() {
        let v = "OpenSSH_9.2p1\ndebug1: kex: algorithm: sntrup761x25519-sha512@openssh.com\n\
debug1: kex: host key algorithm: ssh-ed25519\n\
debug1: kex: server->client cipher: chacha20-poly1305@openssh.com MAC: <implicit> compression: none\n\
debug1: kex: client->server cipher: chacha20-poly1305@openssh.com MAC: <implicit> compression: none\n\
debug1: kex: algorithm: curve25519-sha256\n";
        assert_eq!(
            chosen(v),
            Some(Chosen {
                kex: "sntrup761x25519-sha512@openssh.com".into(),
                hostkey: "ssh-ed25519".into(),
                cipher: "chacha20-poly1305@openssh.com".into(),
                mac: None,
            })
        );
        let ctr = "debug1: kex: algorithm: curve25519-sha256\ndebug1: kex: host key algorithm: rsa-sha2-512\n\
debug1: kex: client->server cipher: aes128-ctr MAC: hmac-sha2-256-etm@openssh.com compression: none\n";
        assert_eq!(chosen(ctr).unwrap().mac.as_deref(), Some("hmac-sha2-256-etm@openssh.com"));
        assert_eq!(chosen("debug1: kex: algorithm: curve25519-sha256\n"), None);
    }

    #[test]
    fn process_cpu_reads_a_live_process() {
        assert!(process_cpu(std::process::id()).is_some_and(|s| s.0 > 0.0));
    }
}
