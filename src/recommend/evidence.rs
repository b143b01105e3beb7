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

use super::candidate::{apart, summary, Accepted};
use crate::model::{Summary, PRACTICAL};

/// How a note about the run's noise begins; the answer shows such notes first.
pub const NOISY: &str = "this machine's speed varied";

/// How a note about leaders measured too few times begins; shown first too.
pub const FEW: &str = "too few samples to order";

/// How a note about pooled runs begins; the answer shows such notes first.
pub const POOLED: &str = "pooled ";

/// How a note about an order by the primitives begins.
pub const PHYSICS: &str = "ordered by the primitives";

fn physics(a: &Accepted<'_>) -> Option<Summary> {
    a.1.physics.as_ref().map(|m| m.summary)
}

/// The groups and notes of [`by_physics`], and the orders it found inside groups
/// only some of whose members have primitives.
pub(super) type ByPhysics<'a> = (Vec<Vec<Accepted<'a>>>, Vec<Hint>, Vec<String>);

/// An order the primitives found inside a group only some of whose members have
/// them: those members' names, best first, and which way the figures go.
#[derive(Debug, Clone)]
pub(super) struct Hint {
    pub names: Vec<String>,
    pub higher: bool,
}

/// Splits each tie group whose members all have a physics figure into the
/// groups those figures order (leader-based, as `rank::tie_groups` does), except
/// where the wire evidence of two members says the opposite (`paired::decides`):
/// those groups, and the ones between, stay one ([`uncontested`]). In a
/// group only some of whose members have one (CTR ciphers with a MAC that has
/// no primitive), the figures order those members among themselves: the group
/// stays one tie, and they take its places in that order, the physics leader
/// first (a hint, [`in_hinted_order`]), unless that order puts one before
/// another the wire evidence orders first. Inside a tie of the primitives
/// (all members having one), their medians place the members, the ranks tied.
/// Returns the groups, the hints and a note per group so ordered.
pub(super) fn by_physics<'a>(groups: Vec<Vec<Accepted<'a>>>, higher: bool, settled: &Settled) -> ByPhysics<'a> {
    let (mut out, mut hints, mut notes) = (Vec::new(), Vec::new(), Vec::new());
    for g in groups {
        let with: Vec<Accepted<'_>> = g.iter().filter(|a| physics(a).is_some()).cloned().collect();
        if with.len() < 2 {
            out.push(g);
            continue;
        }
        let subs = uncontested(physics_groups(with, higher, settled), higher);
        let all = subs.iter().map(Vec::len).sum::<usize>() == g.len();
        // Inside what the primitives tie, their medians place the members (no
        // order claimed: the ranks stay tied), where all of them have one.
        let names_of = |s: &[Accepted<'_>]| s.iter().map(name).collect::<Vec<_>>();
        if all {
            hints.extend(subs.iter().filter(|s| s.len() > 1).map(|s| Hint {
                names: names_of(s),
                higher,
            }));
        }
        if subs.len() < 2 {
            out.push(g);
            continue;
        }
        let shown: Vec<String> = subs
            .iter()
            .map(|s| {
                let m = s[0].1.physics.as_ref().expect("physics");
                format!("{} {}", m.basis, super::figure("bytes_per_sec", m.summary.median))
            })
            .collect();
        let names: Vec<String> = subs.iter().flatten().map(name).collect();
        let without: Vec<String> = g.iter().filter(|a| physics(a).is_none()).map(name).collect();
        if without.is_empty() {
            notes.push(format!(
                "{PHYSICS} (cost per byte, measured in the same run), where the figures over the wire tie ({}): {}.",
                names.join(", "),
                shown.join(" vs ")
            ));
            out.extend(subs);
        } else {
            notes.push(format!(
                "{PHYSICS} (cost per byte, measured in the same run) among the tied options that have them ({}): {}; {} {} none and {} tied with them.",
                names.join(", "),
                shown.join(" vs "),
                without.join(", "),
                if without.len() == 1 { "has" } else { "have" },
                if without.len() == 1 { "stays" } else { "stay" },
            ));
            hints.push(Hint { names, higher });
            out.push(g);
        }
    }
    (out, hints, notes)
}

