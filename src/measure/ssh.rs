//! SSH: real OpenSSH transfers and handshakes, measured with the shared sampler.
//!
//! - **Feature check** (`ssh-accept`): one quick connection per algorithm, with the
//!   others left at a fixed choice. SSH negotiates ciphers, MACs, key exchanges and
//!   host-key algorithms independently (RFC 4253 §7.1), so a combination is
//!   accepted exactly when each of its algorithms is; AEAD ciphers take no MAC.
//! - **Bulk** (`ssh-bulk`): bytes pumped from memory through `ssh ... 'cat >
//!   /dev/null'`. Every sample is one session: per-session effects (its windows,
//!   where its processes run) are constant within a session and the machine
//!   drifts between stretches of time, so a median and interval over many
//!   samples of one session would claim a certainty that one session cannot
//!   give. Each session first pushes 4 MiB untimed, which carries it through
//!   its start-up stall (about 0.1 s after the first 2–4 MiB while the windows
//!   open). By default (adaptive) a session then warms up and pushes bytes for a
//!   span of time, and its sample is those bytes over that span; the subjects'
//!   sessions are interleaved in rounds (A B C, A B C …), three each in the
//!   first pass when the budget allows, and racing adds sessions for the
//!   contenders. With `--bytes N` a session's sample is N bytes, timed from when
//!   the far side has read the priming bytes until it says it has read all N.
//!   The handshake is never in a figure: it is measured on its own. The ssh
//!   client's CPU time over the same timed part is recorded beside the wall time.
//! - **Handshake** (`ssh-handshake`): connect, authenticate and run `true`, per kex
//!   × host-key algorithm, one handshake per sample.
//!
//! By default bulk is swept over cipher × MAC with one kex, and handshakes over
//! kex × host key (DESIGN.md: Enc/MAC cost is paid per byte, Kx/Au once per
//! connection). `--full-matrix` runs the write-up's cipher × MAC × kex sweep.

use crate::backend::openssh::client::{Algorithms, Client, SshError, Target, Transfer};
use crate::backend::openssh::cpu::LoginCpu;
use crate::backend::openssh::PrivateSshd;
use crate::discover::openssh::OpenSsh;
use crate::measure::sampler::{self, Measurement, Probe, Rate};
use crate::model::{Kind, Metric, ResultRecord, Status, Subject};
use crate::session::Session;
use crate::units::Seconds;
use anyhow::{bail, Result};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The far side of a bulk transfer, as in the write-up.
pub const SINK: &str = "cat > /dev/null";
/// The far side in verify mode: prints the SHA-256 of everything it received.
pub const HASH_SINK: &str = "sha256sum";
/// Printed by the far side once the session is up, so timing starts after the handshake.
const READY: &str = "cipherbench-ready";
/// Printed by the far side (fixed volume) once it has read the priming bytes.
const PRIMED: &str = "cipherbench-primed";
/// Printed by the far side (fixed volume) once it has read everything sent.
const DONE: &str = "cipherbench-done";
/// What one `ssh-bulk` sample is, as the run's settings say.
pub const BULK_SAMPLES: &str = "one per session: its bytes over the wall time of its timed part (handshake, priming and warm-up untimed); median, interval and n are over sessions";
/// One unit of bulk work.
pub const CHUNK: usize = 1 << 20;
/// Least time one adaptive bulk session samples for (after its priming and
/// warm-up); when the budget cannot give a subject that, it is skipped.
const MIN_BULK_SECONDS: f64 = 0.15;

/// What to measure, already validated against the local OpenSSH.
#[derive(Debug, Clone)]
pub struct SshPlan {
    pub ciphers: Vec<String>,
    pub macs: Vec<String>,
    pub kex: Vec<String>,
    /// Host-key algorithms for the handshake sweep; `[None]` leaves the client's
    /// default (a remote host whose known key type is unknown to us).
    pub hostkeys: Vec<Option<String>>,
    pub aead: Vec<String>,
    pub bulk_kex: String,
    pub bulk_hostkey: Option<String>,
    pub full_matrix: bool,
    /// Fixed volume per sample (one session each); `None` = adaptive.
    pub bytes: Option<u64>,
    pub verify: bool,
    pub handshakes: bool,
    pub budget: Seconds,
}

/// One bulk subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkItem {
    pub cipher: String,
    /// `None` for AEAD ciphers (MAC implicit).
    pub mac: Option<String>,
    pub kex: String,
}

/// One handshake subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeItem {
    pub kex: String,
    pub hostkey: Option<String>,
}

impl SshPlan {
    /// Validated selection: every name must be one `ssh -Q` knows (case-insensitive).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        o: &OpenSsh,
        ciphers: &[String],
        macs: &[String],
        kex: &[String],
        hostkeys: &[String],
        servable_hostkeys: Option<&[String]>,
        full_matrix: bool,
        bytes: Option<u64>,
        verify: bool,
        handshakes: bool,
        budget: Seconds,
    ) -> Result<SshPlan, crate::error::UsageError> {
        let pick = |what: &'static str, given: &[String], known: &[String]| -> Result<Vec<String>, crate::error::UsageError> {
            if given.is_empty() {
                return Ok(known.to_vec());
            }
            let mut out: Vec<String> = Vec::new();
            for g in given {
                let low = g.trim().to_ascii_lowercase();
                let hit = known
                    .iter()
                    .find(|k| k.to_ascii_lowercase() == low)
                    .ok_or_else(|| crate::error::UsageError::unknown(what, g, known.iter().map(String::as_str)))?;
                if !out.contains(hit) {
                    out.push(hit.clone());
                }
            }
            Ok(out)
        };
        let ciphers = pick("cipher", ciphers, &o.ciphers)?;
        let macs = pick("MAC", macs, &o.macs)?;
        let kex = pick("key exchange", kex, &o.kex)?;
        let hostkeys: Vec<Option<String>> = match servable_hostkeys {
            // The private daemon: only the key types it has, one per type by default.
            Some(serve) => {
                let defaults: Vec<String> = crate::discover::openssh::DEFAULT_HOSTKEYS
                    .iter()
                    .filter(|h| serve.iter().any(|s| s == *h))
                    .map(|h| h.to_string())
                    .collect();
                if hostkeys.is_empty() {
                    defaults.into_iter().map(Some).collect()
                } else {
                    pick(
                        "host-key algorithm (the private sshd has ed25519, ecdsa P-256 and RSA keys)",
                        hostkeys,
                        serve,
                    )?
                    .into_iter()
                    .map(Some)
                    .collect()
                }
            }
            None if hostkeys.is_empty() => vec![None],
            None => pick("host-key algorithm", hostkeys, &o.hostkey_algorithms)?
                .into_iter()
                .map(Some)
                .collect(),
        };
        let default_kex = o.default_kex();
        let bulk_kex = if kex.contains(&default_kex) { default_kex } else { kex[0].clone() };
        let bulk_hostkey = hostkeys[0].clone();
        Ok(SshPlan {
            ciphers,
            macs,
            kex,
            hostkeys,
            aead: o.aead.clone(),
            bulk_kex,
            bulk_hostkey,
            full_matrix,
            bytes,
            verify,
            handshakes,
            budget,
        })
    }

    /// `o` narrowed to this plan's ciphers, MACs and kex (for a daemon that should
    /// refuse the rest).
    pub fn restrict(&self, o: &OpenSsh) -> OpenSsh {
        OpenSsh {
            ciphers: self.ciphers.clone(),
            macs: self.macs.clone(),
            kex: self.kex.clone(),
            ..o.clone()
        }
    }

    pub fn is_aead(&self, c: &str) -> bool {
        self.aead.iter().any(|a| a == c)
    }

    /// Bulk subjects: cipher × MAC (AEAD once), times every kex with `--full-matrix`.
    pub fn bulk_items(&self) -> Vec<BulkItem> {
        let kexes: Vec<String> = if self.full_matrix {
            self.kex.clone()
        } else {
            vec![self.bulk_kex.clone()]
        };
        let mut out = Vec::new();
        for c in &self.ciphers {
            let macs: Vec<Option<String>> = if self.is_aead(c) {
                vec![None]
            } else {
                self.macs.iter().cloned().map(Some).collect()
            };
            for m in &macs {
                for k in &kexes {
                    out.push(BulkItem {
                        cipher: c.clone(),
                        mac: m.clone(),
                        kex: k.clone(),
                    });
                }
            }
        }
        shuffle(&mut out);
        out
    }

    /// Handshake subjects: kex × host key (none with `--full-matrix`, whose bulk
    /// figures already cover every kex; none when turned off).
    pub fn handshake_items(&self) -> Vec<HandshakeItem> {
        if !self.handshakes || self.full_matrix {
            return Vec::new();
        }
        let mut out = Vec::new();
        for k in &self.kex {
            for h in &self.hostkeys {
                out.push(HandshakeItem {
                    kex: k.clone(),
                    hostkey: h.clone(),
                });
            }
        }
        out
    }
}

