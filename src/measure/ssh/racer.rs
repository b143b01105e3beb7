//! The sweep's racer: bulk sessions scheduled in rounds (fixed volume or
//! adaptive spans) for the pairs that could still place. Every decision (who is
//! in the running, what is settled, who is sampled next, the interval of few
//! samples) is the engine's (`measure::engine::race`); this file only runs
//! sessions.

use super::*;
use crate::backend::openssh::client::{Algorithms, Client};
use crate::measure::engine::race;
use crate::measure::engine::sampler::{self, Measurement, Probe};
use crate::measure::sink::Measurements;
use crate::model::{Kind, Metric, ResultRecord, Subject};
use crate::units::Seconds;
use anyhow::Result;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One bulk subject of the sweep and what was measured of it.
pub(super) struct Racer {
    pub(super) item: BulkItem,
    /// Where it comes in the order of spending.
    pub(super) stage: Stage,
    pub(super) subject: Subject,
    pub(super) algs: Algorithms,
    pub(super) m: Measurement,
    /// Its record in the session, once it has one.
    pub(super) idx: Option<usize>,
    /// Longest wall time one of its sessions took, set-up included.
    pub(super) cost: f64,
    /// Refused or failed: out of the race, its record says why.
    pub(super) out: bool,
    /// The private sshd's CPU seconds and the bytes of each sample's timed part
    /// (none for a remote server): its `server-cpu-per-gb` record.
    pub(super) server: Vec<(f64, f64)>,
    /// When each of its sessions ended, sample by sample: what puts it in a round
    /// with the other racers' sessions (`rounds::assign`).
    pub(super) at: Vec<Instant>,
    /// Its sessions' round keys, sample by sample, once assigned.
    pub(super) rounds: Vec<String>,
}

impl Racer {
    pub(super) fn keep(&mut self, session: &mut Measurements, rec: ResultRecord) -> Result<()> {
        match self.idx {
            Some(i) => session.replace(i, rec),
            None => {
                self.idx = Some(session.record(rec)?);
                Ok(())
            }
        }
    }
    /// Stores its figure; `slack` widens it while it has fewer than 3 sessions.
    pub(super) fn keep_measurement(&mut self, session: &mut Measurements, slack: f64) -> Result<()> {
        let mut rec = record(Kind::SshBulk, Metric::BytesPerSec, self.subject.clone(), &self.m, slack);
        rec.rounds = self.round_values();
        self.keep(session, rec)
    }
    /// Its per-session values (bytes per second of each session's timed part)
    /// with their round keys; empty until the sweep assigned them.
    fn round_values(&self) -> Vec<crate::model::RoundValue> {
        self.m
            .samples
            .iter()
            .zip(&self.rounds)
            .filter(|(s, key)| s.wall.0 > 0.0 && s.work > 0.0 && !key.is_empty())
            .map(|(s, key)| crate::model::RoundValue {
                round: key.clone(),
                value: s.work / s.wall.0,
            })
            .collect()
    }
    /// Its server CPU per GB record, made once its sessions are done (`slack` as
    /// for its throughput).
    pub(super) fn server_record(&self, slack: f64) -> Option<ResultRecord> {
        if self.out {
            return None;
        }
        server_cpu_record(&self.subject, &self.server, slack)
    }
    pub(super) fn fail(&mut self, session: &mut Measurements, e: &anyhow::Error) -> Result<()> {
        self.out = true;
        let rec = failure(Kind::SshBulk, Metric::BytesPerSec, self.subject.clone(), e)?;
        self.keep(session, rec)
    }
}

/// The widening for racers with fewer than 3 samples ([`slack`] over those still in).
pub(super) fn racers_slack(racers: &[Racer]) -> f64 {
    race::spread(&racers.iter().filter(|r| !r.out).filter_map(|r| r.m.wall()).collect::<Vec<_>>())
}

/// Indices of the racers still in the running: not out, and either unmeasured
/// or able to place among the `top`.
pub(super) fn in_the_running(racers: &[Racer], top: usize) -> (Vec<Option<race::Interval>>, Vec<usize>) {
    let k = racers_slack(racers);
    let iv: Vec<_> = racers
        .iter()
        .map(|r| if r.out { None } else { race::interval(&r.m.values_wall(), k) })
        .collect();
    let mut alive = race::could_place(&iv, top);
    alive.extend((0..racers.len()).filter(|&i| !racers[i].out && racers[i].m.samples.is_empty()));
    alive.sort_unstable();
    (iv, alive)
}

