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

mod sight;

use crate::model::{Document, Kind, Metric, ResultRecord, Status, Subject, Summary, SCHEMA};
use crate::units::{BytesPerSec, Seconds};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// The largest export `compare` reads: a real one is well under 1 MiB, so this
/// bounds only what a hostile or broken file can make it allocate.
pub const MAX_EXPORT_BYTES: u64 = 64 << 20;

/// Reads a `cipherbench/1` JSON document written by `--export-json` or `--json`.
/// A file over [`MAX_EXPORT_BYTES`], or one that is not a regular file, is refused
/// before it is read; the rest is streamed, so memory does not follow its size.
pub fn load_json(path: &Path) -> Result<Document> {
    use std::io::Read;
    let shown = crate::untrusted::shown(&path.display().to_string()).into_owned();
    let meta = std::fs::metadata(path).with_context(|| format!("cannot read {shown}"))?;
    if !meta.is_file() {
        bail!("{shown} is not a regular file");
    }
    if meta.len() > MAX_EXPORT_BYTES {
        bail!(
            "{shown} is {} bytes, over the {} MiB an export may have: refused unread",
            meta.len(),
            MAX_EXPORT_BYTES >> 20
        );
    }
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {shown}"))?;
    let mut limited = std::io::BufReader::new(file).take(MAX_EXPORT_BYTES + 1);
    let doc: Document = serde_json::from_reader(&mut limited)
        .with_context(|| format!("{shown} is not a cipherbench JSON document (write one with --export-json)"))?;
    if limited.limit() == 0 {
        bail!("{shown} grew past {} MiB while it was read: refused", MAX_EXPORT_BYTES >> 20);
    }
    if doc.schema != SCHEMA {
        bail!(
            "{shown} has schema '{}', expected '{SCHEMA}'",
            crate::untrusted::shown(&crate::untrusted::bounded(&doc.schema, 100))
        );
    }
    // The figures another machine wrote: each finite, positive and possible.
    if let Err(why) = crate::plausible::check_records(&doc.results) {
        bail!("{shown}: {why}: refused (see docs/json-schema.md, \"Figures read back\")");
    }
    Ok(doc)
}

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

/// Every row of a kind moved the same way by about the same amount: that is the
/// machine (its load, its clock, a neighbour on the host) or a library they all
/// share, not one subject. A run's own samples cannot show such a move, which is
/// why a lone row's verdict needs intervals apart and the 5% besides; the shift
/// says what the rows have in common.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Shift {
    pub kind: Kind,
    /// Matched rows of the kind, and how many moved the way the median did.
    pub rows: usize,
    pub along: usize,
    /// The median change of B against A, in percent, positive when B is faster
    /// (for times: lower).
    pub faster_pct: f64,
}

/// A kind's rows moved together when at least this many rows are matched, at least
/// [`SHIFT_ALONG`] of them moved the way their median did, and the median moved by
/// at least [`SHIFT_LEAST`].
const SHIFT_ROWS: usize = 4;
const SHIFT_ALONG: f64 = 0.8;
const SHIFT_LEAST: f64 = 0.02;

