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
mod tests {
    use super::*;

    /// Inside a tie, the smaller key of one construction comes first and the
    /// others keep their places; names without a key size are untouched.
    #[test]
    fn key_size_orders_only_one_construction() {
        assert_eq!(key_size("aes256-gcm@openssh.com"), Some(("aes#-gcm@openssh.com".to_string(), 256)));
        assert_eq!(key_size("TLS_AES_128_GCM_SHA256"), Some(("tls_aes_#_gcm_sha256".to_string(), 128)));
        assert_eq!(key_size("chacha20-poly1305@openssh.com"), None);
        assert_ne!(key_size("aes128-ctr").unwrap().0, key_size("aes256-gcm@openssh.com").unwrap().0);
    }
    use crate::judge::{Domain, Knowledge};

    fn s(median: f64, half: f64) -> Summary {
        Summary {
            median,
            mean: median,
            min: median - half,
            max: median + half,
            ci95_low: median - half,
            ci95_high: median + half,
            samples: 10,
            cv: 0.01,
        }
    }

    fn cand(k: &Knowledge, name: &str, m: Option<Summary>) -> Candidate {
        Candidate {
            verdict: k.judge(Domain::SshCipher, name),
            measured: m.map(|summary| Measured {
                summary,
                basis: "test".into(),
            }),
            tier: Tier::Normal,
            physics: None,
            rounds: Vec::new(),
        }
    }

    #[test]
    fn ties_share_a_rank_and_refused_options_stay_out() {
        let k = Knowledge::builtin().unwrap();
        let p = Policy::builtin("intermediate").unwrap();
        let cands = vec![
            cand(&k, "aes128-ctr", Some(s(100.0, 2.0))),
            cand(&k, "aes256-gcm@openssh.com", Some(s(300.0, 5.0))),
            cand(&k, "aes128-gcm@openssh.com", Some(s(303.0, 5.0))),
            cand(&k, "3des-cbc", Some(s(900.0, 1.0))),
            cand(&k, "aes192-ctr", None),
        ];
        let r = rank("ssh_ciphers", "bytes_per_sec", true, &cands, &p);
        let names: Vec<(&str, usize, bool)> = r.ranked.iter().map(|x| (x.name.as_str(), x.rank, x.tied)).collect();
        assert_eq!(names.len(), 3, "{names:?}");
        assert_eq!((names[0].1, names[1].1), (1, 1), "the two GCMs overlap: {names:?}");
        assert!(names[0].2 && names[1].2);
        assert_eq!(names[2], ("aes128-ctr", 3, false));
        // Tied, one construction: the smaller key first, whatever the policy's order
        // or the medians (here aes256-gcm's is the lower).
        assert_eq!(names[0].0, "aes128-gcm@openssh.com", "{names:?}");
        assert_eq!(r.unmeasured, vec!["aes192-ctr".to_string()]);
        let f = r.fastest_refused.as_ref().expect("3des is refused");
        assert_eq!(f.name, "3des-cbc");
        assert!(f.level < Level::Secure);
        let cost = r.safety_cost.unwrap();
        assert!((cost - 900.0 / 303.0).abs() < 1e-9 || (cost - 900.0 / 300.0).abs() < 1e-9, "{cost}");
        // A figure from too few samples is tied with everything, never ranked.
        let few = Summary {
            samples: 1,
            ..s(50.0, 0.0)
        };
        let r2 = rank(
            "ssh_ciphers",
            "bytes_per_sec",
            true,
            &[cands[1].clone(), cand(&k, "aes128-ctr", Some(few))],
            &p,
        );
        assert!(r2.ranked.iter().all(|x| x.rank == 1 && x.tied), "{:?}", r2.ranked);
        // Lower is better (seconds): the order flips.
        let r = rank("ssh_ciphers", "seconds", false, &cands, &p);
        assert_eq!(r.ranked[0].name, "aes128-ctr");
    }

