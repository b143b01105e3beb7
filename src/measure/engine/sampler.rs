//! The one sampler every measurement kind uses.
//!
//! A [`Probe`] knows how to do `n` units of real work (encrypt `n` records, run `n`
//! handshakes, push `n` bytes through ssh). The sampler owns everything about time:
//! warm-up, calibrating how many units make one sample, taking samples, stopping
//! once the confidence interval is tight enough or the subject's budget is spent,
//! and running the same probe on several threads at once.

use super::race::MIN_SPREAD;
use super::stats::{few_samples, Summary, MIN_SAMPLES};
use crate::interrupt;
use crate::units::Seconds;
use anyhow::Result;
use std::sync::Barrier;
use std::time::Instant;

/// Something that does real, repeatable work.
pub trait Probe: Send {
    /// Performs `units` repetitions and returns the amount of work done, in the
    /// metric's unit (bytes for throughput, handshakes for rates).
    fn run(&mut self, units: u64) -> Result<f64>;

    /// For probes whose timed region is interleaved with untimed bookkeeping
    /// (reading the next chunk of a file, hashing output to verify it): the wall
    /// and CPU time of the timed region of the last `run`. `None` (the default)
    /// means the sampler's clock around `run` is the measurement.
    fn timed_region(&self) -> Option<(Seconds, Seconds)> {
        None
    }
}

/// What a sample's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rate {
    /// Work per wall second (bytes/s, handshakes/s).
    PerSecond,
    /// Wall seconds per unit of work (latency, for the handshake kinds).
    #[cfg_attr(not(test), allow(dead_code))]
    SecondsPer,
}

/// One timed sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub wall: Seconds,
    pub cpu: Seconds,
    pub work: f64,
}

/// How hard to try for one subject.
#[derive(Debug, Clone, Copy)]
pub struct SamplerConfig {
    /// Time spent running before samples count (caches, clocks, lazy init).
    pub warmup: Seconds,
    /// Desired duration of one sample.
    pub sample_time: Seconds,
    /// Samples to take before the precision target may stop sampling.
    pub min_samples: usize,
    /// Hard cap on samples.
    pub max_samples: usize,
    /// Stop once the 95% CI half-width is below this fraction of the median...
    pub precision: f64,
    /// ...but not before sampling this long: a median over a longer window is
    /// steadier from run to run than a tight interval over a short one.
    pub min_time: Seconds,
    /// Time allowed for this subject, warm-up included.
    pub budget: Seconds,
    /// Largest number of units in one sample (e.g. one handshake per sample).
    pub max_units: u64,
    /// Which clock the reported figure (and the stopping rule) uses.
    pub basis: Basis,
    /// Interleaved subjects ([`interleave`]): the length one slice (one
    /// independent sample on fresh probes) aims for.
    pub slice: Seconds,
}

/// The clock a figure is divided by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// Wall time: what a user waits for, other processes' load included.
    Wall,
    /// The measuring thread's CPU time (one thread only), as `openssl speed`
    /// divides by by default: another process's load does not lower it.
    Cpu,
}

impl Default for SamplerConfig {
    fn default() -> Self {
        SamplerConfig {
            warmup: Seconds(0.05),
            sample_time: Seconds(0.02),
            min_samples: 10,
            max_samples: 1000,
            precision: 0.005,
            min_time: Seconds(0.0),
            budget: Seconds(0.5),
            max_units: u64::MAX,
            basis: Basis::Wall,
            slice: Seconds(SLICE_TARGET),
        }
    }
}

/// All samples of one subject and their summaries.
#[derive(Debug, Clone)]
pub struct Measurement {
    pub samples: Vec<Sample>,
    pub rate: Rate,
    /// Units per sample after calibration.
    pub units: u64,
    /// Set when Ctrl-C stopped sampling early.
    pub interrupted: bool,
    /// The clock of the reported figure.
    pub basis: Basis,
}

