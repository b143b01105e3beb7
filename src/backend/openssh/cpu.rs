//! Raw CPU readings of both ends of an SSH connection, beside its wall time.
//!
//! Why: a login's wall time (≈200 ms: process start, sshd's re-exec,
//! authentication) hides the 0.1–10 ms that separate key exchanges, and a bulk
//! session's wall time says nothing of what the server pays per byte. The CPU the
//! two ends spend is what a key exchange, a host key or a cipher really costs:
//! - **client:** the `ssh` child's own rusage, read by `wait4` as it is reaped
//!   ([`run_timed`], microseconds);
//! - **server** ([`ServerClock`]): the private sshd and every process it forks for
//!   a connection (re-exec, pre-auth privsep child, session, remote command):
//!   - where the daemon could put its listener into a cgroup v2 of its own (root;
//!     the daemon owns that cgroup, see `daemon::cgroup_of`), that cgroup's
//!     `cpu.stat` `usage_usec`: microseconds, every descendant included, live or
//!     gone, so it can be read at any moment;
//!   - otherwise the listener's reaped-children time (`cutime + cstime` in
//!     /proc/PID/stat), plus each live descendant's own and reaped-children time:
//!     clock ticks (10 ms). Once every connection child is reaped ([`ServerClock::settle`])
//!     the listener's counter alone holds it all; each connection's child is
//!     reaped by the listener and waits for its own children.
//!
//! This module only reads. Turning readings into figures (a mean per login with
//! its interval, seconds per GB per bulk session) is the measuring side's
//! (`measure::ssh`), with the engine's intervals (`measure::engine::stats`).

use super::client::{classify, Algorithms, Client, Destination, SshError};
use super::daemon;
use crate::proc::ticks_per_second;
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

/// (own, reaped children) CPU (user + system, in clock ticks) of `pid`, from
/// /proc/PID/stat fields 14–15 and 16–17.
fn stat_ticks(pid: u32) -> Option<(u64, u64)> {
    let s = crate::proc::Stat::read(pid)?;
    Some((s.own_ticks(), s.reaped_ticks()))
}

/// Children CPU (user + system) the process `pid` has reaped so far, from
/// /proc/PID/stat fields 16 and 17 (the listener's share of [`tree_cpu`]).
#[cfg(test)]
fn reaped_children_cpu(pid: u32) -> Option<Seconds> {
    let (_, reaped) = stat_ticks(pid)?;
    Some(Seconds(reaped as f64 / ticks_per_second()))
}

