//! `cipherbench check`: the diff turned into findings, one line each, for CI and
//! monitoring. A finding is an option the installed configuration offers that the
//! policy refuses, a configuration that negotiates nothing with its usual peer, or
//! measured throughput left on the table beyond `--min-gain` (and beyond the
//! intervals: a gain inside the noise is never a finding).

use super::SoftwareDiff;
use serde::Serialize;

/// One finding.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CheckFinding {
    pub software: String,
    /// `policy`, `speed` or `negotiation`.
    pub kind: String,
    /// The one line printed for it.
    pub message: String,
}

/// What `check --json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    pub schema: &'static str,
    pub policy: String,
    /// The threshold, as a fraction (0.1 = 10 %).
    pub min_gain: f64,
    pub run_id: String,
    pub findings: Vec<CheckFinding>,
    pub diffs: Vec<SoftwareDiff>,
    /// Software that could not be read, one sentence each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The check failed: this many findings (exit 1).
#[derive(Debug, thiserror::Error)]
#[error("check: {0} finding(s) (see above)")]
pub struct Findings(pub usize);

/// The findings of a set of diffs.
pub fn findings(diffs: &[SoftwareDiff], min_gain: f64) -> Vec<CheckFinding> {
    let mut out = Vec::new();
    for d in diffs {
        let f = |kind: &str, message: String| CheckFinding {
            software: d.software.clone(),
            kind: kind.into(),
            message,
        };
        if let Some(e) = &d.now_error {
            out.push(f("negotiation", format!("{}: negotiates nothing with {}: {e}", d.software, d.peer)));
        }
        for g in d.offered.iter().filter(|g| !g.allowed) {
            out.push(f(
                "policy",
                format!(
                    "{}: offers {} ({}, {}), refused by policy {}: {}",
                    d.software,
                    g.name,
                    crate::recommend::list_title(&g.list),
                    g.level,
                    d.policy,
                    g.reasons.first().map(String::as_str).unwrap_or("not allowed")
                ),
            ));
        }
        for c in d.changes.iter().filter(|c| c.metric == "throughput") {
            let (Some(gain), true) = (c.gain, c.measurable) else { continue };
            if gain > min_gain {
                let now = d.now.as_ref().map(|n| n.label()).unwrap_or_default();
                let rec = d.recommended.as_ref().map(|n| n.label()).unwrap_or_default();
                out.push(f(
                    "speed",
                    format!(
                        "{}: leaves {} throughput on the table (more than --min-gain {:.0} %): negotiates {now}, the recommendation {rec}",
                        d.software,
                        c.verdict,
                        min_gain * 100.0
                    ),
                ));
            }
        }
    }
    out
}