/// Where the wire figures order a group before a later one of the same tier
/// but the primitives of the same run measurably order a member of the later
/// group before a member of the earlier (`apart`), the evidence conflicts: a
/// run whose wire figures tie would let the primitives give the opposite order,
/// a reversal. Such groups, and every group between them, become one group,
/// said in a note; [`by_physics`] then orders it as any tie, except that where
/// the wire orders two members directly against the primitives they stay tied
/// ([`uncontested`]). Returns the groups and the notes.
pub(super) fn merge_conflicts(groups: Vec<Vec<Accepted<'_>>>, higher: bool) -> (Vec<Vec<Accepted<'_>>>, Vec<String>) {
    let mut out: Vec<Vec<Accepted<'_>>> = Vec::new();
    let mut notes = Vec::new();
    for g in groups {
        let tier = g[0].1.tier;
        let clash = out.iter().enumerate().find_map(|(i, e)| {
            if e[0].1.tier != tier {
                return None;
            }
            e.iter()
                .find_map(|a| g.iter().find(|b| physics_first(b, a, higher)).map(|b| (i, a, b)))
                .map(|(i, a, b)| (i, name(a), name(b), primitive(a), primitive(b)))
        });
        let Some((i, a, b, pa, pb)) = clash else {
            out.push(g);
            continue;
        };
        notes.push(format!(
            "the figures over the wire put {a} before {b}, the primitives measured in the same run the opposite ({pb} vs {pa}): conflicting evidence, so that order is not kept."
        ));
        let mut merged: Vec<Accepted<'_>> = out.drain(i..).flatten().collect();
        merged.extend(g);
        out.push(merged);
    }
    (out, notes)
}

/// A member's name.
fn name(a: &Accepted<'_>) -> String {
    a.1.verdict.subject.name.clone()
}

/// "aes-128-gcm 4.31 GB/s": a member's primitive basis and figure.
fn primitive(a: &Accepted<'_>) -> String {
    a.1.physics
        .as_ref()
        .map(|m| format!("{} {}", m.basis, super::figure("bytes_per_sec", m.summary.median)))
        .unwrap_or_default()
}

/// Options whose primitive figure only bounds their cost per byte from above:
/// OpenSSH's `chacha20-poly1305@openssh.com` runs OpenSSL's ChaCha20 with
/// OpenSSH's own portable Poly1305 (poly1305.c), slower than the OpenSSL AEAD
/// its basis measures (2.67 GB/s against aes128-ctr with hmac-sha2-256's 1.09,
/// where the wire measured aes128-ctr 31% faster). Such a figure may order
/// others ahead of the option, never the option ahead of others, and inside a
/// tie it goes after the members whose figures are their own.
const UPPER_BOUNDS: &[&str] = &["chacha20-poly1305@openssh.com"];

fn bound(a: &Accepted<'_>) -> bool {
    UPPER_BOUNDS.contains(&a.1.verdict.subject.name.as_str())
}

/// True when both have primitives and `b`'s are measurably better than `a`'s
/// (never when `b`'s figure is only a bound).
fn physics_first(b: &Accepted<'_>, a: &Accepted<'_>, higher: bool) -> bool {
    if bound(b) {
        return false;
    }
    match (physics(a), physics(b)) {
        (Some(pa), Some(pb)) => apart(&pa, &pb, 0.0) && if higher { pb.median > pa.median } else { pb.median < pa.median },
        _ => false,
    }
}

/// The gap (as for `apart`) two constructions' primitives need to order them
/// (AES-GCM against ChaCha20-Poly1305, an AEAD against a cipher with an HMAC):
/// on a shared machine their ratio moves from run to run far beyond each run's
/// intervals (aes-256-gcm against chacha20-poly1305: 1.00× to 1.74× over six
/// runs, each ±3%; docs/policies.md). One construction needs the usual gap.
const ACROSS_CONSTRUCTIONS: f64 = 0.25;

