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
        Some(Sliced { combined, slices })
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
        Some(Sliced { combined, slices })
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
    struct State {
        planned: usize,
        slices: Vec<Measurement>,
        spent: f64,
        last: f64,
        units: Option<u64>,
        error: Option<anyhow::Error>,
        done: bool,
    }
    let mut st: Vec<State> = cfgs
        .iter()
        .map(|c| State {
            planned: slices(c.budget, c.slice),
            slices: Vec::new(),
            spent: 0.0,
            last: 0.0,
            units: None,
            error: None,
            done: false,
        })
        .collect();
    let rounds = st.iter().map(|s| s.planned).max().unwrap_or(0);
    'rounds: for _ in 0..rounds {
        for (i, (s, cfg)) in st.iter_mut().zip(cfgs).enumerate() {
            if interrupt::requested() {
                break 'rounds;
            }
            if s.done || s.error.is_some() || s.slices.len() >= s.planned {
                continue;
            }
            let left = cfg.budget.0 - s.spent;
            if !s.slices.is_empty() && (left <= 0.0 || s.last > 2.0 * left) {
                s.done = true;
                continue;
            }
            let t0 = Instant::now();
            let alloc = left.max(0.0) / (s.planned - s.slices.len()) as f64;
            let spec = SliceSpec {
                subject: i,
                index: s.slices.len(),
                of: s.planned,
                deadline: t0 + std::time::Duration::from_secs_f64(alloc),
                cfg: *cfg,
                units: s.units,
            };
            let r = slice(&spec);
            s.last = t0.elapsed().as_secs_f64();
            s.spent += s.last;
            match r {
                Ok(m) => {
                    let stop = m.interrupted;
                    if !m.samples.is_empty() {
                        s.units.get_or_insert(m.units);
                        s.slices.push(m);
                    }
                    if stop {
                        break 'rounds;
                    }
                    if s.slices.len() >= MIN_SLICES_FOR_PRECISION {
                        let summary = Sliced::from_slices(s.slices.clone()).and_then(|m| m.headline());
                        if summary.is_some_and(|x| x.relative_precision() <= cfg.precision) {
                            s.done = true;
                        }
                    }
                }
                Err(e) => s.error = Some(e),
            }
        }
    }
    st.into_iter()
        .map(|s| match s.error {
            Some(e) => Err(e),
            None => Ok(Sliced::from_slices(s.slices)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A probe whose unit of work is a fixed amount of arithmetic.
    struct Spin {
        acc: u64,
    }
    impl Probe for Spin {
        fn run(&mut self, units: u64) -> Result<f64> {
            for i in 0..units * 1000 {
                self.acc = std::hint::black_box(self.acc.wrapping_mul(6364136223846793005).wrapping_add(i));
            }
            Ok(units as f64)
        }
    }

    fn quick() -> SamplerConfig {
        SamplerConfig {
            warmup: Seconds(0.005),
            sample_time: Seconds(0.002),
            min_samples: 5,
            max_samples: 50,
            budget: Seconds(0.1),
            ..Default::default()
        }
    }

    #[test]
    fn calibrates_and_samples_within_budget() {
        let mut p = [Spin { acc: 1 }];
        let t0 = Instant::now();
        let m = measure(&mut p, Rate::PerSecond, &quick()).unwrap();
        assert!(m.samples.len() >= 3, "{} samples", m.samples.len());
        assert!(m.units > 1, "calibration must grow the sample");
        assert!(t0.elapsed().as_secs_f64() < 1.0);
        let s = m.wall().unwrap();
        assert!(s.median > 0.0 && s.min <= s.median && s.median <= s.max);
        assert!(s.ci95_low <= s.median && s.median <= s.ci95_high);
        // CPU time is measured too, and a spin loop is nearly all CPU.
        let cpu = m.cpu().unwrap();
        assert!(cpu.median > 0.0);
    }

    #[test]
    fn threads_add_work() {
        let mut one = [Spin { acc: 1 }];
        let mut two = [Spin { acc: 1 }, Spin { acc: 2 }];
        let cfg = quick();
        let a = measure(&mut one, Rate::PerSecond, &cfg).unwrap();
        let b = measure(&mut two, Rate::PerSecond, &cfg).unwrap();
        // Two threads do twice the units per sample.
        let per_sample = |m: &Measurement| m.samples[0].work / m.units as f64;
        assert_eq!(per_sample(&a), 1.0);
        assert_eq!(per_sample(&b), 2.0);
    }

    #[test]
    fn latency_metric_is_seconds_per_unit() {
        struct Sleep;
        impl Probe for Sleep {
            fn run(&mut self, units: u64) -> Result<f64> {
                std::thread::sleep(std::time::Duration::from_millis(2) * units as u32);
                Ok(units as f64)
            }
        }
        let cfg = SamplerConfig { max_units: 1, ..quick() };
        let m = measure(&mut [Sleep], Rate::SecondsPer, &cfg).unwrap();
        assert_eq!(m.units, 1);
        let s = m.wall().unwrap();
        assert!(s.median >= 0.002 && s.median < 0.05, "{}", s.median);
    }

    #[test]
    fn cpu_basis_leaves_out_time_the_thread_did_not_run() {
        // Half spinning, half sleeping: over wall time the rate is about half of
        // what it is over the thread's CPU time.
        struct SpinThenSleep(Spin);
        impl Probe for SpinThenSleep {
            fn run(&mut self, units: u64) -> Result<f64> {
                let t0 = Instant::now();
                self.0.run(units)?;
                std::thread::sleep(t0.elapsed());
                Ok(units as f64)
            }
        }
        let cfg = SamplerConfig {
            basis: Basis::Cpu,
            ..quick()
        };
        let m = measure(&mut [SpinThenSleep(Spin { acc: 1 })], Rate::PerSecond, &cfg).unwrap();
        assert_eq!(m.basis, Basis::Cpu);
        let (head, wall) = (m.headline().unwrap(), m.wall().unwrap());
        assert_eq!(head, m.cpu().unwrap());
        assert!(head.median > 1.5 * wall.median, "cpu {} vs wall {}", head.median, wall.median);
        // Several threads: aggregate throughput is a wall-time figure.
        let two = measure(&mut [Spin { acc: 1 }, Spin { acc: 2 }], Rate::PerSecond, &cfg).unwrap();
        assert_eq!(two.basis, Basis::Wall);
        assert_eq!(two.headline(), two.wall());
    }

    /// A probe whose speed depends on *time*: the machine slows down steadily, a
    /// unit costing `base` × (1 + `slope` × seconds since `epoch`) of sleep.
    struct Drift {
        epoch: Instant,
        base: f64,
        slope: f64,
    }
    impl Probe for Drift {
        fn run(&mut self, units: u64) -> Result<f64> {
            let t = self.epoch.elapsed().as_secs_f64();
            std::thread::sleep(std::time::Duration::from_secs_f64(
                units as f64 * self.base * (1.0 + self.slope * t),
            ));
            Ok(units as f64)
        }
    }

    fn sliced_cfg(budget: f64) -> SamplerConfig {
        SamplerConfig {
            budget: Seconds(budget),
            sample_time: Seconds(0.01),
            warmup: Seconds(0.01),
            ..Default::default()
        }
    }

    /// Interleaved A B A B A B: the two (identical) subjects see the same drift and
    /// tie. One after the other, A A A then B B B, the same drift makes A a clear
    /// winner: what the within-stretch interval got wrong.
    #[test]
    fn interleaving_gives_both_subjects_the_same_drift() {
        let budget = SLICE_MIN * MIN_SLICES as f64;
        assert_eq!(slice_count(Seconds(budget)), MIN_SLICES);
        let cfgs = [sliced_cfg(budget), sliced_cfg(budget)];
        let run = |cfgs: &[SamplerConfig], epoch: Instant, order: &mut Vec<(usize, usize)>| {
            interleave(cfgs, |spec| {
                order.push((spec.subject, spec.index));
                let mut p = [Drift {
                    epoch,
                    base: 1e-4,
                    slope: 2.0,
                }];
                spec.measure(&mut p, Rate::PerSecond)
            })
            .into_iter()
            .map(|r| r.unwrap().unwrap())
            .collect::<Vec<Sliced>>()
        };
        let t0 = Instant::now();
        let mut order = Vec::new();
        let both = run(&cfgs, t0, &mut order);
        let spent = t0.elapsed().as_secs_f64();
        assert_eq!(order, [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)]);
        assert!(spent < 2.0 * budget * 1.25, "{spent} s for a budget of {}", 2.0 * budget);
        let (a, b) = (both[0].wall().unwrap(), both[1].wall().unwrap());
        for (m, s) in both.iter().zip([a, b]) {
            assert_eq!(s.samples, MIN_SLICES, "one sample per slice");
            assert_eq!(m.slices.len(), MIN_SLICES);
            assert!(m.slices.iter().all(|sl| sl.samples.len() >= 3), "each slice samples");
            assert!(s.ci95_low <= s.median && s.median <= s.ci95_high);
        }
        assert!(a.ties_with(&b), "interleaved: {a:?} vs {b:?}");
        assert!(b.median > 0.7 * a.median, "interleaved: {} vs {}", a.median, b.median);

        // The same subjects one after the other.
        let t0 = Instant::now();
        let mut order = Vec::new();
        let first = run(&cfgs[..1], t0, &mut order).remove(0);
        let second = run(&cfgs[..1], t0, &mut order).remove(0);
        let (a, b) = (first.wall().unwrap(), second.wall().unwrap());
        assert!(!a.ties_with(&b), "one after the other: {a:?} vs {b:?}");
        assert!(b.median < 0.7 * a.median);
    }

    #[test]
    fn a_slice_is_its_total_work_over_its_total_time() {
        let slice = |samples: &[(f64, f64)]| Measurement {
            samples: samples
                .iter()
                .map(|&(wall, work)| Sample {
                    wall: Seconds(wall),
                    cpu: Seconds(wall / 2.0),
                    work,
                })
                .collect(),
            rate: Rate::PerSecond,
            units: 1,
            interrupted: false,
            basis: Basis::Wall,
        };
        // 20 units in 4 s is 5/s (not the mean of the rates, 6.67).
        let m = Sliced::from_slices(vec![slice(&[(1.0, 10.0), (3.0, 10.0)]), slice(&[(1.0, 6.0)]), slice(&[(2.0, 8.0)])]).unwrap();
        assert_eq!(m.combined.samples.len(), 3);
        assert_eq!(m.combined.samples[0].work, 20.0);
        let w = m.wall().unwrap();
        assert_eq!((w.samples, w.median, w.min, w.max), (3, 5.0, 4.0, 6.0));
        assert_eq!(m.cpu().unwrap().median, 10.0);
        assert!(Sliced::from_slices(Vec::new()).is_none());
    }

    #[test]
    fn few_slices_never_claim_certainty() {
        // One slice whose samples all agree: still about ±10% (a factor 1.1 each way).
        let one = over_slices(&[100.0], &[vec![100.0, 100.0, 100.0]]).unwrap();
        assert_eq!((one.median, one.samples), (100.0, 1));
        assert!(one.ci95_low <= 100.0 / 1.1 + 1e-9 && one.ci95_high >= 110.0 - 1e-9, "{one:?}");
        // One slice: the interval covers every sample, widened the same way, and
        // stays positive for a throughput however far its samples spread.
        let one = over_slices(&[100.0], &[vec![70.0, 100.0, 104.0]]).unwrap();
        assert_eq!((one.min, one.max), (70.0, 104.0));
        assert!(
            (one.ci95_low - 70.0 / 1.1).abs() < 1e-9 && (one.ci95_high - 104.0 * 1.1).abs() < 1e-9,
            "{one:?}"
        );
        let wide = over_slices(&[50.0], &[vec![45.0, 50.0, 120.0]]).unwrap();
        assert!(wide.ci95_low > 0.0 && wide.ci95_low <= 45.0 && wide.ci95_high >= 120.0, "{wide:?}");
        // Two slices that agree closely are not a narrow interval either.
        let two = over_slices(&[100.0, 101.0], &[vec![95.0, 105.0], vec![99.0, 103.0]]).unwrap();
        assert_eq!(two.samples, 2);
        assert!(two.ci95_low <= two.min && two.min <= 95.0 && two.ci95_high >= 110.0, "{two:?}");
        assert!(two.ci95_low <= two.median && two.median <= two.ci95_high);
        // From three slices on it is the usual interval over slices.
        let three = over_slices(&[100.0, 101.0, 102.0], &[vec![50.0], vec![150.0], vec![101.0]]).unwrap();
        assert_eq!(three, Summary::of(&[100.0, 101.0, 102.0]).unwrap());
        assert!(over_slices(&[], &[]).is_none());
    }

    #[test]
    fn slice_counts_follow_the_budget() {
        assert_eq!(slice_count(Seconds(0.05)), 1);
        assert_eq!(slice_count(Seconds(0.6)), 2);
        assert_eq!(slice_count(Seconds(0.84)), 3);
        assert_eq!(slice_count(Seconds(1.05)), 3);
        assert_eq!(slice_count(Seconds(1.64)), 4);
        assert_eq!(slice_count(Seconds(3.0)), 8);
        assert_eq!(slice_count(Seconds(60.0)), MAX_SLICES);
    }

    #[test]
    fn a_failing_slice_fails_its_subject_only() {
        let cfgs = [sliced_cfg(0.9), sliced_cfg(0.9)];
        let mut calls = [0, 0];
        let out = interleave(&cfgs, |spec| {
            calls[spec.subject] += 1;
            if spec.subject == 0 && spec.index == 1 {
                anyhow::bail!("SHA-256 mismatch");
            }
            spec.measure(&mut [Spin { acc: 1 }], Rate::PerSecond)
        });
        assert!(out[0].as_ref().unwrap_err().to_string().contains("SHA-256"));
        assert_eq!(out[1].as_ref().unwrap().as_ref().unwrap().slices.len(), slice_count(Seconds(0.9)));
        assert_eq!(calls[0], 2, "no slice after the failure");
    }

    #[test]
    fn probe_errors_propagate() {
        struct Broken;
        impl Probe for Broken {
            fn run(&mut self, _: u64) -> Result<f64> {
                anyhow::bail!("library said no")
            }
        }
        let err = measure(&mut [Broken], Rate::PerSecond, &quick()).unwrap_err();
        assert!(err.to_string().contains("library said no"));
    }
}
