//! From per-class summaries to answers.
//!
//! - **Per class** the hosts' figures are pooled into one document (per subject: the
//!   median of the hosts' medians, with an interval no narrower than a typical
//!   host's), and that document goes through the same `recommend` as a single run:
//!   the same ranking, ties and policy, never a second ranking.
//! - **Outliers** (classes of 3 hosts or more): a host's figures are compared with
//!   the class's, subject by subject, as ratios. A host is named when its typical
//!   ratio is at least 10% slower *and* even its upper interval bound stays below a
//!   typical host's lower bound: slower beyond the intervals, not just noisier.
//! - **Fleet-wide** each list keeps the options every class ranked (measured, and
//!   accepted by the policy). Bulk lists are ordered to maximise the worst class's
//!   throughput relative to its own best; handshake lists (groups, kex, host keys)
//!   keep the ranking's order, which follows the grade and post-quantum rules.
//! - **Without measurements** the policy still holds: a list a class (or, for the
//!   fleet, some class) measured nothing of holds every option the hosts offer and
//!   the policy accepts, in the policy's order, and its lines say so.
//!
//! One class's answer is in [`class`] (its pooled document, leaders, spread and
//! lines), the outlier rule in [`outliers`], the fleet-wide choice in
//! [`fleet_wide`], and the config lines both are written with in [`lines`].

mod class;
mod fleet_wide;
mod lines;
mod outliers;
#[cfg(test)]
mod tests;

use super::merge::{ClassKey, Merged};
use crate::judge::{Knowledge, Policy};
use crate::recommend::rank::Ranking;
use serde::Serialize;
use std::collections::BTreeMap;

/// A host slower than its class beyond the intervals.
#[derive(Debug, Clone, Serialize)]
pub struct Outlier {
    pub host: String,
    /// Its typical figure relative to the class (0.6 = 40% slower).
    pub relative_speed: f64,
    /// Subjects where even its upper bound is below a typical host's lower bound.
    pub slower_beyond_intervals: usize,
    pub compared: usize,
}

/// The spread of one leading option's figure across the class's hosts.
#[derive(Debug, Clone, Serialize)]
pub struct Spread {
    pub list: String,
    pub option: String,
    pub metric: String,
    pub hosts: usize,
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

/// The leaders of one list: the fastest option and those tied with it.
#[derive(Debug, Clone, Serialize)]
pub struct Leaders {
    pub list: String,
    pub metric: String,
    pub leaders: Vec<String>,
    pub median: f64,
}

/// Lines for one target software.
#[derive(Debug, Clone, Serialize)]
pub struct Lines {
    pub target: String,
    pub location: String,
    pub lines: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClassReport {
    pub id: String,
    pub key: ClassKey,
    pub label: String,
    pub hosts: Vec<String>,
    pub answer: Vec<Leaders>,
    pub lines: Vec<Lines>,
    pub rankings: Vec<Ranking>,
    pub spread: Vec<Spread>,
    pub outliers: Vec<Outlier>,
    /// Lists the class measured nothing of: its lines hold every option all its
    /// hosts offer (their stored lists) that the policy accepts, in the policy's
    /// order, and say so.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unmeasured: Vec<String>,
    /// Why outliers were not looked for (fewer than 3 hosts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outlier_note: Option<String>,
}

/// What a class gives up with the fleet-wide choice, per list.
#[derive(Debug, Clone, Serialize)]
pub struct GiveUp {
    pub class: String,
    pub list: String,
    pub own_best: String,
    pub fleet_choice: String,
    /// Fraction of the class's own best it loses (0 when tied).
    pub loss: f64,
    /// The fleet's choice is tied with the class's best: nothing measurable lost.
    pub tied: bool,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct FleetWide {
    /// Per list, best first.
    pub choice: BTreeMap<String, Vec<String>>,
    pub lines: Vec<Lines>,
    pub gives_up: Vec<GiveUp>,
    /// Lists left out, and why.
    pub notes: Vec<String>,
    /// Lists not every class measured: every option all classes offer and the
    /// policy accepts, in the policy's order, and said so.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unmeasured: Vec<String>,
}

/// Classes, the fleet-wide choice and the ranking lists' metrics.
pub struct Decided {
    pub classes: Vec<ClassReport>,
    pub fleet: FleetWide,
}

/// Per-class answers and the fleet-wide config.
pub fn decide(merged: &Merged, knowledge: &Knowledge, policy: &Policy, targets: &[String]) -> Decided {
    // Classes in a stable order: most hosts first, then by key.
    let mut order: Vec<usize> = (0..merged.classes.len()).collect();
    order.sort_by(|a, b| {
        let (x, y) = (&merged.classes[*a], &merged.classes[*b]);
        y.hosts.len().cmp(&x.hosts.len()).then(x.key.cmp(&y.key))
    });
    let mut classes = Vec::new();
    let mut outcomes = Vec::new();
    for (n, i) in order.iter().enumerate() {
        let (r, o) = class::class_report(
            &merged.classes[*i],
            format!("class-{}", n + 1),
            &merged.hosts,
            knowledge,
            policy,
            targets,
        );
        classes.push(r);
        outcomes.push(o);
    }
    let fleet = fleet_wide::fleet_wide(&classes, &outcomes, knowledge, targets);
    Decided { classes, fleet }
}