/// The runs a primitive's figure must pool before two constructions need only
/// the usual gap: its interval then carries the between-run variation that the
/// pooling measured (τ², `recommend::pool`), which the wide gap stands in for
/// while a run is alone. Three, as the history's own notes count runs.
pub const SETTLED_RUNS: usize = 3;

/// The primitives (lower-case names) whose figures the ranking takes pool at
/// least [`SETTLED_RUNS`] runs (`figures::settled` finds them in a document).
#[derive(Debug, Clone, Default)]
pub struct Settled(pub(super) std::collections::BTreeSet<String>);

impl Settled {
    /// True when every primitive of a physics basis (`aes-128-gcm`,
    /// `aes-128-ctr + hmac-sha256`) is settled.
    fn basis(&self, basis: &str) -> bool {
        basis.split(" + ").all(|p| self.0.contains(&p.trim().to_ascii_lowercase()))
    }
}

/// The gap the primitives of `a` and `b` need to order them: the usual one for
/// the same construction (their bases equal but for the key sizes, 128, 192 or
/// 256) or where both figures are [`Settled`], [`ACROSS_CONSTRUCTIONS`] otherwise.
fn physics_gap(a: &Accepted<'_>, b: &Accepted<'_>, settled: &Settled) -> f64 {
    let construction = |x: &Accepted<'_>| {
        x.1.physics.as_ref().map(|m| {
            m.basis
                .split(['-', ' '])
                .filter(|t| !matches!(*t, "128" | "192" | "256"))
                .collect::<Vec<_>>()
                .join("-")
        })
    };
    let pooled = |x: &Accepted<'_>| x.1.physics.as_ref().is_some_and(|m| settled.basis(&m.basis));
    match (construction(a), construction(b)) {
        (Some(x), Some(y)) if x == y => 0.0,
        _ if pooled(a) && pooled(b) => 0.0,
        _ => ACROSS_CONSTRUCTIONS,
    }
}

/// `with` (members with a physics figure) in the groups their figures order,
/// fastest first: an option starts a group only when its primitive is apart,
/// by the gap [`physics_gap`] asks for, from every option before it; one it is
/// not apart from joins it in one group with everything between them. So every
/// order between two groups holds for each pair across them.
fn physics_groups<'a>(mut with: Vec<Accepted<'a>>, higher: bool, settled: &Settled) -> Vec<Vec<Accepted<'a>>> {
    with.sort_by(|a, b| {
        let (x, y) = (physics(a).expect("physics").median, physics(b).expect("physics").median);
        let o = x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal);
        (if higher { o.reverse() } else { o }).then(a.0.cmp(&b.0))
    });
    let mut subs: Vec<Vec<Accepted<'_>>> = Vec::new();
    for item in with {
        let p = physics(&item).expect("physics");
        // Physics noise: the primitives' intervals are already floored by
        // their kind's noise, so intervals apart means a gap beyond it.
        let tied = |m: &Accepted<'_>| bound(m) || !apart(&physics(m).expect("physics"), &p, physics_gap(m, &item, settled));
        match subs.iter().position(|s| s.iter().any(tied)) {
            Some(k) => {
                let mut merged: Vec<Accepted<'_>> = subs.drain(k..).flatten().collect();
                merged.push(item);
                subs.push(merged);
            }
            None => subs.push(vec![item]),
        }
    }
    for s in &mut subs {
        s.sort_by_key(bound);
    }
    subs
}

