//! What a comparison could have seen: from the two runs' intervals, the smallest
//! change of a row that would have parted them (the ranking's tie rule), and for
//! the whole comparison the change these runs can see and what would let them see
//! the threshold's. Two runs with ±23 % noise call a 10 % slowdown "same": that is
//! honest, and the user is told it could not have been anything else.
//!
//! Rows are matched across runs with one name per algorithm ([`same_subject`]).

use super::{Comparison, Figure};
use crate::model::Subject;

/// The few-samples rule (`measure::engine::stats::MIN_SAMPLES`): a figure of
/// fewer samples ties with everything, so it sees no change.
const ORDERED: usize = 3;

/// The smallest change of B against A (a fraction, the same either way on the log
/// scale: 0.48 is ×1.48 up or ÷1.48 down) that would have parted the two intervals
/// had each kept its width relative to its median. `None` when a figure cannot be
/// ordered (fewer than three samples, an interval that reaches zero).
pub fn detectable(a: &Figure, b: &Figure) -> Option<f64> {
    let rel =
        |f: &Figure| (f.samples >= ORDERED && f.median > 0.0 && f.ci95_low > 0.0).then(|| (f.ci95_low / f.median, f.ci95_high / f.median));
    let ((alo, ahi), (blo, bhi)) = (rel(a)?, rel(b)?);
    // B up by f parts them when f·blo > ahi; down by f when bhi/f < alo.
    let up = (ahi / blo).ln();
    let down = (bhi / alo).ln();
    let x = up.max(down).max(0.0).exp() - 1.0;
    x.is_finite().then_some(x)
}

/// The smallest change the rows could see, in percent: (median over the rows, the
/// best row), when any row could see any.
pub fn can_see(c: &Comparison) -> Option<(f64, f64)> {
    let mut v: Vec<f64> = c.rows.iter().filter_map(|r| r.detectable_pct).collect();
    if v.is_empty() {
        return None;
    }
    let best = v.iter().copied().fold(f64::INFINITY, f64::min);
    Some((crate::stats::median(&mut v), best))
}

/// How many times the samples (so about the `--budget`) the intervals must have
/// for a change of `target` (a fraction) to part them where they now part at
/// `now` (an interval narrows as the square root of its samples).
pub fn samples_factor(now: f64, target: f64) -> f64 {
    ((1.0 + now).ln() / (1.0 + target).ln()).powi(2)
}

/// The lines the terminal view ends with: the change these runs could see, and,
/// when that is above the threshold, what would see the threshold's.
pub fn lines(c: &Comparison, budget_b: Option<f64>) -> Vec<String> {
    let Some((median, best)) = can_see(c) else {
        return vec!["these runs cannot see any change: no matched figure can be ordered (too few samples)".into()];
    };
    let mut out = vec![format!(
        "these runs can see changes above {median:.0}% (the median row; the best row {best:.0}%): a smaller change is `same` whatever happened."
    )];
    let t = c.threshold;
    if median > t * 100.0 + 0.5 && t > 0.0 {
        let k = samples_factor(median / 100.0, t);
        let budget = budget_b
            .map(|b| format!(" (--budget {:.0} s for B's {b:.0} s)", b * k))
            .unwrap_or_default();
        let noise = |n: Option<f64>| n.map_or("not stored".to_string(), |x| format!("±{:.0}%", x * 100.0));
        out.push(format!(
            "to see a {:.0}% change (the threshold) the intervals must be {:.1}× narrower: about {}× the samples{budget}, or a quieter machine (run noise A {}, B {}).",
            t * 100.0,
            ((1.0 + median / 100.0).ln() / (1.0 + t).ln()),
            if k > 100.0 { ">100".to_string() } else { format!("{k:.0}") },
            noise(c.a.noise),
            noise(c.b.noise)
        ));
    }
    out
}

/// Two subjects that are one: equal once each algorithm is named by its one name
/// ([`crate::aliases::canonical`]).
pub fn same_subject(a: &Subject, b: &Subject) -> bool {
    a == b || one_name(a) == one_name(b)
}

