//! Racing: spending more samples where the order of subjects is in doubt.
//!
//! Every decision a race takes is made here, from intervals the engine made
//! ([`super::stats`]): whether two subjects tie, which subjects could still take
//! one of the first places, whether those places are settled, which subjects to
//! sample next (LUCB per place), which results of a finished pass are still
//! contenders, and how a race's new samples join the first pass's (pooled, never
//! replacing them).

use super::stats::{few_samples, MIN_SAMPLES};
use crate::model::{ResultRecord, Summary};

/// A 95% interval, low and high.
pub type Interval = (f64, f64);

pub use super::stats::overlap;

/// The racing interval of a subject from its values: [`few_samples`] widening
/// (by `spread`) below [`MIN_SAMPLES`].
pub fn interval(values: &[f64], spread: f64) -> Option<Interval> {
    let s = few_samples(Summary::of(values)?, &[], spread);
    Some((s.ci95_low, s.ci95_high))
}

/// The spread a subject with fewer than [`MIN_SAMPLES`] samples is widened by,
/// learnt from the others: the median max/min ratio of the summaries with
/// [`MIN_SAMPLES`] or more, within [`MIN_SPREAD`, `MAX_SPREAD`]; `MAX_SPREAD`
/// while no such spread is known.
pub fn spread(summaries: &[Summary]) -> f64 {
    let mut ratios: Vec<f64> = summaries
        .iter()
        .filter(|s| s.samples >= MIN_SAMPLES && s.min > 0.0)
        .map(|s| s.max / s.min)
        .collect();
    if ratios.is_empty() {
        return MAX_SPREAD;
    }
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2].clamp(MIN_SPREAD, MAX_SPREAD)
}

/// Bounds of [`spread`]: at least ±10%, at most a factor of two each way.
pub const MIN_SPREAD: f64 = 1.1;
pub const MAX_SPREAD: f64 = 2.0;

/// Indices of the subjects that could still place among the `top` fastest:
/// fewer than `top` others are certainly faster (their whole interval lies above
/// this one's). Subjects without an interval are left out.
pub fn could_place(iv: &[Option<Interval>], top: usize) -> Vec<usize> {
    (0..iv.len())
        .filter(|&i| {
            let Some((_, hi)) = iv[i] else { return false };
            let above = iv
                .iter()
                .enumerate()
                .filter(|&(j, o)| j != i && o.is_some_and(|(lo, _)| lo > hi))
                .count();
            above < top
        })
        .collect()
}

/// The race is over when no more than `top` subjects could place and none of
/// them ties with another: the top places and their order are known.
pub fn settled(iv: &[Option<Interval>], alive: &[usize], top: usize) -> bool {
    alive.len() <= top
        && alive.iter().all(|&a| {
            alive
                .iter()
                .all(|&b| a == b || !matches!((iv[a], iv[b]), (Some(x), Some(y)) if overlap(x, y)))
        })
}

/// The subjects to sample next so that the `top` places get settled (LUCB, per
/// place): for every unsettled k ≤ `top`, the member of the current top k with
/// the lowest lower bound and the outsider with the highest upper bound, when
/// those intervals overlap (so every open place gets samples each round, the
/// top-3 set as much as first place). Subjects at `cap` samples are passed over.
/// Empty when every place is settled or only capped subjects are left to settle it.
pub fn critical(iv: &[Option<Interval>], med: &[f64], n: &[usize], alive: &[usize], top: usize, cap: usize) -> Vec<usize> {
    let mut ranked: Vec<usize> = alive.iter().copied().filter(|&i| iv[i].is_some()).collect();
    ranked.sort_by(|&a, &b| med[b].total_cmp(&med[a]));
    let lo = |i: usize| iv[i].map_or(f64::NAN, |x| x.0);
    let hi = |i: usize| iv[i].map_or(f64::NAN, |x| x.1);
    let mut pick: Vec<usize> = Vec::new();
    for k in 1..=top.min(ranked.len().saturating_sub(1)) {
        let (inside, outside) = ranked.split_at(k);
        let floor = inside.iter().map(|&i| lo(i)).fold(f64::INFINITY, f64::min);
        let ceiling = outside.iter().map(|&i| hi(i)).fold(f64::NEG_INFINITY, f64::max);
        if ceiling < floor {
            continue;
        }
        let weak = inside
            .iter()
            .copied()
            .filter(|&i| n[i] < cap && lo(i) <= ceiling)
            .min_by(|&a, &b| lo(a).total_cmp(&lo(b)));
        let strong = outside
            .iter()
            .copied()
            .filter(|&i| n[i] < cap && hi(i) >= floor)
            .max_by(|&a, &b| hi(a).total_cmp(&hi(b)));
        for i in weak.into_iter().chain(strong) {
            if !pick.contains(&i) {
                pick.push(i);
            }
        }
    }
    pick
}

