//! Ports for the servers the tests start, without a race: no test binds a port and
//! releases it for a server to take later (another test binary in the other lane
//! can take it meanwhile). A server that can bind port 0 itself reports its port
//! (`openssl s_server -accept 127.0.0.1:0` prints `ACCEPT`); the others (nginx,
//! sshd, gnutls-serv, Apache, HAProxy, stunnel refuse port 0) are started on a
//! candidate port and started again on another one when they fail to bind it
//! ("Address already in use" in their log), a bounded number of times. A server is
//! up when the listening socket on its port is its own (in /proc), not when
//! something answers there. Every wait follows a deadline.

// Each test crate uses its own part of this module.
#![allow(dead_code)]

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How many ports a server is tried on before the test gives up.
pub const TRIES: usize = 8;

/// How long a server may take to listen on a loaded machine.
pub const START_DEADLINE: Duration = Duration::from_secs(30);

/// What every server here says when its port is taken.
pub const TAKEN: &str = "Address already in use";

/// A port to try a server on: random, between 20000 and the start of the kernel's
/// ephemeral range, so that nothing that binds port 0 (cipherbench's own loopback
/// peers, outgoing connections) can hold it; only another test's candidate can,
/// and then the start is tried again.
pub fn candidate() -> u16 {
    static N: AtomicU64 = AtomicU64::new(0);
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u32>().ok())
        .filter(|&l| l > 21000)
        .unwrap_or(32768);
    let mut h = RandomState::new().build_hasher();
    h.write_u64(N.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    (20000 + (h.finish() % u64::from(low - 20000)) as u32) as u16
}

/// The inodes of the TCP sockets listening on `port` (any address).
fn listening_inodes(port: u16) -> Vec<String> {
    let mut out = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(t) = std::fs::read_to_string(table) else { continue };
        for l in t.lines().skip(1) {
            let f: Vec<&str> = l.split_whitespace().collect();
            // sl local rem st tx:rx tr:when retrnsmt uid timeout inode
            if f.len() < 10 || f[3] != "0A" {
                continue;
            }
            let p = f[1].rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok());
            if p == Some(port) {
                out.push(format!("socket:[{}]", f[9]));
            }
        }
    }
    out
}

/// `pid` and its descendants.
fn family(pid: u32) -> Vec<u32> {
    let mut all = vec![pid];
    let mut i = 0;
    while i < all.len() {
        let p = all[i];
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) {
            for t in tasks.flatten() {
                let c = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
                all.extend(c.split_whitespace().filter_map(|x| x.parse::<u32>().ok()));
            }
        }
        i += 1;
    }
    all
}

/// Whether the socket listening on `port` belongs to `pid` or one of its
/// descendants (not to whatever else took the port).
pub fn listens(pid: u32, port: u16) -> bool {
    let inodes = listening_inodes(port);
    if inodes.is_empty() {
        return false;
    }
    family(pid).into_iter().any(|p| {
        std::fs::read_dir(format!("/proc/{p}/fd")).is_ok_and(|fds| {
            fds.flatten()
                .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| inodes.iter().any(|i| l.as_os_str() == i.as_str())))
        })
    })
}

/// How a start ended.
pub enum Start {
    Up,
    /// Its port was taken: try another.
    Taken,
}