/// A fixed pseudo-random order (Fisher-Yates, xorshift, constant seed): subjects
/// are measured interleaved, so a slow drift in machine load spreads over every
/// algorithm instead of favouring the ones measured first. Same order every run.
fn shuffle<T>(v: &mut [T]) {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for i in (1..v.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
}

/// Bulk throughput through one real ssh client.
pub struct BulkProbe {
    client: Client,
    algs: Algorithms,
    buf: Arc<Vec<u8>>,
    /// Open session (adaptive mode).
    open: Option<Transfer>,
    /// Fixed volume per sample (one session each).
    fixed: Option<u64>,
    verify: bool,
    last: Option<(Seconds, Seconds)>,
    /// When the last timed send ended (adaptive mode).
    sent: Option<Instant>,
}

/// Bytes sent untimed before timing starts. A fresh session stalls for about
/// 0.1 s after its first 2–4 MiB while the channel and TCP windows open (here
/// per MiB: 1.5 1.4 77 52 2.0 1.8 ms …), whatever the pause before sending; and
/// a session that has been idle has drained the pipe, ssh's buffers, the channel
/// window (2 MiB) and the socket buffers, so a sample that started by filling
/// them at memory speed would be inflated (2 MiB after an idle spell went at
/// 2.5x the steady rate; 4 MiB and more at it). Back-to-back samples keep them full.
const PRIME_BYTES: u64 = 4 << 20;
const IDLE: std::time::Duration = std::time::Duration::from_millis(5);

impl BulkProbe {
    /// The far side's command: says when it runs, reads everything, and (fixed
    /// volume) says when it has read everything; in verify mode the hash it
    /// prints at the end is that signal.
    fn remote(&self) -> String {
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
    fn push(t: &mut Transfer, buf: &[u8], bytes: u64) -> Result<()> {
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
    fn one_session(&mut self, bytes: u64) -> Result<(Seconds, Seconds)> {
        let mut t = self.client.transfer(&self.algs, &self.remote(), self.verify)?;
        t.wait_for_line(READY)?;
        Self::push(&mut t, &self.buf, PRIME_BYTES)?;
        t.wait_for_checkpoint(PRIMED)?;
        let c0 = t.cpu_time();
        let t0 = Instant::now();
        Self::push(&mut t, &self.buf, bytes)?;
        t.end_input_and_wait(if self.verify { None } else { Some(DONE) })?;
        let wall = Seconds::from_duration(t0.elapsed());
        let c1 = t.cpu_time();
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
    fn slice(&mut self, warmup: f64, span: f64, deadline: Instant) -> Result<Option<sampler::Sample>> {
        let Some(t) = self.open.as_mut() else {
            bail!("ssh session closed");
        };
        Self::push(t, &self.buf, PRIME_BYTES)?;
        let w0 = Instant::now();
        while w0.elapsed().as_secs_f64() < warmup && Instant::now() < deadline && !crate::interrupt::requested() {
            t.send(&self.buf)?;
        }
        let t0 = Instant::now();
        let end = (t0 + Duration::from_secs_f64(span.max(0.0))).min(deadline);
        let c0 = t.cpu_time();
        let mut work = 0u64;
        while Instant::now() < end && !crate::interrupt::requested() {
            t.send(&self.buf)?;
            work += self.buf.len() as u64;
        }
        let wall = t0.elapsed().as_secs_f64();
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
        let idle = self.sent.map_or(true, |e| e.elapsed() > IDLE);
        let mut t0 = t0;
        if idle {
            // Refill the buffers untimed (see PRIME_BYTES).
            for _ in 0..PRIME_BYTES.div_ceil(self.buf.len() as u64) {
                t.send(&self.buf)?;
            }
            t0 = Instant::now();
        }
        let c0 = t.cpu_time();
        for _ in 0..units {
            t.send(&self.buf)?;
        }
        self.sent = Some(Instant::now());
        let wall = Seconds::from_duration(t0.elapsed());
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

/// Connect, authenticate, run `true`. Each login's CPU on both ends is kept in
/// `cpu` (see [`LoginCpu`]) and goes into the record's `handshake_cpu`; a
/// sample's CPU time is both ends' (the client's alone for a remote server).
pub struct HandshakeProbe {
    client: Client,
    algs: Algorithms,
    last: Option<(Seconds, Seconds)>,
    cpu: LoginCpu,
}

impl Probe for HandshakeProbe {
    fn run(&mut self, units: u64) -> Result<f64> {
        let (mut wall, mut cpu) = (0.0, 0.0);
        for _ in 0..units {
            let (w, c) = self.cpu.login(&self.client, &self.algs, "true")?;
            (wall, cpu) = (wall + w.0, cpu + c.0);
        }
        self.last = Some((Seconds(wall), Seconds(cpu)));
        Ok(units as f64)
    }
    fn timed_region(&self) -> Option<(Seconds, Seconds)> {
        self.last
    }
}

fn bulk_subject(i: &BulkItem, hostkey: &Option<String>) -> Subject {
    Subject {
        cipher: Some(i.cipher.clone()),
        mac: i.mac.clone(),
        kex: Some(i.kex.clone()),
        hostkey: hostkey.clone(),
        ..Default::default()
    }
}

/// The record of a measurement. One or two samples (sessions, for bulk) give no
/// interval: the stored one is then their range widened by `slack` each way (as
/// the race sees it, [`race_interval`]), never a degenerate `[x, x]`.
fn record(kind: Kind, metric: Metric, subject: Subject, m: &Measurement, slack: f64) -> ResultRecord {
    match m.wall() {
        Some(w) => ResultRecord::ok(kind, subject, metric, &widened(w, slack), m.cpu().as_ref()),
        None => ResultRecord::not_ok(kind, subject, metric, Status::Failed, "no samples"),
    }
}

/// `s` with its interval widened by `slack` each way when it has fewer than 3 samples.
fn widened(mut s: crate::measure::stats::Summary, slack: f64) -> crate::measure::stats::Summary {
    if s.samples < 3 {
        s.ci95_low = s.min / slack;
        s.ci95_high = s.max * slack;
    }
    s
}

/// An error from a probe, as a result: refused → unsupported; fatal → the run ends.
fn failure(kind: Kind, metric: Metric, subject: Subject, e: &anyhow::Error) -> Result<ResultRecord> {
    match e.downcast_ref::<SshError>() {
        Some(s) if s.is_fatal() => bail!("{s}"),
        Some(SshError::Refused(why)) => Ok(ResultRecord::not_ok(
            kind,
            subject,
            metric,
            Status::Unsupported,
            format!("refused: {why}"),
        )),
        _ => Ok(ResultRecord::not_ok(kind, subject, metric, Status::Failed, format!("{e:#}"))),
    }
}

/// Which single algorithms both sides accept.
#[derive(Debug, Default, Clone)]
struct Accepted {
    accepted: Vec<Subject>,
    refused: Vec<(Subject, String)>,
}

impl Accepted {
    /// Whether the single-algorithm subject `s` was checked already (either way).
    fn knows(&self, s: &Subject) -> bool {
        self.accepted.contains(s) || self.refused.iter().any(|(r, _)| r == s)
    }
    /// The reason a combination cannot run, if one of its algorithms was refused.
    fn refusal(&self, s: &Subject) -> Option<String> {
        self.refused
            .iter()
            .find(|(r, _)| {
                (r.cipher.is_some() && r.cipher == s.cipher)
                    || (r.mac.is_some() && r.mac == s.mac)
                    || (r.kex.is_some() && r.kex == s.kex)
                    || (r.hostkey.is_some() && r.hostkey == s.hostkey)
            })
            .map(|(_, why)| why.clone())
    }
}

/// Runs `checks` (a few connections at a time), records them as `ssh-accept`, and
/// notes refusals in `acc`. Fatal errors (unreachable, authentication) end the run.
/// Batches stop once `clock` runs out: algorithms left unchecked then are neither
/// accepted nor refused (their subjects are skipped for want of time anyway).
fn run_checks(checks: Vec<(Subject, Algorithms)>, client: &Client, session: &mut Session, acc: &mut Accepted, clock: &Clock) -> Result<()> {
    // What an earlier sweep against this target checked is not checked again.
    let checks: Vec<_> = checks.into_iter().filter(|(s, _)| !acc.knows(s)).collect();
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).clamp(1, 4);
    let mut outcomes: Vec<Option<Result<(), SshError>>> = vec![None; checks.len()];
    for batch in (0..checks.len()).collect::<Vec<_>>().chunks(workers) {
        if crate::interrupt::requested() || clock.left() <= 0.0 {
            break;
        }
        std::thread::scope(|scope| {
            let hs: Vec<_> = batch
                .iter()
                .map(|&i| {
                    let (client, algs) = (client, &checks[i].1);
                    (i, scope.spawn(move || client.run(algs, "true")))
                })
                .collect();
            for (i, h) in hs {
                outcomes[i] = h.join().ok();
            }
        });
    }
    for ((subject, _), outcome) in checks.into_iter().zip(outcomes) {
        let Some(outcome) = outcome else { continue };
        let rec = match outcome {
            Ok(()) => {
                acc.accepted.push(subject.clone());
                ResultRecord::accepted(Kind::SshAccept, subject, true, None)
            }
            Err(e) if e.is_fatal() => bail!("{e}"),
            Err(SshError::Refused(why)) => {
                acc.refused.push((subject.clone(), why.clone()));
                ResultRecord::accepted(Kind::SshAccept, subject, false, Some(why))
            }
            Err(e) => {
                acc.refused.push((subject.clone(), e.to_string()));
                ResultRecord::not_ok(Kind::SshAccept, subject, Metric::Accepted, Status::Failed, e.to_string())
            }
        };
        session.record(rec)?;
    }
    Ok(())
}

/// The feature check: one connection per algorithm. Key exchanges and host keys
/// first (nothing else forced), then ciphers over an accepted kex and host key,
/// then MACs with an accepted non-AEAD cipher (AEAD ciphers negotiate no MAC).
/// Returns the refusals and the plan with its fixed bulk kex and host key moved to
/// accepted ones when the preferred ones were refused. Algorithms `known` from an
/// earlier sweep against the same target are not checked (nor recorded) again.
fn feature_check(plan: &SshPlan, client: &Client, session: &mut Session, clock: &Clock, known: Accepted) -> Result<(Accepted, SshPlan)> {
    session.progress_message("ssh: which algorithms both sides accept");
    let mut acc = known;
    let one = |f: fn(&mut Subject, &mut Algorithms, String), name: &String| {
        let (mut s, mut a) = (Subject::default(), Algorithms::default());
        f(&mut s, &mut a, name.clone());
        (s, a)
    };
    let mut checks: Vec<(Subject, Algorithms)> = plan
        .kex
        .iter()
        .map(|k| {
            one(
                |s, a, n| {
                    s.kex = Some(n.clone());
                    a.kex = Some(n)
                },
                k,
            )
        })
        .collect();
    checks.extend(plan.hostkeys.iter().flatten().map(|h| {
        one(
            |s, a, n| {
                s.hostkey = Some(n.clone());
                a.hostkey = Some(n)
            },
            h,
        )
    }));
    run_checks(checks, client, session, &mut acc, clock)?;
    let mut plan = plan.clone();
    let ok = |acc: &Accepted, s: Subject| acc.accepted.contains(&s);
    if !ok(
        &acc,
        Subject {
            kex: Some(plan.bulk_kex.clone()),
            ..Default::default()
        },
    ) {
        if let Some(k) = plan.kex.iter().find(|k| {
            ok(
                &acc,
                Subject {
                    kex: Some((*k).clone()),
                    ..Default::default()
                },
            )
        }) {
            plan.bulk_kex = k.clone();
        }
    }
    if let Some(h) = plan.bulk_hostkey.clone() {
        if !ok(
            &acc,
            Subject {
                hostkey: Some(h),
                ..Default::default()
            },
        ) {
            if let Some(h) = plan.hostkeys.iter().flatten().find(|h| {
                ok(
                    &acc,
                    Subject {
                        hostkey: Some((*h).clone()),
                        ..Default::default()
                    },
                )
            }) {
                plan.bulk_hostkey = Some(h.clone());
            }
        }
    }
    let base = Algorithms {
        kex: Some(plan.bulk_kex.clone()),
        hostkey: plan.bulk_hostkey.clone(),
        ..Default::default()
    };
    let checks = plan
        .ciphers
        .iter()
        .map(|c| {
            let s = Subject {
                cipher: Some(c.clone()),
                ..Default::default()
            };
            (
                s,
                Algorithms {
                    cipher: Some(c.clone()),
                    ..base.clone()
                },
            )
        })
        .collect();
    run_checks(checks, client, session, &mut acc, clock)?;
    let fixed = plan
        .ciphers
        .iter()
        .find(|c| {
            !plan.is_aead(c)
                && ok(
                    &acc,
                    Subject {
                        cipher: Some((*c).clone()),
                        ..Default::default()
                    },
                )
        })
        .cloned();
    if let Some(fc) = fixed {
        let checks = plan
            .macs
            .iter()
            .map(|m| {
                let s = Subject {
                    mac: Some(m.clone()),
                    ..Default::default()
                };
                (
                    s,
                    Algorithms {
                        cipher: Some(fc.clone()),
                        mac: Some(m.clone()),
                        ..base.clone()
                    },
                )
            })
            .collect();
        run_checks(checks, client, session, &mut acc, clock)?;
    }
    Ok((acc, plan))
}

/// Places the racing settles: extra bulk samples go to the pairs that could still
/// be among the `TOP` fastest, and pairs that clearly cannot are dropped early.
pub const TOP: usize = 3;
/// One or two samples say nothing about spread: until a subject has three, its
/// racing interval is its range widened each way by the spread seen on the
/// subjects that have three or more (their median max/min ratio), at least
/// `MIN_SLACK` and at most `MAX_SLACK` (2× until such spread is known). So one
/// bad sample does not drop a pair, and clear losers are still dropped at once.
const MIN_SLACK: f64 = 1.1;
const MAX_SLACK: f64 = 2.0;
/// Fixed-volume mode: most sessions one pair gets.
const MAX_FIXED_SAMPLES: usize = 30;
/// Handshakes: samples wanted per subject (a median of 5), and the cap.
const HANDSHAKE_SAMPLES: usize = 5;
const MAX_HANDSHAKE_SAMPLES: usize = 40;
/// Adaptive mode: most time one subject gets in the first pass, the sessions it
/// gets there when they fit, and the longest span one session samples for.
const MAX_BULK_SECONDS: f64 = 3.0;
const FIRST_PASS_SESSIONS: usize = 3;
const MAX_SESSION_SECONDS: f64 = 1.0;
/// Adaptive racing: most rounds (one session per contender each), the rounds
/// each round's span leaves time for, and the most sessions one pair gets.
const MAX_RACE_ROUNDS: usize = 12;
const RACE_ROUNDS_AHEAD: f64 = 3.0;
const MAX_SESSIONS: usize = 30;

/// One clock for the whole sweep: preflight, feature check, session set-up,
/// calibration and samples all count against the budget.
#[derive(Debug, Clone, Copy)]
struct Clock {
    end: Instant,
}

impl Clock {
    fn new(start: Instant, budget: Seconds) -> Clock {
        // Far enough to mean "no limit" without overflowing Instant.
        Clock {
            end: start + Duration::from_secs_f64(budget.0.clamp(0.0, 1e7)),
        }
    }
    /// Seconds left until the end of the budget.
    fn left(&self) -> f64 {
        until(self.end)
    }
    /// What a subject left out for lack of time says.
    fn skipped(&self, kind: Kind, metric: Metric, subject: Subject) -> ResultRecord {
        ResultRecord::not_ok(
            kind,
            subject,
            metric,
            Status::Failed,
            "skipped: the budget was spent first (raise --budget)",
        )
    }
}

/// Seconds from now until `t` (0 once it has passed).
fn until(t: Instant) -> f64 {
    t.saturating_duration_since(Instant::now()).as_secs_f64()
}

/// A test pattern that no link-level compression could shrink.
fn pattern() -> Vec<u8> {
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

/// The interval a subject is raced with: the tool's 95% interval of the median
/// once it has 3 samples (below 6 that is the range of the samples), before that
/// the range widened by `slack` each way.
fn race_interval(m: &Measurement, slack: f64) -> Option<(f64, f64)> {
    let s = widened(m.wall()?, slack);
    Some((s.ci95_low, s.ci95_high))
}

/// The widening for subjects with fewer than 3 samples: the median max/min
/// ratio of those with 3 or more, within [`MIN_SLACK`, `MAX_SLACK`].
fn slack(ms: &[&Measurement]) -> f64 {
    let mut ratios: Vec<f64> = ms
        .iter()
        .filter_map(|m| m.wall())
        .filter(|s| s.samples >= 3 && s.min > 0.0)
        .map(|s| s.max / s.min)
        .collect();
    if ratios.is_empty() {
        return MAX_SLACK;
    }
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2].clamp(MIN_SLACK, MAX_SLACK)
}

/// Indices of the subjects that could still place among the `top` fastest:
/// fewer than `top` others are certainly faster (their whole interval lies above
/// this one's). Subjects without an interval are left out.
pub fn could_place(iv: &[Option<(f64, f64)>], top: usize) -> Vec<usize> {
    (0..iv.len())
        .filter(|&i| {
            let Some((_, hi)) = iv[i] else { return false };
            let above = iv
                .iter()
                .enumerate()
                .filter(|&(j, o)| j != i && o.is_some_and(|(lo, _)| lo > hi))
                .count();
            above < top
        })
        .collect()
}

/// The race is over when no more than `top` subjects could place and none of
/// them ties with another: the top places and their order are known.
fn settled(iv: &[Option<(f64, f64)>], alive: &[usize], top: usize) -> bool {
    let overlap = |a: (f64, f64), b: (f64, f64)| a.0 <= b.1 && b.0 <= a.1;
    alive.len() <= top
        && alive.iter().all(|&a| {
            alive
                .iter()
                .all(|&b| a == b || !matches!((iv[a], iv[b]), (Some(x), Some(y)) if overlap(x, y)))
        })
}

/// One bulk subject of the sweep and what was measured of it.
struct Racer {
    item: BulkItem,
    subject: Subject,
    algs: Algorithms,
    m: Measurement,
    /// Its record in the session, once it has one.
    idx: Option<usize>,
    /// Longest wall time one of its sessions took, set-up included.
    cost: f64,
    /// Refused or failed: out of the race, its record says why.
    out: bool,
}

impl Racer {
    fn keep(&mut self, session: &mut Session, rec: ResultRecord) -> Result<()> {
        match self.idx {
            Some(i) => session.replace(i, rec),
            None => {
                self.idx = Some(session.record(rec)?);
                Ok(())
            }
        }
    }
    /// Stores its figure; `slack` widens it while it has fewer than 3 sessions.
    fn keep_measurement(&mut self, session: &mut Session, slack: f64) -> Result<()> {
        let rec = record(Kind::SshBulk, Metric::BytesPerSec, self.subject.clone(), &self.m, slack);
        self.keep(session, rec)
    }
    fn fail(&mut self, session: &mut Session, e: &anyhow::Error) -> Result<()> {
        self.out = true;
        let rec = failure(Kind::SshBulk, Metric::BytesPerSec, self.subject.clone(), e)?;
        self.keep(session, rec)
    }
}

/// The widening for racers with fewer than 3 samples ([`slack`] over those still in).
fn racers_slack(racers: &[Racer]) -> f64 {
    slack(&racers.iter().filter(|r| !r.out).map(|r| &r.m).collect::<Vec<_>>())
}

/// Indices of the racers still in the running: not out, and either unmeasured
/// or able to place among the `TOP`.
fn in_the_running(racers: &[Racer]) -> (Vec<Option<(f64, f64)>>, Vec<usize>) {
    let k = racers_slack(racers);
    let iv: Vec<_> = racers.iter().map(|r| if r.out { None } else { race_interval(&r.m, k) }).collect();
    let mut alive = could_place(&iv, TOP);
    alive.extend((0..racers.len()).filter(|&i| !racers[i].out && racers[i].m.samples.is_empty()));
    alive.sort_unstable();
    (iv, alive)
}

/// One fixed-volume session for racer `r`, kept in its record. Returns false
/// when it would not end by `stop_at` (nothing was started).
fn fixed_sample(
    r: &mut Racer,
    probe: &mut BulkProbe,
    session: &mut Session,
    stop_at: Instant,
    guess: &mut f64,
    slack: f64,
) -> Result<bool> {
    let expect = if r.cost > 0.0 { r.cost } else { *guess };
    if until(stop_at) < expect {
        return Ok(false);
    }
    session.progress_message(&format!(
        "ssh bulk: {} {} {} (sample {})",
        r.item.cipher,
        r.item.mac.as_deref().unwrap_or("(implicit MAC)"),
        r.item.kex,
        r.m.samples.len() + 1
    ));
    probe.algs = r.algs.clone();
    let t0 = Instant::now();
    match probe.run(1) {
        Ok(work) => {
            let cost = t0.elapsed().as_secs_f64();
            let (wall, cpu) = probe.timed_region().unwrap_or((Seconds(cost), Seconds(0.0)));
            r.m.samples.push(sampler::Sample { wall, cpu, work });
            r.cost = r.cost.max(cost);
            *guess = 0.8 * *guess + 0.2 * cost;
            r.keep_measurement(session, slack)?;
        }
        Err(e) => r.fail(session, &e)?,
    }
    Ok(true)
}

/// Fixed-volume mode, first pass: one session for every subject not yet
/// measured, in the plan's interleaved order, as long as each would end by
/// `stop_at`. With `--full-matrix` this is the write-up's brute force.
fn fixed_once(racers: &mut [Racer], probe: &mut BulkProbe, session: &mut Session, stop_at: Instant, guess: &mut f64) -> Result<()> {
    for i in 0..racers.len() {
        if racers[i].out || !racers[i].m.samples.is_empty() {
            continue;
        }
        let k = racers_slack(racers);
        if crate::interrupt::requested() || !fixed_sample(&mut racers[i], probe, session, stop_at, guess, k)? {
            return Ok(());
        }
    }
    Ok(())
}

/// Fixed-volume mode, rounds: one more session for every subject still under
/// `sessions`, round after round (A B C, A B C …), while each would end by
/// `stop_at`. The first two rounds take every subject in the plan's
/// interleaved order, so none is judged on one session that happened to stall.
/// Later rounds go fastest first (the spread that widens short figures is then
/// learnt from the contenders) and pass over subjects that can no longer place
/// among the `TOP`, so the time goes to the pairs whose places are in question.
fn fixed_rounds(
    racers: &mut [Racer],
    probe: &mut BulkProbe,
    session: &mut Session,
    stop_at: Instant,
    guess: &mut f64,
    sessions: usize,
) -> Result<()> {
    in_rounds(racers, sessions, |racers, i| {
        let k = racers_slack(racers);
        fixed_sample(&mut racers[i], probe, session, stop_at, guess, k)
    })
}

/// The order of [`fixed_rounds`]: calls `sample(racers, i)` for one more
/// session of racer `i` until `sample` says no time is left (false).
fn in_rounds(racers: &mut [Racer], sessions: usize, mut sample: impl FnMut(&mut [Racer], usize) -> Result<bool>) -> Result<()> {
    for round in 1..=sessions {
        let mut order: Vec<usize> = (0..racers.len()).collect();
        if round > 2 {
            let med = |r: &Racer| r.m.wall().map_or(0.0, |s| s.median);
            order.sort_by(|&a, &b| med(&racers[b]).total_cmp(&med(&racers[a])));
        }
        for i in order {
            if racers[i].out || racers[i].m.samples.len() >= round {
                continue;
            }
            if round > 2 && !in_the_running(racers).1.contains(&i) {
                continue;
            }
            if crate::interrupt::requested() || !sample(racers, i)? {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// The racers to sample next so that the top places get settled (LUCB, per
/// place): for every unsettled k ≤ `TOP`, the member of the current top k with
/// the lowest lower bound and the outsider with the highest upper bound, when
/// those intervals overlap (so every open place gets samples each round, the
/// top-3 set as much as first place). Racers at `cap` samples are passed over.
/// Empty when every place is settled or only capped racers are left to settle it.
fn critical(iv: &[Option<(f64, f64)>], med: &[f64], n: &[usize], alive: &[usize], cap: usize) -> Vec<usize> {
    let mut ranked: Vec<usize> = alive.iter().copied().filter(|&i| iv[i].is_some()).collect();
    ranked.sort_by(|&a, &b| med[b].total_cmp(&med[a]));
    let lo = |i: usize| iv[i].map_or(f64::NAN, |x| x.0);
    let hi = |i: usize| iv[i].map_or(f64::NAN, |x| x.1);
    let mut pick: Vec<usize> = Vec::new();
    for k in 1..=TOP.min(ranked.len().saturating_sub(1)) {
        let (inside, outside) = ranked.split_at(k);
        let floor = inside.iter().map(|&i| lo(i)).fold(f64::INFINITY, f64::min);
        let ceiling = outside.iter().map(|&i| hi(i)).fold(f64::NEG_INFINITY, f64::max);
        if ceiling < floor {
            continue;
        }
        let weak = inside
            .iter()
            .copied()
            .filter(|&i| n[i] < cap && lo(i) <= ceiling)
            .min_by(|&a, &b| lo(a).total_cmp(&lo(b)));
        let strong = outside
            .iter()
            .copied()
            .filter(|&i| n[i] < cap && hi(i) >= floor)
            .max_by(|&a, &b| hi(a).total_cmp(&hi(b)));
        for i in weak.into_iter().chain(strong) {
            if !pick.contains(&i) {
                pick.push(i);
            }
        }
    }
    pick
}

/// Fixed-volume mode, racing: more sessions for the pairs that decide the top
/// places ([`critical`]), two at a time, until those places are settled, the
/// pairs reach [`MAX_FIXED_SAMPLES`] or the next session would not end by
/// `stop_at`. Pairs that cannot place are never sampled again.
fn fixed_race(racers: &mut [Racer], probe: &mut BulkProbe, session: &mut Session, stop_at: Instant) -> Result<()> {
    let mut guess = 0.0;
    loop {
        if crate::interrupt::requested() {
            return Ok(());
        }
        let (iv, alive) = in_the_running(racers);
        let med: Vec<f64> = racers.iter().map(|r| r.m.wall().map_or(0.0, |s| s.median)).collect();
        let n: Vec<usize> = racers.iter().map(|r| r.m.samples.len()).collect();
        let pick = critical(&iv, &med, &n, &alive, MAX_FIXED_SAMPLES);
        if pick.is_empty() {
            return Ok(());
        }
        for i in pick {
            let k = racers_slack(racers);
            if !fixed_sample(&mut racers[i], probe, session, stop_at, &mut guess, k)? {
                return Ok(());
            }
        }
    }
}

/// Adaptive mode: untimed sending after the priming of a session that samples
/// for `span` seconds (lets the windows settle; a share of the span).
fn warmup_for(span: f64) -> f64 {
    (span / 8.0).clamp(0.02, 0.2)
}

/// What a session costs beyond its warm-up and span before anything is known:
/// the handshake (`conn`) and [`PRIME_BYTES`] through the start-up stall.
fn first_overhead(conn: f64) -> f64 {
    conn + 0.15
}

/// Adaptive mode: one session of racer `r` as one sample ([`BulkProbe::slice`]),
/// sampling for `span` seconds, kept in its record. Returns false (nothing
/// started) when the session would not end by `stop_at` even with its span cut to
/// [`MIN_BULK_SECONDS`]. `over` is the running estimate of a session's cost
/// beyond warm-up and span (handshake, priming, closing); it learns from this one.
#[allow(clippy::too_many_arguments)]
fn adaptive_session(
    r: &mut Racer,
    plan: &SshPlan,
    client: &Client,
    session: &mut Session,
    buf: &Arc<Vec<u8>>,
    span: f64,
    stop_at: Instant,
    over: &mut f64,
    slack: f64,
) -> Result<bool> {
    let warm = warmup_for(span);
    let left = until(stop_at);
    if left < *over + warm + span.min(MIN_BULK_SECONDS) {
        return Ok(false);
    }
    let span = span.min(left - *over - warm);
    session.progress_message(&format!(
        "ssh bulk: {} {} {} (session {})",
        r.item.cipher,
        r.item.mac.as_deref().unwrap_or("(implicit MAC)"),
        r.item.kex,
        r.m.samples.len() + 1
    ));
    // Sampling never runs past the point where closing the session could overrun.
    let deadline = stop_at.checked_sub(Duration::from_millis(50)).unwrap_or(stop_at);
    let t0 = Instant::now();
    let outcome = BulkProbe::open(client, r.algs.clone(), buf.clone(), None, plan.verify).and_then(|mut p| {
        let sample = p.slice(warm, span, deadline);
        let closed = p.close();
        let sample = sample?;
        closed?;
        Ok(sample)
    });
    let cost = t0.elapsed().as_secs_f64();
    r.cost = r.cost.max(cost);
    match outcome {
        Ok(Some(sample)) => {
            let o = (cost - warm - sample.wall.0).max(0.0);
            *over = 0.7 * *over + 0.3 * o;
            r.m.samples.push(sample);
            r.keep_measurement(session, slack)?;
        }
        // Ctrl-C, or the deadline came first: nothing worth keeping.
        Ok(None) => {}
        Err(e) => r.fail(session, &e)?,
    }
    Ok(true)
}

/// How many first-pass sessions a subject gets from `share` seconds, and the
/// span each samples for: up to [`FIRST_PASS_SESSIONS`], as many as give each at
/// least [`MIN_BULK_SECONDS`] (at least one), the span at most
/// [`MAX_SESSION_SECONDS`].
fn session_plan(share: f64, over: f64) -> (usize, f64) {
    // per = over + warm + span (the warm-up taken for the larger span: conservative).
    let span_of = |per: f64| (per - over - warmup_for(per - over)).min(MAX_SESSION_SECONDS);
    let n = (1..=FIRST_PASS_SESSIONS)
        .rev()
        .find(|&n| span_of(share / n as f64) >= MIN_BULK_SECONDS)
        .unwrap_or(1);
    (n, span_of(share / n as f64).max(MIN_BULK_SECONDS))
}

/// The order of first-pass sessions: `rounds` rounds over `subjects` in their
/// (interleaved) order, A B C, A B C, …, so a slow drift of the machine spreads
/// over every subject instead of one subject's sessions.
fn rounds(subjects: &[usize], rounds: usize) -> Vec<usize> {
    (0..rounds).flat_map(|_| subjects.iter().copied()).collect()
}

/// Adaptive mode, first pass: every pair with fewer than [`FIRST_PASS_SESSIONS`]
/// sessions gets more, one sample each ([`adaptive_session`]), in rounds over
/// the plan's interleaved order; up to [`FIRST_PASS_SESSIONS`] each when the
/// time left until `stop_at` allows (an even share per pair, at most
/// [`MAX_BULK_SECONDS`], session set-up counted), else fewer. No session starts that would not end by `stop_at`. Called again
/// later, it tops up the pairs the first call could not finish.
#[allow(clippy::too_many_arguments)]
fn adaptive_pass(
    racers: &mut [Racer],
    plan: &SshPlan,
    client: &Client,
    session: &mut Session,
    buf: &Arc<Vec<u8>>,
    stop_at: Instant,
    over: &mut f64,
) -> Result<()> {
    let waiting: Vec<usize> = (0..racers.len())
        .filter(|&k| !racers[k].out && racers[k].m.samples.len() < FIRST_PASS_SESSIONS)
        .collect();
    if waiting.is_empty() {
        return Ok(());
    }
    let share = (until(stop_at) / waiting.len() as f64).min(MAX_BULK_SECONDS);
    let (n, span) = session_plan(share, *over);
    let base = waiting.iter().map(|&k| racers[k].m.samples.len()).min().unwrap_or(0);
    for (turn, k) in rounds(&waiting, n).into_iter().enumerate() {
        if crate::interrupt::requested() {
            return Ok(());
        }
        // Round r is for the pairs with at most base + r sessions.
        let have = racers[k].m.samples.len();
        if racers[k].out || have > base + turn / waiting.len() || have >= FIRST_PASS_SESSIONS {
            continue;
        }
        let slack = racers_slack(racers);
        if !adaptive_session(&mut racers[k], plan, client, session, buf, span, stop_at, over, slack)? {
            return Ok(());
        }
    }
    Ok(())
}

/// Adaptive mode, racing: round after round, every pair that could still place
/// among the `TOP` gets one more session (one more sample), until the race is
/// settled, the pairs reach [`MAX_SESSIONS`] or the budget is spent. Spans aim
/// at a few more rounds in the time left.
#[allow(clippy::too_many_arguments)]
fn adaptive_race(
    racers: &mut [Racer],
    plan: &SshPlan,
    client: &Client,
    session: &mut Session,
    buf: &Arc<Vec<u8>>,
    clock: &Clock,
    over: &mut f64,
) -> Result<()> {
    for _ in 0..MAX_RACE_ROUNDS {
        let (iv, alive) = in_the_running(racers);
        let alive: Vec<usize> = alive
            .into_iter()
            .filter(|&i| !racers[i].m.samples.is_empty() && racers[i].m.samples.len() < MAX_SESSIONS)
            .collect();
        if alive.is_empty() || settled(&iv, &alive, TOP) {
            return Ok(());
        }
        let per = clock.left() / alive.len() as f64 / RACE_ROUNDS_AHEAD;
        let span = (per - *over - warmup_for(per)).clamp(MIN_BULK_SECONDS, MAX_SESSION_SECONDS);
        for i in alive {
            if crate::interrupt::requested() {
                return Ok(());
            }
            let slack = racers_slack(racers);
            if !adaptive_session(&mut racers[i], plan, client, session, buf, span, clock.end, over, slack)? {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Handshakes, one per sample, [`HANDSHAKE_SAMPLES`] wanted per subject, taken
/// in rounds (see [`handshake_rounds`]). Returns how many subjects were skipped.
fn handshakes(
    hands: &[HandshakeItem],
    client: &Client,
    session: &mut Session,
    accepted: &Accepted,
    clock: &Clock,
    stop_at: Instant,
    conn: f64,
) -> Result<usize> {
    let mut subjects: Vec<(Subject, HandshakeProbe)> = Vec::new();
    for item in hands {
        let subject = Subject {
            kex: Some(item.kex.clone()),
            hostkey: item.hostkey.clone(),
            ..Default::default()
        };
        if let Some(why) = accepted.refusal(&subject) {
            session.record(ResultRecord::not_ok(
                Kind::SshHandshake,
                subject,
                Metric::Seconds,
                Status::Unsupported,
                format!("refused: {why}"),
            ))?;
            continue;
        }
        let probe = HandshakeProbe {
            client: client.clone(),
            algs: Algorithms {
                kex: Some(item.kex.clone()),
                hostkey: item.hostkey.clone(),
                ..Default::default()
            },
            last: None,
            cpu: LoginCpu::for_target(&client.target),
        };
        subjects.push((subject, probe));
    }
    let outcomes = handshake_rounds(subjects.len(), conn, stop_at, |k, n| {
        let (subject, probe) = &mut subjects[k];
        session.progress_message(&format!(
            "ssh handshake: {} {} (sample {})",
            subject.kex.as_deref().unwrap_or(""),
            subject.hostkey.as_deref().unwrap_or("(default host key)"),
            n + 1
        ));
        let t0 = Instant::now();
        let work = probe.run(1)?;
        let c = Seconds::from_duration(t0.elapsed());
        let (wall, cpu) = probe.timed_region().unwrap_or((c, Seconds(0.0)));
        Ok(sampler::Sample { wall, cpu, work })
    });
    let mut skipped = 0;
    for ((subject, probe), (m, failed)) in subjects.into_iter().zip(outcomes) {
        let mut rec = match failed {
            Some(e) => failure(Kind::SshHandshake, Metric::Seconds, subject, &e)?,
            None if m.samples.is_empty() && crate::interrupt::requested() => continue,
            None if m.samples.is_empty() => {
                skipped += 1;
                clock.skipped(Kind::SshHandshake, Metric::Seconds, subject)
            }
            None => record(Kind::SshHandshake, Metric::Seconds, subject, &m, MAX_SLACK),
        };
        if rec.status == Status::Ok {
            rec.handshake_cpu = probe.cpu.figure();
        }
        session.record(rec)?;
    }
    Ok(skipped)
}

/// The handshake schedule for `n` subjects: rounds (subject 0, 1, 2, then 0, 1,
/// 2 again …) so that every subject sees the same drift of the machine's speed,
/// as bulk sessions do. `one(k, i)` takes subject k's sample i. Each subject may
/// use an even share of the time until `stop_at` (its own handshakes counted,
/// each first guessed at `conn`); no handshake starts that would not end by
/// then. A subject stops once it has [`HANDSHAKE_SAMPLES`] and either a tight
/// interval or its share spent, at [`MAX_HANDSHAKE_SAMPLES`], or at its first
/// error. Ctrl-C ends the rounds; what was measured is returned.
fn handshake_rounds(
    n: usize,
    conn: f64,
    stop_at: Instant,
    mut one: impl FnMut(usize, usize) -> Result<sampler::Sample>,
) -> Vec<(Measurement, Option<anyhow::Error>)> {
    let mut out: Vec<(Measurement, Option<anyhow::Error>)> = (0..n)
        .map(|_| (Measurement::empty(Rate::SecondsPer, 1, sampler::Basis::Wall), None))
        .collect();
    // Per subject: longest handshake so far, own seconds spent, done.
    let mut state = vec![(conn, 0.0f64, false); n];
    let share = until(stop_at) / n.max(1) as f64;
    'rounds: while state.iter().any(|s| !s.2) {
        for k in 0..n {
            let (cost, spent, done) = state[k];
            if done {
                continue;
            }
            if crate::interrupt::requested() {
                break 'rounds;
            }
            let m = &out[k].0;
            let i = m.samples.len();
            // Tight means both figures: the wall time and the CPU per login (both
            // ends), which is what orders key exchanges.
            let tight =
                m.wall().is_some_and(|s| s.relative_precision() <= 0.02) && m.cpu().map_or(true, |s| s.relative_precision() <= 0.05);
            let enough = i >= HANDSHAKE_SAMPLES && (spent + cost > share || tight);
            // Fewer than wanted is better than none, none better than overrunning.
            if enough || i >= MAX_HANDSHAKE_SAMPLES || (i > 0 && spent + cost > share * 2.0) {
                state[k].2 = true;
                continue;
            }
            if until(stop_at) < cost {
                break 'rounds;
            }
            let t0 = Instant::now();
            let r = one(k, i);
            let c = t0.elapsed().as_secs_f64();
            match r {
                Ok(sample) => {
                    state[k] = (if i == 0 { c } else { cost.max(c) }, spent + c, false);
                    out[k].0.samples.push(sample);
                }
                Err(e) => {
                    out[k].1 = Some(e);
                    state[k].2 = true;
                }
            }
        }
    }
    out
}

/// Runs the plan: preflight, feature check, bulk, handshakes, racing. Results go
/// to the session as they are made.
///
/// The whole sweep keeps to `plan.budget` (within a few percent): connecting,
/// the feature check, session set-up and priming count against it, no session
/// starts that would not end in time, and subjects left over when it is spent
/// are recorded as skipped, with a warning. Every bulk sample is one session
/// (with `--bytes`, of that volume); no session's figure is thrown away.
pub fn sweep(plan: &SshPlan, client: &Client, session: &mut Session) -> Result<()> {
    sweep_with(plan, client, session, &mut Preflight::default())
}

/// What sweeps learnt about one target before measuring: what one connection
/// costs (with which sink command) and which single algorithms both sides
/// accept. Passed from sweep to sweep against the same target and client (the
/// main job's bulk pass, MAC pass and race), it spares the later ones the
/// preflight connection and every feature check already made; they check only
/// the algorithms that are new to them.
#[derive(Debug, Clone, Default)]
pub struct Preflight {
    conn: Option<(&'static str, f64)>,
    accepted: Accepted,
}

/// [`sweep`], reusing and extending what `pre` knows about the target.
pub fn sweep_with(plan: &SshPlan, client: &Client, session: &mut Session, pre: &mut Preflight) -> Result<()> {
    let start = Instant::now();
    let clock = Clock::new(start, plan.budget);
    // Preflight: the target answers, lets us in and has the sink command.
    let sink = if plan.verify { HASH_SINK } else { SINK };
    let conn = match pre.conn {
        Some((s, conn)) if s == sink => conn,
        _ => {
            session.progress_message("ssh: connecting");
            // The client's defaults: this checks reachability, login and the sink command.
            let outcome = client.run(&Algorithms::default(), sink);
            // What one connection costs here: every session pays it before its samples.
            let conn = start.elapsed().as_secs_f64();
            if let Err(e) = outcome {
                match e {
                    SshError::Refused(_) => {}
                    e => bail!("{e}"),
                }
            }
            pre.conn = Some((sink, conn));
            conn
        }
    };
    session.set_setting("ssh_bulk_samples", json!(BULK_SAMPLES));
    let (accepted, plan) = feature_check(plan, client, session, &clock, pre.accepted.clone())?;
    pre.accepted = accepted.clone();
    let plan = &plan;

    let bulk = plan.bulk_items();
    let hands = plan.handshake_items();
    let buf = Arc::new(pattern());
    session.progress_start((bulk.len() + hands.len()) as u64);

    let mut racers: Vec<Racer> = Vec::new();
    for item in &bulk {
        let subject = bulk_subject(item, &plan.bulk_hostkey);
        if let Some(why) = accepted.refusal(&subject) {
            session.record(ResultRecord::not_ok(
                Kind::SshBulk,
                subject,
                Metric::BytesPerSec,
                Status::Unsupported,
                format!("refused: {why}"),
            ))?;
            continue;
        }
        racers.push(Racer {
            algs: Algorithms {
                cipher: Some(item.cipher.clone()),
                mac: item.mac.clone(),
                kex: Some(item.kex.clone()),
                hostkey: plan.bulk_hostkey.clone(),
            },
            item: item.clone(),
            subject,
            m: Measurement::empty(Rate::PerSecond, 1, sampler::Basis::Wall),
            idx: None,
            cost: 0.0,
            out: false,
        });
    }
    // Handshakes get what five each would take (each about one connection), at
    // most 35% of the time left; bulk's first pass three quarters of the rest;
    // the remainder races. Time a phase does not use flows on to the next.
    let left = clock.left();
    let reserve = (hands.len() as f64 * HANDSHAKE_SAMPLES as f64 * conn).min(0.35 * left);
    let bulk_stop = Instant::now() + Duration::from_secs_f64(((left - reserve) * 0.75).max(0.0));
    let mut fixed_probe = plan
        .bytes
        .map(|b| BulkProbe::open(client, Algorithms::default(), buf.clone(), Some(b), plan.verify))
        .transpose()?;
    // An untried session: the handshake and priming plus the volume at a modest 50 MB/s.
    let mut guess = first_overhead(conn) + plan.bytes.unwrap_or(0) as f64 / 50e6;
    // Adaptive sessions: their cost beyond warm-up and span, learnt as they run.
    let mut over = first_overhead(conn);
    // The brute-force full matrix at a fixed volume is the write-up's method: one
    // session per combination, nothing dropped, no racing.
    let brute = plan.full_matrix && plan.bytes.is_some();
    match fixed_probe.as_mut() {
        Some(p) if brute => fixed_once(&mut racers, p, session, clock.end, &mut guess)?,
        Some(p) => fixed_rounds(&mut racers, p, session, bulk_stop, &mut guess, FIRST_PASS_SESSIONS)?,
        None => adaptive_pass(&mut racers, plan, client, session, &buf, bulk_stop, &mut over)?,
    }
    let skipped_hands = if crate::interrupt::requested() {
        0
    } else {
        let hand_stop = Instant::now() + Duration::from_secs_f64(reserve.min(clock.left()));
        handshakes(&hands, client, session, &accepted, &clock, hand_stop, conn)?
    };
    if !crate::interrupt::requested() {
        match fixed_probe.as_mut() {
            Some(_) if brute => {}
            Some(p) => {
                // Pairs the first pass did not reach, then the race.
                fixed_rounds(&mut racers, p, session, clock.end, &mut guess, FIRST_PASS_SESSIONS)?;
                fixed_race(&mut racers, p, session, clock.end)?;
            }
            None => {
                // Pairs the first pass did not reach, then the race.
                adaptive_pass(&mut racers, plan, client, session, &buf, clock.end, &mut over)?;
                adaptive_race(&mut racers, plan, client, session, &buf, &clock, &mut over)?;
            }
        }
    }
    // Figures of one or two sessions are stored widened by the spread seen on the
    // others; that spread is best known now.
    let k = racers_slack(&racers);
    for r in racers.iter_mut().filter(|r| !r.out && (1..3).contains(&r.m.samples.len())) {
        r.keep_measurement(session, k)?;
    }
    session.progress_finish();
    if crate::interrupt::requested() {
        return Ok(());
    }
    // Whatever the budget did not reach is recorded as skipped, and said.
    let mut skipped_bulk = 0;
    for r in racers.iter_mut().filter(|r| !r.out && r.m.samples.is_empty()) {
        skipped_bulk += 1;
        let rec = clock.skipped(Kind::SshBulk, Metric::BytesPerSec, r.subject.clone());
        r.keep(session, rec)?;
    }
    if skipped_bulk + skipped_hands > 0 {
        eprintln!(
            "warning: ssh: the budget was spent before {skipped_bulk} bulk subject(s) and {skipped_hands} handshake subject(s) were measured; they are recorded as skipped (raise --budget)"
        );
    }
    Ok(())
}

/// The run's settings: what was asked and where it ran.
pub fn settings(plan: &SshPlan, o: &OpenSsh, client: &Client, daemon: Option<&PrivateSshd>) -> serde_json::Value {
    let target = match &client.target {
        Target::Private { port, .. } => format!("private sshd on 127.0.0.1:{port}"),
        Target::Remote { destination, port, .. } => format!("{destination}{}", port.map(|p| format!(":{p}")).unwrap_or_default()),
    };
    json!({
        "target": target,
        "openssh": o.version,
        "sshd_banner": daemon.map(|d| d.banner().to_string()),
        "ciphers": plan.ciphers,
        "macs": plan.macs,
        "kex": plan.kex,
        "hostkeys": plan.hostkeys,
        "bulk_kex": plan.bulk_kex,
        "bulk_hostkey": plan.bulk_hostkey,
        "sweep": if plan.full_matrix { "full-matrix" } else { "decomposed" },
        "bytes": plan.bytes,
        "verify": plan.verify,
        "budget_seconds": plan.budget.0,
        "placement": match (&client.target, crate::backend::openssh::placement::placement()) {
            (Target::Private { .. }, Some(p)) => p.describe(),
            (Target::Private { .. }, None) => "one CPU: client and sshd share it".to_string(),
            (Target::Remote { .. }, _) => "client here, server remote".to_string(),
        },
    })
}

/// One cipher × MAC pair's bulk figure in a sweep: its own record (decomposed
/// sweep), or its records pooled over kex (full matrix; kex does not touch the
/// bulk bytes, so each kex's figure is one more sample of the same pair).
#[derive(Debug, Clone)]
pub struct PairFigure {
    /// `cipher MAC`, the MAC `(implicit)` for AEAD ciphers.
    pub pair: String,
    pub summary: crate::measure::stats::Summary,
    /// How many records (kex) were pooled.
    pub records: usize,
}

/// The pairs of `doc`'s `ssh-bulk` results, fastest median first.
pub fn pair_figures(doc: &crate::model::Document) -> Vec<PairFigure> {
    let mut groups: Vec<(String, Vec<&ResultRecord>)> = Vec::new();
    for r in doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::SshBulk && r.status == Status::Ok && r.median.is_some())
    {
        let pair = format!(
            "{} {}",
            r.subject.cipher.as_deref().unwrap_or("?"),
            r.subject.mac.as_deref().unwrap_or("(implicit)")
        );
        match groups.iter_mut().find(|(p, _)| *p == pair) {
            Some((_, v)) => v.push(r),
            None => groups.push((pair, vec![r])),
        }
    }
    let mut out: Vec<PairFigure> = groups
        .into_iter()
        .filter_map(|(pair, rs)| {
            let summary = if rs.len() == 1 {
                rs[0].summary()?
            } else {
                crate::measure::stats::Summary::of(&rs.iter().filter_map(|r| r.median).collect::<Vec<_>>())?
            };
            Some(PairFigure {
                pair,
                summary,
                records: rs.len(),
            })
        })
        .collect();
    out.sort_by(|a, b| b.summary.median.total_cmp(&a.summary.median));
    out
}

/// The pairs that could place among the `TOP` by the tool's own ties (95%
/// intervals overlap): fewer than `TOP` others are certainly faster.
fn top_up_to_ties(f: &[PairFigure]) -> Vec<String> {
    let iv: Vec<_> = f.iter().map(|p| Some((p.summary.ci95_low, p.summary.ci95_high))).collect();
    could_place(&iv, TOP).into_iter().map(|i| f[i].pair.clone()).collect()
}

/// Both sweeps' top `TOP` pairs with their intervals, and whether they agree:
/// exactly, or up to ties (each sweep's top pairs could place in the other's top
/// by that sweep's intervals), or not.
pub fn compare_sweeps(dec: &crate::model::Document, full: &crate::model::Document) -> (String, bool) {
    let (a, b) = (pair_figures(dec), pair_figures(full));
    let mb = |x: f64| x / 1e6;
    let mut s = String::new();
    for (title, f) in [("decomposed", &a), ("full matrix, pooled over kex", &b)] {
        s.push_str(&format!("top {TOP}, {title} (MB/s, median [95% interval], samples):\n"));
        for (i, p) in f.iter().take(TOP).enumerate() {
            let tie = if i > 0 && p.summary.ties_with(&f[i - 1].summary) {
                format!("  tied with #{i}")
            } else {
                String::new()
            };
            s.push_str(&format!(
                "  #{} {:<46} {:>8.1} [{:.1}, {:.1}]  n={}{}{tie}\n",
                i + 1,
                p.pair,
                mb(p.summary.median),
                mb(p.summary.ci95_low),
                mb(p.summary.ci95_high),
                p.summary.samples,
                if p.records > 1 {
                    format!(" ({} kex)", p.records)
                } else {
                    String::new()
                },
            ));
        }
        let t = top_up_to_ties(f);
        s.push_str(&format!(
            "  could place in the top {TOP} (ties): {} pair(s): {}\n",
            t.len(),
            t.join(", ")
        ));
    }
    let top = |f: &[PairFigure]| f.iter().take(TOP).map(|p| p.pair.clone()).collect::<Vec<_>>();
    let (ta, tb) = (top(&a), top(&b));
    let (ra, rb) = (top_up_to_ties(&a), top_up_to_ties(&b));
    let mut sa = ta.clone();
    let mut sb = tb.clone();
    sa.sort();
    sb.sort();
    let (verdict, agree) = if ta.len() < TOP || tb.len() < TOP {
        (format!("fewer than {TOP} pairs measured: nothing to compare"), false)
    } else if ta == tb {
        (format!("same top {TOP}, same order"), true)
    } else if sa == sb {
        (format!("same top {TOP}, order differs"), true)
    } else if ta.iter().all(|p| rb.contains(p)) && tb.iter().all(|p| ra.contains(p)) {
        let only_a: Vec<_> = ta.iter().filter(|p| !tb.contains(p)).cloned().collect();
        let only_b: Vec<_> = tb.iter().filter(|p| !ta.contains(p)).cloned().collect();
        (
            format!(
                "same top {TOP} up to ties: {} (decomposed) and {} (full matrix) tie with the other sweep's top {TOP} within the tool's 95% intervals",
                only_a.join(", "),
                only_b.join(", ")
            ),
            true,
        )
    } else {
        (format!("top {TOP} differ, also up to ties"), false)
    };
    s.push_str(&verdict);
    s.push('\n');
    (s, agree)
}

/// `ssh --compare-sweeps DECOMPOSED FULL` (hidden, for the bench script): reads
/// two `--json` documents and prints [`compare_sweeps`]. Exit status 0 when the
/// top pairs agree (up to ties), 1 when they differ.
pub fn compare_sweep_files(dec: &std::path::Path, full: &std::path::Path) -> Result<()> {
    let load = |p: &std::path::Path| -> Result<crate::model::Document> {
        let bytes = std::fs::read(p).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", p.display()))?;
        serde_json::from_slice(&bytes).map_err(|e| anyhow::anyhow!("{} is not a cipherbench --json document: {e}", p.display()))
    };
    let (text, agree) = compare_sweeps(&load(dec)?, &load(full)?);
    print!("{text}");
    if !agree {
        bail!("the two sweeps' top {TOP} differ");
    }
    Ok(())
}

/// `ssh --serve` (hidden, for bench scripts): keeps the private daemon up until
/// Ctrl-C or SIGTERM, after printing how to reach it as one JSON line.
pub fn serve(client: &Client, daemon: Option<&PrivateSshd>) -> Result<()> {
    let (
        Some(d),
        Target::Private {
            port,
            user,
            key,
            known_hosts,
        },
    ) = (daemon, &client.target)
    else {
        bail!("--serve needs the private sshd");
    };
    let line = json!({
        "port": port, "user": user, "identity": key, "known_hosts": known_hosts,
        "pid": d.pid(), "dir": d.dir(), "banner": d.banner(),
        "client_cpus": crate::backend::openssh::placement::placement().map(|p| p.client.clone()),
    });
    println!("{line}");
    use std::io::Write;
    std::io::stdout().flush()?;
    while !crate::interrupt::requested() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(())
}

/// `list ssh`: what the local OpenSSH supports.
pub fn list(json_out: bool, grades: &crate::judge::Grader) -> Result<()> {
    use crate::judge::Domain;
    let o = crate::discover::openssh::discover()?;
    let sshd = crate::discover::openssh::find_sshd();
    let serve = o.private_hostkeys();
    if json_out {
        let graded: Vec<_> = [
            (Domain::SshCipher, &o.ciphers),
            (Domain::SshMac, &o.macs),
            (Domain::SshKex, &o.kex),
            (Domain::SshHostkey, &o.hostkey_algorithms),
        ]
        .iter()
        .flat_map(|(d, names)| {
            names
                .iter()
                .map(move |n| json!({"domain": d, "name": n, "grade": grades.grade(*d, n)}))
        })
        .collect();
        let v = json!({
            "version": o.version,
            "ssh": o.ssh,
            "sshd": sshd.as_ref().ok(),
            "sshd_error": sshd.as_ref().err().map(|e| e.to_string()),
            "ciphers": o.ciphers.iter().map(|c| json!({"name": c, "aead": o.is_aead(c)})).collect::<Vec<_>>(),
            "macs": o.macs,
            "kex": o.kex,
            "keys": o.keys,
            "hostkey_algorithms": o.hostkey_algorithms,
            "private_sshd_hostkeys": serve,
            "grades": graded,
        });
        return crate::report::write_output(std::path::Path::new("-"), &serde_json::to_vec_pretty(&v)?);
    }
    let mut s = format!(
        "{}
",
        o.version
    );
    match &sshd {
        Ok(p) => s.push_str(&format!(
            "sshd: {} (private loopback daemon available)
\n",
            p.display()
        )),
        Err(e) => s.push_str(&format!("sshd: {e}\n\n")),
    }
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY);
    let mut header: Vec<String> = ["kind", "algorithm", "note"].map(String::from).to_vec();
    header.extend(grades.headers());
    t.set_header(header);
    let mut row = |kind: &str, d: Domain, name: &str, note: &str| {
        let mut r = vec![kind.to_string(), name.to_string(), note.to_string()];
        r.extend(grades.cells(d, name));
        t.add_row(r);
    };
    for c in &o.ciphers {
        row(
            "cipher",
            Domain::SshCipher,
            c,
            if o.is_aead(c) { "AEAD: MAC implicit" } else { "needs a MAC" },
        );
    }
    for m in &o.macs {
        row("mac", Domain::SshMac, m, if m.contains("-etm@") { "encrypt-then-MAC" } else { "" });
    }
    for k in &o.kex {
        row("kex", Domain::SshKex, k, "");
    }
    for h in &o.hostkey_algorithms {
        row(
            "hostkey",
            Domain::SshHostkey,
            h,
            if serve.contains(h) { "served by the private sshd" } else { "" },
        );
    }
    s.push_str(&format!("{t}\n"));
    s.push_str(&format!(
        "  {} ciphers ({} AEAD) × {} MACs × {} kex: the decomposed sweep measures {} bulk subjects and {} handshakes; --full-matrix measures {}.\n",
        o.ciphers.len(),
        o.aead.len(),
        o.macs.len(),
        o.kex.len(),
        (o.ciphers.len() - o.aead.len()) * o.macs.len() + o.aead.len(),
        o.kex.len() * crate::discover::openssh::DEFAULT_HOSTKEYS.len(),
        ((o.ciphers.len() - o.aead.len()) * o.macs.len() + o.aead.len()) * o.kex.len(),
    ));
    crate::report::write_output(std::path::Path::new("-"), s.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn openssh() -> OpenSsh {
        OpenSsh {
            ssh: "ssh".into(),
            version: "OpenSSH_9.2p1".into(),
            ciphers: [
                "aes128-ctr",
                "aes256-ctr",
                "aes128-gcm@openssh.com",
                "chacha20-poly1305@openssh.com",
            ]
            .map(String::from)
            .to_vec(),
            aead: ["aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com"]
                .map(String::from)
                .to_vec(),
            macs: ["hmac-sha2-256", "umac-64-etm@openssh.com", "hmac-sha1"].map(String::from).to_vec(),
            kex: ["ecdh-sha2-nistp256", "curve25519-sha256"].map(String::from).to_vec(),
            keys: vec![],
            hostkey_algorithms: ["ssh-ed25519", "rsa-sha2-512"].map(String::from).to_vec(),
            pubkey_algorithms: vec![],
        }
    }

    fn plan(full: bool, ciphers: &[&str]) -> SshPlan {
        let o = openssh();
        let serve = o.hostkey_algorithms.clone();
        let c: Vec<String> = ciphers.iter().map(|s| s.to_string()).collect();
        SshPlan::new(&o, &c, &[], &[], &[], Some(&serve), full, None, false, true, Seconds(10.0)).unwrap()
    }

    #[test]
    fn decomposed_sweep_measures_aead_once_and_fixes_kex() {
        let p = plan(false, &[]);
        let b = p.bulk_items();
        // 2 plain ciphers × 3 MACs + 2 AEADs.
        assert_eq!(b.len(), 8);
        assert!(b.iter().all(|i| i.kex == "curve25519-sha256"));
        assert_eq!(b.iter().filter(|i| i.mac.is_none()).count(), 2);
        // kex × host key: 2 × 2.
        assert_eq!(p.handshake_items().len(), 4);
    }

    #[test]
    fn full_matrix_is_the_three_way_product() {
        let p = plan(true, &[]);
        assert_eq!(p.bulk_items().len(), 8 * 2);
        assert!(p.handshake_items().is_empty());
    }

    #[test]
    fn names_are_validated_with_suggestions() {
        let p = plan(false, &["AES128-CTR"]);
        assert_eq!(p.ciphers, vec!["aes128-ctr"]);
        let o = openssh();
        let err = SshPlan::new(
            &o,
            &["aes128-crt".into()],
            &[],
            &[],
            &[],
            None,
            false,
            None,
            false,
            true,
            Seconds(1.0),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("unknown cipher 'aes128-crt'") && msg.contains("aes128-ctr"), "{msg}");
        let err = SshPlan::new(
            &o,
            &[],
            &[],
            &[],
            &["ssh-dss".into()],
            Some(&o.hostkey_algorithms),
            false,
            None,
            false,
            true,
            Seconds(1.0),
        )
        .unwrap_err();
        assert!(err.to_string().contains("unknown host-key algorithm"), "{err}");
    }

    #[test]
    fn algorithms_checked_by_an_earlier_sweep_are_not_checked_again() {
        // A client that cannot run at all: any check it made would fail and be recorded.
        let client = Client {
            ssh: "/nonexistent/ssh".into(),
            target: Target::Remote {
                destination: "nowhere.invalid".into(),
                port: None,
                identity: None,
                options: vec![],
            },
        };
        let kex = |k: &str| Subject {
            kex: Some(k.into()),
            ..Default::default()
        };
        let mut acc = Accepted {
            accepted: vec![kex("k1")],
            refused: vec![(kex("k2"), "no matching key exchange".into())],
        };
        let mut session = Session::start("ssh", json!({}), None, crate::report::progress::Progress::new(true)).unwrap();
        let clock = Clock::new(Instant::now(), Seconds(10.0));
        let checks = |names: &[&str]| names.iter().map(|k| (kex(k), Algorithms::default())).collect::<Vec<_>>();
        run_checks(checks(&["k1", "k2"]), &client, &mut session, &mut acc, &clock).unwrap();
        assert!(session.results().is_empty(), "{:?}", session.results());
        assert_eq!((acc.accepted.len(), acc.refused.len()), (1, 1));
        // A new one is checked (and here fails: the client cannot run).
        run_checks(checks(&["k1", "k3"]), &client, &mut session, &mut acc, &clock).unwrap();
        assert_eq!(session.results().len(), 1);
        assert!(acc.knows(&kex("k3")) && acc.refusal(&kex("k3")).is_some());
    }

    #[test]
    fn refusal_of_one_algorithm_covers_its_combinations() {
        let acc = Accepted {
            accepted: vec![],
            refused: vec![(
                Subject {
                    mac: Some("hmac-sha1".into()),
                    ..Default::default()
                },
                "no matching MAC".into(),
            )],
        };
        let s = |mac: Option<&str>| Subject {
            cipher: Some("aes128-ctr".into()),
            mac: mac.map(String::from),
            kex: Some("k".into()),
            ..Default::default()
        };
        assert!(acc.refusal(&s(Some("hmac-sha1"))).is_some());
        assert!(acc.refusal(&s(Some("hmac-sha2-256"))).is_none());
        assert!(acc.refusal(&s(None)).is_none());
    }

    /// The private daemon and a client for it.
    fn private() -> (crate::backend::openssh::PrivateSshd, Client) {
        let o = crate::discover::openssh::discover().unwrap();
        let d = crate::backend::openssh::PrivateSshd::start(&crate::discover::openssh::find_sshd().unwrap(), &o).unwrap();
        let f = d.files();
        let client = Client {
            ssh: o.ssh.clone(),
            target: Target::Private {
                port: d.port(),
                user: d.user().to_string(),
                key: f.client_key,
                known_hosts: f.known_hosts,
            },
        };
        (d, client)
    }

    /// A non-AEAD pair every OpenSSH supports.
    fn ctr_hmac() -> Algorithms {
        Algorithms {
            cipher: Some("aes128-ctr".into()),
            mac: Some("hmac-sha2-256".into()),
            ..Default::default()
        }
    }

    #[test]
    fn far_side_hash_must_match_and_can_fail() {
        let (_d, client) = private();
        let algs = ctr_hmac();
        let buf = Arc::new(pattern());
        // Honest far side: every byte arrives, the hashes match.
        let mut p = BulkProbe::open(&client, algs.clone(), buf.clone(), None, true).unwrap();
        assert_eq!(p.run(3).unwrap(), (3 * CHUNK) as f64);
        let (wall, cpu) = p.timed_region().unwrap();
        assert!(wall.0 > 0.0 && cpu.0 > 0.0, "{wall:?} {cpu:?}");
        p.close().expect("hash of what crossed matches");
        // A far side that alters one byte value: the check must notice.
        let mut t = client
            .transfer(&algs, &format!("echo {READY} && tr 'A' 'B' | {HASH_SINK}"), true)
            .unwrap();
        t.wait_for_line(READY).unwrap();
        t.send(b"cipherbench: A byte that changes").unwrap();
        let err = t.finish().unwrap_err().to_string();
        assert!(err.contains("received different bytes"), "{err}");
        // Fixed-volume mode: one whole session per sample.
        let mut p = BulkProbe::open(&client, algs, buf, Some(3 * CHUNK as u64 + 17), true).unwrap();
        assert_eq!(p.run(1).unwrap(), (3 * CHUNK + 17) as f64);
        p.close().unwrap();
    }

    #[test]
    fn fixed_volume_needs_the_far_side_to_say_it_read_everything() {
        let (_d, client) = private();
        let algs = ctr_hmac();
        // The real far side: primed, then done.
        let buf = Arc::new(pattern());
        let mut p = BulkProbe::open(&client, algs.clone(), buf.clone(), Some(CHUNK as u64), false).unwrap();
        assert_eq!(p.run(1).unwrap(), CHUNK as f64);
        assert!(p.timed_region().unwrap().0 .0 > 0.0);
        // A far side that reads everything but never says so: an error, not a figure.
        let mut t = client.transfer(&algs, &format!("echo {READY} && {SINK}"), false).unwrap();
        t.wait_for_line(READY).unwrap();
        t.send(&buf).unwrap();
        let err = t.end_input_and_wait(Some(DONE)).unwrap_err().to_string();
        assert!(err.contains("without saying it had read all"), "{err}");
        // Nor may it skip the priming checkpoint.
        let mut t = client
            .transfer(&algs, &format!("echo {READY} && {SINK} && echo {DONE}"), false)
            .unwrap();
        t.wait_for_line(READY).unwrap();
        t.send(&buf).unwrap();
        drop(t.end_input_and_wait(Some(PRIMED)).unwrap_err());
    }

    #[test]
    fn sessions_interleave_in_rounds_and_fit_the_share() {
        assert_eq!(rounds(&[2, 0, 1], 3), vec![2, 0, 1, 2, 0, 1, 2, 0, 1]);
        assert!(rounds(&[4], 0).is_empty());
        // A generous share: three sessions, each sampling no longer than the cap.
        let (n, span) = session_plan(MAX_BULK_SECONDS, 0.3);
        assert_eq!(n, FIRST_PASS_SESSIONS);
        assert!((MIN_BULK_SECONDS..=MAX_SESSION_SECONDS).contains(&span), "{span}");
        assert!(n as f64 * (0.3 + warmup_for(span) + span) <= MAX_BULK_SECONDS + 1e-9);
        // Room for about two: two. None fits: one, at the least span.
        assert_eq!(session_plan(2.0 * (0.3 + 0.3 + 0.05), 0.3).0, 2);
        assert_eq!(session_plan(0.1, 0.3), (1, MIN_BULK_SECONDS));
    }

    #[test]
    fn fewer_than_three_sessions_store_a_widened_interval() {
        let one = record(Kind::SshBulk, Metric::BytesPerSec, Subject::default(), &m(&[100.0]), 1.5);
        assert_eq!(one.median, Some(100.0));
        assert!(
            (one.ci95_low.unwrap() - 100.0 / 1.5).abs() < 1e-9 && (one.ci95_high.unwrap() - 150.0).abs() < 1e-9,
            "{one:?}"
        );
        let two = record(Kind::SshBulk, Metric::BytesPerSec, Subject::default(), &m(&[100.0, 120.0]), 2.0);
        assert_eq!((two.ci95_low, two.ci95_high), (Some(50.0), Some(240.0)));
        // From three on, the tool's own interval (below 6, the range).
        let three = record(
            Kind::SshBulk,
            Metric::BytesPerSec,
            Subject::default(),
            &m(&[100.0, 120.0, 110.0]),
            2.0,
        );
        assert_eq!((three.ci95_low, three.ci95_high), (Some(100.0), Some(120.0)));
        // The race sees the same interval as the record.
        assert_eq!(
            race_interval(&m(&[100.0]), 1.5),
            Some((one.ci95_low.unwrap(), one.ci95_high.unwrap()))
        );
    }

    #[test]
    fn handshakes_are_taken_in_rounds_within_the_time() {
        let sample = || sampler::Sample {
            wall: Seconds(0.001),
            cpu: Seconds(0.0),
            work: 1.0,
        };
        // Three subjects, one failing at its second handshake: the others go on,
        // in rounds 0 1 2, 0 1 2 …, each to HANDSHAKE_SAMPLES at least.
        let mut order = Vec::new();
        let stop = Instant::now() + Duration::from_millis(300);
        let out = handshake_rounds(3, 0.001, stop, |k, i| {
            order.push(k);
            std::thread::sleep(Duration::from_millis(1));
            if k == 1 && i == 1 {
                anyhow::bail!("refused now");
            }
            Ok(sample())
        });
        assert_eq!(&order[..6], &[0, 1, 2, 0, 1, 2]);
        assert_eq!(&order[6..8], &[0, 2], "the failed subject is out");
        assert!(out[1].1.is_some() && out[1].0.samples.len() == 1);
        for k in [0, 2] {
            assert!(out[k].1.is_none());
            assert!(out[k].0.samples.len() >= HANDSHAKE_SAMPLES, "{}", out[k].0.samples.len());
        }
        assert!(Instant::now() < stop + Duration::from_millis(50));
        // No time: nothing starts.
        let out = handshake_rounds(2, 0.5, Instant::now() + Duration::from_millis(100), |_, _| Ok(sample()));
        assert!(out.iter().all(|(m, e)| m.samples.is_empty() && e.is_none()));
    }

    #[test]
    fn handshake_probe_and_refusals() {
        let (_d, client) = private();
        let mut h = HandshakeProbe {
            client: client.clone(),
            algs: Algorithms {
                kex: Some("curve25519-sha256".into()),
                hostkey: Some("ssh-ed25519".into()),
                ..Default::default()
            },
            last: None,
            cpu: LoginCpu::for_target(&client.target),
        };
        assert_eq!(h.run(3).unwrap(), 3.0);
        assert!(h.timed_region().unwrap().0 .0 > 0.0);
        // Both ends' CPU per login: the client's from wait4, the private sshd's from
        // its listener's reaped children (a login re-executes sshd: never free).
        let cpu = h.cpu.figure().expect("cpu per login");
        let (client_cpu, server_cpu) = (cpu.client.unwrap(), cpu.server.expect("the private sshd is observable"));
        assert_eq!((client_cpu.samples, server_cpu.samples), (3, 3));
        assert!(client_cpu.mean > 0.0 && server_cpu.mean > 0.0, "{cpu:?}");
        assert!(cpu.total.unwrap().mean > client_cpu.mean);
        // A cipher the client does not know is refused, not fatal.
        let e = client
            .run(
                &Algorithms {
                    cipher: Some("rijndael-cbc@lysator.liu.se".into()),
                    ..Default::default()
                },
                "true",
            )
            .unwrap_err();
        assert!(matches!(e, SshError::Refused(_)), "{e:?}");
    }

    fn m(values: &[f64]) -> Measurement {
        Measurement {
            samples: values
                .iter()
                .map(|v| sampler::Sample {
                    wall: Seconds(1.0),
                    cpu: Seconds(0.5),
                    work: *v,
                })
                .collect(),
            rate: Rate::PerSecond,
            units: 1,
            interrupted: false,
            basis: sampler::Basis::Wall,
        }
    }

    #[test]
    fn clear_losers_cannot_place_and_one_sample_is_widened() {
        let iv = |vals: &[&[f64]], k: f64| -> Vec<Option<(f64, f64)>> { vals.iter().map(|v| race_interval(&m(v), k)).collect() };
        // Three pairs near 100, one near 95 (within noise), one at 20 (3des-like).
        let rows: [&[f64]; 5] = [&[100.0, 102.0, 98.0], &[101.0, 99.0, 103.0], &[97.0, 99.0, 100.0], &[95.0], &[20.0]];
        let places = could_place(&iv(&rows, 2.0), TOP);
        assert_eq!(places, vec![0, 1, 2, 3], "the one-sample 95 stays in, the 20 is out");
        // Narrow intervals with three samples each: the fourth is certainly slower.
        let rows: [&[f64]; 4] = [
            &[100.0, 101.0, 102.0],
            &[110.0, 111.0, 112.0],
            &[120.0, 121.0, 122.0],
            &[90.0, 91.0, 92.0],
        ];
        assert_eq!(could_place(&iv(&rows, 2.0), TOP), vec![0, 1, 2]);
        // No interval (not measured): not in the running.
        assert!(could_place(&[None, Some((1.0, 2.0))], TOP) == vec![1]);
    }

    #[test]
    fn first_rounds_take_everyone_then_clear_losers_are_passed_over() {
        // True speeds: three contenders near 100, two near 60, one at 20.
        let speeds = [60.0, 100.0, 20.0, 98.0, 59.0, 101.0];
        let mut racers: Vec<Racer> = speeds
            .iter()
            .map(|_| Racer {
                item: BulkItem {
                    cipher: "c".into(),
                    mac: None,
                    kex: "k".into(),
                },
                subject: Subject::default(),
                algs: Algorithms::default(),
                m: m(&[]),
                idx: None,
                cost: 0.0,
                out: false,
            })
            .collect();
        let mut order = Vec::new();
        in_rounds(&mut racers, 3, |r, i| {
            // A little spread between sessions, as on a quiet machine.
            let wobble = [1.0, 1.02, 0.99][r[i].m.samples.len()];
            r[i].m.samples.push(m(&[speeds[i] * wobble]).samples[0]);
            order.push(i);
            Ok(true)
        })
        .unwrap();
        // Rounds 1 and 2: everyone, in the plan's order.
        assert_eq!(&order[..12], &[0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5]);
        // Round 3: fastest first; once the contenders have three sessions
        // the spread is known and the clear losers (60, 59, 20) get no third.
        assert_eq!(&order[12..], &[5, 1, 3], "{order:?}");
        // Out of time: the scheduler stops at once.
        let mut calls = 0;
        for r in racers.iter_mut() {
            r.m = m(&[]);
        }
        in_rounds(&mut racers, 3, |_, _| {
            calls += 1;
            Ok(false)
        })
        .unwrap();
        assert_eq!(calls, 1);
    }

    #[test]
    fn slack_follows_the_observed_spread_within_bounds() {
        let (a, b, c) = (m(&[100.0, 110.0, 105.0]), m(&[50.0, 55.0, 52.0]), m(&[10.0]));
        assert!((slack(&[&a, &b, &c]) - 1.1).abs() < 1e-9);
        let wild = m(&[10.0, 100.0, 50.0]);
        assert_eq!(slack(&[&wild]), MAX_SLACK);
        assert_eq!(slack(&[&c]), MAX_SLACK, "no pair with 3 samples yet: the widest");
        let tight = m(&[100.0, 100.5, 100.2]);
        assert_eq!(slack(&[&tight]), MIN_SLACK);
    }

    #[test]
    fn racing_samples_the_pairs_on_the_boundary_and_stops_when_settled() {
        // Ranked by median: 0 (200), 1 (150), 2 (120), 3 (118), 4 (50).
        let iv = vec![
            Some((190.0, 210.0)),
            Some((140.0, 160.0)),
            Some((110.0, 125.0)),
            Some((112.0, 124.0)),
            Some((45.0, 55.0)),
        ];
        let med = [200.0, 150.0, 120.0, 118.0, 50.0];
        let alive = [0, 1, 2, 3];
        // Places 1 and 2 are settled; the third is between 2 and 3.
        assert_eq!(critical(&iv, &med, &[5, 5, 5, 5, 1], &alive, 30), vec![2, 3]);
        // One of them capped: only the other is sampled.
        assert_eq!(critical(&iv, &med, &[5, 5, 30, 5, 1], &alive, 30), vec![3]);
        // Both capped: nothing left that could settle it.
        assert!(critical(&iv, &med, &[5, 5, 30, 30, 1], &alive, 30).is_empty());
        // First place open too: both places get samples in the same round.
        let mut two = iv.clone();
        two[0] = Some((145.0, 210.0));
        assert_eq!(critical(&two, &med, &[5; 5], &alive, 30), vec![0, 1, 2, 3]);
        // Separated: settled.
        let mut sep = iv.clone();
        sep[3] = Some((100.0, 105.0));
        assert!(critical(&sep, &med, &[5; 5], &alive, 30).is_empty());
    }

    fn doc(rows: &[(&str, Option<&str>, &str, &[f64])]) -> crate::model::Document {
        let results = rows
            .iter()
            .map(|(c, mac, k, v)| {
                let s = crate::measure::stats::Summary::of(v).unwrap();
                let subject = Subject {
                    cipher: Some(c.to_string()),
                    mac: mac.map(String::from),
                    kex: Some(k.to_string()),
                    ..Default::default()
                };
                ResultRecord::ok(Kind::SshBulk, subject, Metric::BytesPerSec, &s, None)
            })
            .collect();
        let mut d: crate::model::Document = serde_json::from_value(json!({
            "schema": "cipherbench/1",
            "run": {"id": "t", "started_at": "now", "status": "complete", "command": "ssh",
                    "host": crate::discover::host::fingerprint(), "libraries": {}, "settings": {}},
            "results": [], "verdicts": [], "recommendations": []
        }))
        .unwrap();
        d.results = results;
        d
    }

    #[test]
    fn full_matrix_pairs_pool_over_kex_and_ties_decide_agreement() {
        let spread = |x: f64| [x - 2.0, x - 1.0, x, x + 1.0, x + 2.0, x + 0.5, x - 0.5];
        let (a, b, c, d, e) = (spread(300.0), spread(250.0), spread(200.0), spread(199.0), spread(100.0));
        let dec = doc(&[
            ("aes128-gcm@openssh.com", None, "k1", &a),
            ("aes128-ctr", Some("umac-64-etm@openssh.com"), "k1", &b),
            ("aes256-ctr", Some("umac-64-etm@openssh.com"), "k1", &c),
            ("aes128-ctr", Some("hmac-sha1"), "k1", &d),
            ("3des-cbc", Some("hmac-sha1"), "k1", &e),
        ]);
        // Full matrix: one figure per kex, pooled per pair; AEAD counted once.
        let mut rows = Vec::new();
        let kex = ["k1", "k2", "k3", "k4", "k5", "k6", "k7"];
        for (i, k) in kex.iter().enumerate() {
            rows.push(("aes128-gcm@openssh.com", None, *k, vec![301.0 + i as f64]));
            rows.push(("aes128-ctr", Some("umac-64-etm@openssh.com"), *k, vec![249.0 + i as f64]));
            // The 3rd and 4th swap places, within each other's intervals.
            rows.push(("aes256-ctr", Some("umac-64-etm@openssh.com"), *k, vec![197.0 + i as f64]));
            rows.push(("aes128-ctr", Some("hmac-sha1"), *k, vec![198.0 + i as f64]));
            rows.push(("3des-cbc", Some("hmac-sha1"), *k, vec![20.0 + i as f64]));
        }
        let rows: Vec<(&str, Option<&str>, &str, &[f64])> = rows.iter().map(|(c, m, k, v)| (*c, *m, *k, v.as_slice())).collect();
        let full = doc(&rows);
        let f = pair_figures(&full);
        assert_eq!(f.len(), 5);
        assert_eq!(f[0].pair, "aes128-gcm@openssh.com (implicit)");
        assert_eq!((f[0].records, f[0].summary.samples), (7, 7));
        let (text, agree) = compare_sweeps(&dec, &full);
        assert!(agree, "{text}");
        assert!(text.contains("same top 3 up to ties"), "{text}");
        assert!(text.contains("#1 aes128-gcm@openssh.com (implicit)"), "{text}");
        // A full matrix whose third place is far ahead of the decomposed one's: they differ.
        let mut rows2 = rows.clone();
        let fast = [400.0];
        for r in rows2.iter_mut().filter(|r| r.0 == "3des-cbc") {
            r.3 = &fast;
        }
        let (text, agree) = compare_sweeps(&dec, &doc(&rows2));
        assert!(!agree && text.contains("top 3 differ"), "{text}");
        // Identical: the same top 3 in the same order.
        let (text, agree) = compare_sweeps(&dec, &dec);
        assert!(agree && text.contains("same top 3, same order"), "{text}");
    }

    #[test]
    fn pattern_is_not_compressible_filler() {
        let p = pattern();
        assert_eq!(p.len(), CHUNK);
        let zeros = p.iter().filter(|&&b| b == 0).count();
        assert!(zeros < CHUNK / 100, "{zeros}");
    }
}
