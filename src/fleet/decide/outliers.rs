//! The class's outliers (3 hosts or more): a host's figures compared with the
//! class's, subject by subject, as ratios. A host is named when its typical ratio
//! is at least 10% slower *and* even its upper interval bound stays below a
//! typical host's lower bound: slower beyond the intervals, not just noisier.

use super::Outlier;
use crate::fleet::merge::{higher_is_better, is_speed, ClassAcc};
use crate::stats::median;
use std::collections::BTreeMap;

/// Outliers of a class (3 hosts or more).
pub(super) fn outliers(class: &ClassAcc, hosts: &[String]) -> (Vec<Outlier>, Option<String>) {
    if class.hosts.len() < 3 {
        return (
            Vec::new(),
            Some(format!("{} host(s): outliers need at least 3 to compare with", class.hosts.len())),
        );
    }
    // Per host: ratios (median, low, high) against the class, per subject.
    let mut per_host: BTreeMap<u32, Vec<(f64, f64, f64)>> = BTreeMap::new();
    for acc in class.subjects.values() {
        let t = &acc.template;
        if !is_speed(t.kind, t.metric) || acc.figs.len() < 3 {
            continue;
        }
        let up = higher_is_better(t.metric);
        let mut meds: Vec<f64> = acc.figs.iter().map(|f| f.median).collect();
        let reference = median(&mut meds);
        if reference <= 0.0 {
            continue;
        }
        for f in &acc.figs {
            let r = |x: f64| {
                if up {
                    x / reference
                } else if x > 0.0 {
                    reference / x
                } else {
                    f64::NAN
                }
            };
            // For lower-is-better figures the high bound is the slow end.
            let (lo, hi) = if up { (r(f.low), r(f.high)) } else { (r(f.high), r(f.low)) };
            let m = r(f.median);
            if m.is_finite() && lo.is_finite() && hi.is_finite() {
                per_host.entry(f.host).or_default().push((m, lo, hi));
            }
        }
    }
    // A typical host's interval, in ratios: the median of every host's median low and high.
    let mut lows = Vec::new();
    let mut highs = Vec::new();
    let mut scores = BTreeMap::new();
    for (h, v) in &per_host {
        let m = median(&mut v.iter().map(|x| x.0).collect::<Vec<_>>());
        let lo = median(&mut v.iter().map(|x| x.1).collect::<Vec<_>>());
        let hi = median(&mut v.iter().map(|x| x.2).collect::<Vec<_>>());
        lows.push(lo);
        highs.push(hi);
        scores.insert(*h, (m, lo, hi));
    }
    if lows.is_empty() {
        return (Vec::new(), Some("no speed figure measured by 3 hosts or more".into()));
    }
    let typical_low = median(&mut lows);
    let mut out = Vec::new();
    for (h, (m, _lo, hi)) in scores {
        let v = &per_host[&h];
        let beyond = v.iter().filter(|x| x.2 < typical_low).count();
        if m <= 0.9 && hi < typical_low && beyond * 2 >= v.len() {
            out.push(Outlier {
                host: hosts[h as usize].clone(),
                relative_speed: m,
                slower_beyond_intervals: beyond,
                compared: v.len(),
            });
        }
    }
    out.sort_by(|a, b| a.host.cmp(&b.host));
    (out, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::decide::tests::class;

    #[test]
    fn a_host_slower_beyond_the_intervals_is_named_and_no_other() {
        let algs = ["aes-128-gcm", "aes-256-gcm", "chacha20-poly1305", "sha256", "hmac-sha256"];
        let names: Vec<String> = (0..6).map(|h| format!("h{h}")).collect();
        // Hosts jitter by ±1.5%; h4 runs at 0.6x.
        let c = class("x", 6, 0, &algs, |_, h| {
            if h == 4 {
                0.6e9
            } else {
                1.0e9 * (1.0 + 0.005 * (h as f64 - 2.5))
            }
        });
        let (o, note) = outliers(&c, &names);
        assert!(note.is_none());
        assert_eq!(o.iter().map(|x| x.host.as_str()).collect::<Vec<_>>(), ["h4"]);
        assert!((o[0].relative_speed - 0.6).abs() < 0.02, "{}", o[0].relative_speed);
        // 8% slower is inside the practical threshold: not named.
        let c = class("x", 6, 0, &algs, |_, h| if h == 4 { 0.92e9 } else { 1.0e9 });
        assert!(outliers(&c, &names).0.is_empty());
        // Two hosts: nothing to compare with.
        let c = class("x", 2, 0, &algs, |_, h| if h == 1 { 0.5e9 } else { 1.0e9 });
        let (o, note) = outliers(&c, &names);
        assert!(o.is_empty() && note.is_some());
    }
}