    fn kex(k: &Knowledge, name: &str, m: Option<Summary>) -> Candidate {
        let verdict = k.judge(Domain::SshKex, name);
        Candidate {
            tier: crate::recommend::tier(k, &verdict),
            verdict,
            measured: m.map(|summary| Measured {
                summary,
                basis: "test".into(),
            }),
            physics: None,
            rounds: Vec::new(),
        }
    }

    /// Post-quantum first even when it costs more; an option ssh-audit fails after
    /// everything else even when it is cheapest; the unmeasured kept, in the policy's
    /// order, after the measured of their tier, except among post-quantum options: an
    /// unmeasured hybrid is not ordered after a measured one (issue 27: OpenSSH 10's
    /// default mlkem768x25519 first, whichever hybrid the budget reached).
    #[test]
    fn post_quantum_leads_and_auditor_failed_options_trail_whatever_the_speed() {
        let k = Knowledge::builtin().unwrap();
        let p = Policy::builtin("intermediate").unwrap();
        let cands = vec![
            kex(&k, "mlkem768x25519-sha256", None),
            kex(&k, "sntrup761x25519-sha512", Some(s(0.012, 0.0005))),
            kex(&k, "curve25519-sha256", Some(s(0.010, 0.0005))),
            kex(&k, "ecdh-sha2-nistp256", Some(s(0.008, 0.0005))),
            kex(&k, "diffie-hellman-group16-sha512", None),
            kex(&k, "diffie-hellman-group1-sha1", Some(s(0.001, 0.0001))),
        ];
        let r = rank("ssh_kex", "cpu_seconds", false, &cands, &p);
        assert_eq!(
            r.choice(),
            [
                "mlkem768x25519-sha256",
                "sntrup761x25519-sha512",
                "curve25519-sha256",
                "diffie-hellman-group16-sha512",
                "ecdh-sha2-nistp256"
            ]
        );
        assert_eq!(r.unmeasured, ["mlkem768x25519-sha256", "diffie-hellman-group16-sha512"]);
        assert!(r.ranked[0].tied, "not separated from the unmeasured hybrid: {:?}", r.ranked);
        assert_eq!(r.fastest_refused.as_ref().unwrap().name, "diffie-hellman-group1-sha1");
        // The refused option's price is set against the cheapest accepted one, not the first.
        assert!((r.safety_cost.unwrap() - 0.008 / 0.001).abs() < 1e-9);
    }

    /// Two measured hybrids: tied, the policy's order (mlkem768x25519 first); only
    /// intervals apart put the cheaper first, and then in every run that measures so.
    #[test]
    fn measured_hybrids_keep_the_policy_order_unless_clearly_apart() {
        let k = Knowledge::builtin().unwrap();
        let p = Policy::builtin("modern").unwrap();
        let with = |ml: Summary, sn: Summary| {
            let cands = vec![
                kex(&k, "mlkem768x25519-sha256", Some(ml)),
                kex(&k, "sntrup761x25519-sha512", Some(sn)),
                kex(&k, "curve25519-sha256", Some(s(0.010, 0.0005))),
            ];
            rank("ssh_kex", "cpu_seconds", false, &cands, &p).choice()
        };
        // sntrup's median lower, but the intervals overlap: a tie.
        assert_eq!(with(s(0.0300, 0.004), s(0.0290, 0.004))[0], "mlkem768x25519-sha256");
        assert_eq!(with(s(0.0300, 0.0005), s(0.0600, 0.0005))[0], "mlkem768x25519-sha256");
        assert_eq!(with(s(0.0600, 0.0005), s(0.0300, 0.0005))[0], "sntrup761x25519-sha512");
    }

