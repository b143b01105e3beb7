//! CPU per SSH login on both ends, beside its wall time.
//!
//! Why: a login's wall time (≈200 ms: process start, sshd's re-exec,
//! authentication) hides the 0.1–10 ms that separate key exchanges. The CPU the
//! two ends spend is what a key exchange and a host key really cost, and it can be
//! read precisely enough to order them:
//! - **client:** the `ssh` child's own rusage, read by `wait4` as it is reaped
//!   (microseconds);
//! - **server:** the private sshd and every process it forks for a connection
//!   (re-exec, pre-auth privsep child, session, remote command), one login at a
//!   time, read after the listener has reaped the connection:
//!   - where a cgroup v2 hierarchy is writable (root), the listener is moved into
//!     its own cgroup (`cipherbench-sshd-PID`) and its `cpu.stat` `usage_usec` is
//!     read: microseconds, every descendant included;
//!   - otherwise the listener's reaped-children time (`cutime + cstime` in
//!     /proc/PID/stat): each connection's child is reaped by the listener and waits
//!     for its own children, so it grows by one login's server CPU. It counts clock
//!     ticks (10 ms), but the running total is what is rounded, so per-login deltas
//!     average out to the true cost.
//!
//!   Either way the figure is a mean with a t-interval over the logins.

use super::client::{classify, Algorithms, Client, SshError, Target};
use crate::model::{CpuFigure, HandshakeCpu};
use crate::units::Seconds;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long one login may take before it is ended (the robust deadline is the
/// caller's; this only bounds a peer that never closes).
const LOGIN_LIMIT: Duration = Duration::from_secs(60);
/// How long to wait for the listener to reap the connection's child.
const SETTLE_LIMIT: Duration = Duration::from_secs(3);

/// Children CPU (user + system) the process `pid` has reaped so far, from
/// /proc/PID/stat fields 16 and 17.
pub fn reaped_children_cpu(pid: u32) -> Option<Seconds> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Fields 16 and 17 of stat(5) are the 14th and 15th after the command.
    let ticks: u64 = f.get(13)?.parse::<u64>().ok()? + f.get(14)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Some(Seconds(ticks as f64 / hz))
}

/// Runs `remote` once like [`Client::run`], and returns the wall time and the
/// `ssh` child's own CPU time (user + system, from `wait4`).
pub fn run_timed(client: &Client, algs: &Algorithms, remote: &str) -> Result<(Seconds, Seconds), SshError> {
    let failed = |detail: String| SshError::Failed {
        status: "not started".into(),
        detail,
    };
    let t0 = Instant::now();
    let mut child = client
        .command(algs, remote)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(format!("cannot run {}: {e}", client.ssh.display())))?;
    let mut err = child.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: wait4 on our own child, writing into values we own. The std
        // Child is not waited on afterwards (dropping it does not wait or kill).
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        if r == pid {
            break;
        }
        if r < 0 {
            return Err(failed(format!("wait4: {}", std::io::Error::last_os_error())));
        }
        if t0.elapsed() > LOGIN_LIMIT {
            let _ = child.kill();
            // SAFETY: as above; this reaps the killed child.
            unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
            return Err(SshError::Failed {
                status: "killed".into(),
                detail: format!("the login took longer than {} s", LOGIN_LIMIT.as_secs()),
            });
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let wall = Seconds::from_duration(t0.elapsed());
    let stderr = reader.join().unwrap_or_default();
    use std::os::unix::process::ExitStatusExt;
    if let Some(e) = classify(ExitStatus::from_raw(status), &String::from_utf8_lossy(&stderr), remote) {
        return Err(e);
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Ok((wall, Seconds(tv(ru.ru_utime) + tv(ru.ru_stime))))
}

/// Where the cgroup v2 hierarchy is mounted, from /proc/mounts.
fn cgroup2_root() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(2) == Some(&"cgroup2")).then(|| PathBuf::from(f[1]))
    })
}

const CGROUP_PREFIX: &str = "cipherbench-sshd-";