impl Measurement {
    /// No samples yet, `units` per sample.
    pub fn empty(rate: Rate, units: u64, basis: Basis) -> Measurement {
        Measurement {
            samples: Vec::new(),
            rate,
            units,
            interrupted: false,
            basis,
        }
    }
    /// Summary of the reported figure: over wall time, or CPU time with `Basis::Cpu`.
    pub fn headline(&self) -> Option<Summary> {
        match self.basis {
            Basis::Wall => self.wall(),
            Basis::Cpu => self.cpu(),
        }
    }
    /// Summary of the metric over wall time.
    pub fn wall(&self) -> Option<Summary> {
        Summary::of(&self.values(|s| s.wall))
    }
    /// The same metric computed over CPU time (work per CPU second, or CPU seconds per unit).
    pub fn cpu(&self) -> Option<Summary> {
        Summary::of(&self.values(|s| s.cpu))
    }
    /// The metric of each sample over wall time (what intervals are made from).
    pub fn values_wall(&self) -> Vec<f64> {
        self.values(|s| s.wall)
    }
    fn values(&self, time: impl Fn(&Sample) -> Seconds) -> Vec<f64> {
        self.samples
            .iter()
            .filter(|s| time(s).0 > 0.0 && s.work > 0.0)
            .map(|s| match self.rate {
                Rate::PerSecond => s.work / time(s).0,
                Rate::SecondsPer => time(s).0 / s.work,
            })
            .collect()
    }
}

/// CPU time of the calling thread.
pub fn thread_cpu_time() -> Seconds {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own; the clock id is valid on Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Seconds(0.0);
    }
    Seconds(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

/// Runs one sample of `units` on every probe at once and returns the combined sample.
fn one_sample<P: Probe>(probes: &mut [P], units: u64) -> Result<Sample> {
    if probes.len() == 1 {
        let cpu0 = thread_cpu_time();
        let t0 = Instant::now();
        let work = probes[0].run(units)?;
        let wall = Seconds::from_duration(t0.elapsed());
        let cpu = Seconds(thread_cpu_time().0 - cpu0.0);
        let (wall, cpu) = probes[0].timed_region().unwrap_or((wall, cpu));
        return Ok(Sample { wall, cpu, work });
    }
    let barrier = Barrier::new(probes.len() + 1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = probes
            .iter_mut()
            .map(|p| {
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    let cpu0 = thread_cpu_time();
                    let work = p.run(units);
                    (work, Seconds(thread_cpu_time().0 - cpu0.0))
                })
            })
            .collect();
        barrier.wait();
        let t0 = Instant::now();
        let mut total = 0.0;
        let mut cpu = 0.0;
        for h in handles {
            let (work, c) = h.join().expect("probe thread panicked");
            total += work?;
            cpu += c.0;
        }
        Ok(Sample {
            wall: Seconds::from_duration(t0.elapsed()),
            cpu: Seconds(cpu),
            work: total,
        })
    })
}

/// Measures `probes` (one per thread) under `cfg`.
pub fn measure<P: Probe>(probes: &mut [P], rate: Rate, cfg: &SamplerConfig) -> Result<Measurement> {
    assert!(!probes.is_empty(), "at least one probe");
    let start = Instant::now();
    // Calibrate: double the units until one sample takes a quarter of the target.
    // These runs double as warm-up and are never reported.
    let mut units = 1u64;
    loop {
        let s = one_sample(probes, units)?;
        if s.wall.0 >= cfg.sample_time.0 / 4.0 || units >= cfg.max_units {
            let scale = if s.wall.0 > 0.0 { cfg.sample_time.0 / s.wall.0 } else { 2.0 };
            units = ((units as f64 * scale).round() as u64).clamp(1, cfg.max_units);
            break;
        }
        if start.elapsed().as_secs_f64() > cfg.budget.0 {
            break;
        }
        units = units.saturating_mul(2).min(cfg.max_units);
    }
    while start.elapsed().as_secs_f64() < cfg.warmup.0 {
        one_sample(probes, units)?;
    }
    let mut m = Measurement::empty(rate, units, if probes.len() == 1 { cfg.basis } else { Basis::Wall });
    sample_until_done(probes, &mut m, cfg, start)?;
    Ok(m)
}

