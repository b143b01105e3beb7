//! The terminal view of a comparison: the two sides and what differs between
//! them, one line per matched result, the summary and its notes.

use super::{sight, Change, Comparison, Side};
use crate::model::Metric;
use crate::units::{BytesPerSec, Seconds};
use std::fmt::Write as _;

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
