//! Ranking: the options a policy accepts, fastest first, with statistical ties kept
//! as ties, and the fastest refused option beside them (what safety costs).

#[cfg(test)]
pub use super::candidate::apart;
#[cfg(test)]
pub use super::candidate::measurably_different;
use super::candidate::{summary, Accepted};
pub use super::candidate::{Candidate, Measured, Tier};
use crate::judge::{Level, Policy};
use crate::model::Summary;
use serde::{Deserialize, Serialize};

/// One protocol family's rankings, its choice and every candidate it weighed.
pub type Planned<C> = (Vec<Ranking>, C, Vec<Candidate>);

/// An option the policy accepts, in ranking order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranked {
    pub name: String,
    /// 1-based competition rank; options in one tie share it.
    pub rank: usize,
    /// True when the 95% interval overlaps another option's of the same rank.
    pub tied: bool,
    pub level: Level,
    pub median: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    pub basis: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The fastest option the policy refuses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Refused {
    pub name: String,
    pub level: Level,
    pub median: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// True when its 95% interval overlaps the best accepted option's: no measurable cost.
    #[serde(default)]
    pub tied_with_best: bool,
    pub basis: String,
    pub refusals: Vec<String>,
}

/// One list of a protocol (TLS 1.3 suites, SSH ciphers ...), ranked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranking {
    /// The policy table it corresponds to: `tls13_suites`, `ssh_ciphers` ...
    pub list: String,
    /// `bytes_per_sec`, `handshakes_per_sec` or `seconds`.
    pub metric: String,
    pub higher_is_better: bool,
    /// Measured options that pass the policy, best first.
    pub ranked: Vec<Ranked>,
    /// Options that pass the policy but were not measured in this run ("not measured
    /// in this run"): still configured, after the measured ones of their tier (post-quantum:
    /// among them, see `in_order`), in the policy's order. A budget changes order, never
    /// what is configured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmeasured: Vec<String>,
    /// The configured order: per [`Tier`], the measured options by the ordering rule,
    /// then the unmeasured ones. Empty in documents written before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<String>,
    /// What the rule did that a reader must know: what post-quantum costs here, a
    /// hybrid the software lacks, a disagreement with an auditor (see
    /// `recommend::security_notes`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The fastest measured option the policy refuses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fastest_refused: Option<Refused>,
    /// How many times faster the fastest refused option is than the best accepted
    /// one (1.0 or less: safety costs nothing here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety_cost: Option<f64>,
    /// The fastest measured option rated `insecure` (or unrated), when it is not the
    /// fastest refused one: the 2015 NZBGet answer (RC4-MD5) lands here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fastest_insecure: Option<Refused>,
    /// The same ratio for `fastest_insecure`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insecure_cost: Option<f64>,
}

impl Ranking {
    /// The names to configure: every option the policy accepts, measured or not, in
    /// the order of [`rank`]'s rule.
    pub fn choice(&self) -> Vec<String> {
        if !self.order.is_empty() {
            return self.order.clone();
        }
        self.ranked
            .iter()
            .map(|r| r.name.clone())
            .chain(self.unmeasured.iter().cloned())
            .collect()
    }

    /// Moves each unmeasured option that is another name of a configured one
    /// (`twin`) to just after it: `curve25519-sha256@libssh.org` is measured as
    /// `curve25519-sha256`, so it belongs beside it, not after everything measured.
    pub fn follow_twins(&mut self, twin: impl Fn(&str) -> Option<String>) {
        for name in self.unmeasured.clone() {
            let Some(t) = twin(&name) else { continue };
            if self.unmeasured.contains(&t) {
                continue;
            }
            let (Some(from), Some(_)) = (self.order.iter().position(|n| *n == name), self.order.iter().position(|n| *n == t)) else {
                continue;
            };
            let moved = self.order.remove(from);
            let at = self.order.iter().position(|n| *n == t).expect("twin still listed");
            self.order.insert(at + 1, moved);
        }
    }
}

