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
    assert!(spent < 2.0 * budget * 1.5, "{spent} s for a budget of {}", 2.0 * budget);
    let (a, b) = (both[0].wall().unwrap(), both[1].wall().unwrap());
    for (m, s) in both.iter().zip([a, b]) {
        assert_eq!(s.samples, MIN_SLICES, "one sample per slice");
        assert_eq!(m.slices.len(), MIN_SLICES);
        assert!(m.slices.iter().all(|sl| sl.samples.len() >= 3), "each slice samples");
        assert!(s.ci95_low <= s.median && s.median <= s.ci95_high);
    }
    assert!(a.ties_with(&b), "interleaved: {a:?} vs {b:?}");
    // Near each other, not equal: the slices are timed on a shared machine (a
    // loaded CI run gave 0.65; one after the other, below, the drift alone
    // separates them past any interval).
    assert!(b.median > 0.5 * a.median, "interleaved: {} vs {}", a.median, b.median);

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

/// Each slice keeps the round it was taken in: a subject with fewer slices is
/// in the first rounds only, and its values carry the sweep's keys of those rounds.
#[test]
fn interleaved_slices_keep_their_rounds() {
    let cfgs = [sliced_cfg(0.6), sliced_cfg(1.05)];
    assert_eq!((slice_count(Seconds(0.6)), slice_count(Seconds(1.05))), (2, 3));
    let out = interleave(&cfgs, |spec| spec.measure(&mut [Spin { acc: 1 }], Rate::PerSecond));
    let (a, b) = (
        out[0].as_ref().unwrap().as_ref().unwrap(),
        out[1].as_ref().unwrap().as_ref().unwrap(),
    );
    assert_eq!(a.rounds, vec![1, 2]);
    assert_eq!(b.rounds, vec![1, 2, 3]);
    let sweep = super::super::rounds::Sweep::start("test");
    let (va, vb) = (a.round_values(&sweep), b.round_values(&sweep));
    let keys = |v: &[crate::model::RoundValue]| v.iter().map(|x| x.round.clone()).collect::<Vec<_>>();
    assert_eq!(keys(&va), vec![sweep.key(1), sweep.key(2)]);
    assert_eq!(keys(&vb), vec![sweep.key(1), sweep.key(2), sweep.key(3)]);
    // The value of a round is the slice's own: its work over its wall time.
    for (v, s) in vb.iter().zip(&b.combined.samples) {
        assert!((v.value - s.work / s.wall.0).abs() <= 1e-9 * v.value && v.value > 0.0, "{v:?}");
    }
    // Slices not taken by `interleave` have no rounds, and give no round values.
    let plain = Sliced::from_slices(b.slices.clone()).unwrap();
    assert!(plain.rounds.is_empty() && plain.round_values(&sweep).is_empty());
}