/// The cgroup holding the listener `pid` alone (created and joined on first use;
/// cgroups of earlier runs, empty now, are removed). `None` where cgroup v2 is not
/// writable.
fn listener_cgroup(pid: u32) -> Option<PathBuf> {
    let root = cgroup2_root()?;
    let current = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let path = current.lines().find_map(|l| l.strip_prefix("0::"))?.trim().to_string();
    if path.rsplit('/').next().is_some_and(|n| n.starts_with(CGROUP_PREFIX)) {
        return Some(root.join(path.trim_start_matches('/')));
    }
    if let Ok(rd) = std::fs::read_dir(&root) {
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with(CGROUP_PREFIX) {
                let _ = std::fs::remove_dir(e.path()); // fails while in use: kept
            }
        }
    }
    let dir = root.join(format!("{CGROUP_PREFIX}{pid}"));
    std::fs::create_dir(&dir).ok()?;
    if std::fs::write(dir.join("cgroup.procs"), pid.to_string()).is_err() {
        let _ = std::fs::remove_dir(&dir);
        return None;
    }
    Some(dir)
}

/// Removes the cgroup of a stopped listener `pid` (after its last process exited).
pub fn release(pid: u32) {
    if let Some(root) = cgroup2_root() {
        let _ = std::fs::remove_dir(root.join(format!("{CGROUP_PREFIX}{pid}")));
    }
}

/// CPU time of every process a cgroup has held, from its `cpu.stat`.
fn cgroup_usage(dir: &Path) -> Option<Seconds> {
    let s = std::fs::read_to_string(dir.join("cpu.stat")).ok()?;
    let us: u64 = s.lines().find_map(|l| l.strip_prefix("usage_usec "))?.trim().parse().ok()?;
    Some(Seconds(us as f64 * 1e-6))
}

/// How the server's CPU is read.
#[derive(Debug, Clone, Default)]
enum ServerClock {
    /// A remote server: not observable.
    #[default]
    None,
    /// The listener's own cgroup (microseconds).
    Cgroup { listener: u32, dir: PathBuf },
    /// The listener's reaped children (clock ticks).
    Ticks { listener: u32 },
}

impl ServerClock {
    fn listener(&self) -> Option<u32> {
        match self {
            ServerClock::None => None,
            ServerClock::Cgroup { listener, .. } | ServerClock::Ticks { listener } => Some(*listener),
        }
    }
    fn read(&self) -> Option<Seconds> {
        match self {
            ServerClock::None => None,
            ServerClock::Cgroup { dir, .. } => cgroup_usage(dir),
            ServerClock::Ticks { listener } => reaped_children_cpu(*listener),
        }
    }
}

/// Per-login CPU of both ends, gathered over a subject's logins.
#[derive(Debug, Clone, Default)]
pub struct LoginCpu {
    server_clock: ServerClock,
    client: Vec<f64>,
    server: Vec<f64>,
}

impl LoginCpu {
    /// Watching the private sshd whose listener is `listener` (none: a remote server).
    pub fn new(listener: Option<u32>) -> LoginCpu {
        let server_clock = match listener {
            None => ServerClock::None,
            Some(pid) => match listener_cgroup(pid) {
                Some(dir) => ServerClock::Cgroup { listener: pid, dir },
                None => ServerClock::Ticks { listener: pid },
            },
        };
        LoginCpu {
            server_clock,
            ..Default::default()
        }
    }

    /// For logins to `target`: the private daemon's listener is found by the pid
    /// file it writes into its own directory (beside known_hosts); a remote server
    /// gives the client's figure only.
    pub fn for_target(target: &Target) -> LoginCpu {
        let listener = match target {
            Target::Private { known_hosts, .. } => known_hosts
                .parent()
                .and_then(|d| std::fs::read_to_string(d.join("sshd.pid")).ok())
                .and_then(|s| s.trim().parse::<u32>().ok())
                .filter(|&pid| super::daemon::alive(pid)),
            Target::Remote { .. } => None,
        };
        LoginCpu::new(listener)
    }