impl Ranking {
    /// One row per algorithm (`crate::aliases`): of two measured names of one
    /// algorithm (`sntrup761x25519-sha512` and `…@openssh.com`), the row of the one
    /// `first` prefers stays, the other's goes, and its name is configured right
    /// after the kept one (old peers may know only that name). Ranks are counted
    /// again over the rows left.
    pub fn one_row_per_alias(&mut self, first: impl Fn(&str, &str) -> bool) {
        let mut i = 0;
        while i < self.ranked.len() {
            let twin = (0..i).find(|&j| crate::aliases::same(&self.ranked[j].name, &self.ranked[i].name));
            let Some(j) = twin else {
                i += 1;
                continue;
            };
            let (nj, ni) = (self.ranked[j].name.clone(), self.ranked[i].name.clone());
            let (kept, gone) = if first(&nj, &ni) { (nj.clone(), ni) } else { (ni, nj.clone()) };
            self.ranked[j].name = kept.clone();
            self.ranked.remove(i);
            // The kept name where the first of the two was, the other right after.
            let at = self.order.iter().position(|n| *n == nj);
            self.order.retain(|n| *n != kept && *n != gone);
            let at = at.unwrap_or(self.order.len()).min(self.order.len());
            self.order.insert(at, gone);
            self.order.insert(at, kept);
        }
        let mut rank = 0;
        for k in 0..self.ranked.len() {
            if k == 0 || self.ranked[k].rank != self.ranked[k - 1].rank {
                rank = k + 1;
            }
            self.ranked[k].rank = rank;
        }
        for k in 0..self.ranked.len() {
            let r = self.ranked[k].rank;
            self.ranked[k].tied = self.ranked.iter().filter(|x| x.rank == r).count() > 1;
        }
    }
}

/// A measured difference smaller than this fraction of the better figure does not
/// decide an order, even when the intervals do not overlap (the same threshold
/// `compare` uses by default).
pub use crate::model::PRACTICAL;

/// The ordering rule, as the report and the README state it.
pub const RULE: &str = "Order: hybrid post-quantum key exchange first wherever the policy allows it; \
then speed, but only where a second run would not order the pair the other way: options measured back \
to back in 3 or more shared rounds by their ratio within each round (its 95% interval excluding 1, the \
ratio at least 5% from it), else by their own 95% intervals apart (each at least as wide as the run's \
noise) and the difference at least 5% and beyond that noise, unless that ratio says the opposite; where the figures over the wire tie, the \
primitives measured in the same run may order the options that have them (cost per byte); otherwise \
the better grade, then the policy's order; options a current auditor fails (NIST curves under ssh-audit) \
last. Options the policy allows but this run did not measure are kept, after the \
measured ones, in the policy's order.";

/// The candidates as the policy sorts them: accepted and measured, accepted but
/// unmeasured (with their places in the policy's order), and the fastest measured
/// refused and insecure ones.
struct Sorted<'a> {
    accepted: Vec<Accepted<'a>>,
    unmeasured: Vec<(usize, &'a Candidate)>,
    fastest_refused: Option<Refused>,
    fastest_insecure: Option<Refused>,
}

fn sort_out<'a>(candidates: &'a [Candidate], policy: &Policy, better: impl Fn(f64, f64) -> bool) -> Sorted<'a> {
    let mut out = Sorted {
        accepted: Vec::new(),
        unmeasured: Vec::new(),
        fastest_refused: None,
        fastest_insecure: None,
    };
    for (i, c) in candidates.iter().enumerate() {
        let decision = policy.allows(&c.verdict);
        match (&c.measured, decision.allowed) {
            (Some(_), true) => out.accepted.push((i, c, decision.warnings)),
            (None, true) => out.unmeasured.push((i, c)),
            (Some(m), false) => {
                let refused = Refused {
                    name: c.verdict.subject.name.clone(),
                    level: c.verdict.level,
                    median: m.summary.median,
                    ci95_low: m.summary.ci95_low,
                    ci95_high: m.summary.ci95_high,
                    tied_with_best: !m.summary.can_be_ordered(),
                    basis: m.basis.clone(),
                    refusals: decision.refusals,
                };
                if c.verdict.level <= Level::Insecure && out.fastest_insecure.as_ref().is_none_or(|f| better(m.summary.median, f.median)) {
                    out.fastest_insecure = Some(refused.clone());
                }
                if out.fastest_refused.as_ref().is_none_or(|f| better(m.summary.median, f.median)) {
                    out.fastest_refused = Some(refused);
                }
            }
            (None, false) => {}
        }
    }
    out
}

