//! SSH: real OpenSSH transfers and handshakes, measured with the shared sampler.
//!
//! - **Feature check** (`ssh-accept`): one quick connection per algorithm, with the
//!   others left at a fixed choice. SSH negotiates ciphers, MACs, key exchanges and
//!   host-key algorithms independently (RFC 4253 §7.1), so a combination is
//!   accepted exactly when each of its algorithms is; AEAD ciphers take no MAC.
//! - **Bulk** (`ssh-bulk`): bytes pumped from memory through `ssh ... 'cat >
//!   /dev/null'`. By default one session per subject stays open and each sample
//!   pushes `units` MiB through it, so the handshake is not in the figure and the
//!   sampler grows the volume until a sample is long enough. With `--bytes N` each
//!   sample is one fresh session of N bytes, timed from the moment the far side
//!   runs until ssh has ended (every byte read there); the handshake is left out
//!   here too, since it is measured on its own. The ssh client's CPU time is
//!   recorded beside the wall time.
//! - **Handshake** (`ssh-handshake`): connect, authenticate and run `true`, per kex
//!   × host-key algorithm, one handshake per sample.
//!
//! By default bulk is swept over cipher × MAC with one kex, and handshakes over
//! kex × host key (DESIGN.md: Enc/MAC cost is paid per byte, Kx/Au once per
//! connection). `--full-matrix` runs the write-up's cipher × MAC × kex sweep.

use crate::backend::openssh::client::{children_cpu, Algorithms, Client, SshError, Target, Transfer};
use crate::backend::openssh::PrivateSshd;
use crate::discover::openssh::OpenSsh;
use crate::measure::sampler::{self, Measurement, Probe, Rate, SamplerConfig};
use crate::model::{Kind, Metric, ResultRecord, Status, Subject};
use crate::plan::{contenders, share};
use crate::session::Session;
use crate::units::Seconds;
use anyhow::{bail, Result};
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

/// The far side of a bulk transfer, as in the write-up.
pub const SINK: &str = "cat > /dev/null";
/// The far side in verify mode: prints the SHA-256 of everything it received.
pub const HASH_SINK: &str = "sha256sum";
/// Printed by the far side once the session is up, so timing starts after the handshake.
const READY: &str = "cipherbench-ready";
/// One unit of bulk work.
pub const CHUNK: usize = 1 << 20;
/// Least time one adaptive bulk subject gets, whatever the budget.
const MIN_BULK_SECONDS: f64 = 0.4;

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
}

