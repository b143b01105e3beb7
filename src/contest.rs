//! The main job's fifth step: spend what is left of the budget where it changes
//! the answer.
//!
//! After the quick pass, every ranked list (TLS 1.3 suites, groups, SSH ciphers
//! ...) whose leader is statistically tied with other options is a contest. Its
//! contenders — the measurements behind the tied leaders — are measured again with
//! the rest of the budget, and the engine pools the new samples with the quick
//! pass's (`measure::engine::race::pool`): independent samples from both passes
//! make one interval. Options already clearly behind are not measured again: the
//! quick pass dropped them.

use crate::backend::openssh::Client;
use crate::measure::sink::Measurements;
use crate::measure::{ssh, tls};
use crate::model::{Kind, ResultRecord};
use crate::progress::Progress;
use crate::recommend::Outcome;
use crate::units::Seconds;
use anyhow::Result;
use std::collections::BTreeSet;

/// One ranked list with a tie at the top, and the results behind its leaders.
#[derive(Debug, Clone, PartialEq)]
pub struct Contest {
    pub list: String,
    /// The tied leaders' names, best first.
    pub names: Vec<String>,
    /// Indices into the session's results: the measurements the leaders stand on.
    pub records: Vec<usize>,
}

/// The contests in `outcome`: lists whose rank-1 group holds two or more options
/// standing on two or more distinct measurements of `results` (options that only
/// borrow another's figure, e.g. a TLS 1.2 suite with the same Enc and Mac, are not
/// raced: measuring the same thing again cannot separate them).
pub fn contests(outcome: &Outcome, results: &[ResultRecord]) -> Vec<Contest> {
    let bases: Vec<String> = results.iter().map(ResultRecord::basis).collect();
    let mut out = Vec::new();
    for (_, rankings, _) in &outcome.protocols {
        for ranking in rankings {
            let top: Vec<_> = ranking.ranked.iter().filter(|r| r.rank == 1).collect();
            if top.len() < 2 {
                continue;
            }
            let mut names = Vec::new();
            let mut records = Vec::new();
            for r in top {
                let Some(i) = bases.iter().position(|b| *b == r.basis) else {
                    continue;
                };
                names.push(r.name.clone());
                if !records.contains(&i) {
                    records.push(i);
                }
            }
            if records.len() >= 2 {
                out.push(Contest {
                    list: ranking.list.clone(),
                    names,
                    records,
                });
            }
        }
    }
    out
}

/// What the quick pass ran, so that a contender is measured again the same way.
pub struct Racers<'a> {
    pub tls: Option<&'a tls::LoopbackPlan>,
    /// The SSH plan, its client, and what the quick pass's sweeps learnt of the
    /// target (so the race does not connect and check algorithms again).
    pub ssh: Option<(&'a ssh::SshPlan, &'a Client, &'a ssh::Preflight)>,
}

/// Measures the contenders of `contests` again within `budget` and pools the new
/// samples with their quick figures. Returns how many results were re-measured.
pub fn race(session: &mut Measurements, contests: &[Contest], racers: &Racers, budget: Seconds, quiet: bool) -> Result<usize> {
    let wanted: BTreeSet<usize> = contests.iter().flat_map(|c| c.records.iter().copied()).collect();
    let wanted: Vec<&ResultRecord> = wanted.iter().map(|&i| &session.results()[i]).collect();
    let is_tls = |r: &&&ResultRecord| r.kind.is_tls() && r.kind.is_speed();
    let is_ssh = |r: &&&ResultRecord| r.kind.is_ssh() && r.kind.is_speed();
    let tls_plan = racers
        .tls
        .map(|p| restrict_tls(p, &wanted.iter().filter(is_tls).copied().collect::<Vec<_>>()))
        .filter(|p| !p.items.is_empty());
    let ssh_plan = racers
        .ssh
        .map(|(p, _, _)| restrict_ssh(p, &wanted.iter().filter(is_ssh).copied().collect::<Vec<_>>()))
        .filter(|p| !p.ciphers.is_empty() || p.handshakes);
    // Split the budget by subjects; an SSH subject also pays for its sessions.
    let tls_weight = tls_plan.as_ref().map_or(0.0, |p| p.items.len() as f64);
    let ssh_weight = ssh_plan
        .as_ref()
        .map_or(0.0, |p| 2.0 * (p.bulk_items().len() + p.handshake_items().len()) as f64);
    let total = tls_weight + ssh_weight;
    if total == 0.0 {
        return Ok(0);
    }
    let mut scratch = crate::measure::sink::Measurements::pass(session.settings().clone(), Progress::new(quiet));
    let mut measured: Result<()> = Ok(());
    if let Some(mut p) = tls_plan {
        p.budget = Seconds(budget.0 * tls_weight / total);
        measured = tls::loopback(&p, &mut scratch);
    }
    if let (Ok(()), Some(mut p), Some((_, client, pre))) = (&measured, ssh_plan, racers.ssh) {
        if !crate::interrupt::requested() {
            p.budget = Seconds(budget.0 * ssh_weight / total);
            measured = ssh::sweep_with(&p, client, &mut scratch, &mut pre.clone());
        }
    }
    scratch.progress_finish();
    let replaced = session.fold_in(&scratch.results, crate::measure::sink::Fold::Pool)?;
    measured.map(|()| replaced)
}