fn sample_until_done<P: Probe>(probes: &mut [P], m: &mut Measurement, cfg: &SamplerConfig, start: Instant) -> Result<()> {
    loop {
        if interrupt::requested() {
            m.interrupted = true;
            break;
        }
        if crate::deadline::run_expired() {
            break;
        }
        m.samples.push(one_sample(probes, m.units)?);
        let n = m.samples.len();
        let spent = start.elapsed().as_secs_f64();
        if n >= cfg.max_samples {
            break;
        }
        if n >= cfg.min_samples && spent >= cfg.min_time.0 {
            if let Some(s) = m.headline() {
                if s.relative_precision() <= cfg.precision {
                    break;
                }
            }
        }
        // Out of budget: stop, but never with fewer than 3 samples unless the
        // subject is so slow that three would blow the budget five times over.
        if spent >= cfg.budget.0 && (n >= 3 || spent >= cfg.budget.0 * 5.0) {
            break;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Slices: a subject measured over several fresh connections, interleaved with
// the other subjects of its list.
//
// One long connection in one stretch of time gives a tight interval that the next
// run does not reproduce: the machine's speed drifts between stretches (a shared
// VM), and per-connection effects (where the threads landed) are constant inside
// one connection. So a sliced subject is measured in rounds, A B C, A B C, …: each
// slice opens fresh probes (a new connection), warms up untimed and samples for
// its share of the time; the slice's aggregate (its work over its wall and CPU
// time) is one sample of the subject. Median, interval, min, max and n are then
// over slices, and every subject of a round sees the same drift.

/// Slice length aimed for by default (opening a connection, warm-up and sampling
/// included; [`SamplerConfig::slice`])...
const SLICE_TARGET: f64 = 0.35;
/// ...and the shortest slice, as a share of the target, when there is room for
/// [`MIN_SLICES`] of them.
const SLICE_MIN_SHARE: f64 = 0.8;
#[cfg(test)]
const SLICE_MIN: f64 = SLICE_TARGET * SLICE_MIN_SHARE;
/// Most slices per subject: longer budgets get longer slices.
const MAX_SLICES: usize = 12;
/// Below this many slices the interval is widened by the engine's one rule for
/// few samples, see [`over_slices`].
pub const MIN_SLICES: usize = MIN_SAMPLES;
/// Slices to take before the interval over slices may stop a subject early.
const MIN_SLICES_FOR_PRECISION: usize = 6;

/// How many slices a subject with `budget` gets at the default slice length.
#[cfg(test)]
pub fn slice_count(budget: Seconds) -> usize {
    slices(budget, Seconds(SLICE_TARGET))
}

/// How many slices a subject with `budget` gets: about `target` each, at least
/// [`MIN_SLICES`] when each can still be [`SLICE_MIN_SHARE`] of `target` long, at
/// most [`MAX_SLICES`], never fewer than one.
pub fn slices(budget: Seconds, target: Seconds) -> usize {
    let by_target = (budget.0 / target.0).floor() as usize;
    let min = target.0 * SLICE_MIN_SHARE;
    if by_target >= MIN_SLICES {
        by_target.min(MAX_SLICES)
    } else if budget.0 + 1e-9 >= min * MIN_SLICES as f64 {
        MIN_SLICES
    } else {
        ((budget.0 / min).floor() as usize).max(1)
    }
}

/// One slice to take: whose, which, and until when.
#[derive(Debug, Clone)]
pub struct SliceSpec {
    /// Index of the subject in the list given to [`interleave`].
    pub subject: usize,
    /// 0-based slice of this subject, and how many it is planned to get.
    pub index: usize,
    pub of: usize,
    deadline: Instant,
    cfg: SamplerConfig,
    /// Units per sample, calibrated by the subject's first slice.
    units: Option<u64>,
}

impl SliceSpec {
    /// Samples freshly opened `probes` until the slice's deadline: the first slice
    /// calibrates as [`measure`] does; later ones reuse its units and only warm up
    /// (untimed) before sampling. Ctrl-C stops it as it stops [`measure`].
    pub fn measure<P: Probe>(&self, probes: &mut [P], rate: Rate) -> Result<Measurement> {
        assert!(!probes.is_empty(), "at least one probe");
        let start = Instant::now();
        let left = self.deadline.saturating_duration_since(start).as_secs_f64();
        let cfg = SamplerConfig {
            budget: Seconds(left),
            warmup: Seconds(self.cfg.warmup.0.min(left * 0.1)),
            // A slice samples for its whole time: the stopping rule is the
            // interval over slices (see `interleave`), not inside one connection.
            min_time: Seconds(left),
            ..self.cfg
        };
        let Some(units) = self.units else {
            return measure(probes, rate, &cfg);
        };
        let mut w = 1u64;
        while start.elapsed().as_secs_f64() < cfg.warmup.0 && !interrupt::requested() {
            one_sample(probes, w)?;
            w = w.saturating_mul(2).min(units);
        }
        let mut m = Measurement::empty(rate, units, if probes.len() == 1 { cfg.basis } else { Basis::Wall });
        sample_until_done(probes, &mut m, &cfg, start)?;
        Ok(m)
    }
}

/// A subject's slices and their combination.
#[derive(Debug, Clone)]
pub struct Sliced {
    /// One sample per slice: the slice's total work over its total wall and CPU time.
    pub combined: Measurement,
    /// Each slice's own samples.
    pub slices: Vec<Measurement>,
    /// The round (1-based) each slice was taken in, when [`interleave`] took
    /// them (A B C, A B C …: slices of one round were taken back to back); empty
    /// otherwise.
    pub rounds: Vec<usize>,
}

impl Sliced {
    /// Combines slices (`None` when there are none).
    pub fn from_slices(slices: Vec<Measurement>) -> Option<Sliced> {
        let first = slices.first()?;
        let combined = Measurement {
            samples: slices
                .iter()
                .map(|m| Sample {
                    wall: Seconds(m.samples.iter().map(|s| s.wall.0).sum()),
                    cpu: Seconds(m.samples.iter().map(|s| s.cpu.0).sum()),
                    work: m.samples.iter().map(|s| s.work).sum(),
                })
                .collect(),
            rate: first.rate,
            units: first.units,
            interrupted: slices.iter().any(|m| m.interrupted),
            basis: first.basis,
        };
        Some(Sliced {
            combined,
            slices,
            rounds: Vec::new(),
        })
    }
    /// Combines batches whose value is the *median* of their samples, not their
    /// total work over total time (primitives: a burst of another process spoils
    /// a few 10 ms samples of a batch, not its median, so the batches' spread is
    /// the machine's slow drift, which a repeat run also sees). Each batch becomes
    /// one unit of work at its median rates, over wall and CPU time.
    pub fn from_batches(slices: Vec<Measurement>) -> Option<Sliced> {
        let first = slices.first()?;
        let median = |v: Vec<f64>| Summary::of(&v).map(|s| s.median);
        let samples = slices
            .iter()
            .filter_map(|m| {
                let wall = median(m.values(|s| s.wall))?;
                let cpu = median(m.values(|s| s.cpu)).unwrap_or(wall);
                Some(match m.rate {
                    Rate::PerSecond => Sample {
                        work: 1.0,
                        wall: Seconds(1.0 / wall),
                        cpu: Seconds(1.0 / cpu),
                    },
                    Rate::SecondsPer => Sample {
                        work: 1.0,
                        wall: Seconds(wall),
                        cpu: Seconds(cpu),
                    },
                })
            })
            .collect();
        let combined = Measurement {
            samples,
            rate: first.rate,
            units: first.units,
            interrupted: slices.iter().any(|m| m.interrupted),
            basis: first.basis,
        };
        Some(Sliced {
            combined,
            slices,
            rounds: Vec::new(),
        })
    }
    /// Summary over slices of the reported figure (see [`over_slices`]).
    pub fn headline(&self) -> Option<Summary> {
        match self.combined.basis {
            Basis::Wall => self.wall(),
            Basis::Cpu => self.cpu(),
        }
    }
    /// One value of the reported figure per slice (what its interval is made of).
    pub fn headline_values(&self) -> Vec<f64> {
        match self.combined.basis {
            Basis::Wall => self.combined.values(|s| s.wall),
            Basis::Cpu => self.combined.values(|s| s.cpu),
        }
    }
    /// Each slice's value over wall time with its round's key from `sweep`
    /// (`ResultRecord::rounds`); empty when the slices were not taken in rounds.
    pub fn round_values(&self, sweep: &super::rounds::Sweep) -> Vec<crate::model::RoundValue> {
        if self.rounds.len() != self.combined.samples.len() {
            return Vec::new();
        }
        let value = |s: &Sample| match self.combined.rate {
            Rate::PerSecond => s.work / s.wall.0,
            Rate::SecondsPer => s.wall.0 / s.work,
        };
        sweep.values(self.rounds.iter().zip(&self.combined.samples).map(|(r, s)| (Some(*r), value(s))))
    }
    /// Summary over slices, over wall time.
    pub fn wall(&self) -> Option<Summary> {
        self.over(|s| s.wall)
    }
    /// Summary over slices, over CPU time.
    pub fn cpu(&self) -> Option<Summary> {
        self.over(|s| s.cpu)
    }
    fn over(&self, time: impl Fn(&Sample) -> Seconds + Copy) -> Option<Summary> {
        let within: Vec<Vec<f64>> = self.slices.iter().map(|m| m.values(time)).collect();
        over_slices(&self.combined.values(time), &within)
    }
}

/// Summary of one value per slice. With [`MIN_SLICES`] or more it is the usual
/// one (median, order-statistic interval) over slices. With fewer, the engine's
/// one rule for few samples ([`few_samples`]) widens it to cover every value seen
/// (each slice's own samples in `within` as well as the slices' values) and by
/// [`MIN_SPREAD`] each way.
pub fn over_slices(per_slice: &[f64], within: &[Vec<f64>]) -> Option<Summary> {
    let s = Summary::of(per_slice)?;
    let seen: Vec<f64> = within.iter().flatten().copied().collect();
    Some(few_samples(s, &seen, MIN_SPREAD))
}

/// Measures subjects in interleaved slices: rounds of one slice per subject, in
/// the order given (A B C, A B C, …), until each has had [`slice_count`] of its
/// budget. `slice` opens fresh probes for the subject a [`SliceSpec`] names (not
/// timed) and calls [`SliceSpec::measure`] on them.
///
/// Budget: each subject spends its own `cfgs[i].budget`, opening included: a slice
/// gets what is left of it divided by the slices still to come, so an overrun is
/// paid back by the next slices; a subject whose last slice took more than twice
/// what is left stops. A subject stops early once it has
/// `MIN_SLICES_FOR_PRECISION` slices and the interval over them is within its
/// `precision`. An error ends that subject (the others go on); Ctrl-C ends all,
/// keeping every slice taken. Per subject: `Ok(None)` when it got no slice.
pub fn interleave<F>(cfgs: &[SamplerConfig], mut slice: F) -> Vec<Result<Option<Sliced>>>
where
    F: FnMut(&SliceSpec) -> Result<Measurement>,
{
    let mut st: Vec<Interleaved> = cfgs.iter().map(Interleaved::new).collect();
    let rounds = st.iter().map(|s| s.planned).max().unwrap_or(0);
    'rounds: for round in 1..=rounds {
        for (i, (s, cfg)) in st.iter_mut().zip(cfgs).enumerate() {
            // Ctrl-C, or the run's hard deadline (budget + grace): keep what is in.
            if interrupt::requested() || crate::deadline::run_expired() {
                break 'rounds;
            }
            let Some(spec) = s.next_slice(i, cfg) else {
                continue;
            };
            let t0 = Instant::now();
            let r = slice(&spec);
            s.last = t0.elapsed().as_secs_f64();
            s.spent += s.last;
            if s.take(r, cfg, round) {
                break 'rounds;
            }
        }
    }
    st.into_iter().map(Interleaved::finish).collect()
}

/// One subject's state in [`interleave`].
struct Interleaved {
    planned: usize,
    slices: Vec<Measurement>,
    rounds: Vec<usize>,
    spent: f64,
    last: f64,
    units: Option<u64>,
    error: Option<anyhow::Error>,
    done: bool,
}

impl Interleaved {
    fn new(cfg: &SamplerConfig) -> Interleaved {
        Interleaved {
            planned: slices(cfg.budget, cfg.slice),
            slices: Vec::new(),
            rounds: Vec::new(),
            spent: 0.0,
            last: 0.0,
            units: None,
            error: None,
            done: false,
        }
    }

    /// The subject's next slice (subject `i`), or `None` when it has finished:
    /// done, failed, all slices taken, or out of budget (marked done).
    fn next_slice(&mut self, i: usize, cfg: &SamplerConfig) -> Option<SliceSpec> {
        if self.done || self.error.is_some() || self.slices.len() >= self.planned {
            return None;
        }
        let left = cfg.budget.0 - self.spent;
        if !self.slices.is_empty() && (left <= 0.0 || self.last > 2.0 * left) {
            self.done = true;
            return None;
        }
        let alloc = left.max(0.0) / (self.planned - self.slices.len()) as f64;
        Some(SliceSpec {
            subject: i,
            index: self.slices.len(),
            of: self.planned,
            deadline: Instant::now() + std::time::Duration::from_secs_f64(alloc),
            cfg: *cfg,
            units: self.units,
        })
    }

    /// Keeps a slice's outcome (taken in `round`); `true` when the slice was
    /// interrupted (all stop). The subject is done once its interval is within
    /// its precision.
    fn take(&mut self, r: Result<Measurement>, cfg: &SamplerConfig, round: usize) -> bool {
        let m = match r {
            Ok(m) => m,
            Err(e) => {
                self.error = Some(e);
                return false;
            }
        };
        let stop = m.interrupted;
        if !m.samples.is_empty() {
            self.units.get_or_insert(m.units);
            self.slices.push(m);
            self.rounds.push(round);
        }
        if stop {
            return true;
        }
        if self.slices.len() >= MIN_SLICES_FOR_PRECISION {
            let summary = Sliced::from_slices(self.slices.clone()).and_then(|m| m.headline());
            if summary.is_some_and(|x| x.relative_precision() <= cfg.precision) {
                self.done = true;
            }
        }
        false
    }

    fn finish(self) -> Result<Option<Sliced>> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(Sliced::from_slices(self.slices).map(|s| Sliced { rounds: self.rounds, ..s })),
        }
    }
}

#[cfg(test)]
mod tests;
