//! A bulk transfer: one running `ssh HOST COMMAND` fed from memory, its far
//! side's checkpoints (and in verify mode its hashes) read back, its CPU time
//! read from the kernel while it runs.

use super::stop::{kill_group, Watchdog};
use super::{classify, Algorithms, Client, SshError};
use crate::units::Seconds;
use anyhow::{bail, Result};
use std::io::{Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::thread::JoinHandle;
use std::time::Duration;

impl Client {
    /// Starts `remote` with stdin open for [`Transfer::send`].
    pub fn transfer(&self, algs: &Algorithms, remote: &str, verify: bool) -> Result<Transfer, SshError> {
        let mut child = self.spawn(self.command(algs, remote).stdin(Stdio::piped()).stdout(Stdio::piped()))?;
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

    #[test]
    fn process_cpu_reads_a_live_process() {
        assert!(process_cpu(std::process::id()).is_some_and(|s| s.0 > 0.0));
    }
}
