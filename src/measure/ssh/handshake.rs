//! SSH handshakes: the probe (connect, authenticate, run `true`) and the rounds
//! that take one handshake per sample for every kex × host key. This is the one
//! place a handshake is timed, and where the CPU readings of each login
//! (`backend::openssh::cpu`) become the record's `handshake_cpu` ([`LoginCpu`]).

use super::*;
use crate::backend::openssh::client::{Algorithms, Client, Destination, SshError};
use crate::backend::openssh::cpu::{self, ServerClock};
use crate::measure::engine::race;
use crate::measure::engine::sampler::{self, Measurement, Probe, Rate};
use crate::measure::engine::stats::mean_interval;
use crate::measure::sink::Measurements;
use crate::model::{HandshakeCpu, Kind, Metric, ResultRecord, Status, Subject};
use crate::units::Seconds;
use anyhow::Result;
use std::time::Instant;

/// Connect, authenticate, run `true`. Each login's CPU on both ends is kept in
/// `cpu` (see [`LoginCpu`]) and goes into the record's `handshake_cpu`; a
/// sample's CPU time is both ends' (the client's alone for a remote server).
pub struct HandshakeProbe {
    pub(super) client: Client,
    pub(super) algs: Algorithms,
    pub(super) last: Option<(Seconds, Seconds)>,
    pub(super) cpu: LoginCpu,
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

/// Per-login CPU of both ends, gathered over a subject's logins, one login at a
/// time: the client's from `wait4`, the server's as the difference of two
/// [`ServerClock`] readings taken while no connection is open (before the login,
/// and after the listener has reaped it). Each end's figure is a mean with its
/// t-interval ([`mean_interval`]: the server's reading may be in clock ticks).
#[derive(Debug, Clone, Default)]
pub struct LoginCpu {
    server_clock: ServerClock,
    client: Vec<f64>,
    server: Vec<f64>,
}

impl LoginCpu {
    /// For logins to `target` (the server's CPU only for the private sshd).
    pub fn for_target(target: &Destination) -> LoginCpu {
        LoginCpu {
            server_clock: ServerClock::for_target(target),
            ..Default::default()
        }
    }

    /// One login: keeps both ends' CPU, and returns its wall time and the CPU of
    /// both ends (the client's alone when the server is not observable).
    pub fn login(&mut self, client: &Client, algs: &Algorithms, remote: &str) -> Result<(Seconds, Seconds), SshError> {
        // Whatever an earlier connection left is reaped first, so it is not counted here.
        let before = if self.server_clock.settle() {
            self.server_clock.read()
        } else {
            None
        };
        let (wall, cpu) = cpu::run_timed(client, algs, remote)?;
        self.client.push(cpu.0);
        let mut both = cpu.0;
        if let Some(before) = before {
            if self.server_clock.settle() {
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
            method: match (self.server_clock.method(), server.is_some()) {
                (Some(how), true) => format!("client: rusage of the ssh child (wait4); server: {how}, one login at a time"),
                _ => "client: rusage of the ssh child (wait4); server: not observable".into(),
            },
        })
    }
}

/// Handshakes, one per sample, [`HANDSHAKE_SAMPLES`] wanted per subject, taken
/// in rounds (see [`handshake_rounds`]). Returns how many subjects were skipped.
pub(super) fn handshakes(
    hands: &[HandshakeItem],
    client: &Client,
    session: &mut Measurements,
    accepted: &Accepted,
    clock: &Clock,
    stop_at: Instant,
    conn: f64,
) -> Result<usize> {
    let mut subjects: Vec<(Subject, HandshakeProbe)> = Vec::new();
    for item in hands {
        let subject = Subject::ssh_handshake(&item.kex, item.hostkey.as_deref());
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
            None => record(Kind::SshHandshake, Metric::Seconds, subject, &m, race::MAX_SPREAD),
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
pub(super) fn handshake_rounds(
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
            let enough = i >= HANDSHAKE_SAMPLES && (spent + cost > share || m.wall().is_some_and(|s| s.relative_precision() <= 0.02));
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
