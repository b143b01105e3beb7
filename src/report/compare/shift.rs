//! Rows of one kind that all moved together: the machine or a library they
//! share, not one subject.

use super::Row;
use crate::model::{Kind, Metric, Summary};
use serde::Serialize;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Document, Subject};
    use crate::report::compare::tests::doc;
    use crate::report::compare::{compare, terminal::render, Change};

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
}
