//! `compare A B`: two runs result by result, from the history or from JSON
//! documents exported on other machines (`--export-json`).
//!
//! Results are matched on kind, subject and metric only, never on the run id or
//! the host, so two machines (or two library versions) line up; the header says
//! so plainly when hosts or library versions differ.
//!
//! A row is `faster` or `slower` only when the change is real *and* large enough
//! to matter, by the rule the ranking orders by: the two runs' intervals do not
//! overlap (each is at least the run's noise wide, `measure::engine::noise`, so
//! the medians are at least both runs' noise apart; a figure of fewer than three
//! samples ties with everything), and the change is at least the practical
//! threshold, the ranking's 5% ([`crate::model::PRACTICAL`]; `--threshold` sets
//! it). A run's noise is what its own samples show; between two runs a shared
//! machine moves figures by a few percent more (a build on the other core, the
//! clock), which the 5% covers. Everything else is `same`, whatever the ratio says.
//!
//! Reading another machine's export is in [`export`], the rows that moved together
//! in `shift.rs`, what the comparison could see in `sight.rs`, and the terminal
//! view in [`terminal`].

pub mod export;
mod shift;
mod sight;
pub mod terminal;

use crate::model::{Document, Kind, Metric, ResultRecord, Status, Subject, Summary};
use serde::Serialize;
use shift::{shifts, Shift};

/// B against A, for B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// The intervals overlap: no measurable difference.
    Same,
    Faster,
    Slower,
}

impl Change {
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Same => "same",
            Change::Faster => "faster",
            Change::Slower => "slower",
        }
    }
}

/// One side's figure.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    pub median: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    pub samples: usize,
}

/// One matched subject and metric.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// B against A in percent (positive: B's figure is higher).
    pub change_pct: f64,
    /// The two runs' intervals do not overlap (the ranking's tie rule).
    pub beyond_intervals: bool,
    /// The change is at least the comparison's threshold.
    pub clears_threshold: bool,
    pub kind: Kind,
    pub subject: Subject,
    pub metric: Metric,
    /// A short label of the subject.
    pub label: String,
    pub a: Figure,
    pub b: Figure,
    /// Median of B divided by median of A.
    pub ratio: f64,
    pub change: Change,
    /// B is slower than A, beyond both intervals and the threshold.
    pub regression: bool,
    /// The smallest change (percent, either way) that would have parted the two
    /// intervals: what this pair could see (`None`: it can order nothing).
    pub detectable_pct: Option<f64>,
}

/// Where a side comes from.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    /// What was typed: a run id, `latest` or a file.
    pub source: String,
    pub run_id: String,
    pub started_at: String,
    pub cpu_model: String,
    pub hostname: String,
    pub libraries: std::collections::BTreeMap<String, String>,
    /// The run's noise as stored with it (the largest over its kinds), if any.
    pub noise: Option<f64>,
    /// The run's --budget in seconds, when it stored one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<f64>,
}

impl Side {
    pub fn of(source: &str, doc: &Document) -> Side {
        Side {
            source: source.to_string(),
            run_id: doc.run.id.clone(),
            started_at: doc.run.started_at.clone(),
            cpu_model: doc.run.host.cpu_model.clone(),
            hostname: doc.run.host.hostname.clone(),
            libraries: doc.run.libraries.clone(),
            noise: crate::model::largest_noise(&doc.run.settings),
            budget: doc.run.settings.get("budget_seconds").and_then(|v| v.as_f64()),
        }
    }
}

/// The whole comparison (also what `compare --json` prints).
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub a: Side,
    pub b: Side,
    pub rows: Vec<Row>,
    pub regressions: usize,
    pub improvements: usize,
    /// Subjects measured in only one of the runs, or not ok in one of them.
    pub unmatched: usize,
    /// The practical threshold (a fraction: 0.02 is 2%) and where it came from.
    pub threshold: f64,
    pub threshold_from: String,
    /// What differs between the two runs' machines and libraries, in words.
    pub differences: Vec<String>,
    /// Kinds whose rows all moved together (see [`Shift`]).
    pub shifts: Vec<Shift>,
    /// The change these runs can see, in percent: the median over the rows of
    /// what each pair could see (`None`: no row can order anything).
    pub can_see_pct: Option<f64>,
}

