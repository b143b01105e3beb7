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
//!   client's CPU time over the same timed part is recorded beside the wall time,
//!   and the private sshd's CPU over it becomes a second record per subject, its
//!   server CPU seconds per GB (mode `server-cpu-per-gb`, see `bulk.rs`).
//! - **Handshake** (`ssh-handshake`): connect, authenticate and run `true`, per kex
//!   × host-key algorithm, one handshake per sample.
//!
//! By default bulk is swept one axis at a time with one kex, what the policy
//! allows first (`stages.rs`: its ciphers with one MAC, then its MACs with one
//! cipher, then the refused ones the comparison needs), and handshakes over
//! kex × host key (DESIGN.md: Enc/MAC cost is paid per byte, Kx/Au once per
//! connection). Without the policy's lists the bulk sweep is cipher × MAC.
//! `--full-matrix` runs the write-up's cipher × MAC × kex sweep.

use crate::backend::openssh::client::{Client, Destination, SshError};
use crate::backend::openssh::PrivateSshd;
use crate::discover::openssh::OpenSsh;
use crate::measure::engine::sampler::Measurement;
use crate::measure::engine::stats::few_samples;
use crate::model::{Kind, Metric, ResultRecord, Status, Subject};
use crate::units::Seconds;
use anyhow::{bail, Result};
use serde_json::json;
use std::time::{Duration, Instant};

mod bulk;
mod features;
mod handshake;
pub mod physics;
mod racer;
mod rounds;
mod serve;
mod stages;
mod sweep;
#[cfg(test)]
mod tests;

pub use bulk::*;
use features::*;
pub use handshake::*;
use racer::*;
pub use serve::*;
pub use stages::Stage;
pub use sweep::*;