/// One fixed-volume session for racer `r`, kept in its record. Returns false
/// when it would not end by `stop_at` (nothing was started).
pub(super) fn fixed_sample(
    r: &mut Racer,
    probe: &mut BulkProbe,
    session: &mut Measurements,
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
            r.at.push(Instant::now());
            if let Some(s) = probe.server_cpu.take() {
                r.server.push((s.0, work));
            }
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
pub(super) fn fixed_once(
    racers: &mut [Racer],
    probe: &mut BulkProbe,
    session: &mut Measurements,
    stop_at: Instant,
    guess: &mut f64,
) -> Result<()> {
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
/// `stop_at`. The first round takes every subject in the plan's interleaved
/// order; the second takes every subject too, so none is judged on one session
/// that happened to stall, but fastest first, and the `TOP` fastest take their
/// third session right after their second: a budget that ends inside the second
/// round (a small one, or a wide sweep) has then given the contenders their
/// sessions, not a shuffled half of the field. Later rounds go
/// fastest first as well (the spread that widens short figures is then learnt
/// from the contenders) and pass over subjects that can no longer place among
/// the `TOP`, so the time goes to the pairs whose places are in question.
pub(super) fn fixed_rounds(
    racers: &mut [Racer],
    probe: &mut BulkProbe,
    session: &mut Measurements,
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
pub(super) fn in_rounds(racers: &mut [Racer], sessions: usize, mut sample: impl FnMut(&mut [Racer], usize) -> Result<bool>) -> Result<()> {
    for round in 1..=sessions {
        let mut order: Vec<usize> = (0..racers.len()).collect();
        if round > 1 {
            let med = |r: &Racer| r.m.wall().map_or(0.0, |s| s.median);
            order.sort_by(|&a, &b| med(&racers[b]).total_cmp(&med(&racers[a])));
        }
        for (pos, i) in order.into_iter().enumerate() {
            // Round 2's leading `TOP` take their third session at once: the
            // spread that widens short figures is then learnt from the contenders
            // before the rest of round 2, so a budget that ends inside it still
            // leaves the top places with real intervals.
            let lead = round == 2 && sessions >= 3 && pos < TOP;
            let want = round + usize::from(lead);
            for _ in 0..=usize::from(lead) {
                if racers[i].out || racers[i].m.samples.len() >= want {
                    break;
                }
                if round > 2 && !in_the_running(racers, TOP).1.contains(&i) {
                    break;
                }
                if crate::interrupt::requested() || !sample(racers, i)? {
                    return Ok(());
                }
            }
        }
    }
    Ok(())
}

/// Fixed-volume mode, racing: more sessions for the pairs that decide the `top`
/// places ([`critical`]), two at a time, until those places are settled, the
/// pairs reach [`MAX_FIXED_SAMPLES`] or the next session would not end by
/// `stop_at`. Pairs that cannot place are never sampled again.
pub(super) fn fixed_race(
    racers: &mut [Racer],
    probe: &mut BulkProbe,
    session: &mut Measurements,
    stop_at: Instant,
    top: usize,
) -> Result<()> {
    let mut guess = 0.0;
    loop {
        if crate::interrupt::requested() {
            return Ok(());
        }
        let (iv, alive) = in_the_running(racers, top);
        let med: Vec<f64> = racers.iter().map(|r| r.m.wall().map_or(0.0, |s| s.median)).collect();
        let n: Vec<usize> = racers.iter().map(|r| r.m.samples.len()).collect();
        let pick = race::critical(&iv, &med, &n, &alive, top, MAX_FIXED_SAMPLES);
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
pub(super) fn warmup_for(span: f64) -> f64 {
    (span / 8.0).clamp(0.02, 0.2)
}

/// What a session costs beyond its warm-up and span before anything is known:
/// the handshake (`conn`) and [`PRIME_BYTES`] through the start-up stall.
pub(super) fn first_overhead(conn: f64) -> f64 {
    conn + 0.15
}

/// Adaptive mode: one session of racer `r` as one sample ([`BulkProbe::slice`]),
/// sampling for `span` seconds, kept in its record. Returns false (nothing
/// started) when the session would not end by `stop_at` even with its span cut to
/// [`MIN_BULK_SECONDS`]. `over` is the running estimate of a session's cost
/// beyond warm-up and span (handshake, priming, closing); it learns from this one.
#[allow(clippy::too_many_arguments)]
pub(super) fn adaptive_session(
    r: &mut Racer,
    plan: &SshPlan,
    client: &Client,
    session: &mut Measurements,
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
        let server = p.server_cpu.take();
        let closed = p.close();
        let sample = sample?;
        closed?;
        Ok(sample.map(|s| (s, server)))
    });
    let cost = t0.elapsed().as_secs_f64();
    r.cost = r.cost.max(cost);
    match outcome {
        Ok(Some((sample, server))) => {
            let o = (cost - warm - sample.wall.0).max(0.0);
            *over = 0.7 * *over + 0.3 * o;
            if let Some(s) = server {
                r.server.push((s.0, sample.work));
            }
            r.m.samples.push(sample);
            r.at.push(Instant::now());
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
pub(super) fn session_plan(share: f64, over: f64) -> (usize, f64) {
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
pub(super) fn rounds(subjects: &[usize], rounds: usize) -> Vec<usize> {
    (0..rounds).flat_map(|_| subjects.iter().copied()).collect()
}

/// Adaptive mode, first pass: every pair with fewer than [`FIRST_PASS_SESSIONS`]
/// sessions gets more, one sample each ([`adaptive_session`]), in rounds over
/// the plan's interleaved order; up to [`FIRST_PASS_SESSIONS`] each when the
/// time left until `stop_at` allows (an even share per pair, at most
/// [`MAX_BULK_SECONDS`], session set-up counted), else fewer. No session starts that would not end by `stop_at`. Called again
/// later, it tops up the pairs the first call could not finish.
#[allow(clippy::too_many_arguments)]
pub(super) fn adaptive_pass(
    racers: &mut [Racer],
    plan: &SshPlan,
    client: &Client,
    session: &mut Measurements,
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
/// among the `top` gets one more session (one more sample), until the race is
/// settled, the pairs reach [`MAX_SESSIONS`] or the budget is spent. Spans aim
/// at a few more rounds in the time left.
#[allow(clippy::too_many_arguments)]
pub(super) fn adaptive_race(
    racers: &mut [Racer],
    plan: &SshPlan,
    client: &Client,
    session: &mut Measurements,
    buf: &Arc<Vec<u8>>,
    clock: &Clock,
    over: &mut f64,
    top: usize,
) -> Result<()> {
    for _ in 0..MAX_RACE_ROUNDS {
        let (iv, alive) = in_the_running(racers, top);
        let alive: Vec<usize> = alive
            .into_iter()
            .filter(|&i| !racers[i].m.samples.is_empty() && racers[i].m.samples.len() < MAX_SESSIONS)
            .collect();
        if alive.is_empty() || race::settled(&iv, &alive, top) {
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