/// The threshold when none is given: the ranking's practical threshold
/// ([`crate::model::PRACTICAL`]), whatever the runs' noise (their noise is already
/// in their intervals, which must not overlap).
pub fn default_threshold(a: &Side, b: &Side) -> (f64, String) {
    let pct = |x: Option<f64>| x.map_or("not stored".to_string(), |x| format!("±{:.1}%", x * 100.0));
    (
        crate::model::PRACTICAL,
        format!(
            "the ranking's practical threshold; run noise A {}, B {}, in the intervals",
            pct(a.noise),
            pct(b.noise)
        ),
    )
}

/// Hosts and library versions that differ between the runs, in words.
fn differences(a: &Document, b: &Document) -> Vec<String> {
    let mut out = Vec::new();
    let (ha, hb) = (&a.run.host, &b.run.host);
    if ha.hostname != hb.hostname || ha.cpu_model != hb.cpu_model {
        out.push(format!(
            "different hosts: A ran on {} ({}), B on {} ({})",
            ha.hostname, ha.cpu_model, hb.hostname, hb.cpu_model
        ));
    }
    let names: std::collections::BTreeSet<&String> = a.run.libraries.keys().chain(b.run.libraries.keys()).collect();
    for n in names {
        let (va, vb) = (a.run.libraries.get(n), b.run.libraries.get(n));
        if va != vb {
            let show = |v: Option<&String>| v.cloned().unwrap_or_else(|| "absent".into());
            out.push(format!("different {n} versions: A {}, B {}", show(va), show(vb)));
        }
    }
    out
}

/// An ok record's summary, and its figure as the comparison shows it.
fn figure(r: &ResultRecord) -> Option<(Summary, Figure)> {
    if r.status != Status::Ok {
        return None;
    }
    let s = r.summary()?;
    Some((
        s,
        Figure {
            median: s.median,
            ci95_low: s.ci95_low,
            ci95_high: s.ci95_high,
            samples: s.samples,
        },
    ))
}

/// Matches the results of two documents by kind, subject and metric, with the
/// practical `threshold` (a fraction) or, when `None`, [`default_threshold`].
pub fn compare(a_source: &str, a: &Document, b_source: &str, b: &Document, threshold: Option<f64>) -> Comparison {
    let (side_a, side_b) = (Side::of(a_source, a), Side::of(b_source, b));
    let (threshold, threshold_from) = match threshold {
        Some(t) => (t, format!("--threshold {}%", t * 100.0)),
        None => default_threshold(&side_a, &side_b),
    };
    let mut rows = Vec::new();
    let mut unmatched = 0;
    let comparable = |r: &&ResultRecord| r.metric != Metric::Accepted;
    for ra in a.results.iter().filter(comparable) {
        let rb = b
            .results
            .iter()
            .find(|r| r.kind == ra.kind && r.metric == ra.metric && sight::same_subject(&r.subject, &ra.subject));
        let (Some((sa, fa)), Some((sb, fb))) = (figure(ra), rb.and_then(figure)) else {
            unmatched += 1;
            continue;
        };
        let lower_is_better = ra.metric == Metric::Seconds;
        let beyond_intervals = !sa.for_ties().ties_with(&sb.for_ties());
        let ratio = if fa.median != 0.0 { fb.median / fa.median } else { f64::NAN };
        let clears_threshold = (ratio - 1.0).abs() >= threshold - 1e-12;
        let change = if !(beyond_intervals && clears_threshold) {
            Change::Same
        } else if (fb.median > fa.median) != lower_is_better {
            Change::Faster
        } else {
            Change::Slower
        };
        rows.push(Row {
            kind: ra.kind,
            subject: ra.subject.clone(),
            metric: ra.metric,
            label: crate::model::subject_label(ra),
            ratio,
            change_pct: (ratio - 1.0) * 100.0,
            beyond_intervals,
            clears_threshold,
            detectable_pct: sight::detectable(&fa, &fb).map(|x| x * 100.0),
            a: fa,
            b: fb,
            change,
            regression: change == Change::Slower,
        });
    }
    unmatched += b
        .results
        .iter()
        .filter(comparable)
        .filter(|rb| {
            !a.results
                .iter()
                .any(|r| r.kind == rb.kind && r.metric == rb.metric && sight::same_subject(&r.subject, &rb.subject))
        })
        .count();
    let mut c = Comparison {
        a: side_a,
        b: side_b,
        threshold,
        threshold_from,
        differences: differences(a, b),
        shifts: shifts(&rows),
        regressions: rows.iter().filter(|r| r.regression).count(),
        improvements: rows.iter().filter(|r| r.change == Change::Faster).count(),
        rows,
        unmatched,
        can_see_pct: None,
    };
    c.can_see_pct = sight::can_see(&c).map(|x| x.0);
    c
}

