//! Processes a backend starts and must always stop: signals, liveness and the
//! process tree from /proc, and the one way a private daemon (sshd, nginx) is
//! brought down with everything it forked.

use std::io::{Read, Seek};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What a finished child said.
pub struct Said {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// When a child run by [`run_bounded`] is stopped before its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// On Ctrl-C and at the run's cut ([`crate::interrupt::requested`]): a child
    /// that is part of measuring.
    Requested,
    /// On Ctrl-C only: a quick query of a local tool that the report may still
    /// need after the run was cut (versions, algorithm lists, keys).
    ByUser,
}

/// Runs `cmd` (stdin closed, its own process group) until it ends, `by` passes
/// or `stop` says so, whichever is first; the status is `None` when it was
/// killed, and what it said until then is kept. Its output goes to unnamed
/// temporary files, so a chatty child never blocks on a full pipe while it is
/// waited for.
///
/// The one way cipherbench runs a child to its end; [`output_by`] and
/// [`output_within`] are its two usual forms. Children run otherwise, on
/// purpose:
/// - the private daemons (`PrivateSshd`, `PrivateNginx`): long-lived, stopped by
///   [`reap`] with their descendants;
/// - `ssh` sessions that stream (`openssh::client::Transfer`, `Client::run`):
///   fed and read while they run, waited for by [`crate::deadline::wait_child`]
///   or their own watchdog;
/// - `openssh::cpu::run_timed`: reaped by `wait4` for the child's own CPU time;
/// - `app::reexec_masked`: this same program again, for the whole run;
/// - test code.
pub fn run_bounded(
    cmd: &mut Command,
    by: crate::deadline::Deadline,
    stop: Stop,
) -> std::io::Result<(Option<ExitStatus>, Vec<u8>, Vec<u8>)> {
    // A failure here is the temporary folder's, not the tool's: said so, and not an
    // OS error (whose "not found" callers read as a missing tool).
    let capture = || {
        tempfile::tempfile().map_err(|e| {
            std::io::Error::other(format!(
                "cannot make a file in the temporary folder {} (TMPDIR): {e}",
                std::env::temp_dir().display()
            ))
        })
    };
    let (mut out, mut err) = (capture()?, capture()?);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(err.try_clone()?)
        .process_group(0)
        .spawn()?;
    let stop = match stop {
        Stop::Requested => crate::interrupt::requested,
        Stop::ByUser => crate::interrupt::by_user,
    };
    let status = crate::deadline::wait_child_until(&mut child, true, by, stop)?;
    let read = |f: &mut std::fs::File| -> std::io::Result<Vec<u8>> {
        let mut v = Vec::new();
        f.rewind()?;
        f.read_to_end(&mut v)?;
        Ok(v)
    };
    Ok((status, read(&mut out)?, read(&mut err)?))
}

/// Runs `cmd` until it ends or `by` passes (or Ctrl-C, or the run's cut),
/// whichever is first; `Ok(None)` when it was killed. See [`run_bounded`].
pub fn output_by(cmd: &mut Command, by: crate::deadline::Deadline) -> std::io::Result<Option<Said>> {
    let (status, stdout, stderr) = run_bounded(cmd, by, Stop::Requested)?;
    Ok(status.map(|status| Said { status, stdout, stderr }))
}

/// Runs a quick local tool until it ends, `limit` passes or the user presses
/// Ctrl-C (not stopped at the run's cut); `Ok(None)` when it was killed.
pub fn output_within(cmd: &mut Command, limit: Duration) -> std::io::Result<Option<Said>> {
    let (status, stdout, stderr) = run_bounded(cmd, crate::deadline::Deadline::after(limit), Stop::ByUser)?;
    Ok(status.map(|status| Said { status, stdout, stderr }))
}

/// How long a quick query of a local tool (`ssh -Q`, `openssl ciphers`,
/// `ssh-keygen`) may take before it is stopped.
pub const QUERY_LIMIT: Duration = Duration::from_secs(60);

