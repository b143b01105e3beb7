//! Ranking: the options a policy accepts, fastest first, with statistical ties kept
//! as ties, and the fastest refused option beside them (what safety costs).

use crate::judge::{Level, Policy, Verdict};
use crate::model::Summary;
use serde::{Deserialize, Serialize};

/// One measured figure for an option, and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub summary: Summary,
    /// How the figure was obtained, e.g. `primitive aes-128-gcm encrypt, 16384 B`.
    pub basis: String,
}

/// A candidate: its verdict and, when the run measured it, its figure.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub verdict: Verdict,
    pub measured: Option<Measured>,
}

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
    /// Options that pass the policy but were not measured in this run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmeasured: Vec<String>,
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
    /// The names to configure: the ranked options, or (when none was measured) the
    /// accepted ones in the candidates' order.
    pub fn choice(&self) -> Vec<String> {
        if self.ranked.is_empty() {
            self.unmeasured.clone()
        } else {
            self.ranked.iter().map(|r| r.name.clone()).collect()
        }
    }
}

/// Below this many samples a figure has no usable interval: it ties with everything,
/// so it is never ranked above or below anything.
pub const MIN_SAMPLES: usize = 3;

/// The summary used for tie checks: with too few samples, an unbounded interval.
fn for_ties(s: &Summary) -> Summary {
    let mut w = *s;
    if s.samples < MIN_SAMPLES {
        w.ci95_low = f64::NEG_INFINITY;
        w.ci95_high = f64::INFINITY;
    }
    w
}

/// Ranks `candidates` (given in preference order, used only to order inside ties)
/// under `policy`.
pub fn rank(list: &str, metric: &str, higher_is_better: bool, candidates: &[Candidate], policy: &Policy) -> Ranking {
    let better = |a: f64, b: f64| if higher_is_better { a > b } else { a < b };
    let mut accepted: Vec<(usize, &Candidate, Vec<String>)> = Vec::new();
    let mut unmeasured = Vec::new();
    let mut fastest_refused: Option<Refused> = None;
    let mut fastest_insecure: Option<Refused> = None;
    for (i, c) in candidates.iter().enumerate() {
        let decision = policy.allows(&c.verdict);
        match (&c.measured, decision.allowed) {
            (Some(_), true) => accepted.push((i, c, decision.warnings)),
            (None, true) => unmeasured.push(c.verdict.subject.name.clone()),
            (Some(m), false) => {
                let refused = Refused {
                    name: c.verdict.subject.name.clone(),
                    level: c.verdict.level,
                    median: m.summary.median,
                    ci95_low: m.summary.ci95_low,
                    ci95_high: m.summary.ci95_high,
                    tied_with_best: m.summary.samples < MIN_SAMPLES,
                    basis: m.basis.clone(),
                    refusals: decision.refusals,
                };
                if c.verdict.level <= Level::Insecure && fastest_insecure.as_ref().map_or(true, |f| better(m.summary.median, f.median)) {
                    fastest_insecure = Some(refused.clone());
                }
                if fastest_refused.as_ref().map_or(true, |f| better(m.summary.median, f.median)) {
                    fastest_refused = Some(refused);
                }
            }
            (None, false) => {}
        }
    }
    let median = |c: &Candidate| c.measured.as_ref().map_or(f64::NAN, |m| m.summary.median);
    accepted.sort_by(|a, b| {
        let (x, y) = (median(a.1), median(b.1));
        let o = x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal);
        (if higher_is_better { o.reverse() } else { o }).then(a.0.cmp(&b.0))
    });
    // Tie groups: an option joins the current group when its interval overlaps any
    // member's. Inside a group the instrument cannot order them, so the better level
    // comes first, then the candidates' own order.
    let mut groups: Vec<Vec<(usize, &Candidate, Vec<String>)>> = Vec::new();
    for item in accepted {
        let s = for_ties(&item.1.measured.as_ref().expect("measured").summary);
        let joins = groups.last().is_some_and(|g| {
            g.iter()
                .any(|m| for_ties(&m.1.measured.as_ref().expect("measured").summary).ties_with(&s))
        });
        if joins {
            groups.last_mut().expect("group").push(item);
        } else {
            groups.push(vec![item]);
        }
    }
    let accepted_best = groups
        .first()
        .and_then(|g| g.first())
        .map(|x| for_ties(&x.1.measured.as_ref().expect("measured").summary));
    let mut ranked = Vec::new();
    for mut g in groups {
        g.sort_by(|a, b| b.1.verdict.level.cmp(&a.1.verdict.level).then(a.0.cmp(&b.0)));
        let rank = ranked.len() + 1;
        let tied = g.len() > 1;
        for (_, c, warnings) in g {
            let m = c.measured.as_ref().expect("measured");
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
    if fastest_insecure.as_ref().map(|f| &f.name) == fastest_refused.as_ref().map(|f| &f.name) {
        fastest_insecure = None;
    }
    for f in [fastest_refused.as_mut(), fastest_insecure.as_mut()].into_iter().flatten() {
        if let Some(best) = accepted_best {
            f.tied_with_best |= f.ci95_low <= best.ci95_high && best.ci95_low <= f.ci95_high;
        }
    }
    let cost = |f: &Option<Refused>| match (f, ranked.first()) {
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
        unmeasured,
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

    #[test]
    fn serial_throughput_is_slower_than_either_part() {
        let x = serial(&s(100.0, 1.0), &s(100.0, 1.0));
        assert!((x.median - 50.0).abs() < 1e-9);
        assert!(x.ci95_low < x.median && x.median < x.ci95_high);
    }
}