/// Puts the members of `g` named in `hint` in the hint's order, in the places
/// they hold, the others keeping theirs; then the hint's leader first in the
/// group (the one member the evidence shows fastest: a member without a primitive
/// has nothing to put it first but the policy's order). Last, no member stays
/// before one whose wire evidence orders it first (`paired::decides`: a leader
/// without a primitive that the shared rounds measured slower goes after).
pub(super) fn in_hinted_order(g: &mut [Accepted<'_>], hint: &Hint) {
    let at: Vec<usize> = (0..g.len()).filter(|&i| hint.names.contains(&name(&g[i]))).collect();
    if at.len() != hint.names.len() || at.is_empty() {
        return;
    }
    let mut moved: Vec<Accepted<'_>> = at.iter().map(|&i| g[i].clone()).collect();
    moved.sort_by_key(|a| hint.names.iter().position(|h| *h == name(a)));
    for (&slot, item) in at.iter().zip(moved) {
        g[slot] = item;
    }
    g[..=at[0]].rotate_right(1);
    wire_first(g, hint.higher, 0.0);
}

/// Moves each member that the wire evidence orders before an earlier member to
/// just before it (a bounded number of moves: the evidence has no cycles, but a
/// hostile document must not loop).
pub(super) fn wire_first(g: &mut [Accepted<'_>], higher: bool, noise: f64) {
    for _ in 0..g.len() * g.len() {
        let found = (0..g.len()).find_map(|j| {
            (0..j)
                .find(|&i| super::paired::decides(g[j].1, g[i].1, higher, noise).is_some())
                .map(|i| (i, j))
        });
        match found {
            Some((i, j)) => g[i..=j].rotate_right(1),
            None => return,
        }
    }
}

/// The physics groups with every order the wire evidence contradicts undone:
/// where the wire orders a member of a later group before a member of an
/// earlier one, those two groups and every group between them become one (the
/// wire and the primitives disagree there, so neither orders them). Orders
/// nothing contradicts stay: an option both put first still leads.
fn uncontested(mut subs: Vec<Vec<Accepted<'_>>>, higher: bool) -> Vec<Vec<Accepted<'_>>> {
    // Each pass merges at least two groups, so this ends.
    while let Some((i, j)) = contradiction(&subs, higher) {
        let merged: Vec<Accepted<'_>> = subs.drain(i..=j).flatten().collect();
        subs.insert(i, merged);
    }
    subs
}

/// The first pair of groups (earlier, later) where the wire evidence orders a
/// member of the later before a member of the earlier.
fn contradiction(subs: &[Vec<Accepted<'_>>], higher: bool) -> Option<(usize, usize)> {
    for (i, earlier) in subs.iter().enumerate() {
        for (j, later) in subs.iter().enumerate().skip(i + 1) {
            if earlier
                .iter()
                .any(|a| later.iter().any(|b| super::paired::decides(b.1, a.1, higher, 0.0).is_some()))
            {
                return Some((i, j));
            }
        }
    }
    None
}

/// The note for leaders the noise left tied: the first group of more than one
/// member whose medians lie 5% or more apart (a smaller difference is a tie in
/// any case). The figure is the run's noise for the kind, or the widest of the
/// leaders' own intervals where that is wider.
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
    let mut names = vec![name(lead)];
    names.extend(far.iter().map(|a| name(a)));
    let last = names.pop().expect("two names");
    if std::iter::once(lead)
        .chain(far.iter().copied())
        .any(|a| !summary(a.1).can_be_ordered())
    {
        // Not the machine: a figure of one or two samples ties with everything.
        return Some(format!(
            "{FEW} {} and {last} (a figure of fewer than 3 samples ties with everything); a longer --budget would.",
            names.join(", ")
        ));
    }
    // The run's noise, or the leaders' own intervals where they are wider (pooled
    // runs that disagree): what kept them tied.
    let varied = g
        .iter()
        .map(|a| summary(a.1).relative_precision())
        .filter(|x| x.is_finite())
        .fold(noise, f64::max);
    Some(format!(
        "{NOISY} ±{:.0}% during the run: too noisy to order {} and {last}; a longer --budget or a quieter machine would.",
        varied * 100.0,
        names.join(", ")
    ))
}

/// The notes that belong at the top of an answer (the run's noise, leaders
/// measured too few times, pooled runs), each once, in order.
pub fn headline(notes: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in notes {
        if [NOISY, FEW, POOLED].iter().any(|p| n.starts_with(p)) && !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

#[cfg(test)]
#[path = "evidence_tests.rs"]
mod tests;