/// Waits until the private daemon `what` (`child`, listening on `addr`) is ready:
/// connects to `addr` and asks `ready` of the connection, backing off from 2 ms to
/// 50 ms between tries, until `ready` gives its value, the daemon exits (then
/// `child` is cleared), the user presses Ctrl-C, or `by` passes (the caller's
/// start-up limit, and the run's deadline where the daemon must keep it). Every
/// error carries the last lines of the daemon's `log`.
pub fn wait_ready<T>(
    what: &str,
    child: &mut Option<Child>,
    addr: std::net::SocketAddr,
    log: &std::path::Path,
    by: crate::deadline::Deadline,
    mut ready: impl FnMut(std::net::TcpStream) -> Option<T>,
) -> anyhow::Result<T> {
    let t0 = Instant::now();
    let limit = by.left();
    let mut pause = Duration::from_millis(2);
    let failed = loop {
        if let Some(c) = child.as_mut() {
            match c.try_wait() {
                Ok(Some(status)) => {
                    *child = None;
                    break anyhow::anyhow!("{what} exited before it was ready ({status})");
                }
                Ok(None) => {}
                Err(e) => break e.into(),
            }
        }
        let connect = by.cap(Duration::from_millis(200)).max(Duration::from_millis(1));
        if let Some(v) = std::net::TcpStream::connect_timeout(&addr, connect).ok().and_then(&mut ready) {
            return Ok(v);
        }
        if crate::interrupt::by_user() {
            break crate::error::Interrupted { kept: 0 }.into();
        }
        if by.expired() {
            break anyhow::anyhow!(
                "{what} did not answer on {addr} within {:.1} s",
                t0.elapsed().as_secs_f64().min(limit.as_secs_f64())
            );
        }
        std::thread::sleep(by.cap(pause));
        pause = (pause * 2).min(Duration::from_millis(50));
    };
    Err(failed.context(format!("{what}'s log: {}", log_tail(log, 20))))
}

/// The last `n` lines of the text file at `path` (empty when it cannot be read).
pub fn log_tail(path: &std::path::Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.trim().lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// "exit status 1", or "killed by signal 11 (SIGSEGV)": how a child ended, for messages.
pub fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return format!("exit status {code}");
    }
    match status.signal() {
        Some(sig) => {
            let name = match sig {
                libc::SIGHUP => "SIGHUP",
                libc::SIGINT => "SIGINT",
                libc::SIGQUIT => "SIGQUIT",
                libc::SIGILL => "SIGILL",
                libc::SIGABRT => "SIGABRT",
                libc::SIGBUS => "SIGBUS",
                libc::SIGFPE => "SIGFPE",
                libc::SIGKILL => "SIGKILL",
                libc::SIGSEGV => "SIGSEGV",
                libc::SIGPIPE => "SIGPIPE",
                libc::SIGTERM => "SIGTERM",
                _ => "",
            };
            let core = if status.core_dumped() { ", core dumped" } else { "" };
            if name.is_empty() {
                format!("killed by signal {sig}{core}")
            } else {
                format!("killed by signal {sig} ({name}{core})")
            }
        }
        None => format!("{status}"),
    }
}

pub fn signal(pid: u32, sig: i32) {
    // SAFETY: kill(2) with a pid we started or found as its descendant; no memory involved.
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

/// True while `pid` exists and is not a zombie.
pub fn alive(pid: u32) -> bool {
    crate::proc::Stat::read(pid).is_some_and(|s| s.running())
}

/// Every live descendant of `root`, from /proc.
pub fn descendants(root: u32) -> Vec<u32> {
    let parent: Vec<(u32, u32)> = crate::proc::pids()
        .into_iter()
        .filter_map(|pid| Some((pid, crate::proc::Stat::read(pid)?.ppid)))
        .collect();
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for &(c, pp) in &parent {
            if pp == p && !out.contains(&c) {
                out.push(c);
                frontier.push(c);
            }
        }
    }
    out
}

/// After `child` (a daemon's master) was asked to stop: waits up to 3 s for it,
/// then kills it; then gives the descendants found before the signal (`kids`) up to
/// 2 s to go, and kills those still alive. `child` is reaped on every path.
pub fn reap(child: &mut Child, kids: &[u32]) {
    let t0 = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => break,
            Ok(None) if t0.elapsed() > Duration::from_secs(3) => {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    let t0 = Instant::now();
    while kids.iter().any(|&k| alive(k)) && t0.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(5));
    }
    for &k in kids {
        if alive(k) {
            signal(k, libc::SIGKILL);
        }
    }
}

/// Processes whose command line contains `arg` (daemons rewrite their titles,
/// "sshd: /usr/sbin/sshd -D -e -f CONFIG [listener]", "nginx: master process …
/// -c CONFIG", so not argument by argument).
pub fn processes_with_arg(arg: &str) -> Vec<u32> {
    crate::proc::pids()
        .into_iter()
        .filter(|&pid| crate::proc::cmdline(pid).is_some_and(|c| c.windows(arg.len()).any(|w| w == arg.as_bytes())))
        .collect()
}

/// The name of the file in a private directory that holds its owner's pid.
pub const OWNER: &str = "owner.pid";