#[cfg(test)]
mod tests {
    use super::terminal::render;
    use super::*;
    use crate::model::{Host, RunInfo, RunStatus, SCHEMA};

    pub(super) fn doc(id: &str, host: &str, median: f64, spread: f64) -> Document {
        let r = ResultRecord {
            kind: Kind::Primitive,
            subject: Subject {
                algorithm: Some("aes-128-gcm".into()),
                op: Some("encrypt".into()),
                bytes: Some(16384),
                ..Subject::default()
            },
            metric: Metric::BytesPerSec,
            status: Status::Ok,
            reason: None,
            median: Some(median),
            mean: Some(median),
            min: Some(median - spread),
            max: Some(median + spread),
            ci95_low: Some(median - spread),
            ci95_high: Some(median + spread),
            samples: Some(10),
            cv: Some(0.01),
            cpu_median: None,
            p95: None,
            wall_median: None,
            handshake_cpu: None,
            client_hello_bytes: None,
            values: Vec::new(),
            pooled_runs: 0,
            rounds: Vec::new(),
        };
        Document {
            schema: SCHEMA.into(),
            run: RunInfo {
                id: id.into(),
                started_at: "2026-01-01T00:00:00Z".into(),
                finished_at: None,
                status: RunStatus::Complete,
                command: "speed".into(),
                host: Host {
                    cpu_model: "cpu".into(),
                    cores: 2,
                    cpu_flags: vec![],
                    kernel: "k".into(),
                    arch: "x86_64".into(),
                    hostname: host.into(),
                },
                libraries: Default::default(),
                settings: serde_json::Value::Null,
                capabilities: Default::default(),
            },
            results: vec![r],
            verdicts: vec![],
            recommendations: vec![],
        }
    }

    #[test]
    fn matches_across_hosts_and_flags_only_separated_intervals() {
        let a = doc("r1", "alpha", 100.0, 5.0);
        let same = compare("a", &a, "b", &doc("r2", "beta", 104.0, 5.0), None);
        assert_eq!(same.rows.len(), 1);
        assert_eq!(same.rows[0].change, Change::Same);
        assert_eq!(same.regressions, 0);
        let slower = compare("a", &a, "b", &doc("r3", "beta", 50.0, 5.0), None);
        assert_eq!(slower.rows[0].change, Change::Slower);
        assert_eq!(slower.regressions, 1);
        assert!((slower.rows[0].ratio - 0.5).abs() < 1e-12);
        let faster = compare("a", &a, "b", &doc("r4", "gamma", 200.0, 5.0), None);
        assert_eq!(faster.rows[0].change, Change::Faster);
        assert_eq!(faster.regressions, 0);
    }