/// The kinds of `rows` whose rows moved together.
pub fn shifts(rows: &[Row]) -> Vec<Shift> {
    let mut kinds: Vec<Kind> = rows.iter().map(|r| r.kind).collect();
    kinds.sort_by_key(|k| k.name());
    kinds.dedup();
    let mut out = Vec::new();
    for kind in kinds {
        // Speed-oriented log changes: positive when B is faster.
        let v: Vec<f64> = rows
            .iter()
            .filter(|r| r.kind == kind && r.ratio.is_finite() && r.ratio > 0.0)
            .map(|r| if r.metric == Metric::Seconds { -r.ratio.ln() } else { r.ratio.ln() })
            .collect();
        let n = v.len();
        let Some(median) = Summary::of(&v).map(|s| s.median).filter(|_| n >= SHIFT_ROWS) else {
            continue;
        };
        let along = v.iter().filter(|x| x.signum() == median.signum() && **x != 0.0).count();
        let faster_pct = (median.exp() - 1.0) * 100.0;
        if faster_pct.abs() >= SHIFT_LEAST * 100.0 && along as f64 >= SHIFT_ALONG * n as f64 {
            out.push(Shift {
                kind,
                rows: n,
                along,
                faster_pct,
            });
        }
    }
    out
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

fn value(metric: Metric, v: f64) -> String {
    match metric {
        Metric::BytesPerSec => BytesPerSec(v).to_string(),
        Metric::HandshakesPerSec | Metric::OpsPerSec => format!("{v:.0}/s"),
        Metric::Seconds => Seconds(v).to_string(),
        Metric::Accepted => format!("{v}"),
    }
}

fn side_line(name: &str, s: &Side) -> String {
    let libs: Vec<String> = s.libraries.iter().map(|(k, v)| format!("{k} {v}")).collect();
    format!(
        "{name}: run {} ({}) · {} · {} · {}\n",
        s.run_id,
        s.source,
        s.hostname,
        s.cpu_model,
        libs.join(", ")
    )
}

/// One line per matched result: both figures, the change, the verdict.
fn rows_table(c: &Comparison) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY);
    t.set_header(["kind", "subject", "A", "B", "change", "clears threshold", "can see", "verdict"]);
    for r in &c.rows {
        let verdict = match r.change {
            Change::Slower => "SLOWER (regression)".to_string(),
            Change::Same if r.clears_threshold && !r.beyond_intervals => "same (within the intervals)".to_string(),
            other => other.as_str().to_string(),
        };
        t.add_row([
            r.kind.name().to_string(),
            r.label.clone(),
            value(r.metric, r.a.median),
            value(r.metric, r.b.median),
            format!("{:+.1}%", r.change_pct),
            if r.clears_threshold { "yes" } else { "no" }.to_string(),
            r.detectable_pct.map_or("nothing".to_string(), |x| format!("≥{x:.0}%")),
            verdict,
        ]);
    }
    t
}