/// The far side of a bulk transfer, as in the write-up.
pub const SINK: &str = "cat > /dev/null";
/// The far side in verify mode: prints the SHA-256 of everything it received.
pub const HASH_SINK: &str = "sha256sum";
/// Printed by the far side once the session is up, so timing starts after the handshake.
pub(super) const READY: &str = "cipherbench-ready";
/// Printed by the far side (fixed volume) once it has read the priming bytes.
pub(super) const PRIMED: &str = "cipherbench-primed";
/// Printed by the far side (fixed volume) once it has read everything sent.
pub(super) const DONE: &str = "cipherbench-done";
/// What one `ssh-bulk` sample is, as the run's settings say.
pub const BULK_SAMPLES: &str = "one per session: its bytes over the wall time of its timed part (handshake, priming and warm-up untimed); median, interval and n are over sessions";
/// The mode of an `ssh-bulk` record holding the private sshd's CPU seconds per
/// GB over the sessions' timed parts (as TLS's records of the same name).
pub const SERVER_CPU_PER_GB: &str = "server-cpu-per-gb";
/// One unit of bulk work.
pub const CHUNK: usize = 1 << 20;
/// Least time one adaptive bulk session samples for (after its priming and
/// warm-up); when the budget cannot give a subject that, it is skipped.
pub(super) const MIN_BULK_SECONDS: f64 = 0.15;

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
    /// What the policy allows (from app): measured first, one axis at a time
    /// (`stages.rs`); `None` sweeps cipher × MAC as asked.
    pub admitted: Option<crate::plan::Admitted>,
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
            admitted: None,
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

    /// Bulk subjects in the order they are measured: with what the policy
    /// allows known, its ciphers with one MAC, then its MACs with one cipher, then
    /// the refused ones the comparison needs ([`SshPlan::staged_items`]);
    /// otherwise cipher × MAC (AEAD once), times every kex with `--full-matrix`.
    pub fn bulk_items(&self) -> Vec<BulkItem> {
        self.staged_items().into_iter().map(|(_, i)| i).collect()
    }

    /// Cipher × MAC (AEAD once), times every kex with `--full-matrix`, in a
    /// fixed shuffled order.
    pub(super) fn matrix_items(&self) -> Vec<BulkItem> {
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
        let mut kex: Vec<&String> = self.kex.iter().collect();
        kex.sort_by_key(|k| measure_first(k));
        // What the policy allows first, in its order; of the refused, only what
        // the comparison needs.
        if let Some(a) = &self.admitted {
            kex = stages::policy_first(kex, &a.ssh_kex, a.refused_cap.map(|c| c.min(1)));
        }
        let mut out = Vec::new();
        for k in kex {
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

/// Where a key exchange comes in the handshake plan (lower first). A small budget
/// measures only the first few handshake subjects, so the ones a recommendation
/// puts in front come first: hybrid post-quantum, then X25519, then finite-field
/// groups, then NIST curves, then SHA-1 methods (policy order does the rest; the
/// order in `ssh -Q kex` puts post-quantum last).
fn measure_first(kex: &str) -> u8 {
    let k = kex.to_ascii_lowercase();
    if k.contains("mlkem") || k.contains("sntrup") {
        0
    } else if k.starts_with("curve25519") {
        1
    } else if k.ends_with("sha1") || k.contains("sha1@") {
        4
    } else if k.contains("nistp") {
        3
    } else {
        2
    }
}

/// A fixed pseudo-random order (Fisher-Yates, xorshift, constant seed): subjects
/// are measured interleaved, so a slow drift in machine load spreads over every
/// algorithm instead of favouring the ones measured first. Same order every run.
pub(super) fn shuffle<T>(v: &mut [T]) {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for i in (1..v.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
}

/// The record of a measurement. One or two samples (sessions, for bulk) give no
/// interval: the stored one is then the engine's few-samples interval widened by
/// `slack` each way (as the race sees it), never a degenerate `[x, x]`.
pub(super) fn record(kind: Kind, metric: Metric, subject: Subject, m: &Measurement, slack: f64) -> ResultRecord {
    match m.wall() {
        Some(w) => ResultRecord::ok(kind, subject, metric, &few_samples(w, &[], slack), m.cpu().as_ref()).with_values(m.values_wall()),
        None => ResultRecord::not_ok(kind, subject, metric, Status::Failed, "no samples"),
    }
}

/// An error from a probe, as a result: refused → unsupported; fatal → the run ends.
pub(super) fn failure(kind: Kind, metric: Metric, subject: Subject, e: &anyhow::Error) -> Result<ResultRecord> {
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

/// Places the racing settles: extra bulk samples go to the pairs that could still
/// be among the `TOP` fastest, and pairs that clearly cannot are dropped early.
pub const TOP: usize = 3;
/// One or two samples say nothing about spread: until a subject has three, its
/// racing interval is the engine's few-samples interval, widened by the spread
/// seen on the subjects that have three or more (`race::spread`). So one bad
/// sample does not drop a pair, and clear losers are still dropped at once.
/// Fixed-volume mode: most sessions one pair gets.
pub(super) const MAX_FIXED_SAMPLES: usize = 30;
/// Handshakes: samples wanted per subject (a median of 5), and the cap.
pub(super) const HANDSHAKE_SAMPLES: usize = 5;
pub(super) const MAX_HANDSHAKE_SAMPLES: usize = 40;
/// Adaptive mode: most time one subject gets in the first pass, the sessions it
/// gets there when they fit, and the longest span one session samples for.
pub(super) const MAX_BULK_SECONDS: f64 = 3.0;
pub(super) const FIRST_PASS_SESSIONS: usize = 3;
pub(super) const MAX_SESSION_SECONDS: f64 = 1.0;
/// Adaptive racing: most rounds (one session per contender each), the rounds
/// each round's span leaves time for, and the most sessions one pair gets.
pub(super) const MAX_RACE_ROUNDS: usize = 12;
pub(super) const RACE_ROUNDS_AHEAD: f64 = 3.0;
pub(super) const MAX_SESSIONS: usize = 30;

/// One clock for the whole sweep: preflight, feature check, session set-up,
/// calibration and samples all count against the budget.
#[derive(Debug, Clone, Copy)]
pub(super) struct Clock {
    pub(super) end: Instant,
}

impl Clock {
    pub(super) fn new(start: Instant, budget: Seconds) -> Clock {
        // Far enough to mean "no limit" without overflowing Instant.
        Clock {
            end: start + Duration::from_secs_f64(budget.0.clamp(0.0, 1e7)),
        }
    }
    /// Seconds left until the end of the budget.
    pub(super) fn left(&self) -> f64 {
        until(self.end)
    }
    /// What a subject left out for lack of time says.
    pub(super) fn skipped(&self, kind: Kind, metric: Metric, subject: Subject) -> ResultRecord {
        ResultRecord::not_ok(kind, subject, metric, Status::Failed, crate::model::BUDGET_SKIPPED)
    }
}

/// Seconds from now until `t` (0 once it has passed).
pub(super) fn until(t: Instant) -> f64 {
    t.saturating_duration_since(Instant::now()).as_secs_f64()
}

/// The run's settings: what was asked and where it ran.
pub fn settings(plan: &SshPlan, o: &OpenSsh, client: &Client, daemon: Option<&PrivateSshd>) -> serde_json::Value {
    let target = match &client.target {
        Destination::Private { port, .. } => format!("private sshd on 127.0.0.1:{port}"),
        Destination::Remote { destination, port, .. } => format!("{destination}{}", port.map(|p| format!(":{p}")).unwrap_or_default()),
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
            (Destination::Private { .. }, Some(p)) => p.describe(),
            (Destination::Private { .. }, None) => "one CPU: client and sshd share it".to_string(),
            (Destination::Remote { .. }, _) => "client here, server remote".to_string(),
        },
    })
}