/// Removes the private directories among `dirs` whose owner (the pid in their
/// [`OWNER`] file) is gone, after killing any daemon still running with the
/// config file `config` names in one of them (with its children). Directories
/// whose owner is alive, or without an owner file yet, are left alone. Returns
/// how many were removed.
pub fn sweep_orphans(dirs: Vec<std::path::PathBuf>, config: impl Fn(&std::path::Path) -> std::path::PathBuf) -> usize {
    let mut removed = 0;
    for dir in dirs {
        let owner = std::fs::read_to_string(dir.join(OWNER))
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok());
        match owner {
            Some(pid) if !alive(pid) => {}
            _ => continue,
        }
        for pid in processes_with_arg(&config(&dir).to_string_lossy()) {
            for k in descendants(pid) {
                signal(k, libc::SIGKILL);
            }
            signal(pid, libc::SIGKILL);
        }
        if std::fs::remove_dir_all(&dir).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_by_keeps_what_was_said_and_stops_at_the_deadline() {
        let far = crate::deadline::Deadline::after(Duration::from_secs(10));
        let said = output_by(Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]), far)
            .unwrap()
            .unwrap();
        assert_eq!(
            (said.status.code(), &said.stdout[..], &said.stderr[..]),
            (Some(3), &b"out\n"[..], &b"err\n"[..])
        );
        let t0 = Instant::now();
        let soon = crate::deadline::Deadline::after(Duration::from_millis(300));
        assert!(output_by(Command::new("sleep").arg("30"), soon).unwrap().is_none());
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
        let t0 = Instant::now();
        assert!(output_within(Command::new("sleep").arg("30"), Duration::from_millis(300))
            .unwrap()
            .is_none());
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
        let said = output_within(Command::new("sh").args(["-c", "echo hi"]), Duration::from_secs(10))
            .unwrap()
            .unwrap();
        assert_eq!((said.status.code(), &said.stdout[..]), (Some(0), &b"hi\n"[..]));
        assert!(output_within(&mut Command::new("/nonexistent/tool"), Duration::from_secs(1)).is_err());
    }

    #[test]
    fn a_stopped_child_keeps_what_it_said() {
        let soon = crate::deadline::Deadline::after(Duration::from_millis(300));
        let (status, out, err) = run_bounded(
            Command::new("sh").args(["-c", "echo early; echo oops >&2; exec sleep 30"]),
            soon,
            Stop::ByUser,
        )
        .unwrap();
        assert_eq!((status, &out[..], &err[..]), (None, &b"early\n"[..], &b"oops\n"[..]));
    }

    #[test]
    fn wait_ready_sees_readiness_an_early_exit_and_the_deadline() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        std::fs::write(&log, (1..=30).map(|i| format!("line {i}\n")).collect::<String>()).unwrap();
        let far = crate::deadline::Deadline::after(Duration::from_secs(10));
        // Ready: a listener whose first answer is checked.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            for _ in 0..3 {
                let (mut s, _) = l.accept().unwrap();
                let _ = s.write_all(b"HELLO\n");
            }
        });
        let mut tries = 0;
        let mut sleeper = Some(Command::new("sleep").arg("30").spawn().unwrap());
        let got = wait_ready("toy", &mut sleeper, addr, &log, far, |mut s| {
            tries += 1;
            let mut b = [0u8; 6];
            std::io::Read::read_exact(&mut s, &mut b).ok()?;
            (tries == 3).then_some(b)
        })
        .unwrap();
        assert_eq!((&got, tries), (b"HELLO\n", 3));
        server.join().unwrap();
        let mut c = sleeper.take().unwrap();
        let _ = c.kill();
        let _ = c.wait();
        // Nothing listens: the deadline ends it, and the log's tail is told.
        let (_held, closed) = crate::testing::closed_port();
        let t0 = Instant::now();
        let soon = crate::deadline::Deadline::after(Duration::from_millis(300));
        let e = wait_ready("toy", &mut None, closed, &log, soon, |_| Some(())).unwrap_err();
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
        let said = format!("{e:#}");
        assert!(said.contains("toy did not answer on") && said.contains("line 30"), "{said}");
        assert!(!said.contains("line 10\n") && said.contains("line 11"), "the last 20 lines: {said}");
        // The daemon exits first: said, and the child is cleared.
        let mut quitter = Some(Command::new("sh").args(["-c", "exit 7"]).spawn().unwrap());
        let e = wait_ready("toy", &mut quitter, closed, &log, far, |_| Some(())).unwrap_err();
        assert!(
            format!("{e:#}").contains("toy exited before it was ready (exit status: 7)"),
            "{e:#}"
        );
        assert!(quitter.is_none());
    }

    #[test]
    fn a_stopped_child_and_its_children_are_gone() {
        // A shell with a child of its own; the shell ignores nothing, so SIGTERM ends it.
        let mut child = std::process::Command::new("sh").args(["-c", "sleep 30 & wait"]).spawn().unwrap();
        let t0 = Instant::now();
        let kids = loop {
            let k = descendants(child.id());
            if !k.is_empty() || t0.elapsed() > Duration::from_secs(5) {
                break k;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(kids.len(), 1, "the sleep under the shell");
        signal(child.id(), libc::SIGTERM);
        reap(&mut child, &kids);
        // SIGKILL is delivered, not awaited: give the kernel a moment.
        let t0 = Instant::now();
        while alive(kids[0]) && t0.elapsed() < Duration::from_secs(1) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(!alive(child.id()) && !alive(kids[0]));
    }
}
