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

/// Runs `cmd` (stdin closed, its own process group) until it ends or `by`
/// passes (or Ctrl-C), whichever is first; `Ok(None)` when it was killed. Its
/// output goes to unnamed temporary files, so a chatty child never blocks on a
/// full pipe while it is waited for.
pub fn output_by(cmd: &mut Command, by: crate::deadline::Deadline) -> std::io::Result<Option<Said>> {
    let (mut out, mut err) = (tempfile::tempfile()?, tempfile::tempfile()?);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(err.try_clone()?)
        .process_group(0)
        .spawn()?;
    let Some(status) = crate::deadline::wait_child_by(&mut child, true, by)? else {
        return Ok(None);
    };
    let read = |f: &mut std::fs::File| -> std::io::Result<Vec<u8>> {
        let mut v = Vec::new();
        f.rewind()?;
        f.read_to_end(&mut v)?;
        Ok(v)
    };
    Ok(Some(Said {
        status,
        stdout: read(&mut out)?,
        stderr: read(&mut err)?,
    }))
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