/// The loopback plan cut down to the items that made `records`, every companion
/// figure (latency, CPU per GB) included.
fn restrict_tls(plan: &tls::LoopbackPlan, records: &[&ResultRecord]) -> tls::LoopbackPlan {
    let items = plan
        .items
        .iter()
        .filter(|it| {
            let s = it.subject(plan);
            records.iter().any(|r| {
                let mut rs = r.subject.clone();
                rs.mode = None;
                rs == s
            })
        })
        .cloned()
        .collect();
    tls::LoopbackPlan {
        items,
        skipped: Vec::new(),
        threads: plan.threads,
        write_size: plan.write_size,
        volume: plan.volume,
        verify: plan.verify,
        timeout: plan.timeout,
        budget: plan.budget,
        certs: plan.certs.clone(),
    }
}

/// The SSH plan cut down to the ciphers, MACs, kex and host keys of `records`
/// (bulk pairs are crossed again: a few extra pairs at most).
fn restrict_ssh(plan: &ssh::SshPlan, records: &[&ResultRecord]) -> ssh::SshPlan {
    let mut p = plan.clone();
    let collect = |kind: Kind, f: &dyn Fn(&ResultRecord) -> Option<String>| -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for r in records.iter().filter(|r| r.kind == kind) {
            if let Some(x) = f(r) {
                if !v.contains(&x) {
                    v.push(x);
                }
            }
        }
        v
    };
    p.ciphers = collect(Kind::SshBulk, &|r| r.subject.cipher.clone());
    let macs = collect(Kind::SshBulk, &|r| r.subject.mac.clone());
    if !macs.is_empty() {
        p.macs = macs;
    }
    p.kex = collect(Kind::SshHandshake, &|r| r.subject.kex.clone());
    let hostkeys: Vec<Option<String>> = collect(Kind::SshHandshake, &|r| r.subject.hostkey.clone())
        .into_iter()
        .map(Some)
        .collect();
    p.handshakes = !p.kex.is_empty();
    if !hostkeys.is_empty() {
        p.hostkeys = hostkeys;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Summary;
    use crate::model::{Metric, Subject};
    use crate::recommend::rank::{Ranked, Ranking};

    fn rec(suite: &str, values: &[f64]) -> ResultRecord {
        let s = Summary::of(values).unwrap();
        let subject = Subject {
            protocol: Some("TLSv1.3".into()),
            suite: Some(suite.into()),
            ..Default::default()
        };
        ResultRecord::ok(Kind::TlsBulk, subject, Metric::BytesPerSec, &s, None)
    }

    fn ranked(name: &str, rank: usize, basis: String) -> Ranked {
        Ranked {
            name: name.into(),
            rank,
            tied: rank == 1,
            level: crate::judge::Level::Secure,
            median: 1.0,
            ci95_low: 0.9,
            ci95_high: 1.1,
            basis,
            warnings: Vec::new(),
        }
    }

    fn outcome(ranked: Vec<Ranked>) -> Outcome {
        let ranking = Ranking {
            list: "tls13_suites".into(),
            metric: "bytes_per_sec".into(),
            higher_is_better: true,
            ranked,
            unmeasured: Vec::new(),
            order: Vec::new(),
            notes: Vec::new(),
            fastest_refused: None,
            safety_cost: None,
            fastest_insecure: None,
            insecure_cost: None,
        };
        Outcome {
            protocols: vec![(
                "tls".into(),
                vec![ranking],
                crate::recommend::choice::Choice::Tls(Default::default()),
            )],
            recommendations: Vec::new(),
            verdicts: Vec::new(),
        }
    }

    #[test]
    fn tied_leaders_on_distinct_records_make_a_contest() {
        let results = vec![
            rec("A", &[10.0, 10.2, 10.1, 10.3]),
            rec("B", &[10.1, 10.3, 10.2, 10.0]),
            rec("C", &[5.0, 5.1, 5.2, 5.0]),
        ];
        let b = |i: usize| results[i].basis();
        let o = outcome(vec![ranked("B", 1, b(1)), ranked("A", 1, b(0)), ranked("C", 3, b(2))]);
        let c = contests(&o, &results);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].list, "tls13_suites");
        assert_eq!(c[0].names, vec!["B".to_string(), "A".to_string()]);
        assert_eq!(c[0].records, vec![1, 0]);
    }

    #[test]
    fn a_race_plan_holds_exactly_the_contenders() {
        let plan = tls::LoopbackPlan::new(&crate::options::TlsOptions::default(), Seconds(10.0)).unwrap();
        let bulk: Vec<&tls::Item> = plan.items.iter().filter(|i| matches!(i.work, tls::Work::Bulk(_))).collect();
        let hand = plan
            .items
            .iter()
            .find(|i| matches!(i.work, tls::Work::Handshake { resumed: false }))
            .unwrap();
        assert!(bulk.len() >= 3);
        let record = |it: &tls::Item, kind: Kind, mode: Option<&str>| {
            let mut subject = it.subject(&plan);
            subject.mode = mode.map(str::to_string);
            ResultRecord::ok(kind, subject, Metric::BytesPerSec, &Summary::of(&[1.0, 2.0, 3.0]).unwrap(), None)
        };
        // A companion figure (CPU per GB) points at the same item as the throughput.
        let records = [
            record(bulk[0], Kind::TlsBulk, None),
            record(bulk[2], Kind::TlsBulk, Some("client-cpu-per-gb")),
            record(hand, Kind::TlsHandshake, None),
        ];
        let refs: Vec<&ResultRecord> = records.iter().collect();
        let r = restrict_tls(&plan, &refs);
        assert_eq!(r.items.len(), 3);
        assert_eq!(r.items[0].subject(&r), hand.subject(&plan));
        assert!(r.items.iter().any(|i| i.subject(&r) == bulk[0].subject(&plan)));
        assert!(r.items.iter().any(|i| i.subject(&r) == bulk[2].subject(&plan)));
        assert!(!r.items.iter().any(|i| i.subject(&r) == bulk[1].subject(&plan)));
    }

    #[test]
    fn a_clear_leader_or_a_borrowed_figure_is_no_contest() {
        let results = vec![rec("A", &[10.0, 10.2, 10.1, 10.3]), rec("C", &[5.0, 5.1, 5.2, 5.0])];
        let b = |i: usize| results[i].basis();
        // Clear leader.
        let o = outcome(vec![ranked("A", 1, b(0)), ranked("C", 2, b(1))]);
        assert!(contests(&o, &results).is_empty());
        // Two names standing on one measurement (same Enc and Mac).
        let o = outcome(vec![ranked("A", 1, b(0)), ranked("A2", 1, format!("{} (same Enc and Mac)", b(0)))]);
        assert!(contests(&o, &results).is_empty());
        let o = outcome(vec![ranked("A", 1, b(0)), ranked("A2", 1, b(0))]);
        assert!(contests(&o, &results).is_empty());
    }
}
