//! `cipherbench check`: the diff turned into findings, one line each, for CI and
//! monitoring. A finding is an option the installed configuration offers that the
//! policy refuses, a configuration that negotiates nothing with its usual peer, or
//! measured throughput left on the table beyond `--min-gain`: the low end of the
//! gain's 95 % interval above it (a gain inside the noise, or one the
//! recommendation's own ranking ties, is never a finding; a reordering within a
//! tie is not one either).
//!
//! The terminal groups them ([`grouped`]): a system OpenSSL default alone offers
//! over a hundred suites a strict policy refuses, and a hundred lines that say the
//! same thing hide the one that matters. One `FINDING` line per software and kind
//! of problem, each cited reason once with its count and the first few options,
//! then a summary line; `--verbose` prints one line per finding, and `--json` and
//! `--export-prom` always keep every finding.

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
    /// A policy finding: the list (`tls12_suites` ...), the option and its first
    /// cited reason, for grouping.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub option: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
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
            list: None,
            option: None,
            reason: None,
        };
        if let Some(e) = d.now_error.as_ref().filter(|e| !e.starts_with(super::PEER_UNREAD)) {
            let fix = if d.fix.is_empty() {
                String::new()
            } else {
                format!("; fix: {}", d.fix.join(" | "))
            };
            out.push(f(
                "negotiation",
                format!("{}: negotiates nothing with {}: {e}{fix}", d.software, d.peer),
            ));
        }
        let refused: Vec<&super::Graded> = d.offered.iter().filter(|g| !g.allowed).collect();
        for (i, g) in refused.iter().enumerate() {
            // One finding per algorithm: a name whose alias was found already is
            // that finding's (`… (also X)`), not a finding of its own.
            if refused[..i].iter().any(|x| x.list == g.list && super::same_alg(&x.name, &g.name)) {
                continue;
            }
            let also: Vec<&str> = refused[i + 1..]
                .iter()
                .filter(|x| x.list == g.list && x.name != g.name && super::same_alg(&x.name, &g.name))
                .map(|x| x.name.as_str())
                .collect();
            let also = if also.is_empty() {
                String::new()
            } else {
                format!(" (also {})", also.join(", "))
            };
            let reason = g.reasons.first().map(String::as_str).unwrap_or("not allowed");
            out.push(CheckFinding {
                list: Some(g.list.clone()),
                option: Some(g.name.clone()),
                reason: Some(reason.to_string()),
                ..f(
                    "policy",
                    format!(
                        "{}: offers {}{also} ({}, {}), refused by policy {}: {reason}",
                        d.software,
                        g.name,
                        crate::recommend::list_title(&g.list),
                        g.level,
                        d.policy,
                    ),
                )
            });
        }
        for c in d.changes.iter().filter(|c| c.metric == "throughput") {
            // The whole interval above --min-gain, not only its median: a gain
            // that may be smaller than the threshold is not a finding.
            let (Some(low), true) = (c.gain_low, c.measurable) else { continue };
            if low > min_gain {
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

/// `text` broken at spaces into lines of at most `width` columns (a longer word
/// keeps a line of its own), the first after `first`, the rest after `indent`.
fn wrap(first: &str, text: &str, indent: &str, width: usize) -> String {
    let words = text.split(' ').filter(|w| !w.is_empty());
    let mut out = String::new();
    for line in crate::text::lines(first, words, indent, width, crate::text::Count::Chars) {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `a, b, … and N more`: as many of `names` as fit in `room` columns (at least one).
fn some_of(names: &[&str], room: usize) -> String {
    let mut shown = String::new();
    for (i, n) in names.iter().enumerate() {
        let rest = names.len() - i - 1;
        let tail = if rest > 0 { format!(" and {rest} more") } else { String::new() };
        let next = if i == 0 { n.to_string() } else { format!("{shown}, {n}") };
        if i > 0 && next.chars().count() + tail.chars().count() > room {
            return format!("{shown} and {} more", names.len() - i);
        }
        shown = next;
    }
    shown
}

/// The findings for the terminal, grouped: per software and kind, one `FINDING`
/// line; a policy finding's options under each cited reason (count, reason, then
/// as many names as fit in `width` columns and how many more). Every finding is
/// counted in exactly one group.
pub fn grouped(findings: &[CheckFinding], policy: &str, width: usize) -> String {
    let mut out = String::new();
    let mut heads: Vec<(&str, &str)> = Vec::new();
    for f in findings {
        if !heads.contains(&(f.software.as_str(), f.kind.as_str())) {
            heads.push((f.software.as_str(), f.kind.as_str()));
        }
    }
    for (software, kind) in heads {
        let these: Vec<&CheckFinding> = findings.iter().filter(|f| f.software == software && f.kind == kind).collect();
        let refused: Vec<&CheckFinding> = these.iter().copied().filter(|f| f.option.is_some()).collect();
        for f in these.iter().filter(|f| f.option.is_none()) {
            out.push_str(&format!("FINDING {}\n", f.message));
        }
        if refused.is_empty() {
            continue;
        }
        let n = refused.len();
        out.push_str(&format!(
            "FINDING {software}: offers {n} option{} that policy {policy} refuses\n",
            if n == 1 { "" } else { "s" }
        ));
        // A reason that names its option ("policy `x` does not list tls12-suite
        // NAME in ...") is the same reason for every option it names: "…" stands
        // for the names listed under it.
        let mut groups: Vec<(&str, String, Vec<&str>)> = Vec::new();
        for f in refused {
            let option = f.option.as_deref().unwrap_or("");
            let list = f.list.as_deref().unwrap_or("");
            let reason = f.reason.as_deref().unwrap_or("").replace(option, "…");
            match groups.iter_mut().find(|(l, r, _)| *l == list && *r == reason) {
                Some((_, _, names)) => names.push(option),
                None => groups.push((list, reason, vec![option])),
            }
        }
        for (list, reason, names) in groups {
            let head = format!("  {} {}: ", names.len(), crate::recommend::list_title(list));
            out.push_str(&wrap(&head, &reason, "      ", width));
            out.push_str(&format!("    {}\n", some_of(&names, width.saturating_sub(4))));
        }
    }
    out
}

/// The closing line: how many findings of each kind, in which software.
pub fn summary(findings: &[CheckFinding], verbose: bool) -> String {
    let count = |k: &str| findings.iter().filter(|f| f.kind == k).count();
    let kinds: Vec<String> = ["policy", "speed", "negotiation"]
        .iter()
        .filter(|k| count(k) > 0)
        .map(|k| format!("{} {k}", count(k)))
        .collect();
    let mut software: Vec<&str> = findings.iter().map(|f| f.software.as_str()).collect();
    software.dedup();
    let line = |sw: &str| format!("check: {} finding(s) in {sw} ({})", findings.len(), kinds.join(", "));
    let mut s = line(&software.join(", "));
    // Within 80 columns: many software are counted, not named (their FINDING
    // lines above name them).
    if s.chars().count() > 80 - 22 && software.len() > 1 {
        s = line(&format!("{} software", software.len()));
    }
    if !verbose && findings.len() > 1 {
        s.push_str("; --verbose lists each");
    }
    s.push('\n');
    s
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
            offered: vec![Graded {
                list: "tls12_suites".into(),
                name: "TLS_RSA_WITH_RC4_128_MD5".into(),
                level: Level::Insecure,
                allowed: false,
                reasons: vec!["RC4 [rfc7465]".into()],
            }],
            changes: vec![c],
            ..SoftwareDiff::blank("nginx")
        }
    }

    const LONG: &str = "CBC mode with HMAC-SHA1: MAC-then-encrypt, padding-oracle timing attacks (Lucky Thirteen) on many implementations [lucky13, rfc7457]";

    /// Many refused options: one FINDING line for the software, each reason
    /// once, every option counted, lines within 80 columns.
    #[test]
    fn grouped_by_software_and_reason() {
        let mut d = diff((0.05, 0.03, 0.07));
        d.offered.clear();
        for i in 0..40 {
            d.offered.push(Graded {
                list: "tls12_suites".into(),
                name: format!("TLS_ECDHE_RSA_WITH_SUITE_{i:02}_CBC_SHA"),
                level: Level::Weak,
                allowed: false,
                reasons: vec![if i % 2 == 0 {
                    "CBC mode: Lucky13 [lucky13]".into()
                } else {
                    LONG.into()
                }],
            });
        }
        for g in ["x448", "secp521r1"] {
            d.offered.push(Graded {
                list: "groups".into(),
                name: g.into(),
                level: Level::Secure,
                allowed: false,
                reasons: vec![format!("policy `intermediate` does not list group {g} in groups.only")],
            });
        }
        d.offered.push(Graded {
            list: "protocols".into(),
            name: "TLSv1".into(),
            level: Level::Weak,
            allowed: false,
            reasons: vec!["deprecated [rfc8996]".into()],
        });
        let f = findings(&[d], 0.1);
        assert_eq!(f.len(), 43);
        let text = grouped(&f, "intermediate", 80);
        assert_eq!(text.lines().filter(|l| l.starts_with("FINDING")).count(), 1, "{text}");
        assert!(text.lines().count() < 12, "{text}");
        assert!(
            text.contains("FINDING nginx: offers 43 options that policy intermediate refuses"),
            "{text}"
        );
        assert!(
            text.contains("  2 TLS groups: policy `intermediate` does not list group … in groups.only\n    x448, secp521r1\n"),
            "{text}"
        );
        assert_eq!(text.matches("lucky13").count(), 2, "{text}");
        // The long reason is wrapped, not cut: every word is there once.
        let words: Vec<&str> = text.split_whitespace().collect();
        assert!(LONG.split(' ').all(|w| words.contains(&w)), "{text}");
        assert!(text.contains("  20 TLS 1.2 suites: CBC mode: Lucky13 [lucky13]\n"), "{text}");
        assert!(text.contains("  1 protocols: deprecated [rfc8996]\n    TLSv1\n"), "{text}");
        // Shown plus "and N more" adds up to each group's count.
        for l in text.lines().filter(|l| l.contains(" more")) {
            let shown = l.matches("TLS_").count();
            let more: usize = l.rsplit(" and ").next().unwrap().trim_end_matches(" more").parse().unwrap();
            assert_eq!(shown + more, 20, "{l}");
        }
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert_eq!(
            summary(&f, false),
            "check: 43 finding(s) in nginx (43 policy); --verbose lists each\n"
        );
        let mut many = f.clone();
        for (i, x) in many.iter_mut().enumerate() {
            x.software = ["sshd", "ssh", "nginx", "haproxy", "openssl", "gnutls"][i % 6].into();
        }
        many.sort_by(|a, b| a.software.cmp(&b.software));
        assert_eq!(summary(&many, true), "check: 43 finding(s) in 6 software (43 policy)\n");
    }

    /// Two names of one refused algorithm are one finding, naming both.
    #[test]
    fn one_finding_per_algorithm() {
        let g = |name: &str| Graded {
            list: "ssh_kex".into(),
            name: name.into(),
            level: Level::Weak,
            allowed: false,
            reasons: vec!["r".into()],
        };
        let d = SoftwareDiff {
            offered: vec![g("curve25519-sha256"), g("ecdh-sha2-nistp256"), g("curve25519-sha256@libssh.org")],
            ..SoftwareDiff::blank("sshd")
        };
        let f = findings(&[d], 0.1);
        assert_eq!(
            f.iter().map(|x| x.option.as_deref().unwrap()).collect::<Vec<_>>(),
            ["curve25519-sha256", "ecdh-sha2-nistp256"]
        );
        assert!(
            f[0].message
                .contains("offers curve25519-sha256 (also curve25519-sha256@libssh.org) ("),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn one_line_per_finding_and_the_threshold() {
        let f = findings(&[diff((0.5, 0.4, 0.6))], 0.1);
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(f[0].kind, "policy");
        assert!(f[0].message.contains("TLS_RSA_WITH_RC4_128_MD5") && f[0].message.contains("rfc7465"));
        assert_eq!(f[1].kind, "speed");
        assert!(!f.iter().any(|x| x.message.contains('\n')));
        assert_eq!(f[0].option.as_deref(), Some("TLS_RSA_WITH_RC4_128_MD5"));
        assert_eq!(f[1].option, None);
        // Not a policy finding: its own line, as it is.
        let text = grouped(&f, "intermediate", 80);
        assert!(text.contains(&format!("FINDING {}\n", f[1].message)), "{text}");
        // Below --min-gain: no speed finding.
        assert_eq!(findings(&[diff((0.05, 0.03, 0.07))], 0.1).len(), 1);
        // A median above --min-gain whose interval reaches below it: no finding
        // (it may be a smaller gain than the threshold).
        let d = diff((0.15, 0.04, 0.27));
        assert!(d.changes[0].measurable);
        assert_eq!(findings(&[d], 0.1).len(), 1);
        // Within a tie of the ranking: no finding, whatever the figures.
        let mut d = diff((0.5, 0.4, 0.6));
        d.changes[0].within_tie();
        assert_eq!(findings(&[d], 0.1).len(), 1);
    }
}