/// Indices of the results that race for first place in their group: the leader
/// and everything that ties with it. Groups with a clear leader return nothing.
pub fn contenders<K: PartialEq + Clone>(records: &[ResultRecord], group: impl Fn(&ResultRecord) -> Option<K>) -> Vec<usize> {
    let mut keys: Vec<K> = Vec::new();
    for r in records {
        if let Some(k) = group(r) {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    let mut out = Vec::new();
    for k in keys {
        let members: Vec<usize> = (0..records.len())
            .filter(|&i| group(&records[i]).as_ref() == Some(&k) && records[i].summary().is_some())
            .collect();
        let Some(&leader) = members.iter().max_by(|&&a, &&b| {
            records[a]
                .median
                .partial_cmp(&records[b].median)
                .unwrap_or(std::cmp::Ordering::Equal)
        }) else {
            continue;
        };
        let lead = records[leader].summary().expect("filtered");
        let tied: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&i| i != leader && records[i].summary().is_some_and(|s| s.ties_with(&lead)))
            .collect();
        if !tied.is_empty() {
            out.push(leader);
            out.extend(tied);
        }
    }
    out
}

/// A race's result for a subject joined with the first pass's: when both carry
/// their sample values, the interval is made again over all of them (pooled);
/// otherwise the record with more samples stands. The pooled record keeps the
/// newer record's companion figures.
pub fn pool(first: &ResultRecord, race: &ResultRecord) -> ResultRecord {
    if first.values.is_empty() || race.values.is_empty() {
        return if race.samples.unwrap_or(0) >= first.samples.unwrap_or(0) {
            race.clone()
        } else {
            first.clone()
        };
    }
    let values: Vec<f64> = first.values.iter().chain(&race.values).copied().collect();
    let Some(s) = Summary::of(&values) else {
        return race.clone();
    };
    let mut out = race.clone();
    // Both passes' rounds: their keys never meet (each sweep numbers its own).
    out.rounds = first.rounds.iter().chain(&race.rounds).cloned().collect();
    out.median = Some(s.median);
    out.mean = Some(s.mean);
    out.min = Some(s.min);
    out.max = Some(s.max);
    out.ci95_low = Some(s.ci95_low);
    out.ci95_high = Some(s.ci95_high);
    out.samples = Some(s.samples);
    out.cv = Some(s.cv);
    out.values = values;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Kind, Metric, Subject};

    #[test]
    fn could_place_and_settled() {
        let iv = [Some((10.0, 12.0)), Some((11.0, 13.0)), Some((1.0, 2.0)), None];
        assert_eq!(could_place(&iv, 1), vec![0, 1]);
        assert_eq!(could_place(&iv, 3), vec![0, 1, 2]);
        assert!(!settled(&iv, &[0, 1], 3));
        let apart = [Some((10.0, 11.0)), Some((12.0, 13.0))];
        assert!(settled(&apart, &[0, 1], 3));
    }

    #[test]
    fn critical_picks_the_overlapping_edges() {
        let iv = [Some((10.0, 14.0)), Some((9.0, 12.0)), Some((1.0, 2.0))];
        let med = [12.0, 10.5, 1.5];
        let pick = critical(&iv, &med, &[3, 3, 3], &[0, 1, 2], 1, 30);
        assert_eq!(pick, vec![0, 1]);
        assert!(critical(&iv, &med, &[30, 30, 30], &[0, 1, 2], 1, 30).is_empty());
    }

    fn rec(alg: &str, values: &[f64]) -> ResultRecord {
        let s = Summary::of(values).unwrap();
        let subject = Subject {
            algorithm: Some(alg.into()),
            ..Default::default()
        };
        ResultRecord::ok(Kind::Primitive, subject, Metric::BytesPerSec, &s, None)
    }

    #[test]
    fn contenders_are_leader_and_overlaps() {
        let rs = vec![
            rec("a", &[10.0, 10.1, 10.2, 10.3, 10.1, 10.2, 10.0]),
            rec("b", &[10.2, 10.3, 10.4, 10.5, 10.3, 10.4, 10.2]),
            rec("c", &[5.0, 5.1, 5.2, 5.0, 5.1, 5.2, 5.0]),
        ];
        let all = contenders(&rs, |_| Some(()));
        assert_eq!(all, vec![1, 0]);
        let separate = contenders(&rs, |r| r.subject.algorithm.clone());
        assert!(separate.is_empty());
    }

    #[test]
    fn pooling_keeps_both_passes_samples() {
        let rec = |v: &[f64]| {
            let mut r = ResultRecord::ok(
                Kind::TlsBulk,
                Subject::default(),
                Metric::BytesPerSec,
                &Summary::of(v).unwrap(),
                None,
            );
            r.values = v.to_vec();
            r
        };
        let a = rec(&[10.0, 11.0, 12.0]);
        let b = rec(&[13.0, 14.0, 15.0, 16.0]);
        let p = pool(&a, &b);
        assert_eq!(p.samples, Some(7));
        assert_eq!(p.median, Some(13.0));
        assert_eq!(p.min, Some(10.0));
        // Without values the longer measurement stands.
        let mut bare = b.clone();
        bare.values.clear();
        assert_eq!(pool(&a, &bare).samples, Some(4));
    }
}