/// The accepted options in tier then speed order, in groups the instrument cannot
/// order: inside one tier, an option starts a group only when the evidence
/// (`paired::decides`: their ratio over the rounds they share, else their own
/// intervals) orders every earlier member of its tier before it; otherwise it
/// joins the first group holding a member it ties with (or that it orders
/// after it), and every group after that one joins too. Not against the leader
/// alone: where A is apart from C but B ties both, a leader-based split puts B
/// before C (or C before B) on no evidence, and a second run whose B ties the
/// other way reverses them. The orders the evidence does give inside a group
/// (A before C) stay in the configured order (`evidence::wire_first`), the
/// ranks tied. Sorted by `paired::keys`, so that options measured in the same
/// rounds come in the order their ratios say. Returns the groups and a note per
/// boundary the paired rounds decided.
fn tie_groups(accepted: Vec<Accepted<'_>>, higher_is_better: bool, noise: f64) -> (Vec<Vec<Accepted<'_>>>, Vec<String>) {
    use super::paired::{decides, note, Order};
    let keys = super::paired::keys(&accepted);
    let mut keyed: Vec<(f64, Accepted<'_>)> = keys.into_iter().zip(accepted).collect();
    keyed.sort_by(|(x, a), (y, b)| {
        let o = x.partial_cmp(y).unwrap_or(std::cmp::Ordering::Equal);
        a.1.tier
            .cmp(&b.1.tier)
            .then(if higher_is_better { o.reverse() } else { o })
            .then(a.0.cmp(&b.0))
    });
    let mut groups: Vec<Vec<Accepted<'_>>> = Vec::new();
    let mut notes = Vec::new();
    for (_, item) in keyed {
        // The first group of its tier with a member it cannot be ordered after:
        // that member is not ordered before it, or it is ordered before that member.
        let tied = |g: &Vec<Accepted<'_>>| {
            g[0].1.tier == item.1.tier
                && g.iter().any(|m| {
                    decides(m.1, item.1, higher_is_better, noise).is_none() || decides(item.1, m.1, higher_is_better, noise).is_some()
                })
        };
        match groups.iter().position(tied) {
            Some(i) => {
                let mut merged: Vec<Accepted<'_>> = groups.drain(i..).flatten().collect();
                merged.push(item);
                groups.push(merged);
            }
            None => {
                if let Some(Order::Paired(q, n)) = groups
                    .last()
                    .filter(|g| g[0].1.tier == item.1.tier)
                    .and_then(|g| decides(g[0].1, item.1, higher_is_better, noise))
                {
                    let leader = groups.last().expect("group")[0].1;
                    notes.push(note(leader, item.1, q, n));
                }
                groups.push(vec![item]);
            }
        }
    }
    (groups, notes)
}

/// The key size in a name (`aes256-gcm@openssh.com` → 256) and the name with it
/// blanked: options that differ only in it are one construction with more or
/// fewer rounds.
fn key_size(name: &str) -> Option<(String, u32)> {
    ["128", "192", "256"].iter().find_map(|k| {
        let at = name.find(k)?;
        let family = format!("{}#{}", &name[..at], &name[at + 3..]).to_ascii_lowercase();
        Some((family, k.parse().ok()?))
    })
}