/// The terminal view: the two sides (and what differs between them), one line per
/// matched result with its change and whether it clears the threshold, then a
/// summary.
pub fn render(c: &Comparison) -> String {
    let mut s = side_line("A", &c.a);
    s.push_str(&side_line("B", &c.b));
    for d in &c.differences {
        let _ = writeln!(
            s,
            "NOTE: {d}: part of any difference is the machine or library, not the change under test."
        );
    }
    let _ = writeln!(s, "threshold: {:.1}% ({})", c.threshold * 100.0, c.threshold_from);
    let t = rows_table(c);
    let _ = writeln!(s, "{t}");
    let _ = writeln!(
        s,
        "  verdict: faster or slower only when the two runs' 95% intervals do not overlap AND the change clears the {:.1}% threshold; otherwise same (for times, lower is faster).",
        c.threshold * 100.0
    );
    let _ = writeln!(
        s,
        "{} matched, {} same, {} faster, {} slower; {} not matched (measured in one run only, or not ok in one).",
        c.rows.len(),
        c.rows.iter().filter(|r| r.change == Change::Same).count(),
        c.improvements,
        c.regressions,
        c.unmatched
    );
    if !c.rows.is_empty() {
        for l in sight::lines(c, c.b.budget) {
            let _ = writeln!(s, "{l}");
        }
    }
    for sh in &c.shifts {
        let _ = writeln!(
            s,
            "NOTE: {} of {} {} results moved together, median {:+.1}% ({} in B): the machine (load, clock, a neighbour) or a library they share, not one subject.",
            sh.along,
            sh.rows,
            sh.kind.name(),
            sh.faster_pct,
            if sh.faster_pct > 0.0 { "faster" } else { "slower" }
        );
    }
    if c.rows.is_empty() {
        let _ = writeln!(
            s,
            "\nNOTHING TO COMPARE: the two runs share no result (same kind, subject and metric)."
        );
    }
    if c.regressions > 0 {
        let _ = writeln!(
            s,
            "\nREGRESSIONS: {} result(s) of B are slower than A beyond both intervals and the {:.1}% threshold:",
            c.regressions,
            c.threshold * 100.0
        );
        for r in c.rows.iter().filter(|r| r.regression) {
            let _ = writeln!(
                s,
                "  {} {}: {} -> {} ({:+.1}%)",
                r.kind.name(),
                r.label,
                value(r.metric, r.a.median),
                value(r.metric, r.b.median),
                r.change_pct
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Host, RunInfo, RunStatus};

    fn doc(id: &str, host: &str, median: f64, spread: f64) -> Document {
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

    /// `doc` with four subjects, the n-th at `medians[n]`, ±1.
    fn four(medians: [f64; 4]) -> Document {
        let mut d = doc("r", "alpha", 100.0, 1.0);
        let first = d.results[0].clone();
        d.results = medians
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let mut r = doc("r", "alpha", *m, 1.0).results.remove(0);
                r.subject = Subject {
                    bytes: Some(1024 << i),
                    ..first.subject.clone()
                };
                r
            })
            .collect();
        d
    }

    #[test]
    fn rows_that_all_moved_together_are_named_as_the_machine() {
        let a = four([100.0, 200.0, 300.0, 400.0]);
        // Every row 3% faster (inside the rule: all "same"), one of them 2.5%.
        let b = four([103.0, 206.0, 307.5, 412.0]);
        let c = compare("a", &a, "b", &b, None);
        assert!(c.rows.iter().all(|r| r.change == Change::Same));
        assert_eq!(c.shifts.len(), 1, "{:?}", c.shifts);
        let sh = &c.shifts[0];
        assert_eq!((sh.kind, sh.rows, sh.along), (Kind::Primitive, 4, 4));
        assert!((sh.faster_pct - 3.0).abs() < 1e-9, "{}", sh.faster_pct);
        assert!(
            render(&c).contains("4 of 4 primitive results moved together, median +3.0% (faster in B)"),
            "{}",
            render(&c)
        );
        // One subject alone changed: no shift.
        let c = compare("a", &a, "b", &four([100.0, 200.0, 330.0, 400.0]), None);
        assert!(c.shifts.is_empty(), "{:?}", c.shifts);
        // Half up, half down: no shift either.
        let c = compare("a", &a, "b", &four([104.0, 208.0, 288.0, 384.0]), None);
        assert!(c.shifts.is_empty(), "{:?}", c.shifts);
        // Fewer than four rows: too few to tell.
        let c = compare("a", &doc("a", "alpha", 100.0, 1.0), "b", &doc("b", "alpha", 110.0, 1.0), None);
        assert!(c.shifts.is_empty());
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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 200, ..Default::default() })]

        /// A real export cut, flipped or spliced anywhere is read or refused with
        /// an error, never a panic; what is read has the right schema.
        #[test]
        fn a_mutated_export_is_read_or_refused(
            cut in proptest::prelude::any::<usize>(),
            flips in proptest::collection::vec((proptest::prelude::any::<usize>(), proptest::prelude::any::<u8>()), 0..8),
        ) {
            let mut bytes = serde_json::to_vec_pretty(&doc("r1", "h", 1e9, 0.02)).unwrap();
            for (at, b) in flips {
                let i = at % bytes.len();
                bytes[i] = b;
            }
            bytes.truncate(bytes.len() - cut % (bytes.len() / 4 + 1));
            let dir = tempfile::tempdir().unwrap();
            let f = dir.path().join("x.json");
            std::fs::write(&f, &bytes).unwrap();
            if let Ok(d) = load_json(&f) {
                proptest::prop_assert_eq!(d.schema, SCHEMA);
            }
        }
    }

    #[test]
    fn an_export_over_the_limit_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("big.json");
        let file = std::fs::File::create(&f).unwrap();
        file.set_len(MAX_EXPORT_BYTES + 1).unwrap();
        let e = format!("{:#}", load_json(&f).unwrap_err());
        assert!(e.contains("over the 64 MiB"), "{e}");
        let e = format!("{:#}", load_json(dir.path()).unwrap_err());
        assert!(e.contains("not a regular file"), "{e}");
    }
}
