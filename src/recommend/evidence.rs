//! What may order options beyond their own figures, and what is said when nothing
//! can: the physics of bulk cost (a cipher's cost per byte, from the primitives
//! measured in the same run) and the run's noise.
//!
//! The rule against reversals is [`super::rank::apart`]; this file only adds
//! evidence under the same rule, never a weaker one:
//! - **Physics.** Bulk throughput over the wire is the cipher's (and MAC's) cost
//!   per byte plus what every option pays alike (the socket, the copy, the
//!   protocol). Where the wire figures of a group tie, the primitives measured in
//!   the same run, far tighter, may order its members, by the same rule
//!   ([`super::rank::apart`]: their own intervals, already at least their kind's
//!   noise wide, apart and at least 5%). Only where the wire figures do not say
//!   the opposite measurably: where they can decide, they decide.
//! - **Noise.** A group of leaders that the run could not order although their
//!   medians are 5% or more apart is a group the machine's noise left tied: the
//!   answer says so, with the figure ([`NOISY`]).

use super::rank::{apart, summary, Accepted};
use crate::model::{Summary, PRACTICAL};

/// How a note about the run's noise begins; the answer shows such notes first.
pub const NOISY: &str = "this machine's speed varied";

/// How a note about pooled runs begins; the answer shows such notes first.
pub const POOLED: &str = "pooled ";

/// How a note about an order by the primitives begins.
pub const PHYSICS: &str = "ordered by the primitives";

fn physics(a: &Accepted<'_>) -> Option<Summary> {
    a.1.physics.as_ref().map(|m| m.summary)
}

fn better(higher: bool, a: f64, b: f64) -> bool {
    if higher {
        a > b
    } else {
        a < b
    }
}

/// Splits each tie group whose members all have a physics figure into the
/// groups those figures order (leader-based, as `rank::tie_groups` does), unless
/// the wire figures of two members measurably say the opposite. Returns the
/// groups and a note per group so split.
pub(super) fn by_physics(groups: Vec<Vec<Accepted<'_>>>, higher: bool) -> (Vec<Vec<Accepted<'_>>>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    for mut g in groups {
        if g.len() < 2 || g.iter().any(|a| physics(a).is_none()) {
            out.push(g);
            continue;
        }
        g.sort_by(|a, b| {
            let (x, y) = (physics(a).expect("physics").median, physics(b).expect("physics").median);
            let o = x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal);
            (if higher { o.reverse() } else { o }).then(a.0.cmp(&b.0))
        });
        let mut subs: Vec<Vec<Accepted<'_>>> = Vec::new();
        for item in g {
            let p = physics(&item).expect("physics");
            // Physics noise: the primitives' intervals are already floored by
            // their kind's noise, so intervals apart means a gap beyond it.
            match subs.last_mut() {
                Some(s) if !apart(&physics(&s[0]).expect("physics"), &p, 0.0) => s.push(item),
                _ => subs.push(vec![item]),
            }
        }
        if subs.len() < 2 || contradicted(&subs, higher) {
            out.push(subs.into_iter().flatten().collect());
            continue;
        }
        let shown: Vec<String> = subs
            .iter()
            .map(|s| {
                let m = s[0].1.physics.as_ref().expect("physics");
                format!("{} {}", m.basis, super::figure("bytes_per_sec", m.summary.median))
            })
            .collect();
        let names: Vec<String> = subs.iter().flatten().map(|a| a.1.verdict.subject.name.clone()).collect();
        notes.push(format!(
            "{PHYSICS} (cost per byte, measured in the same run), where the figures over the wire tie ({}): {}.",
            names.join(", "),
            shown.join(" vs ")
        ));
        out.extend(subs);
    }
    (out, notes)
}

/// True when a member of a later group is measurably better on the wire than a
/// member of an earlier one: then the wire figures decide, and the group stays.
fn contradicted(subs: &[Vec<Accepted<'_>>], higher: bool) -> bool {
    for (i, earlier) in subs.iter().enumerate() {
        for later in subs.iter().skip(i + 1) {
            for a in earlier {
                for b in later {
                    let (x, y) = (summary(a.1), summary(b.1));
                    if better(higher, y.median, x.median) && apart(&x, &y, 0.0) {
                        return true;
                    }
                }
            }
        }
    }
    false
}

/// The note for leaders the noise left tied: the first group of more than one
/// member whose medians lie 5% or more apart (a smaller difference is a tie in
/// any case). The figure is the run's noise for the kind, or without one the
/// widest of the leaders' own intervals.
pub(super) fn too_noisy(groups: &[Vec<Accepted<'_>>], metric: &str, noise: f64) -> Option<String> {
    let g = groups.first().filter(|g| g.len() > 1)?;
    let higher = metric == "bytes_per_sec" || metric == "handshakes_per_sec";
    let lead = g
        .iter()
        .max_by(|a, b| {
            let (x, y) = (summary(a.1).median, summary(b.1).median);
            let o = x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal);
            if higher {
                o
            } else {
                o.reverse()
            }
        })
        .expect("non-empty");
    let best = summary(lead.1).median;
    let far: Vec<&Accepted<'_>> = g
        .iter()
        .filter(|a| {
            let m = summary(a.1).median;
            let (lo, hi) = if m < best { (m, best) } else { (best, m) };
            hi > 0.0 && (hi - lo) / hi >= PRACTICAL
        })
        .collect();
    if far.is_empty() {
        return None;
    }
    let varied = if noise > 0.0 {
        noise
    } else {
        g.iter()
            .map(|a| summary(a.1).relative_precision())
            .filter(|x| x.is_finite())
            .fold(0.0, f64::max)
    };
    let mut names = vec![lead.1.verdict.subject.name.clone()];
    names.extend(far.iter().map(|a| a.1.verdict.subject.name.clone()));
    let last = names.pop().expect("two names");
    Some(format!(
        "{NOISY} ±{:.0}% during the run: too noisy to order {} and {last}; a longer --budget or a quieter machine would.",
        varied * 100.0,
        names.join(", ")
    ))
}

/// The notes of `rankings` that belong at the top of an answer (the run's noise,
/// pooled runs), each once, in order.
pub fn headline(notes: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in notes {
        if (n.starts_with(NOISY) || n.starts_with(POOLED)) && !out.contains(&n) {
            out.push(n);
        }
    }
    out
}
