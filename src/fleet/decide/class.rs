//! One class's answer: its hosts' figures pooled into one document, that document
//! through the same `recommend` as a single run, each list's leaders and their
//! spread over the hosts, the class's lists and its lines.

use super::lines::{common_protocols, emit_lines, host_facts};
use super::outliers::outliers;
use super::{ClassReport, Leaders, Spread};
use crate::fleet::merge::ClassAcc;
use crate::judge::{Knowledge, Policy};
use crate::model::{Document, Host, ResultRecord, RunInfo, RunStatus, Summary, SCHEMA};
use crate::recommend::rank::{Ranked, Ranking};
use crate::recommend::{self, Outcome};
use crate::stats::median;
use std::collections::BTreeMap;

/// The class's pooled document: one record per subject.
fn pooled(class: &ClassAcc, id: &str) -> Document {
    let mut results = Vec::with_capacity(class.subjects.len());
    let mut keys: Vec<&String> = class.subjects.keys().collect();
    keys.sort();
    for k in keys {
        let acc = &class.subjects[k];
        let medians: Vec<f64> = acc.figs.iter().map(|f| f.median).collect();
        let Some(s) = Summary::of(&medians) else { continue };
        let typical_low = median(&mut acc.figs.iter().map(|f| f.low).collect::<Vec<_>>());
        let typical_high = median(&mut acc.figs.iter().map(|f| f.high).collect::<Vec<_>>());
        let pooled = Summary {
            ci95_low: s.ci95_low.min(typical_low),
            ci95_high: s.ci95_high.max(typical_high),
            samples: acc.samples.max(s.samples),
            ..s
        };
        let t = &acc.template;
        results.push(ResultRecord::ok(t.kind, t.subject.clone(), t.metric, &pooled, None));
    }
    Document {
        schema: SCHEMA.to_string(),
        run: RunInfo {
            id: id.to_string(),
            started_at: String::new(),
            finished_at: None,
            status: RunStatus::Complete,
            command: "fleet".into(),
            host: Host {
                cpu_model: class.key.cpu_model.clone(),
                cores: 0,
                cpu_flags: class.key.cpu_flags.clone(),
                kernel: String::new(),
                arch: class.key.arch.clone(),
                hostname: id.to_string(),
            },
            libraries: BTreeMap::new(),
            settings: serde_json::json!({}),
            // What every host of the class has: its answer keeps what they offer
            // (post-quantum groups) whatever machine merges.
            capabilities: class.capabilities.clone().unwrap_or_default(),
        },
        results,
        verdicts: Vec::new(),
        recommendations: Vec::new(),
    }
}

/// Each measured list's leaders and their median.
fn leaders(rankings: &[Ranking]) -> Vec<Leaders> {
    rankings
        .iter()
        .filter(|r| !r.ranked.is_empty())
        .map(|r| Leaders {
            list: r.list.clone(),
            metric: r.metric.clone(),
            leaders: r.ranked.iter().filter(|x| x.rank == 1).map(|x| x.name.clone()).collect(),
            median: r.ranked[0].median,
        })
        .collect()
}

/// Spread of each list's leader over the class's hosts.
fn spreads(class: &ClassAcc, rankings: &[Ranking]) -> Vec<Spread> {
    let mut spread = Vec::new();
    for r in rankings.iter().filter(|r| !r.ranked.is_empty()) {
        let leader = &r.ranked[0];
        let mut figs = leader_figures(class, r, leader);
        let hosts_n = figs.len();
        if figs.is_empty() {
            continue;
        }
        let min = figs.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = figs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        spread.push(Spread {
            list: r.list.clone(),
            option: leader.name.clone(),
            metric: r.metric.clone(),
            hosts: hosts_n,
            min,
            median: median(&mut figs),
            max,
        });
    }
    spread
}

/// The per-host figures of a list's leader: its basis names the subject it was
/// measured as. Empty when no subject of the class matches.
fn leader_figures(class: &ClassAcc, r: &Ranking, leader: &Ranked) -> Vec<f64> {
    for acc in class.subjects.values() {
        let t = &acc.template;
        let label = crate::model::subject_label(t);
        let metric = serde_json::to_value(t.metric).ok();
        let same_metric = metric.as_ref().and_then(|m| m.as_str()) == Some(r.metric.as_str());
        // A figure from a primitive reads `ALG OP at N B` (recommend's basis).
        let primitive = t.kind == crate::model::Kind::Primitive
            && t.subject.library.as_deref().is_none_or(|l| l == "openssl")
            && t.subject.threads.unwrap_or(1) == 1
            && leader.basis
                == format!(
                    "{} {} at {} B",
                    t.subject.algorithm.as_deref().unwrap_or(""),
                    t.subject.op.as_deref().unwrap_or(""),
                    t.subject.bytes.unwrap_or(0)
                );
        if (primitive || leader.basis.ends_with(&label)) && same_metric {
            return acc.figs.iter().map(|f| f.median).collect();
        }
    }
    Vec::new()
}

/// The answer, lines and spread of one class.
pub(super) fn class_report(
    class: &ClassAcc,
    id: String,
    hosts: &[String],
    knowledge: &Knowledge,
    policy: &Policy,
    targets: &[String],
) -> (ClassReport, Outcome) {
    let doc = pooled(class, &id);
    let outcome = recommend::recommend(&doc, knowledge, policy, &crate::software::emitters(targets));
    let rankings: Vec<Ranking> = outcome.protocols.iter().flat_map(|(_, r, _)| r.clone()).collect();
    let answer = leaders(&rankings);
    // A measured list holds only what the class measured (in the ranking's own
    // order, which follows the grade and post-quantum rules). A list the class
    // measured nothing of still holds to the policy: every option all its hosts
    // offer (the pooled document carries what every host stored) that the policy
    // accepts, in the policy's order, and said so; leaving it out would leave the
    // software's defaults (sshd's umac-64, hmac-sha1). Either way an option only
    // the merging machine lists is never written to a host.
    let lists: BTreeMap<String, Vec<String>> = rankings.iter().map(|r| (r.list.clone(), class_choice(r))).collect();
    let unmeasured: Vec<String> = rankings
        .iter()
        .filter(|r| r.ranked.is_empty() && !r.choice().is_empty())
        .map(|r| r.list.clone())
        .collect();
    let one = std::slice::from_ref(&outcome);
    let lines = emit_lines(&lists, &unmeasured, &common_protocols(one), &host_facts(one), knowledge, targets);
    let spread = spreads(class, &rankings);
    let (outliers, outlier_note) = outliers(class, hosts);
    let mut names: Vec<String> = class.hosts.iter().map(|h| hosts[*h as usize].clone()).collect();
    names.sort();
    (
        ClassReport {
            id,
            label: class.key.label(),
            key: class.key.clone(),
            hosts: names,
            answer,
            lines,
            rankings,
            spread,
            outliers,
            unmeasured,
            outlier_note,
        },
        outcome,
    )
}

/// A ranking's configured order, measured options only.
pub(super) fn measured_choice(r: &Ranking) -> Vec<String> {
    r.choice().into_iter().filter(|n| r.ranked.iter().any(|x| &x.name == n)).collect()
}

/// A class's list: its measured options in the ranking's order; when it measured
/// none, every option its hosts offer that the policy accepts, in the policy's order.
fn class_choice(r: &Ranking) -> Vec<String> {
    if r.ranked.is_empty() {
        r.choice()
    } else {
        measured_choice(r)
    }
}