/// A Prometheus label value: backslash, double quote and newline escaped.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// The report in the Prometheus text exposition format, for node_exporter's
/// textfile collector: how monitoring of a fleet picks up the findings and the
/// speed left on the table. Every software gets a sample for every finding kind
/// (0 when it has none), so an alert clears once the finding is fixed.
pub fn prometheus(report: &CheckReport, unix_time: i64) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let policy = label(&report.policy);
    o.push_str("# HELP cipherbench_check_findings Findings of cipherbench check, per software and kind (policy: an option the policy refuses is offered; speed: measured throughput left on the table beyond --min-gain; negotiation: nothing negotiated with the usual peer).\n");
    o.push_str("# TYPE cipherbench_check_findings gauge\n");
    for d in &report.diffs {
        for kind in ["policy", "speed", "negotiation"] {
            let n = report
                .findings
                .iter()
                .filter(|f| f.software == d.software && f.kind == kind)
                .count();
            let _ = writeln!(
                o,
                "cipherbench_check_findings{{software=\"{}\",kind=\"{kind}\",policy=\"{policy}\"}} {n}",
                label(&d.software)
            );
        }
    }
    o.push_str("# HELP cipherbench_check_refused_offered An option the installed configuration offers that the policy refuses (one sample each).\n");
    o.push_str("# TYPE cipherbench_check_refused_offered gauge\n");
    for d in &report.diffs {
        for g in d.offered.iter().filter(|g| !g.allowed) {
            let _ = writeln!(
                o,
                "cipherbench_check_refused_offered{{software=\"{}\",list=\"{}\",option=\"{}\",level=\"{}\"}} 1",
                label(&d.software),
                label(&g.list),
                label(&g.name),
                label(&g.level.to_string())
            );
        }
    }
    o.push_str("# HELP cipherbench_check_gain_ratio Measured change of the recommendation against what is negotiated now (0.25 = 25 % better), only where it is beyond the intervals.\n");
    o.push_str("# TYPE cipherbench_check_gain_ratio gauge\n");
    for d in &report.diffs {
        for c in d.changes.iter().filter(|c| c.measurable) {
            if let Some(g) = c.gain {
                let _ = writeln!(
                    o,
                    "cipherbench_check_gain_ratio{{software=\"{}\",metric=\"{}\"}} {g}",
                    label(&d.software),
                    label(&c.metric)
                );
            }
        }
    }
    o.push_str("# HELP cipherbench_check_min_gain_ratio The --min-gain threshold of the check.\n");
    o.push_str("# TYPE cipherbench_check_min_gain_ratio gauge\n");
    let _ = writeln!(o, "cipherbench_check_min_gain_ratio {}", report.min_gain);
    o.push_str("# HELP cipherbench_check_last_run_timestamp_seconds When the check ran (Unix time).\n");
    o.push_str("# TYPE cipherbench_check_last_run_timestamp_seconds gauge\n");
    let _ = writeln!(o, "cipherbench_check_last_run_timestamp_seconds {unix_time}");
    o
}

/// `10%`, `10 %`, `0.1` → 0.1.
pub fn parse_gain(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("'{s}' is not a gain: give a percentage such as 10%"))?;
    if !(0.0..=100.0).contains(&v) || !v.is_finite() {
        return Err(format!("'{s}' must be between 0% and 10000%"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gains_parse() {
        assert_eq!(parse_gain("10%").unwrap(), 0.1);
        assert_eq!(parse_gain("0.25").unwrap(), 0.25);
        assert!(parse_gain("ten").is_err());
        assert!(parse_gain("-5%").is_err());
    }
}

#[cfg(test)]
mod findings_tests {
    use super::*;
    use crate::diff::{Change, Figure, Graded};
    use crate::judge::Level;

    fn diff(gain: (f64, f64, f64)) -> SoftwareDiff {
        let fig = |m: f64| {
            Some(Figure {
                median: m,
                ci95_low: m * 0.98,
                ci95_high: m * 1.02,
            })
        };
        let mut c = Change::new("throughput", "bytes_per_sec", true, fig(100.0), fig(100.0 * (1.0 + gain.0)), false);
        c.gain_low = Some(gain.1);
        c.gain_high = Some(gain.2);
        SoftwareDiff {
            software: "nginx".into(),
            file: None,
            source: "test".into(),
            notes: vec![],
            peer: "p".into(),
            now: None,
            now_error: None,
            offered: vec![Graded {
                list: "tls12_suites".into(),
                name: "TLS_RSA_WITH_RC4_128_MD5".into(),
                level: Level::Insecure,
                allowed: false,
                reasons: vec!["RC4 [rfc7465]".into()],
            }],
            recommended: None,
            changes: vec![c],
            fixed: vec![],
            introduced: vec![],
            lines: vec![],
            patch: None,
            nothing_to_change: false,
            policy: "intermediate".into(),
        }
    }

    #[test]
    fn one_line_per_finding_and_the_threshold() {
        let f = findings(&[diff((0.5, 0.4, 0.6))], 0.1);
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(f[0].kind, "policy");
        assert!(f[0].message.contains("TLS_RSA_WITH_RC4_128_MD5") && f[0].message.contains("rfc7465"));
        assert_eq!(f[1].kind, "speed");
        assert!(!f.iter().any(|x| x.message.contains('\n')));
        // Below --min-gain: no speed finding.
        assert_eq!(findings(&[diff((0.05, 0.03, 0.07))], 0.1).len(), 1);
    }
}
