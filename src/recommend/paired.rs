//! Paired evidence: two options measured back to back in the same rounds (the
//! SSH sweep's interleaved sessions, `ResultRecord::rounds`) are compared by
//! their ratio within each round, which the machine's drift from second to
//! second cancels out of; their own intervals, which the drift widens, are the
//! fallback when they share fewer than [`crate::stats::PAIRED_MIN`] rounds, or
//! too few for their ratio's interval to exclude 1 (3 rounds of a drifting
//! machine may not), as long as the ratio does not say the opposite.
//!
//! One relation, [`decides`], says whether the evidence orders `a` before `b`;
//! the ranking sorts by [`keys`] (figures with the rounds' drift taken out) so
//! that its order follows that relation.

use super::candidate::{apart, summary, Accepted, Candidate};
use crate::model::{RoundValue, PRACTICAL};
use crate::stats::{paired_ratio, Ratio};

/// How a note about an order by paired rounds begins.
pub const PAIRED: &str = "paired over";

/// The ratio `a / b` over the rounds the two share, and how many they share.
pub(super) fn ratio(a: &Candidate, b: &Candidate) -> Option<(Ratio, usize)> {
    // By key, not a scan per round: an export's rounds are outside input, and a
    // huge list must not make the ranking quadratic.
    let by_round: std::collections::HashMap<&str, f64> = b.rounds.iter().map(|y| (y.round.as_str(), y.value)).collect();
    let pairs: Vec<(f64, f64)> = a
        .rounds
        .iter()
        .filter_map(|x| by_round.get(x.round.as_str()).map(|&v| (x.value, v)))
        .collect();
    paired_ratio(&pairs).map(|r| (r, pairs.len()))
}

/// How the evidence ordered `a` before `b`: by paired rounds (the ratio, `a`
/// over `b` in the better direction, and the rounds), or by their own intervals.
#[derive(Debug, Clone, Copy)]
pub(super) enum Order {
    Paired(Ratio, usize),
    Independent,
}

/// Whether the evidence orders `a` before `b` (`higher`: a higher figure is
/// better). Sharing [`crate::stats::PAIRED_MIN`] rounds or more, by their paired
/// ratio: its 99 % interval excludes 1 and the median ratio is at least
/// [`PRACTICAL`] from it (relative to the better, as `apart`). Otherwise (too few
/// shared rounds, or rounds too few to bound the ratio) by [`apart`] over their
/// own intervals, with the run's `noise`, unless the shared rounds' median ratio
/// points the other way.
pub(super) fn decides(a: &Candidate, b: &Candidate, higher: bool, noise: f64) -> Option<Order> {
    let paired = ratio(a, b).map(|(r, n)| {
        let q = if higher {
            r
        } else {
            Ratio {
                ratio: 1.0 / r.ratio,
                low: 1.0 / r.high,
                high: 1.0 / r.low,
            }
        };
        (q, n)
    });
    let ordered = |q: &Ratio| q.low > 1.0 && 1.0 - 1.0 / q.ratio >= PRACTICAL;
    let reversed = |q: &Ratio| q.high < 1.0 && 1.0 - q.ratio >= PRACTICAL;
    match paired {
        Some((q, n)) if ordered(&q) => return Some(Order::Paired(q, n)),
        Some((q, _)) if reversed(&q) => return None,
        // The rounds they share put `b` ahead, if not measurably: their own
        // intervals, which the drift moves, must not order `a` first against them
        // (a loaded run's chacha20 once led aes128-gcm so, with every round
        // putting aes128-gcm 1.4-1.8x ahead).
        Some((q, _)) if q.ratio < 1.0 => return None,
        _ => {}
    }
    let (x, y) = (a.measured.as_ref()?.summary, b.measured.as_ref()?.summary);
    let ahead = if higher { x.median > y.median } else { x.median < y.median };
    (ahead && apart(&x, &y, noise)).then_some(Order::Independent)
}

/// The note for `a` ordered before `b` by paired rounds.
pub(super) fn note(a: &Candidate, b: &Candidate, q: Ratio, n: usize) -> String {
    format!(
        "{PAIRED} {n} rounds: {} {:.2}× {} ({:.2}–{:.2}), measured back to back in each round, so the machine's drift cancels.",
        a.verdict.subject.name, q.ratio, b.verdict.subject.name, q.low, q.high
    )
}

/// Each accepted option's sort key, in its figure's unit: its median, or, for an
/// option measured in rounds shared with others, its level once each round's
/// drift is taken out (logs fitted as option + round, by alternating means),
/// scaled to the medians of those options. Sorted by it, options a paired ratio
/// orders come in that order even when the drift upset their medians.
pub(super) fn keys(accepted: &[Accepted<'_>]) -> Vec<f64> {
    let mut key: Vec<f64> = accepted.iter().map(|a| summary(a.1).median).collect();
    let shares = |i: usize| {
        accepted
            .iter()
            .enumerate()
            .any(|(j, b)| j != i && shared(&accepted[i].1.rounds, &b.1.rounds) > 0)
    };
    let fitted: Vec<usize> = (0..accepted.len())
        .filter(|&i| key[i] > 0.0 && shares(i) && accepted[i].1.rounds.iter().all(|v| v.value > 0.0))
        .collect();
    if fitted.len() < 2 {
        return key;
    }
    let mut rounds: Vec<&str> = fitted
        .iter()
        .flat_map(|&i| accepted[i].1.rounds.iter().map(|v| v.round.as_str()))
        .collect();
    rounds.sort_unstable();
    rounds.dedup();
    let cells: Vec<(usize, usize, f64)> = fitted
        .iter()
        .enumerate()
        .flat_map(|(c, &i)| {
            let rounds = &rounds;
            accepted[i].1.rounds.iter().map(move |v| {
                let r = rounds.binary_search(&v.round.as_str()).expect("listed");
                (c, r, v.value.ln())
            })
        })
        .collect();
    let (mut level, mut drift) = (vec![0.0; fitted.len()], vec![0.0; rounds.len()]);
    for _ in 0..40 {
        level = means(fitted.len(), cells.iter().map(|&(c, r, x)| (c, x - drift[r])));
        drift = means(rounds.len(), cells.iter().map(|&(c, r, x)| (r, x - level[c])));
    }
    let shift = fitted.iter().zip(&level).map(|(&i, l)| key[i].ln() - l).sum::<f64>() / fitted.len() as f64;
    for (&i, l) in fitted.iter().zip(&level) {
        key[i] = (l + shift).exp();
    }
    key
}

fn shared(a: &[RoundValue], b: &[RoundValue]) -> usize {
    let keys: std::collections::HashSet<&str> = b.iter().map(|y| y.round.as_str()).collect();
    a.iter().filter(|x| keys.contains(x.round.as_str())).count()
}

/// The mean of the values given for each of `n` slots (0 where none).
fn means(n: usize, items: impl Iterator<Item = (usize, f64)>) -> Vec<f64> {
    let mut sum = vec![(0.0, 0usize); n];
    for (i, x) in items {
        sum[i].0 += x;
        sum[i].1 += 1;
    }
    sum.into_iter().map(|(s, k)| if k > 0 { s / k as f64 } else { 0.0 }).collect()
}

#[cfg(test)]
#[path = "paired_tests.rs"]
mod tests;