    /// One login: keeps both ends' CPU, and returns its wall time and the CPU of
    /// both ends (the client's alone when the server is not observable).
    pub fn login(&mut self, client: &Client, algs: &Algorithms, remote: &str) -> Result<(Seconds, Seconds), SshError> {
        // Whatever an earlier connection left is reaped first, so it is not counted here.
        let listener = self.server_clock.listener();
        let before = listener.filter(|&pid| settle(pid)).and_then(|_| self.server_clock.read());
        let (wall, cpu) = run_timed(client, algs, remote)?;
        self.client.push(cpu.0);
        let mut both = cpu.0;
        if let (Some(pid), Some(before)) = (listener, before) {
            if settle(pid) {
                if let Some(after) = self.server_clock.read() {
                    self.server.push(after.0 - before.0);
                    both += after.0 - before.0;
                }
            }
        }
        Ok((wall, Seconds(both)))
    }

    /// The figures so far.
    pub fn figure(&self) -> Option<HandshakeCpu> {
        let client = mean_interval(&self.client)?;
        let both = self.server.len() == self.client.len();
        let server = if both { mean_interval(&self.server) } else { None };
        let total: Vec<f64> = self.client.iter().zip(&self.server).map(|(c, s)| c + s).collect();
        Some(HandshakeCpu {
            client: Some(client),
            server,
            total: if both { mean_interval(&total) } else { None },
            method: match (&self.server_clock, server.is_some()) {
                (ServerClock::Cgroup { .. }, true) => {
                    "client: rusage of the ssh child (wait4); server: the private sshd's own cgroup (cpu.stat usage_usec), one login at a time".into()
                }
                (ServerClock::Ticks { .. }, true) => {
                    "client: rusage of the ssh child (wait4); server: the private sshd listener's reaped children (/proc/PID/stat cutime+cstime, clock ticks), one login at a time".into()
                }
                _ => "client: rusage of the ssh child (wait4); server: not observable".into(),
            },
        })
    }
}

/// Waits until the listener `pid` has reaped every connection child, so its
/// children-time includes the login just made. False when it did not in time.
fn settle(pid: u32) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < SETTLE_LIMIT {
        if super::daemon::descendants(pid).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

/// Two-sided 97.5% quantile of Student's t for `df` degrees of freedom.
fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
        2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        31..=60 => 2.0,
        _ => 1.96,
    }
}

/// Mean and its 95% interval. One value gives no interval: `[0, f64::MAX]` (JSON
/// has no infinity), and `recommend` ties such a figure with everything anyway.
pub fn mean_interval(v: &[f64]) -> Option<CpuFigure> {
    if v.is_empty() {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let half = if v.len() < 2 {
        f64::MAX
    } else {
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        t975(v.len() - 1) * (var / n).sqrt()
    };
    Some(CpuFigure {
        mean,
        ci95_low: (mean - half).max(0.0),
        ci95_high: if half == f64::MAX { f64::MAX } else { mean + half },
        samples: v.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_interval_covers_the_mean_and_narrows_with_n() {
        let few = mean_interval(&[0.01, 0.02, 0.0, 0.01]).unwrap();
        assert!((few.mean - 0.01).abs() < 1e-12);
        assert!(few.ci95_low <= few.mean && few.mean <= few.ci95_high);
        let many: Vec<f64> = (0..40).map(|i| [0.01, 0.02, 0.0, 0.01][i % 4]).collect();
        let many = mean_interval(&many).unwrap();
        assert!(many.ci95_high - many.ci95_low < few.ci95_high - few.ci95_low);
        assert_eq!(mean_interval(&[0.5]).unwrap().ci95_high, f64::MAX);
        assert!(mean_interval(&[]).is_none());
    }

    /// A child that burns CPU and is reaped shows in its parent's children-time:
    /// the same counter the server figure reads.
    #[test]
    fn reaped_children_time_grows_when_a_child_works() {
        let me = std::process::id();
        let before = reaped_children_cpu(me).unwrap();
        let ok = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(ok.success());
        let after = reaped_children_cpu(me).unwrap();
        assert!(after.0 > before.0, "{before:?} -> {after:?}");
    }
}
