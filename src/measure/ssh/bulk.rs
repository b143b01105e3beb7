//! A bulk session as a sample: the probe that primes a real ssh session, times
//! the bytes pushed through it (fixed volume or a span of time) and verifies
//! what arrived.
//!
//! Beside the wall time and the ssh client's CPU, each sample reads what the
//! private sshd spent over the same timed part ([`ServerClock`], read at its start
//! and end like the client's), which becomes the subject's server CPU per GB
//! ([`server_cpu_record`]). The session's processes are alive at both readings,
//! so the clock must count live processes: the daemon's cgroup does, to the
//! microsecond; the tick reading (no cgroup: not root) sums the live
//! descendants' times, and runs a few ticks high per session (each live
//! process's time is rounded down at the first reading, and one reaped by the
//! second is counted whole: 0–0.06 s over 8 MiB of 3DES here, against 0.23 s by
//! the cgroup). That is about the same for every cipher, so it narrows the
//! ratios a little and does not reorder them. The handshake, the priming and the
//! closing are not in it.

use super::*;
use crate::backend::openssh::client::{Algorithms, Client, Transfer};
use crate::backend::openssh::cpu::ServerClock;
use crate::measure::engine::sampler::{self, Probe};
use crate::measure::engine::stats::few_samples;
use crate::model::Subject;
use crate::model::{Kind, Metric, ResultRecord, Summary};
use crate::units::Seconds;
use anyhow::{bail, Result};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bulk throughput through one real ssh client.
pub struct BulkProbe {
    pub(super) client: Client,
    pub(super) algs: Algorithms,
    pub(super) buf: Arc<Vec<u8>>,
    /// Open session (adaptive mode).
    pub(super) open: Option<Transfer>,
    /// Fixed volume per sample (one session each).
    pub(super) fixed: Option<u64>,
    pub(super) verify: bool,
    pub(super) last: Option<(Seconds, Seconds)>,
    /// When the last timed send ended (adaptive mode).
    pub(super) sent: Option<Instant>,
    /// The private sshd's CPU (not observable for a remote server).
    pub(super) server: ServerClock,
    /// What the server spent over the last sample's timed part.
    pub(super) server_cpu: Option<Seconds>,
}

/// The server's CPU between two readings (none when either failed).
fn spent(a: Option<Seconds>, b: Option<Seconds>) -> Option<Seconds> {
    Some(Seconds((b?.0 - a?.0).max(0.0)))
}

/// Bytes sent untimed before timing starts. A fresh session stalls for about
/// 0.1 s after its first 2–4 MiB while the channel and TCP windows open (here
/// per MiB: 1.5 1.4 77 52 2.0 1.8 ms …), whatever the pause before sending; and
/// a session that has been idle has drained the pipe, ssh's buffers, the channel
/// window (2 MiB) and the socket buffers, so a sample that started by filling
/// them at memory speed would be inflated (2 MiB after an idle spell went at
/// 2.5x the steady rate; 4 MiB and more at it). Back-to-back samples keep them full.
pub(super) const PRIME_BYTES: u64 = 4 << 20;

pub(super) const IDLE: std::time::Duration = std::time::Duration::from_millis(5);

impl BulkProbe {
    /// The far side's command: says when it runs, reads everything, and (fixed
    /// volume) says when it has read everything; in verify mode the hash it
    /// prints at the end is that signal.
    pub(super) fn remote(&self) -> String {
        match (self.verify, self.fixed) {
            (true, Some(_)) => format!("echo {READY} && head -c {PRIME_BYTES} | {HASH_SINK} && {HASH_SINK}"),
            (false, Some(_)) => format!("echo {READY} && head -c {PRIME_BYTES} >/dev/null && echo {PRIMED} && {SINK} && echo {DONE}"),
            (true, None) => format!("echo {READY} && exec {HASH_SINK}"),
            (false, None) => format!("echo {READY} && exec {SINK}"),
        }
    }

    /// Opens the session (adaptive mode) and waits until the far side is running,
    /// so no sample contains the handshake.
    pub fn open(client: &Client, algs: Algorithms, buf: Arc<Vec<u8>>, fixed: Option<u64>, verify: bool) -> Result<BulkProbe> {
        let mut p = BulkProbe {
            client: client.clone(),
            algs,
            buf,
            open: None,
            fixed,
            verify,
            last: None,
            sent: None,
            server: ServerClock::for_target(&client.target),
            server_cpu: None,
        };
        if fixed.is_none() {
            let mut t = p.client.transfer(&p.algs, &p.remote(), verify)?;
            t.wait_for_line(READY)?;
            p.open = Some(t);
        }
        Ok(p)
    }

    /// Ends the session and checks how it ended (and, in verify mode, the hash).
    pub fn close(mut self) -> Result<()> {
        match self.open.take() {
            Some(t) => t.finish(),
            None => Ok(()),
        }
    }