    /// `doc` with every figure scaled by `f` (as a slower or faster machine would give).
    fn scaled(d: &Document, f: f64) -> Document {
        let mut d = d.clone();
        for r in &mut d.results {
            for v in [
                &mut r.median,
                &mut r.mean,
                &mut r.min,
                &mut r.max,
                &mut r.ci95_low,
                &mut r.ci95_high,
            ] {
                *v = v.map(|x| x * f);
            }
        }
        d
    }

    #[test]
    fn a_change_counts_only_when_the_intervals_part_and_it_clears_the_threshold() {
        // ±1% intervals: the default threshold is the ranking's 5%, whatever the noise.
        let mut a = doc("r1", "alpha", 100.0, 1.0);
        a.run.settings = serde_json::json!({"noise": {"primitive": 0.01}});
        let b = |m: f64, spread: f64| {
            let mut d = doc("r2", "alpha", m, spread);
            d.run.settings = a.run.settings.clone();
            d
        };
        let c = compare("a", &a, "b", &b(97.0, 1.0), None);
        assert!((c.threshold - crate::model::PRACTICAL).abs() < 1e-12, "{}", c.threshold);
        // Intervals apart but under the threshold: same.
        assert!(c.rows[0].beyond_intervals && !c.rows[0].clears_threshold);
        assert_eq!(c.rows[0].change, Change::Same);
        assert_eq!(compare("a", &a, "b", &b(94.0, 1.0), None).rows[0].change, Change::Slower);
        // --threshold 2%: 3% is a change; 1.5% is not.
        assert_eq!(compare("a", &a, "b", &b(97.0, 1.0), Some(0.02)).rows[0].change, Change::Slower);
        assert_eq!(compare("a", &a, "b", &b(98.5, 0.2), Some(0.02)).rows[0].change, Change::Same);
        // Each median outside the other's interval, but the intervals overlap (the
        // CI run that called noise a regression: 1.78 ±3.1% against 1.71 ±3.1%): same.
        let c = compare("a", &a, "b", &b(97.0, 2.5), Some(0.02));
        assert!(c.rows[0].clears_threshold && !c.rows[0].beyond_intervals, "{:?}", c.rows[0]);
        assert_eq!(c.rows[0].change, Change::Same);
        // Past the threshold but inside the other run's (wide) interval: same.
        let c = compare("a", &a, "b", &b(93.0, 8.0), None);
        assert!(c.rows[0].clears_threshold && !c.rows[0].beyond_intervals);
        assert_eq!(c.rows[0].change, Change::Same);
        // Fewer than three samples tie with everything, as in the ranking.
        let mut few = b(50.0, 0.5);
        few.results[0].samples = Some(2);
        let c = compare("a", &a, "b", &few, None);
        assert!(!c.rows[0].beyond_intervals);
        assert_eq!(c.rows[0].change, Change::Same);
    }

    #[test]
    fn a_document_scaled_by_0_9_is_a_regression_and_hosts_are_named() {
        let mut a = doc("r1", "alpha", 100.0, 1.5);
        a.run.libraries.insert("openssl".into(), "3.0.19".into());
        let mut b = scaled(&a, 0.9);
        let c = compare("a", &a, "b", &b, None);
        assert_eq!((c.regressions, c.rows[0].change), (1, Change::Slower));
        assert!((c.rows[0].change_pct + 10.0).abs() < 1e-9);
        assert!(c.differences.is_empty(), "{:?}", c.differences);
        b.run.host.hostname = "beta".into();
        b.run.libraries.insert("openssl".into(), "3.5.0".into());
        let c = compare("a", &a, "b", &b, None);
        assert_eq!(c.differences.len(), 2, "{:?}", c.differences);
        let text = render(&c);
        assert!(
            text.contains("different hosts") && text.contains("different openssl versions: A 3.0.19, B 3.5.0"),
            "{text}"
        );
        assert!(text.contains("-10.0%") && text.contains("SLOWER"), "{text}");
    }