/// Inside a tie, of options of one construction and one level that differ only
/// in key size (AES-128 and AES-256 GCM or CTR, TLS_AES_128/256_GCM), the smaller
/// key first: fewer rounds over the same work per byte, so it is never the slower
/// on one machine (the pipe method agrees: aes128-gcm ≥ aes256-gcm). The others
/// keep their places; this orders nothing between tie groups, so it can reverse
/// nothing a second run would see.
fn smaller_key_first(g: &mut [Accepted<'_>]) {
    let keys: Vec<Option<(String, u32)>> = g.iter().map(|a| key_size(&a.1.verdict.subject.name)).collect();
    let mut done = vec![false; g.len()];
    for i in 0..g.len() {
        let Some((family, _)) = keys[i].clone().filter(|_| !done[i]) else {
            continue;
        };
        let level = g[i].1.verdict.level;
        let at: Vec<usize> = (i..g.len())
            .filter(|&j| keys[j].as_ref().is_some_and(|(f, _)| *f == family) && g[j].1.verdict.level == level)
            .collect();
        let mut by_size = at.clone();
        by_size.sort_by_key(|&j| keys[j].as_ref().map(|k| k.1));
        let moved: Vec<Accepted<'_>> = by_size.iter().map(|&j| g[j].clone()).collect();
        for (&slot, item) in at.iter().zip(moved) {
            g[slot] = item;
            done[slot] = true;
        }
    }
}

/// Per tier, the measured groups (inside a group the better level, then the
/// policy's order) and then the unmeasured: the ranked options and the configured
/// order. Post-quantum options with one unmeasured among them are one tie in the
/// policy's order instead: no evidence puts a measured hybrid before an unmeasured one.
fn in_order(
    groups: Vec<Vec<Accepted<'_>>>,
    hints: &[super::evidence::Hint],
    unmeasured: &[(usize, &Candidate)],
    (higher, noise): (bool, f64),
) -> (Vec<Ranked>, Vec<String>) {
    let mut ranked = Vec::new();
    let mut order = Vec::new();
    let mut tiers: Vec<Tier> = groups
        .iter()
        .map(|g| g[0].1.tier)
        .chain(unmeasured.iter().map(|u| u.1.tier))
        .collect();
    tiers.sort();
    tiers.dedup();
    let mut groups = groups.into_iter().peekable();
    for tier in tiers {
        let mut of_tier: Vec<Vec<Accepted<'_>>> = std::iter::from_fn(|| groups.next_if(|g| g[0].1.tier == tier)).collect();
        let mut waiting: Vec<&(usize, &Candidate)> = unmeasured.iter().filter(|u| u.1.tier == tier).collect();
        // Post-quantum options one of which went unmeasured are not clearly
        // separated: one tie, in the policy's order (the installed software's
        // default order), the unmeasured at their places among them.
        let merged = tier == Tier::PostQuantum && !waiting.is_empty() && !of_tier.is_empty();
        if merged {
            let mut one: Vec<Accepted<'_>> = of_tier.into_iter().flatten().collect();
            one.sort_by_key(|a| a.0);
            of_tier = vec![one];
        }
        for mut g in of_tier {
            if !merged {
                g.sort_by(|a, b| b.1.verdict.level.cmp(&a.1.verdict.level).then(a.0.cmp(&b.0)));
                smaller_key_first(&mut g);
                for h in hints {
                    super::evidence::in_hinted_order(&mut g, h);
                }
                // A hint may place by medians the primitives tie; inside one
                // mode the smaller key still goes first (never the slower).
                smaller_key_first(&mut g);
                // What the wire evidence orders inside the tie stays in order.
                super::evidence::wire_first(&mut g, higher, noise);
            }
            let rank = ranked.len() + 1;
            let tied = g.len() > 1 || merged;
            for (i, c, warnings) in g {
                while merged && waiting.first().is_some_and(|u| u.0 < i) {
                    order.push(waiting.remove(0).1.verdict.subject.name.clone());
                }
                let m = c.measured.as_ref().expect("measured");
                order.push(c.verdict.subject.name.clone());
                ranked.push(Ranked {
                    name: c.verdict.subject.name.clone(),
                    rank,
                    tied,
                    level: c.verdict.level,
                    median: m.summary.median,
                    ci95_low: m.summary.ci95_low,
                    ci95_high: m.summary.ci95_high,
                    basis: m.basis.clone(),
                    warnings,
                });
            }
        }
        order.extend(waiting.into_iter().map(|u| u.1.verdict.subject.name.clone()));
    }
    (ranked, order)
}

/// Ranks `candidates` (given in the policy's order, used inside ties and for the
/// unmeasured) under `policy` by [`RULE`], without a stored noise (see [`rank_with`]).
#[cfg(test)]
pub fn rank(list: &str, metric: &str, higher_is_better: bool, candidates: &[Candidate], policy: &Policy) -> Ranking {
    rank_with(
        list,
        metric,
        higher_is_better,
        candidates,
        policy,
        0.0,
        &super::evidence::Settled::default(),
    )
}

/// Ranks `candidates` by [`RULE`] with `noise` (the run's, or the pooled runs',
/// noise for the figures' kind, a fraction): ties split by the primitives where
/// they can be (`evidence::by_physics`), and a note where the noise left the
/// leaders tied (`evidence::too_noisy`); `settled`, the primitives whose pooled
/// figures carry the history's between-run variation (`evidence::Settled`).
pub fn rank_with(
    list: &str,
    metric: &str,
    higher_is_better: bool,
    candidates: &[Candidate],
    policy: &Policy,
    noise: f64,
    settled: &super::evidence::Settled,
) -> Ranking {
    let better = |a: f64, b: f64| if higher_is_better { a > b } else { a < b };
    let Sorted {
        accepted,
        unmeasured,
        mut fastest_refused,
        mut fastest_insecure,
    } = sort_out(candidates, policy, better);
    let (groups, mut notes) = tie_groups(accepted, higher_is_better, noise);
    let (groups, conflicts) = super::evidence::merge_conflicts(groups, higher_is_better);
    notes.extend(conflicts);
    let (groups, hints, physics_notes) = super::evidence::by_physics(groups, higher_is_better, settled);
    notes.extend(physics_notes);
    notes.extend(super::evidence::too_noisy(&groups, metric, noise));
    // The fastest accepted figure, whatever its tier: what a refused option is set against.
    let accepted_best = groups
        .iter()
        .flatten()
        .map(|x| summary(x.1).for_ties())
        .reduce(|a, b| if better(b.median, a.median) { b } else { a });
    let (ranked, order) = in_order(groups, &hints, &unmeasured, (higher_is_better, noise));
    if fastest_insecure.as_ref().map(|f| &f.name) == fastest_refused.as_ref().map(|f| &f.name) {
        fastest_insecure = None;
    }
    for f in [fastest_refused.as_mut(), fastest_insecure.as_mut()].into_iter().flatten() {
        if let Some(best) = accepted_best {
            f.tied_with_best |= f.ci95_low <= best.ci95_high && best.ci95_low <= f.ci95_high;
        }
    }
    let cost = |f: &Option<Refused>| match (f, accepted_best) {
        (Some(f), Some(best)) if f.median > 0.0 && best.median > 0.0 => Some(if higher_is_better {
            f.median / best.median
        } else {
            best.median / f.median
        }),
        _ => None,
    };
    let (safety_cost, insecure_cost) = (cost(&fastest_refused), cost(&fastest_insecure));
    Ranking {
        list: list.to_string(),
        metric: metric.to_string(),
        higher_is_better,
        ranked,
        unmeasured: unmeasured.into_iter().map(|u| u.1.verdict.subject.name.clone()).collect(),
        order,
        notes,
        fastest_refused,
        safety_cost,
        fastest_insecure,
        insecure_cost,
    }
}

/// The throughput of a cipher and a MAC run one after the other over the same
/// bytes (`1/(1/a + 1/b)`), applied to every statistic. Both bounds stay bounds.
pub fn serial(a: &Summary, b: &Summary) -> Summary {
    let f = |x: f64, y: f64| if x > 0.0 && y > 0.0 { 1.0 / (1.0 / x + 1.0 / y) } else { 0.0 };
    Summary {
        median: f(a.median, b.median),
        mean: f(a.mean, b.mean),
        min: f(a.min, b.min),
        max: f(a.max, b.max),
        ci95_low: f(a.ci95_low, b.ci95_low),
        ci95_high: f(a.ci95_high, b.ci95_high),
        samples: a.samples.min(b.samples),
        cv: a.cv.max(b.cv),
    }
}

#[cfg(test)]
#[path = "rank_tests.rs"]
mod tests;
