//! What a ranking weighs: each option's verdict, figure and tier, and the one
//! rule that may order two figures ([`apart`]). Shared by `rank` (ties, order)
//! and `evidence` (the primitives, the noise said).

use crate::judge::Verdict;
use crate::model::{Summary, PRACTICAL};
use serde::{Deserialize, Serialize};

/// One measured figure for an option, and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub summary: Summary,
    /// How the figure was obtained, e.g. `primitive aes-128-gcm encrypt, 16384 B`.
    pub basis: String,
}

/// Where an option goes before speed is looked at. The order of the variants is
/// the order in a config line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    /// Hybrid post-quantum key exchange: first wherever the policy allows it and the
    /// software has it. Its cost is shown, never traded away.
    PostQuantum,
    /// Everything else the policy allows.
    #[default]
    Normal,
    /// Allowed by the policy, but a current auditor (ssh-audit) fails it, e.g. the
    /// NIST curves: kept for old peers, after every other option.
    Disputed,
}

/// A candidate: its verdict and, when the run measured it, its figure.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub verdict: Verdict,
    pub measured: Option<Measured>,
    pub tier: Tier,
    /// The same option's cost per byte from the primitives measured in the same
    /// run (a cipher, or a cipher then its MAC), when its own figure is a bulk
    /// figure over the wire: what may order it where the wire figures tie (see
    /// `evidence::by_physics`). `None` for handshakes, or when its figure already is
    /// the primitives'.
    pub physics: Option<Measured>,
    /// Its per-session values by round, when it was measured in interleaved
    /// rounds (`ResultRecord::rounds`): what pairs it with the options measured
    /// in the same rounds (`paired`).
    pub rounds: Vec<crate::model::RoundValue>,
}

/// Whether `a` and `b` differ measurably: intervals apart and beyond [`PRACTICAL`].
#[cfg(test)]
pub fn measurably_different(a: &Summary, b: &Summary) -> bool {
    apart(a, b, 0.0)
}

/// The one ordering rule (no reversals): `a` and `b` are ordered only when a
/// second run on the same machine would not order them the other way, that is
/// when
/// 1. their 95% intervals do not overlap (a figure of fewer than
///    `MIN_SAMPLES` samples overlaps everything), where every interval of a run is
///    already at least its noise wide either side (`measure::engine::noise::floor`),
///    so a run that hit a busy second has wide intervals rather than a wrong
///    order; and
/// 2. the difference, relative to the better figure, is at least [`PRACTICAL`]
///    and at least `noise`, the run's (or the pooled runs') noise for the kind:
///    intervals that happen to be narrower than what the machine does between
///    runs do not decide an order.
pub fn apart(a: &Summary, b: &Summary, noise: f64) -> bool {
    let (a, b) = (a.for_ties(), b.for_ties());
    if a.ties_with(&b) {
        return false;
    }
    let (lo, hi) = if a.median < b.median {
        (a.median, b.median)
    } else {
        (b.median, a.median)
    };
    hi > 0.0 && (hi - lo) / hi >= PRACTICAL.max(noise)
}

/// An accepted, measured candidate: its place in the policy's order, itself and
/// the policy's warnings.
pub(super) type Accepted<'a> = (usize, &'a Candidate, Vec<String>);

pub(super) fn summary(c: &Candidate) -> Summary {
    c.measured.as_ref().expect("measured").summary
}
