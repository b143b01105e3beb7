//! The one sampler every measurement kind uses.
//!
//! A [`Probe`] knows how to do `n` units of real work (encrypt `n` records, run `n`
//! handshakes, push `n` bytes through ssh). The sampler owns everything about time:
//! warm-up, calibrating how many units make one sample, taking samples, stopping
//! once the confidence interval is tight enough or the subject's budget is spent,
//! and running the same probe on several threads at once.

use crate::interrupt;
use crate::measure::stats::Summary;
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
    let mut m = Measurement {
        samples: Vec::new(),
        rate,
        units,
        interrupted: false,
        basis: if probes.len() == 1 { cfg.basis } else { Basis::Wall },
    };
    sample_until_done(probes, &mut m, cfg, start)?;
    Ok(m)
}

/// Takes more samples for an existing measurement, for `extra` more time (racing).
pub fn refine<P: Probe>(probes: &mut [P], m: &mut Measurement, cfg: &SamplerConfig, extra: Seconds) -> Result<()> {
    let cfg = SamplerConfig {
        budget: extra,
        min_samples: m.samples.len() + cfg.min_samples,
        max_samples: cfg.max_samples.max(m.samples.len() * 2),
        precision: cfg.precision / 2.0,
        min_time: Seconds(0.0),
        ..*cfg
    };
    sample_until_done(probes, m, &cfg, Instant::now())
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