    /// A pre-standard name is configured right after the name it was measured as,
    /// not after everything measured; a twin that is measured too keeps its place.
    #[test]
    fn an_unmeasured_alias_follows_its_measured_twin() {
        let k = Knowledge::builtin().unwrap();
        let p = Policy::builtin("modern").unwrap();
        let cands = vec![
            kex(&k, "sntrup761x25519-sha512@openssh.com", Some(s(0.065, 0.002))),
            kex(&k, "curve25519-sha256", Some(s(0.011, 0.0005))),
            kex(&k, "curve25519-sha256@libssh.org", None),
            kex(&k, "diffie-hellman-group-exchange-sha256", Some(s(0.015, 0.0005))),
            kex(&k, "sntrup761x25519-sha512", None),
        ];
        let mut r = rank("ssh_kex", "cpu_seconds", false, &cands, &p);
        let before = r.choice();
        assert_eq!(
            before.last().map(String::as_str),
            Some("curve25519-sha256@libssh.org"),
            "{before:?}"
        );
        r.follow_twins(|n| k.twin(Domain::SshKex, n));
        assert_eq!(
            r.choice(),
            [
                "sntrup761x25519-sha512@openssh.com",
                "sntrup761x25519-sha512",
                "curve25519-sha256",
                "curve25519-sha256@libssh.org",
                "diffie-hellman-group-exchange-sha256"
            ]
        );
        // Both directions of the relation are known, whichever entry states it.
        assert_eq!(
            k.twin(Domain::SshKex, "curve25519-sha256").as_deref(),
            Some("curve25519-sha256@libssh.org")
        );
        assert_eq!(k.twin(Domain::SshKex, "diffie-hellman-group16-sha512"), None);
    }

    /// Wide intervals that overlap in a chain tie the three (the middle one is
    /// apart from neither), yet the slowest never goes before the fastest: the
    /// order the evidence gives inside the tie stays in the configured order.
    #[test]
    fn a_chain_of_overlaps_keeps_the_extremes_in_order() {
        let k = Knowledge::builtin().unwrap();
        let p = Policy::builtin("intermediate").unwrap();
        let cands = [
            cand(&k, "chacha20-poly1305@openssh.com", Some(s(55.0, 28.0))),
            cand(&k, "aes128-gcm@openssh.com", Some(s(400.0, 250.0))),
            cand(&k, "aes192-ctr", Some(s(170.0, 120.0))),
        ];
        let r = rank("ssh_ciphers", "bytes_per_sec", true, &cands, &p);
        let at = |n: &str| r.choice().iter().position(|x| x == n).unwrap();
        assert!(at("aes128-gcm@openssh.com") < at("chacha20-poly1305@openssh.com"), "{:?}", r.ranked);
        assert_eq!(r.choice()[0], "aes128-gcm@openssh.com");
        assert!(r.ranked.iter().all(|x| x.tied && x.rank == 1), "{:?}", r.ranked);
    }