/// Everything the listener `pid` has spent on connections so far: its reaped
/// children's time, and each live descendant's own and reaped-children time
/// (clock ticks). A process reaped between the listing and its reading moves its
/// time to a parent that may already be read, so a reading during which the
/// process list changed is taken again (a few tries; `None` if it never held
/// still).
fn tree_cpu(pid: u32) -> Option<Seconds> {
    let listing = || {
        let mut v = daemon::descendants(pid);
        v.sort_unstable();
        v
    };
    for _ in 0..5 {
        let kids = listing();
        let (_, mut ticks) = stat_ticks(pid)?;
        let mut complete = true;
        for &k in &kids {
            match stat_ticks(k) {
                Some((own, reaped)) => ticks += own + reaped,
                None => {
                    complete = false;
                    break;
                }
            }
        }
        if complete && listing() == kids {
            return Some(Seconds(ticks as f64 / ticks_per_second()));
        }
    }
    None
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

/// CPU time of every process a cgroup has held, from its `cpu.stat`.
fn cgroup_usage(dir: &Path) -> Option<Seconds> {
    let s = std::fs::read_to_string(dir.join("cpu.stat")).ok()?;
    let us: u64 = s.lines().find_map(|l| l.strip_prefix("usage_usec "))?.trim().parse().ok()?;
    Some(Seconds(us as f64 * 1e-6))
}

/// How the server's CPU is read: a running total of what the private sshd has
/// spent on connections, so the CPU of a login or of a stretch of a bulk session
/// is the difference of two readings.
#[derive(Debug, Clone, Default)]
pub enum ServerClock {
    /// A remote server: not observable.
    #[default]
    None,
    /// The listener's own cgroup (microseconds).
    Cgroup { listener: u32, dir: PathBuf },
    /// The listener's reaped children and its live descendants (clock ticks).
    Ticks { listener: u32 },
}

impl ServerClock {
    /// Watching the private sshd whose listener is `listener` (none: a remote server).
    pub fn of_listener(listener: Option<u32>) -> ServerClock {
        match listener {
            None => ServerClock::None,
            Some(pid) => match daemon::cgroup_of(pid) {
                Some(dir) => ServerClock::Cgroup { listener: pid, dir },
                None => ServerClock::Ticks { listener: pid },
            },
        }
    }

    /// For connections to `target`: the private daemon's listener is found by the
    /// pid file it writes into its own directory (beside known_hosts); a remote
    /// server is not observable.
    pub fn for_target(target: &Destination) -> ServerClock {
        let listener = match target {
            Destination::Private { known_hosts, .. } => known_hosts
                .parent()
                .and_then(|d| std::fs::read_to_string(d.join("sshd.pid")).ok())
                .and_then(|s| s.trim().parse::<u32>().ok())
                .filter(|&pid| daemon::alive(pid)),
            Destination::Remote { .. } => None,
        };
        ServerClock::of_listener(listener)
    }

    /// The CPU the server has spent on connections so far (`None`: not observable
    /// or not readable now).
    pub fn read(&self) -> Option<Seconds> {
        match self {
            ServerClock::None => None,
            ServerClock::Cgroup { dir, .. } => cgroup_usage(dir),
            ServerClock::Ticks { listener } => tree_cpu(*listener),
        }
    }

    /// Waits until the listener has reaped every connection child, so that no
    /// connection is still being paid for (a login's reading is then complete and
    /// the next one's starts clean). False when it did not in time, or when the
    /// server is not observable.
    pub fn settle(&self) -> bool {
        let pid = match self {
            ServerClock::None => return false,
            ServerClock::Cgroup { listener, .. } | ServerClock::Ticks { listener } => *listener,
        };
        let t0 = Instant::now();
        while t0.elapsed() < SETTLE_LIMIT {
            if daemon::descendants(pid).is_empty() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        false
    }

    /// How the server's CPU is read, in words (`None`: not observable).
    pub fn method(&self) -> Option<&'static str> {
        match self {
            ServerClock::None => None,
            ServerClock::Cgroup { .. } => Some("the private sshd's own cgroup (cpu.stat usage_usec)"),
            ServerClock::Ticks { .. } => Some("the private sshd listener's reaped children (/proc/PID/stat cutime+cstime, clock ticks)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The tick reading counts a live descendant's time before it is reaped
    /// (what a stretch of a bulk session needs), and keeps it once reaped.
    #[test]
    fn tree_reading_counts_live_and_reaped_descendants() {
        use std::io::{BufRead, BufReader, Write};
        // An outer shell (the "listener") whose inner shell works, says so and
        // waits; once let go and reaped, the outer one says so and waits too.
        let mut outer = std::process::Command::new("sh")
            .args([
                "-c",
                "sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo worked; read x'; echo reaped; read y; exit 0",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = outer.id();
        let mut stdin = outer.stdin.take().unwrap();
        let mut lines = BufReader::new(outer.stdout.take().unwrap()).lines();
        assert_eq!(lines.next().unwrap().unwrap(), "worked");
        let live = tree_cpu(pid).unwrap();
        assert!(live.0 > 0.0, "a live descendant's work is counted: {live:?}");
        assert_eq!(reaped_children_cpu(pid).unwrap().0, 0.0, "nothing reaped yet");
        writeln!(stdin, "go").unwrap();
        assert_eq!(lines.next().unwrap().unwrap(), "reaped");
        let reaped = tree_cpu(pid).unwrap();
        assert!(reaped.0 >= live.0, "{live:?} -> {reaped:?} once reaped");
        assert_eq!(reaped_children_cpu(pid), Some(reaped), "all in the reaped counter now");
        drop(stdin);
        assert!(outer.wait().unwrap().success());
    }
}