fn one_name(s: &Subject) -> Subject {
    let c = |x: &Option<String>| x.as_deref().map(crate::aliases::canonical);
    Subject {
        suite: c(&s.suite).or_else(|| c(&s.openssl_name)),
        openssl_name: None,
        group: c(&s.group),
        cipher: c(&s.cipher),
        mac: c(&s.mac),
        kex: c(&s.kex),
        hostkey: c(&s.hostkey),
        ..s.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(median: f64, rel: f64, samples: usize) -> Figure {
        Figure {
            median,
            ci95_low: median * (1.0 - rel),
            ci95_high: median * (1.0 + rel),
            samples,
        }
    }

    #[test]
    fn the_change_a_pair_can_see_follows_its_intervals() {
        // ±23 % each: a 10 % slowdown cannot part them; ~60 % could.
        let x = detectable(&fig(100.0, 0.23, 10), &fig(90.0, 0.23, 10)).unwrap();
        assert!((x - (1.23 / 0.77 - 1.0)).abs() < 1e-9, "{x}");
        assert!(x > 0.1);
        // ±1 %: about 2 %.
        let x = detectable(&fig(100.0, 0.01, 10), &fig(100.0, 0.01, 10)).unwrap();
        assert!(x < 0.03, "{x}");
        assert_eq!(detectable(&fig(100.0, 0.01, 2), &fig(100.0, 0.01, 10)), None, "too few samples");
        assert_eq!(detectable(&fig(100.0, 1.5, 10), &fig(100.0, 0.01, 10)), None, "reaches zero");
        // Four times the samples halve an interval: a change √4 times smaller.
        assert!((samples_factor(0.21, 0.1) - 4.0).abs() < 0.05);
    }

    fn run(id: &str, median: f64, spread: f64, kex: &str) -> crate::model::Document {
        serde_json::from_value(serde_json::json!({
            "schema": "cipherbench/1",
            "run": {"id": id, "started_at": "t", "status": "complete", "command": "speed",
                    "host": {"cpu_model": "c", "cores": 2, "cpu_flags": [], "kernel": "k", "arch": "x86_64", "hostname": "h"},
                    "libraries": {}, "settings": {"budget_seconds": 3.0, "noise": {"primitive": spread / median}}},
            "results": [{"kind": "ssh-handshake", "subject": {"kex": kex}, "metric": "seconds", "status": "ok",
                         "median": median, "mean": median, "min": median - spread, "max": median + spread,
                         "ci95_low": median - spread, "ci95_high": median + spread, "samples": 10, "cv": 0.01}]
        }))
        .unwrap()
    }

    /// A run scaled by 0.9 with ±23 % intervals is `same`, and the comparison says
    /// what it could see and what would see the threshold; the rows match across
    /// the two names of one key exchange.
    #[test]
    fn a_comparison_says_what_it_could_see() {
        let a = run("a", 1.0, 0.23, "curve25519-sha256@libssh.org");
        let b = run("b", 0.9, 0.207, "curve25519-sha256");
        let c = super::super::compare("a", &a, "b", &b, None);
        assert_eq!((c.rows.len(), c.unmatched), (1, 0), "aliases are one subject");
        assert_eq!(c.rows[0].change, super::super::Change::Same);
        let see = c.can_see_pct.unwrap();
        assert!((see - 59.7).abs() < 0.5, "{see}");
        let text = super::super::terminal::render(&c);
        assert!(text.contains("these runs can see changes above 60%"), "{text}");
        assert!(
            text.contains("to see a 5% change (the threshold)") && text.contains("--budget"),
            "{text}"
        );
        assert!(text.contains("≥60%"), "{text}");
        // Tight runs see the threshold: no advice.
        let (a, b) = (run("a", 1.0, 0.005, "x"), run("b", 0.9, 0.0045, "x"));
        let text = super::super::terminal::render(&super::super::compare("a", &a, "b", &b, None));
        assert!(
            text.contains("these runs can see changes above 1%") && !text.contains("to see a"),
            "{text}"
        );
    }

    #[test]
    fn aliases_are_one_subject() {
        let s = |kex: &str, suite: Option<&str>| Subject {
            kex: Some(kex.into()),
            suite: suite.map(str::to_string),
            ..Subject::default()
        };
        assert!(same_subject(
            &s("curve25519-sha256@libssh.org", None),
            &s("curve25519-sha256", None)
        ));
        assert!(same_subject(
            &s("x", Some("ECDHE-RSA-AES128-GCM-SHA256")),
            &s("x", Some("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"))
        ));
        assert!(!same_subject(&s("curve25519-sha256", None), &s("sntrup761x25519-sha512", None)));
    }
}