    /// The main job's TLS 1.2 reversal (two runs of one machine): AES-128 apart
    /// from AES-256 in one run and from ChaCha20 in the other, the third tied
    /// with both each time. A leader-based split ranked ChaCha20 before AES-256
    /// in the first run and AES-256 before ChaCha20 in the second; neither run
    /// may rank a pair the other ranks the opposite way.
    #[test]
    fn an_option_tied_with_two_others_orders_neither_pair() {
        let k = Knowledge::builtin().unwrap();
        let p = Policy::builtin("intermediate").unwrap();
        let (a128, a256, chacha) = ("aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "chacha20-poly1305@openssh.com");
        let runs = [
            // Run 1: ChaCha20 1385 [1309-1547] ties AES-128; AES-256 1409 [1268-1484] does not.
            [
                (a128, 1570.0, 1500.0, 1640.0),
                (chacha, 1385.0, 1309.0, 1547.0),
                (a256, 1409.0, 1268.0, 1484.0),
            ],
            // The long run: AES-128 apart from ChaCha20, AES-256 tied with both.
            [
                (a128, 1650.0, 1600.0, 1700.0),
                (chacha, 1385.0, 1309.0, 1547.0),
                (a256, 1500.0, 1420.0, 1610.0),
            ],
        ];
        let mut orders = Vec::new();
        for figures in runs {
            let cands: Vec<Candidate> = figures
                .iter()
                .map(|&(n, m, lo, hi)| {
                    let mut x = s(m, 0.0);
                    (x.ci95_low, x.ci95_high) = (lo, hi);
                    cand(&k, n, Some(x))
                })
                .collect();
            let r = rank("ssh_ciphers", "bytes_per_sec", true, &cands, &p);
            assert_eq!(r.choice()[0], a128, "{:?}", r.ranked);
            let rank_of = |n: &str| r.ranked.iter().find(|x| x.name == n).unwrap().rank;
            orders.push([a128, a256, chacha].map(rank_of));
        }
        for i in 0..3 {
            for j in 0..3 {
                let (x, y) = (orders[0], orders[1]);
                assert!(!(x[i] < x[j] && y[j] < y[i]), "reversed pair {i},{j}: {orders:?}");
            }
        }
    }

    /// Speed decides only beyond the intervals and [`PRACTICAL`]: 3% apart with
    /// tight intervals is a tie (policy order), 20% apart is an order.
    #[test]
    fn speed_orders_only_measurable_differences() {
        let k = Knowledge::builtin().unwrap();
        let p = Policy::builtin("modern").unwrap();
        let close = [
            cand(&k, "chacha20-poly1305@openssh.com", Some(s(100.0, 0.5))),
            cand(&k, "aes128-gcm@openssh.com", Some(s(103.0, 0.5))),
        ];
        let r = rank("ssh_ciphers", "bytes_per_sec", true, &close, &p);
        assert_eq!(r.choice(), ["chacha20-poly1305@openssh.com", "aes128-gcm@openssh.com"]);
        assert!(r.ranked.iter().all(|x| x.tied && x.rank == 1), "{:?}", r.ranked);
        let far = [
            cand(&k, "chacha20-poly1305@openssh.com", Some(s(100.0, 0.5))),
            cand(&k, "aes128-gcm@openssh.com", Some(s(120.0, 0.5))),
        ];
        let r = rank("ssh_ciphers", "bytes_per_sec", true, &far, &p);
        assert_eq!(r.choice(), ["aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com"]);
        assert!(!measurably_different(&s(100.0, 0.5), &s(103.0, 0.5)));
        assert!(!measurably_different(&s(100.0, 10.0), &s(120.0, 10.0)), "overlapping intervals");
        assert!(measurably_different(&s(100.0, 0.5), &s(120.0, 0.5)));
    }

    /// A small budget (nothing measured) and a large one (everything measured) give
    /// the same set: budgets change the order, never what is configured.
    #[test]
    fn a_budget_changes_the_order_never_the_set() {
        let k = Knowledge::builtin().unwrap();
        let p = Policy::builtin("intermediate").unwrap();
        let names = [
            "aes256-ctr",
            "aes128-gcm@openssh.com",
            "chacha20-poly1305@openssh.com",
            "3des-cbc",
            "aes128-cbc",
        ];
        let none: Vec<Candidate> = names.iter().map(|n| cand(&k, n, None)).collect();
        let all: Vec<Candidate> = names
            .iter()
            .enumerate()
            .map(|(i, n)| cand(&k, n, Some(s(100.0 * (i + 1) as f64, 1.0))))
            .collect();
        let some: Vec<Candidate> = names
            .iter()
            .enumerate()
            .map(|(i, n)| cand(&k, n, (i % 2 == 0).then(|| s(100.0 * (i + 1) as f64, 1.0))))
            .collect();
        let set = |c: &[Candidate]| {
            let mut v = rank("ssh_ciphers", "bytes_per_sec", true, c, &p).choice();
            v.sort();
            v
        };
        assert_eq!(set(&none), set(&all));
        assert_eq!(set(&some), set(&all));
        assert_eq!(set(&all).len(), 3, "{:?}", set(&all));
    }

    #[test]
    fn serial_throughput_is_slower_than_either_part() {
        let x = serial(&s(100.0, 1.0), &s(100.0, 1.0));
        assert!((x.median - 50.0).abs() < 1e-9);
        assert!(x.ci95_low < x.median && x.median < x.ci95_high);
    }
}