/// Waits until the server `child` listens on `port` ([`Start::Up`]) or says its
/// port is taken ([`Start::Taken`], the child killed); panics with its exit status
/// and `log` when it exits otherwise or does not listen within [`START_DEADLINE`].
pub fn wait_up(what: &str, child: &mut Child, port: u16, log: &Path) -> Start {
    let end = Instant::now() + START_DEADLINE;
    let said = || std::fs::read_to_string(log).unwrap_or_default();
    loop {
        if listens(child.id(), port) {
            return Start::Up;
        }
        if said().contains(TAKEN) {
            let _ = child.kill();
            let _ = child.wait();
            return Start::Taken;
        }
        if let Ok(Some(st)) = child.try_wait() {
            panic!("{}", exited(what, port, st, &said()));
        }
        if Instant::now() >= end {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{what} did not listen on port {port} within {START_DEADLINE:?}; its log {}:\n{}",
                log.display(),
                said()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A server's early exit, for a failure message.
pub fn exited(what: &str, port: u16, st: ExitStatus, log: &str) -> String {
    format!("{what} exited ({st}) before it listened on port {port}; its log:\n{log}")
}

/// Starts the server `command(port)` builds (stdin empty, stdout and stderr to
/// `log`) on a port of its own: on [`candidate`] ports, again on another one while
/// its port is taken, up to [`TRIES`] times. Returns the port and the child, which
/// listens there.
pub fn start(what: &str, log: &Path, mut command: impl FnMut(u16) -> Command) -> (u16, Child) {
    for _ in 0..TRIES {
        let port = candidate();
        let f = std::fs::File::create(log).unwrap();
        let mut child = command(port)
            .stdin(Stdio::null())
            .stdout(f.try_clone().unwrap())
            .stderr(f)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        match wait_up(what, &mut child, port, log) {
            Start::Up => return (port, child),
            Start::Taken => continue,
        }
    }
    panic!("{what}: {TRIES} ports in a row were taken")
}

/// Starts a server that binds port 0 itself and says which port it got: `command`
/// (stdin empty, stdout and stderr to `log`), the port read from its log by `port`
/// (`openssl s_server -accept 127.0.0.1:0` prints `ACCEPT 127.0.0.1:PORT`). Waits
/// until it listens there; panics with its exit status and log when it exits first
/// or does not listen within [`START_DEADLINE`].
pub fn start_reporting(what: &str, log: &Path, mut command: Command, port: impl Fn(&str) -> Option<u16>) -> (u16, Child) {
    let f = std::fs::File::create(log).unwrap();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(f.try_clone().unwrap())
        .stderr(f)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let end = Instant::now() + START_DEADLINE;
    loop {
        let said = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(p) = port(&said) {
            if listens(child.id(), p) {
                return (p, child);
            }
        }
        if let Ok(Some(st)) = child.try_wait() {
            panic!("{what} exited ({st}) before it listened; its log:\n{said}");
        }
        if Instant::now() >= end {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not listen within {START_DEADLINE:?}; its log:\n{said}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The port in `openssl s_server`'s `ACCEPT 127.0.0.1:PORT` line.
pub fn s_server_port(said: &str) -> Option<u16> {
    said.lines()
        .find_map(|l| l.strip_prefix("ACCEPT "))
        .and_then(|a| a.trim().rsplit(':').next()?.parse().ok())
}

/// A port of 127.0.0.1 where nothing listens, for as long as the returned socket
/// lives: it is bound there (so nothing else can take it) but not listening, so a
/// connection to it is refused.
pub fn closed_port() -> (std::os::fd::OwnedFd, u16) {
    use std::os::fd::FromRawFd;
    // SAFETY: plain socket calls on a socket this function owns; the address
    // structures are initialised before use and sized as the calls expect.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let fd = std::os::fd::OwnedFd::from_raw_fd(fd);
        let mut sa: libc::sockaddr_in = std::mem::zeroed();
        sa.sin_family = libc::AF_INET as libc::sa_family_t;
        sa.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        use std::os::fd::AsRawFd;
        let rc = libc::bind(fd.as_raw_fd(), &sa as *const libc::sockaddr_in as *const libc::sockaddr, len);
        assert_eq!(rc, 0, "bind: {}", std::io::Error::last_os_error());
        let mut got: libc::sockaddr_in = std::mem::zeroed();
        let mut glen = len;
        let rc = libc::getsockname(fd.as_raw_fd(), &mut got as *mut libc::sockaddr_in as *mut libc::sockaddr, &mut glen);
        assert_eq!(rc, 0, "getsockname: {}", std::io::Error::last_os_error());
        (fd, u16::from_be(got.sin_port))
    }
}