    /// Writes `bytes` into ssh's stdin, a buffer at a time.
    pub(super) fn push(t: &mut Transfer, buf: &[u8], bytes: u64) -> Result<()> {
        let mut left = bytes;
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            t.send(&buf[..n])?;
            left -= n as u64;
        }
        Ok(())
    }

    /// One whole session of `bytes` (fixed-volume mode). Untimed: the handshake
    /// (the far side says when it runs) and [`PRIME_BYTES`] that carry the session
    /// through its start-up stall, until the far side says it has read them (so
    /// nothing is in flight when the clock starts; in verify mode it says so with
    /// their hash). Timed: pushing the `bytes`, closing stdin and the far side
    /// saying it has read them all. Untimed again: ssh ending, which is still
    /// checked. Returns (wall, ssh client CPU over the timed part).
    pub(super) fn one_session(&mut self, bytes: u64) -> Result<(Seconds, Seconds)> {
        let mut t = self.client.transfer(&self.algs, &self.remote(), self.verify)?;
        t.wait_for_line(READY)?;
        Self::push(&mut t, &self.buf, PRIME_BYTES)?;
        t.wait_for_checkpoint(PRIMED)?;
        let s0 = self.server.read();
        let c0 = t.cpu_time();
        let t0 = Instant::now();
        Self::push(&mut t, &self.buf, bytes)?;
        t.end_input_and_wait(if self.verify { None } else { Some(DONE) })?;
        let wall = Seconds::from_duration(t0.elapsed());
        let c1 = t.cpu_time();
        self.server_cpu = spent(s0, self.server.read());
        t.finish()?;
        let cpu = match (c0, c1) {
            (Some(a), Some(b)) => Seconds((b.0 - a.0).max(0.0)),
            _ => Seconds(0.0),
        };
        Ok((wall, cpu))
    }

    /// One session as one sample (adaptive mode; the session is open): untimed,
    /// [`PRIME_BYTES`] and `warmup` seconds of sending; timed, sending for `span`
    /// seconds (never past `deadline`). The sample is the whole span: its bytes,
    /// wall time and the ssh client's CPU time. `None` when Ctrl-C or the deadline
    /// left less than half of the span (or of [`MIN_BULK_SECONDS`]) to time.
    pub(super) fn slice(&mut self, warmup: f64, span: f64, deadline: Instant) -> Result<Option<sampler::Sample>> {
        let Some(t) = self.open.as_mut() else {
            bail!("ssh session closed");
        };
        Self::push(t, &self.buf, PRIME_BYTES)?;
        let w0 = Instant::now();
        while w0.elapsed().as_secs_f64() < warmup && Instant::now() < deadline && !crate::interrupt::requested() {
            t.send(&self.buf)?;
        }
        let s0 = self.server.read();
        let t0 = Instant::now();
        let end = (t0 + Duration::from_secs_f64(span.max(0.0))).min(deadline);
        let c0 = t.cpu_time();
        let mut work = 0u64;
        while Instant::now() < end && !crate::interrupt::requested() {
            t.send(&self.buf)?;
            work += self.buf.len() as u64;
        }
        let wall = t0.elapsed().as_secs_f64();
        self.server_cpu = spent(s0, self.server.read());
        let cpu = match (c0, t.cpu_time()) {
            (Some(a), Some(b)) => (b.0 - a.0).max(0.0),
            _ => 0.0,
        };
        self.sent = Some(Instant::now());
        if work == 0 || wall < span.min(MIN_BULK_SECONDS) / 2.0 {
            return Ok(None);
        }
        Ok(Some(sampler::Sample {
            wall: Seconds(wall),
            cpu: Seconds(cpu),
            work: work as f64,
        }))
    }
}

impl Probe for BulkProbe {
    fn run(&mut self, units: u64) -> Result<f64> {
        let t0 = Instant::now();
        if let Some(bytes) = self.fixed {
            self.last = Some(self.one_session(bytes)?);
            return Ok(bytes as f64);
        }
        let Some(t) = self.open.as_mut() else {
            bail!("ssh session closed");
        };
        let idle = self.sent.is_none_or(|e| e.elapsed() > IDLE);
        let mut t0 = t0;
        if idle {
            // Refill the buffers untimed (see PRIME_BYTES).
            for _ in 0..PRIME_BYTES.div_ceil(self.buf.len() as u64) {
                t.send(&self.buf)?;
            }
            t0 = Instant::now();
        }
        let s0 = self.server.read();
        let c0 = t.cpu_time();
        for _ in 0..units {
            t.send(&self.buf)?;
        }
        self.sent = Some(Instant::now());
        let wall = Seconds::from_duration(t0.elapsed());
        self.server_cpu = spent(s0, self.server.read());
        let cpu = match (c0, t.cpu_time()) {
            (Some(a), Some(b)) => Seconds(b.0 - a.0),
            _ => Seconds(0.0),
        };
        self.last = Some((wall, cpu));
        Ok((units * self.buf.len() as u64) as f64)
    }

    /// Wall time of the transfer; CPU time of the ssh client, not of the pump.
    fn timed_region(&self) -> Option<(Seconds, Seconds)> {
        self.last
    }
}

/// The record of a subject's server CPU per GB: one value per sample (session),
/// its server CPU over the timed part divided by that part's bytes (`samples`:
/// (CPU seconds, bytes)); the same shape as TLS's `server-cpu-per-gb` (median and
/// order-statistic interval, `Metric::Seconds`, the mode naming it), so a diff
/// reads both alike. Fewer than three sessions get the engine's few-samples
/// interval (widened by `slack`, as the throughput figure is). `None` without a
/// reading (a remote server).
pub(super) fn server_cpu_record(subject: &Subject, samples: &[(f64, f64)], slack: f64) -> Option<ResultRecord> {
    let per_gb: Vec<f64> = samples.iter().filter(|(_, b)| *b > 0.0).map(|(c, b)| c / b * 1e9).collect();
    let s = few_samples(Summary::of(&per_gb)?, &[], slack);
    let mut subject = subject.clone();
    subject.mode = Some(SERVER_CPU_PER_GB.into());
    Some(ResultRecord::ok(Kind::SshBulk, subject, Metric::Seconds, &s, None).with_values(per_gb))
}

pub(super) fn bulk_subject(i: &BulkItem, hostkey: &Option<String>) -> Subject {
    Subject::ssh_bulk(&i.cipher, i.mac.as_deref(), &i.kex, hostkey.as_deref())
}

/// A test pattern that no link-level compression could shrink.
pub(super) fn pattern() -> Vec<u8> {
    let mut v = vec![0u8; CHUNK];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for b in v.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    v
}
