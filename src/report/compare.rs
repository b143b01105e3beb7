//! `compare A B`: two runs result by result, from the history or from JSON
//! documents exported on other machines (`--export-json`).
//!
//! Results are matched on kind, subject and metric only, never on the run id or
//! the host, so two machines (or two library versions) line up; the header says
//! so plainly when hosts or library versions differ.
//!
//! A row is `faster` or `slower` only when the change is real *and* large enough
//! to matter: each run's median lies outside the other run's interval (intervals
//! are made to hold on a repeat run, `measure::engine::noise`), and the change is
//! at least the practical threshold. The threshold defaults to the two runs'
//! stored noise added, at least 2% (`--threshold` sets it), as criterion.rs's
//! noise threshold does. Everything else is `same`, whatever the ratio says.

use crate::model::{Document, Kind, Metric, ResultRecord, Status, Subject, SCHEMA};
use crate::units::{BytesPerSec, Seconds};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// Reads a `cipherbench/1` JSON document written by `--export-json` or `--json`.
pub fn load_json(path: &Path) -> Result<Document> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let doc: Document = serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "{} is not a cipherbench JSON document (write one with --export-json)",
            path.display()
        )
    })?;
    if doc.schema != SCHEMA {
        bail!("{} has schema '{}', expected '{SCHEMA}'", path.display(), doc.schema);
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
    /// Each run's median lies outside the other's interval.
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
            noise: crate::measure::engine::noise::largest(&doc.run.settings),
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
}

/// The threshold when none is given: the two runs' noise added, at least
/// [`MIN_THRESHOLD`](crate::measure::engine::noise::MIN_THRESHOLD).
pub fn default_threshold(a: &Side, b: &Side) -> (f64, String) {
    let min = crate::measure::engine::noise::MIN_THRESHOLD;
    match (a.noise, b.noise) {
        (None, None) => (min, format!("default {:.0}% (neither run stored its noise)", min * 100.0)),
        (x, y) => {
            let sum = x.unwrap_or(0.0) + y.unwrap_or(0.0);
            if sum > min {
                (
                    sum,
                    format!(
                        "the runs' noise added: A ±{:.1}%, B ±{:.1}%",
                        x.unwrap_or(0.0) * 100.0,
                        y.unwrap_or(0.0) * 100.0
                    ),
                )
            } else {
                (
                    min,
                    format!("at least {:.0}% (the runs' noise adds up to {:.1}%)", min * 100.0, sum * 100.0),
                )
            }
        }
    }
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

fn figure(r: &ResultRecord) -> Option<Figure> {
    if r.status != Status::Ok {
        return None;
    }
    let s = r.summary()?;
    Some(Figure {
        median: s.median,
        ci95_low: s.ci95_low,
        ci95_high: s.ci95_high,
        samples: s.samples,
    })
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
            .find(|r| r.kind == ra.kind && r.metric == ra.metric && r.subject == ra.subject);
        let (Some(fa), Some(fb)) = (figure(ra), rb.and_then(figure)) else {
            unmatched += 1;
            continue;
        };
        let lower_is_better = ra.metric == Metric::Seconds;
        let inside = |v: f64, f: &Figure| f.ci95_low <= v && v <= f.ci95_high;
        let beyond_intervals = !inside(fb.median, &fa) && !inside(fa.median, &fb);
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
                .any(|r| r.kind == rb.kind && r.metric == rb.metric && r.subject == rb.subject)
        })
        .count();
    Comparison {
        a: side_a,
        b: side_b,
        threshold,
        threshold_from,
        differences: differences(a, b),
        regressions: rows.iter().filter(|r| r.regression).count(),
        improvements: rows.iter().filter(|r| r.change == Change::Faster).count(),
        rows,
        unmatched,
    }
}

fn value(metric: Metric, v: f64) -> String {
    match metric {
        Metric::BytesPerSec => BytesPerSec(v).to_string(),
        Metric::HandshakesPerSec => format!("{v:.0}/s"),
        Metric::Seconds => Seconds(v).to_string(),
        Metric::Accepted => format!("{v}"),
    }
}

fn kind_name(k: Kind) -> String {
    serde_json::to_value(k)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
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
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY);
    t.set_header(["kind", "subject", "A", "B", "change", "clears threshold", "verdict"]);
    for r in &c.rows {
        let verdict = match r.change {
            Change::Slower => "SLOWER (regression)".to_string(),
            Change::Same if r.clears_threshold && !r.beyond_intervals => "same (within the intervals)".to_string(),
            other => other.as_str().to_string(),
        };
        t.add_row([
            kind_name(r.kind),
            r.label.clone(),
            value(r.metric, r.a.median),
            value(r.metric, r.b.median),
            format!("{:+.1}%", r.change_pct),
            if r.clears_threshold { "yes" } else { "no" }.to_string(),
            verdict,
        ]);
    }
    let _ = writeln!(s, "{t}");
    let _ = writeln!(
        s,
        "  verdict: faster or slower only when each run's median lies outside the other's 95% interval AND the change clears the {:.1}% threshold; otherwise same (for times, lower is faster).",
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
                kind_name(r.kind),
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
            values: Vec::new(),
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
}