    /// A synthetic subject measured by the engine as a real run measures it
    /// (interleaved batches, intervals over batches, the run's noise settled over
    /// its subjects), with a known clock: a unit of work takes 20 µs × (1 + `step`)
    /// × (1 + `drift` × seconds since the run began) × (1 ± up to 1% of
    /// pseudo-random noise), as the probe's own timed region says. Real time passes
    /// too (the probe sleeps for each unit), so batches and deadlines run as usual.
    fn synthetic_run(id: &str, step: f64, drift: f64) -> Document {
        use crate::measure::engine::noise;
        use crate::measure::engine::sampler::{interleave, Probe, Rate, SamplerConfig};
        use crate::units::Seconds;
        struct Synthetic {
            step: f64,
            drift: f64,
            epoch: std::time::Instant,
            state: u64,
            last: (Seconds, Seconds),
        }
        impl Probe for Synthetic {
            fn run(&mut self, units: u64) -> anyhow::Result<f64> {
                std::thread::sleep(std::time::Duration::from_micros(units * 20));
                let t = self.epoch.elapsed().as_secs_f64();
                self.state ^= self.state << 13;
                self.state ^= self.state >> 7;
                self.state ^= self.state << 17;
                let u = (self.state % 2001) as f64 / 1000.0 - 1.0;
                let secs = units as f64 * 20e-6 * (1.0 + self.step) * (1.0 + self.drift * t) * (1.0 + 0.01 * u);
                self.last = (Seconds(secs), Seconds(secs));
                Ok(units as f64)
            }
            fn timed_region(&self) -> Option<(Seconds, Seconds)> {
                Some(self.last)
            }
        }
        let cfg = SamplerConfig {
            budget: Seconds(0.6),
            slice: Seconds(0.06),
            sample_time: Seconds(0.005),
            warmup: Seconds(0.005),
            ..Default::default()
        };
        let epoch = std::time::Instant::now();
        let out = interleave(&[cfg, cfg], |spec| {
            let mut p = [Synthetic {
                step,
                drift,
                epoch,
                state: 0x9E37_79B9_7F4A_7C15 ^ (spec.subject as u64 * 7919 + spec.index as u64 * 104_729),
                last: (Seconds(0.0), Seconds(0.0)),
            }];
            spec.measure(&mut p, Rate::PerSecond)
        });
        let mut d = doc(id, "alpha", 1.0, 0.0);
        d.results = out
            .into_iter()
            .enumerate()
            .map(|(i, m)| {
                let m = m.unwrap().unwrap();
                assert!(m.slices.len() >= 3, "{} batches", m.slices.len());
                let subject = Subject {
                    algorithm: Some(format!("synthetic-{i}")),
                    ..Subject::default()
                };
                ResultRecord::ok(Kind::Primitive, subject, Metric::BytesPerSec, &m.headline().unwrap(), None)
            })
            .collect();
        let n = noise::of(&d.results).unwrap();
        d.results = d.results.into_iter().map(|r| noise::floor(r, n)).collect();
        d.run.settings = serde_json::json!({"noise": {"primitive": n}});
        d
    }

    #[test]
    fn a_synthetic_probe_with_drift_is_same_and_a_10_percent_step_is_slower() {
        // The machine slows down 5% per second in both runs: no change between them.
        let a = synthetic_run("a", 0.0, 0.05);
        let again = synthetic_run("b", 0.0, 0.05);
        let c = compare("a", &a, "b", &again, None);
        assert_eq!(c.rows.len(), 2);
        assert!(c.rows.iter().all(|r| r.change == Change::Same), "{}", render(&c));
        // A 10% step (each unit costs 10% more): slower, a regression, every row.
        let step = synthetic_run("c", 0.1, 0.05);
        let c = compare("a", &a, "b", &step, None);
        assert!(c.rows.iter().all(|r| r.change == Change::Slower), "{}", render(&c));
        assert_eq!(c.regressions, 2);
    }
}