impl BulkProbe {
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
        };
        if fixed.is_none() {
            let sink = if verify { HASH_SINK } else { SINK };
            let remote = format!("echo {READY} && exec {sink}");
            let mut t = p.client.transfer(&p.algs, &remote, verify)?;
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

    /// One whole session of `bytes`: the handshake happens first, untimed (the
    /// far side says when it runs); the clock covers pumping every byte and ssh
    /// ending after the far side has read them all. Returns (wall, client CPU).
    fn one_session(&mut self, bytes: u64) -> Result<(Seconds, Seconds)> {
        let sink = if self.verify { HASH_SINK } else { SINK };
        let c0 = children_cpu();
        let mut t = self
            .client
            .transfer(&self.algs, &format!("echo {READY} && exec {sink}"), self.verify)?;
        t.wait_for_line(READY)?;
        let handshake_cpu = t.cpu_time().unwrap_or_default();
        let t0 = Instant::now();
        let mut left = bytes;
        while left > 0 {
            let n = left.min(self.buf.len() as u64) as usize;
            t.send(&self.buf[..n])?;
            left -= n as u64;
        }
        t.finish()?;
        let wall = Seconds::from_duration(t0.elapsed());
        Ok((wall, Seconds((children_cpu().0 - c0.0 - handshake_cpu.0).max(0.0))))
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
        let c0 = t.cpu_time();
        for _ in 0..units {
            t.send(&self.buf)?;
        }
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

/// Connect, authenticate, run `true`.
pub struct HandshakeProbe {
    client: Client,
    algs: Algorithms,
    last: Option<(Seconds, Seconds)>,
}

impl Probe for HandshakeProbe {
    fn run(&mut self, units: u64) -> Result<f64> {
        let c0 = children_cpu();
        let t0 = Instant::now();
        for _ in 0..units {
            self.client.run(&self.algs, "true")?;
        }
        self.last = Some((Seconds::from_duration(t0.elapsed()), Seconds(children_cpu().0 - c0.0)));
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

fn record(kind: Kind, metric: Metric, subject: Subject, m: &Measurement) -> ResultRecord {
    match m.wall() {
        Some(w) => ResultRecord::ok(kind, subject, metric, &w, m.cpu().as_ref()),
        None => ResultRecord::not_ok(kind, subject, metric, Status::Failed, "no samples"),
    }
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
#[derive(Debug, Default)]
struct Accepted {
    accepted: Vec<Subject>,
    refused: Vec<(Subject, String)>,
}

impl Accepted {
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
fn run_checks(checks: Vec<(Subject, Algorithms)>, client: &Client, session: &mut Session, acc: &mut Accepted) -> Result<()> {
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).clamp(1, 4);
    let mut outcomes: Vec<Option<Result<(), SshError>>> = vec![None; checks.len()];
    for batch in (0..checks.len()).collect::<Vec<_>>().chunks(workers) {
        if crate::interrupt::requested() {
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
/// accepted ones when the preferred ones were refused.
fn feature_check(plan: &SshPlan, client: &Client, session: &mut Session) -> Result<(Accepted, SshPlan)> {
    session.progress_message("ssh: which algorithms both sides accept");
    let mut acc = Accepted::default();
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
    run_checks(checks, client, session, &mut acc)?;
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
    run_checks(checks, client, session, &mut acc)?;
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
        run_checks(checks, client, session, &mut acc)?;
    }
    Ok((acc, plan))
}

/// Sampler settings for bulk subjects sharing `budget`.
fn bulk_config(budget: Seconds, n: usize, fixed: bool) -> SamplerConfig {
    let base = share(budget, n);
    let per = base.budget.0;
    if fixed {
        return SamplerConfig {
            warmup: Seconds(0.0),
            max_units: 1,
            min_samples: 3,
            max_samples: 30,
            precision: 0.01,
            ..base
        };
    }
    SamplerConfig {
        // Warm-up lets the TCP and channel windows open up.
        warmup: Seconds((per / 8.0).clamp(0.1, 0.3)),
        sample_time: Seconds((per / 6.0).clamp(0.05, 1.0)),
        min_samples: 5,
        max_samples: 60,
        precision: 0.01,
        ..base
    }
}

fn handshake_config(budget: Seconds, n: usize) -> SamplerConfig {
    let base = share(budget, n);
    SamplerConfig {
        warmup: Seconds(0.0),
        max_units: 1,
        min_samples: 5,
        max_samples: 40,
        precision: 0.02,
        ..base
    }
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

/// Runs the plan: preflight, feature check, bulk, handshakes, racing. Results go
/// to the session as they are made.
pub fn sweep(plan: &SshPlan, client: &Client, session: &mut Session) -> Result<()> {
    let start = Instant::now();
    // Preflight: the target answers, lets us in and has the sink command.
    let sink = if plan.verify { HASH_SINK } else { SINK };
    session.progress_message("ssh: connecting");
    let t_conn = Instant::now();
    // The client's defaults: this checks reachability, login and the sink command.
    let pre = client.run(&Algorithms::default(), sink);
    // What one connection costs here: bulk subjects pay it once outside the sampler.
    let conn = t_conn.elapsed().as_secs_f64();
    if let Err(e) = pre {
        match e {
            SshError::Refused(_) => {}
            e => bail!("{e}"),
        }
    }
    let (accepted, plan) = feature_check(plan, client, session)?;
    let plan = &plan;

    let bulk = plan.bulk_items();
    let hands = plan.handshake_items();
    // Bulk is what users ask about; handshakes are cheap and few. Keep a tenth for racing.
    let accept_spent = start.elapsed().as_secs_f64();
    let left = (plan.budget.0 - accept_spent).max(plan.budget.0 * 0.2);
    let (bulk_share, hand_share) = if hands.is_empty() { (0.9, 0.0) } else { (0.7, 0.2) };
    // Each bulk subject also pays for opening its session outside the sampler.
    let setup = if plan.bytes.is_some() { 0.0 } else { conn * bulk.len() as f64 };
    // Below a few tenths of a second a subject measures session start-up, not
    // throughput: the budget is a target, these floors win over it.
    let floor = if plan.bytes.is_some() { 0.05 } else { MIN_BULK_SECONDS };
    let bcfg = bulk_config(
        Seconds((left * bulk_share - setup).max(floor * bulk.len() as f64)),
        bulk.len(),
        plan.bytes.is_some(),
    );
    let hcfg = handshake_config(Seconds((left * hand_share).max(0.2 * hands.len() as f64)), hands.len());
    let buf = Arc::new(pattern());

    session.progress_start((bulk.len() + hands.len()) as u64);
    let mut live: Vec<(usize, BulkItem, Measurement)> = Vec::new();
    for item in &bulk {
        if crate::interrupt::requested() {
            break;
        }
        let subject = bulk_subject(item, &plan.bulk_hostkey);
        let label = format!("{} {} {}", item.cipher, item.mac.as_deref().unwrap_or("(implicit MAC)"), item.kex);
        session.progress_message(&format!("ssh bulk: {label}"));
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
        let algs = Algorithms {
            cipher: Some(item.cipher.clone()),
            mac: item.mac.clone(),
            kex: Some(item.kex.clone()),
            hostkey: plan.bulk_hostkey.clone(),
        };
        let outcome = BulkProbe::open(client, algs, buf.clone(), plan.bytes, plan.verify).and_then(|p| {
            let mut probes = [p];
            let m = sampler::measure(&mut probes, Rate::PerSecond, &bcfg);
            let [p] = probes;
            let closed = p.close();
            let m = m?;
            closed?;
            Ok(m)
        });
        match outcome {
            // Ctrl-C before the first sample: nothing was measured, nothing to keep.
            Ok(m) if m.interrupted && m.samples.is_empty() => {}
            Ok(m) => {
                let idx = session.record(record(Kind::SshBulk, Metric::BytesPerSec, subject, &m))?;
                live.push((idx, item.clone(), m));
            }
            Err(e) => {
                let rec = failure(Kind::SshBulk, Metric::BytesPerSec, subject, &e)?;
                session.record(rec)?;
            }
        }
    }
    for item in &hands {
        if crate::interrupt::requested() {
            break;
        }
        let subject = Subject {
            kex: Some(item.kex.clone()),
            hostkey: item.hostkey.clone(),
            ..Default::default()
        };
        session.progress_message(&format!(
            "ssh handshake: {} {}",
            item.kex,
            item.hostkey.as_deref().unwrap_or("(default host key)")
        ));
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
        let mut probe = [HandshakeProbe {
            client: client.clone(),
            algs: Algorithms {
                kex: Some(item.kex.clone()),
                hostkey: item.hostkey.clone(),
                ..Default::default()
            },
            last: None,
        }];
        let rec = match sampler::measure(&mut probe, Rate::SecondsPer, &hcfg) {
            Ok(m) if m.interrupted && m.samples.is_empty() => continue,
            Ok(m) => record(Kind::SshHandshake, Metric::Seconds, subject, &m),
            Err(e) => failure(Kind::SshHandshake, Metric::Seconds, subject, &e)?,
        };
        session.record(rec)?;
    }
    session.progress_finish();
    race(plan, client, session, &mut live, &bcfg, &buf, start)
}

/// Leftover budget goes to the bulk subjects tied with the fastest one.
fn race(
    plan: &SshPlan,
    client: &Client,
    session: &mut Session,
    live: &mut [(usize, BulkItem, Measurement)],
    cfg: &SamplerConfig,
    buf: &Arc<Vec<u8>>,
    start: Instant,
) -> Result<()> {
    let left = plan.budget.0 - start.elapsed().as_secs_f64();
    if left <= 0.5 || crate::interrupt::requested() {
        return Ok(());
    }
    let racing = contenders(session.results(), |r| (r.kind == Kind::SshBulk).then_some(()));
    if racing.is_empty() {
        return Ok(());
    }
    let extra = Seconds((left / racing.len() as f64).min(cfg.budget.0 * 2.0));
    for idx in racing {
        if crate::interrupt::requested() || plan.budget.0 - start.elapsed().as_secs_f64() < 0.2 {
            break;
        }
        let Some((_, item, m)) = live.iter_mut().find(|(i, _, _)| *i == idx) else {
            continue;
        };
        session.progress_message(&format!("ssh racing: {} {}", item.cipher, item.mac.as_deref().unwrap_or("")));
        let algs = Algorithms {
            cipher: Some(item.cipher.clone()),
            mac: item.mac.clone(),
            kex: Some(item.kex.clone()),
            hostkey: plan.bulk_hostkey.clone(),
        };
        let p = BulkProbe::open(client, algs, buf.clone(), plan.bytes, plan.verify)?;
        let mut probes = [p];
        let refined = sampler::refine(&mut probes, m, cfg, extra);
        let [p] = probes;
        let closed = p.close();
        refined?;
        closed?;
        let subj = session.results()[idx].subject.clone();
        session.replace(idx, record(Kind::SshBulk, Metric::BytesPerSec, subj, m))?;
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
    })
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

    #[test]
    fn far_side_hash_must_match_and_can_fail() {
        let (_d, client) = private();
        let algs = Algorithms {
            cipher: Some("aes128-ctr".into()),
            mac: Some("hmac-sha2-256".into()),
            ..Default::default()
        };
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
        };
        assert_eq!(h.run(1).unwrap(), 1.0);
        assert!(h.timed_region().unwrap().0 .0 > 0.0);
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

    #[test]
    fn pattern_is_not_compressible_filler() {
        let p = pattern();
        assert_eq!(p.len(), CHUNK);
        let zeros = p.iter().filter(|&&b| b == 0).count();
        assert!(zeros < CHUNK / 100, "{zeros}");
    }
}
