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

use super::merge::{higher_is_better, is_speed, ClassAcc, ClassKey, Merged};
use crate::judge::{Knowledge, Policy};
use crate::model::Summary;
use crate::model::{Document, Host, ResultRecord, RunInfo, RunStatus, SCHEMA};
use crate::recommend::choice::{self, Choice, SshChoice, TlsChoice};
use crate::recommend::rank::{Ranked, Ranking};
use crate::recommend::{self, Outcome};
use crate::stats::median;
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

/// The class's pooled document: one record per subject.
pub fn pooled(class: &ClassAcc, id: &str) -> Document {
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

/// Outliers of a class (3 hosts or more).
fn outliers(class: &ClassAcc, hosts: &[String]) -> (Vec<Outlier>, Option<String>) {
    if class.hosts.len() < 3 {
        return (
            Vec::new(),
            Some(format!("{} host(s): outliers need at least 3 to compare with", class.hosts.len())),
        );
    }
    // Per host: ratios (median, low, high) against the class, per subject.
    let mut per_host: BTreeMap<u32, Vec<(f64, f64, f64)>> = BTreeMap::new();
    for acc in class.subjects.values() {
        let t = &acc.template;
        if !is_speed(t.kind, t.metric) || acc.figs.len() < 3 {
            continue;
        }
        let up = higher_is_better(t.metric);
        let mut meds: Vec<f64> = acc.figs.iter().map(|f| f.median).collect();
        let reference = median(&mut meds);
        if reference <= 0.0 {
            continue;
        }
        for f in &acc.figs {
            let r = |x: f64| {
                if up {
                    x / reference
                } else if x > 0.0 {
                    reference / x
                } else {
                    f64::NAN
                }
            };
            // For lower-is-better figures the high bound is the slow end.
            let (lo, hi) = if up { (r(f.low), r(f.high)) } else { (r(f.high), r(f.low)) };
            let m = r(f.median);
            if m.is_finite() && lo.is_finite() && hi.is_finite() {
                per_host.entry(f.host).or_default().push((m, lo, hi));
            }
        }
    }
    // A typical host's interval, in ratios: the median of every host's median low and high.
    let mut lows = Vec::new();
    let mut highs = Vec::new();
    let mut scores = BTreeMap::new();
    for (h, v) in &per_host {
        let m = median(&mut v.iter().map(|x| x.0).collect::<Vec<_>>());
        let lo = median(&mut v.iter().map(|x| x.1).collect::<Vec<_>>());
        let hi = median(&mut v.iter().map(|x| x.2).collect::<Vec<_>>());
        lows.push(lo);
        highs.push(hi);
        scores.insert(*h, (m, lo, hi));
    }
    if lows.is_empty() {
        return (Vec::new(), Some("no speed figure measured by 3 hosts or more".into()));
    }
    let typical_low = median(&mut lows);
    let mut out = Vec::new();
    for (h, (m, _lo, hi)) in scores {
        let v = &per_host[&h];
        let beyond = v.iter().filter(|x| x.2 < typical_low).count();
        if m <= 0.9 && hi < typical_low && beyond * 2 >= v.len() {
            out.push(Outlier {
                host: hosts[h as usize].clone(),
                relative_speed: m,
                slower_beyond_intervals: beyond,
                compared: v.len(),
            });
        }
    }
    out.sort_by(|a, b| a.host.cmp(&b.host));
    (out, None)
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
fn class_report(
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
        let (r, o) = class_report(
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
    let fleet = fleet_wide(&classes, &outcomes, knowledge, targets);
    Decided { classes, fleet }
}

/// A ranking's configured order, measured options only.
fn measured_choice(r: &Ranking) -> Vec<String> {
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

/// How close to a class's own best an option comes (1 = as fast; 0 = not ranked).
fn ratio(r: &Ranking, name: &str) -> f64 {
    let (Some(best), Some(x)) = (r.ranked.first(), r.ranked.iter().find(|x| x.name == name)) else {
        return 0.0;
    };
    if x.rank == 1 {
        return 1.0;
    }
    if r.higher_is_better {
        if best.median > 0.0 {
            x.median / best.median
        } else {
            0.0
        }
    } else if x.median > 0.0 {
        best.median / x.median
    } else {
        0.0
    }
}

/// The fleet's order of the options every class measured: for bulk speed,
/// greedily the option with the best worst-class ratio next; within 3% of it,
/// the reference order decides (the instrument cannot order them). Otherwise
/// the reference order as it is.
fn fleet_order(measured: &[&Ranking], common: Vec<String>) -> Vec<String> {
    if measured[0].metric != "bytes_per_sec" {
        return common;
    }
    let worst = |n: &String| measured.iter().map(|r| ratio(r, n)).fold(f64::INFINITY, f64::min);
    let mut left = common;
    let mut out = Vec::new();
    while !left.is_empty() {
        let top = left.iter().map(worst).fold(f64::NEG_INFINITY, f64::max);
        let i = left.iter().position(|n| worst(n) >= top - 0.03).expect("one is the max");
        out.push(left.remove(i));
    }
    out
}

/// The config every class can take, what each class gives up for it, and notes
/// on lists left out.
fn fleet_wide(classes: &[ClassReport], outcomes: &[Outcome], k: &Knowledge, targets: &[String]) -> FleetWide {
    let mut fleet = FleetWide::default();
    if classes.is_empty() {
        return fleet;
    }
    let lists = [
        "tls13_suites",
        "tls12_suites",
        "groups",
        "ssh_ciphers",
        "ssh_macs",
        "ssh_kex",
        "ssh_hostkeys",
    ];
    for list in lists {
        let per_class: Vec<Option<&Ranking>> = classes.iter().map(|c| c.rankings.iter().find(|r| r.list == list)).collect();
        let measured: Vec<&Ranking> = per_class.iter().flatten().copied().filter(|r| !r.ranked.is_empty()).collect();
        if measured.len() < classes.len() {
            let missing: Vec<&str> = classes
                .iter()
                .zip(&per_class)
                .filter(|(_, r)| r.is_none_or(|r| r.ranked.is_empty()))
                .map(|(c, _)| c.id.as_str())
                .collect();
            let title = recommend::list_title(list);
            // Without every class's figures nothing orders the list for the fleet,
            // but the policy still holds: every option each class's hosts offer and
            // the policy accepts, in the policy's order (as a class that measured
            // none lists them). Only a class with no list at all (nothing known of
            // what its hosts offer) leaves it out.
            let all: Option<Vec<&Ranking>> = per_class.iter().copied().collect();
            let Some(all) = all else {
                if !measured.is_empty() {
                    fleet.notes.push(format!(
                        "{title}: left out, {} did not measure it and stored no list of it",
                        missing.join(", ")
                    ));
                }
                continue;
            };
            let Some(by_policy) = all.iter().find(|r| r.ranked.is_empty()) else {
                continue;
            };
            let common: Vec<String> = by_policy
                .choice()
                .into_iter()
                .filter(|n| all.iter().all(|r| r.choice().contains(n)))
                .collect();
            if common.is_empty() {
                if all.iter().any(|r| !r.choice().is_empty()) {
                    fleet
                        .notes
                        .push(format!("{title}: left out, no option is offered and accepted in every class"));
                }
                continue;
            }
            fleet.notes.push(format!(
                "{title}: not measured by {}; every option all classes offer and the policy accepts, ordered by the policy",
                missing.join(", ")
            ));
            fleet.unmeasured.push(list.to_string());
            fleet.choice.insert(list.to_string(), common);
            continue;
        }
        // Options every class measured and the policy accepts, in the first class's order.
        let common: Vec<String> = measured_choice(measured[0])
            .into_iter()
            .filter(|n| measured.iter().all(|r| r.ranked.iter().any(|x| &x.name == n)))
            .collect();
        if common.is_empty() {
            fleet.notes.push(format!(
                "{}: no option is measured and accepted in every class",
                recommend::list_title(list)
            ));
            continue;
        }
        let ordered = fleet_order(&measured, common);
        let first = ordered[0].clone();
        for (c, r) in classes.iter().zip(&measured) {
            let own = r.ranked[0].name.clone();
            let x = ratio(r, &first);
            fleet.gives_up.push(GiveUp {
                class: c.id.clone(),
                list: list.to_string(),
                own_best: own,
                fleet_choice: first.clone(),
                loss: (1.0 - x).max(0.0),
                tied: x >= 1.0,
            });
        }
        fleet.choice.insert(list.to_string(), ordered);
    }
    let protocols = common_protocols(outcomes);
    fleet.lines = emit_lines(&fleet.choice, &fleet.unmeasured, &protocols, &host_facts(outcomes), k, targets);
    fleet
}

/// TLS protocols every class's choice has.
fn common_protocols(outcomes: &[Outcome]) -> Vec<String> {
    let mut protocols: Option<Vec<String>> = None;
    for o in outcomes {
        for (_, _, c) in &o.protocols {
            if let Choice::Tls(t) = c {
                protocols = Some(match protocols {
                    None => t.protocols.clone(),
                    Some(p) => p.into_iter().filter(|x| t.protocols.contains(x)).collect(),
                });
            }
        }
    }
    protocols.unwrap_or_default()
}

/// What the emitters need about the hosts besides the lists, common to every
/// class's choice: tiered groups only where every OpenSSL takes them, GnuTLS
/// groups and sshd defaults every host has (not known when one class's are not).
#[derive(Default)]
struct HostFacts {
    tiers: bool,
    gnutls_groups: Option<Vec<String>>,
    sshd_defaults: Option<choice::SshLists>,
    /// Why `sshd_defaults` is `None`: a host whose sshd's defaults were not read.
    sshd_defaults_unread: Option<String>,
    beyond_defaults: bool,
}

fn host_facts(outcomes: &[Outcome]) -> HostFacts {
    let both = |a: Vec<String>, b: &[String]| -> Vec<String> { a.into_iter().filter(|x| b.contains(x)).collect() };
    let (mut tls, mut ssh) = (Vec::new(), Vec::new());
    for (_, _, c) in outcomes.iter().flat_map(|o| o.protocols.iter()) {
        match c {
            Choice::Tls(t) => tls.push(t),
            Choice::Ssh(s) => ssh.push(s),
        }
    }
    let gnutls_groups = tls
        .iter()
        .try_fold(None, |acc: Option<Vec<String>>, t| {
            let g = t.gnutls_groups.clone()?;
            Some(Some(match acc {
                None => g,
                Some(a) => both(a, &g),
            }))
        })
        .flatten();
    let sshd_defaults = ssh
        .iter()
        .try_fold(None, |acc: Option<choice::SshLists>, s| {
            let d = s.server_defaults.clone()?;
            Some(Some(match acc {
                None => d,
                Some(a) => choice::SshLists {
                    ciphers: both(a.ciphers, &d.ciphers),
                    macs: both(a.macs, &d.macs),
                    kex: both(a.kex, &d.kex),
                    hostkeys: both(a.hostkeys, &d.hostkeys),
                },
            }))
        })
        .flatten();
    let sshd_defaults_unread = sshd_defaults.is_none().then(|| {
        let one = ssh.iter().find(|s| s.server_defaults.is_none());
        let why = one
            .and_then(|s| s.server_defaults_unread.clone())
            .unwrap_or_else(|| "its run did not record why".into());
        format!("not read on every host: {why}")
    });
    HostFacts {
        tiers: !tls.is_empty() && tls.iter().all(|t| t.tiers),
        gnutls_groups,
        sshd_defaults,
        sshd_defaults_unread,
        beyond_defaults: ssh.iter().any(|s| s.beyond_defaults),
    }
}

/// Config lines from per-list choices, through the same emitters as a single run.
/// A list that is empty is left out of the lines (the software keeps its default);
/// a TLS protocol without suites is left out too. The SSH lines of the lists in
/// `unmeasured` (list ids, `ssh_macs`) say they were not measured and follow the
/// policy's order ([`choice::unmeasured_note`]).
fn emit_lines(
    lists: &BTreeMap<String, Vec<String>>,
    unmeasured: &[String],
    protocols: &[String],
    facts: &HostFacts,
    k: &Knowledge,
    targets: &[String],
) -> Vec<Lines> {
    let get = |l: &str| lists.get(l).cloned().unwrap_or_default();
    let mut choices = Vec::new();
    let tls13 = get("tls13_suites");
    let tls12 = get("tls12_suites");
    if !tls13.is_empty() || !tls12.is_empty() {
        let names =
            |v: &[String]| -> Vec<choice::SuiteNames> { v.iter().filter_map(|n| k.tls_suite(n)).map(recommend::suite_names).collect() };
        let mut t12 = names(&tls12);
        // As a single run does: ≤1.2 suites grouped by Kx/Au, each group in order.
        let mut kinds: Vec<(String, String)> = Vec::new();
        for s in &t12 {
            if !kinds.contains(&(s.kx.clone(), s.au.clone())) {
                kinds.push((s.kx.clone(), s.au.clone()));
            }
        }
        t12.sort_by_key(|s| kinds.iter().position(|x| *x == (s.kx.clone(), s.au.clone())));
        let mut protocols = protocols.to_vec();
        protocols.retain(|p| if p == "TLSv1.3" { !tls13.is_empty() } else { !t12.is_empty() });
        let groups = get("groups")
            .iter()
            .filter_map(|n| k.group(n))
            .map(recommend::group_names)
            .collect();
        choices.push(Choice::Tls(TlsChoice {
            protocols,
            tls13: names(&tls13),
            tls12: t12,
            groups,
            tiers: facts.tiers,
            gnutls_groups: facts.gnutls_groups.clone(),
            // Not merged: the class's line is always written out.
            default_groups: None,
        }));
    }
    let ssh = SshChoice {
        ciphers: get("ssh_ciphers"),
        macs: get("ssh_macs"),
        kex: get("ssh_kex"),
        hostkeys: get("ssh_hostkeys"),
        // The hosts' own keys are not in the merge: sshd keeps its default host-key
        // list (every key it has), and apply.yml checks any such line per host.
        server_hostkeys: None,
        server_hostkeys_unread: Some(crate::fleet::caps::PER_HOST_KEYS.to_string()),
        server_defaults: facts.sshd_defaults.clone(),
        server_defaults_unread: facts.sshd_defaults_unread.clone(),
        beyond_defaults: facts.beyond_defaults,
        unmeasured: [
            ("ssh_ciphers", "Ciphers"),
            ("ssh_macs", "MACs"),
            ("ssh_kex", "KexAlgorithms"),
            ("ssh_hostkeys", "HostKeyAlgorithms"),
        ]
        .into_iter()
        .filter(|(l, _)| unmeasured.iter().any(|u| u == l))
        .map(|(_, d)| d.to_string())
        .collect(),
    };
    // Every list empty (no host of the class stored its OpenSSH lists and none
    // measured SSH: nothing is known to offer): no SSH lines.
    if [&ssh.ciphers, &ssh.macs, &ssh.kex, &ssh.hostkeys].iter().any(|l| !l.is_empty()) {
        choices.push(Choice::Ssh(ssh));
    }
    let mut out = Vec::new();
    for choice in &choices {
        for e in crate::software::lines(choice, targets) {
            out.push(Lines {
                target: e.target.into(),
                location: e.location.into(),
                lines: e.lines,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::merge::{Fig, SubjectAcc};
    use crate::model::{Kind, Metric, Subject};
    use std::collections::HashMap;

    fn prim(alg: &str) -> ResultRecord {
        let s = Summary {
            median: 1.0,
            mean: 1.0,
            min: 1.0,
            max: 1.0,
            ci95_low: 1.0,
            ci95_high: 1.0,
            samples: 10,
            cv: 0.01,
        };
        let subject = Subject {
            algorithm: Some(alg.into()),
            op: Some("encrypt".into()),
            bytes: Some(16384),
            library: Some("openssl".into()),
            ..Default::default()
        };
        ResultRecord::ok(Kind::Primitive, subject, Metric::BytesPerSec, &s, None)
    }

    /// A class whose hosts measured `algs` at `rate(alg, host)` (±2% intervals).
    fn class(name: &str, hosts: u32, first: u32, algs: &[&str], rate: impl Fn(&str, u32) -> f64) -> ClassAcc {
        let mut subjects = HashMap::new();
        for a in algs {
            let t = prim(a);
            let figs = (first..first + hosts)
                .map(|h| {
                    let m = rate(a, h);
                    Fig {
                        host: h,
                        median: m,
                        low: m * 0.98,
                        high: m * 1.02,
                    }
                })
                .collect();
            subjects.insert(
                crate::fleet::merge::subject_key(&t),
                SubjectAcc {
                    template: t,
                    figs,
                    samples: 10 * hosts as usize,
                },
            );
        }
        ClassAcc {
            key: ClassKey {
                arch: "x86_64".into(),
                cpu_model: name.into(),
                cpu_flags: vec![],
                libraries: [("openssl", "o"), ("gnutls", "g")]
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .into(),
                openssh: "s".into(),
            },
            hosts: (first..first + hosts).collect(),
            subjects,
            capabilities: None,
        }
    }

    #[test]
    fn a_host_slower_beyond_the_intervals_is_named_and_no_other() {
        let algs = ["aes-128-gcm", "aes-256-gcm", "chacha20-poly1305", "sha256", "hmac-sha256"];
        let names: Vec<String> = (0..6).map(|h| format!("h{h}")).collect();
        // Hosts jitter by ±1.5%; h4 runs at 0.6x.
        let c = class("x", 6, 0, &algs, |_, h| {
            if h == 4 {
                0.6e9
            } else {
                1.0e9 * (1.0 + 0.005 * (h as f64 - 2.5))
            }
        });
        let (o, note) = outliers(&c, &names);
        assert!(note.is_none());
        assert_eq!(o.iter().map(|x| x.host.as_str()).collect::<Vec<_>>(), ["h4"]);
        assert!((o[0].relative_speed - 0.6).abs() < 0.02, "{}", o[0].relative_speed);
        // 8% slower is inside the practical threshold: not named.
        let c = class("x", 6, 0, &algs, |_, h| if h == 4 { 0.92e9 } else { 1.0e9 });
        assert!(outliers(&c, &names).0.is_empty());
        // Two hosts: nothing to compare with.
        let c = class("x", 2, 0, &algs, |_, h| if h == 1 { 0.5e9 } else { 1.0e9 });
        let (o, note) = outliers(&c, &names);
        assert!(o.is_empty() && note.is_some());
    }

    #[test]
    fn the_fleet_config_serves_the_worst_class_and_passes_the_policy() {
        let k = Knowledge::builtin().unwrap();
        let p = Policy::builtin("intermediate").unwrap();
        let algs = ["aes-128-gcm", "aes-256-gcm", "chacha20-poly1305"];
        let aes = class("aes", 3, 0, &algs, |a, _| match a {
            "aes-128-gcm" => 5.0e9,
            "aes-256-gcm" => 4.5e9,
            _ => 3.0e9,
        });
        let soft = class("soft", 1, 3, &algs, |a, _| if a.starts_with("aes") { 0.3e9 } else { 2.5e9 });
        let merged = Merged {
            hosts: (0..4).map(|h| format!("h{h}")).collect(),
            classes: vec![aes, soft],
            problems: vec![],
            class_of: vec![0, 0, 0, 1],
            findings: Default::default(),
            runs: Default::default(),
        };
        let d = decide(&merged, &k, &p, &["nginx".to_string()]);
        let lead = |c: &ClassReport| c.answer.iter().find(|a| a.list == "tls13_suites").unwrap().leaders.clone();
        assert_eq!(lead(&d.classes[0]), ["TLS_AES_128_GCM_SHA256"]);
        let spread = d.classes[0]
            .spread
            .iter()
            .find(|s| s.list == "tls13_suites")
            .expect("spread of the leader");
        assert_eq!((spread.hosts, spread.option.as_str()), (3, "TLS_AES_128_GCM_SHA256"));
        assert_eq!(lead(&d.classes[1]), ["TLS_CHACHA20_POLY1305_SHA256"]);
        let t13 = &d.fleet.choice["tls13_suites"];
        assert_eq!(t13[0], "TLS_CHACHA20_POLY1305_SHA256", "the worst class's best first: {t13:?}");
        let give = |c: &str| {
            d.fleet
                .gives_up
                .iter()
                .find(|g| g.class == c && g.list == "tls13_suites")
                .unwrap()
                .clone()
        };
        assert!(give("class-2").tied);
        let g1 = give("class-1");
        assert!(!g1.tied && (g1.loss - 0.4).abs() < 0.01, "{g1:?}");
        for (list, names) in &d.fleet.choice {
            let domain = match list.as_str() {
                "tls13_suites" => crate::judge::Domain::Tls13Suite,
                "tls12_suites" => crate::judge::Domain::Tls12Suite,
                "groups" => crate::judge::Domain::Group,
                _ => continue,
            };
            for n in names {
                assert!(p.allows(&k.judge(domain, n)).allowed, "{list} {n}");
            }
        }
        let nginx = d.fleet.lines.iter().find(|l| l.target == "nginx").unwrap();
        assert!(
            nginx
                .lines
                .iter()
                .any(|l| l.contains("TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256")),
            "{:?}",
            nginx.lines
        );
    }

    /// OpenSSH 9.2's client lists and sshd defaults (Debian 12), as an export stores them.
    fn openssh_caps() -> crate::model::Capabilities {
        let v = |l: &str| l.split(',').map(str::to_string).collect::<Vec<_>>();
        let ciphers = v("chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-gcm@openssh.com");
        let macs = v("umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-sha1-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,hmac-sha2-256,hmac-sha2-512,hmac-sha1");
        let kex = v("sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-group14-sha256");
        let hostkeys = v("ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256");
        crate::model::Capabilities {
            openssh: Some(crate::model::OpenSshCapabilities {
                version: "OpenSSH_9.2p1".into(),
                ciphers: ciphers.clone(),
                macs: macs.clone(),
                kex: kex.clone(),
                hostkey_algorithms: hostkeys.clone(),
            }),
            sshd_defaults: Some(crate::model::SshLists {
                ciphers,
                macs,
                kex,
                hostkeys,
            }),
            ..Default::default()
        }
    }

    /// A class whose hosts measured SSH sessions of AEAD ciphers only (no MAC), and
    /// whose exports stored their OpenSSH lists.
    fn ssh_class(name: &str, first: u32, macs: &[&str]) -> ClassAcc {
        let mut c = class(name, 2, first, &[], |_, _| 0.0);
        let s = Summary {
            median: 4.0e8,
            mean: 4.0e8,
            min: 3.9e8,
            max: 4.1e8,
            ci95_low: 3.9e8,
            ci95_high: 4.1e8,
            samples: 10,
            cv: 0.01,
        };
        let sessions = [("chacha20-poly1305@openssh.com", None)]
            .into_iter()
            .chain(macs.iter().map(|m| ("aes128-ctr", Some(*m))));
        for (cipher, mac) in sessions {
            let subject = Subject {
                cipher: Some(cipher.into()),
                mac: mac.map(str::to_string),
                ..Default::default()
            };
            let t = ResultRecord::ok(Kind::SshBulk, subject, Metric::BytesPerSec, &s, None);
            let figs = (first..first + 2)
                .map(|h| Fig {
                    host: h,
                    median: 4.0e8,
                    low: 3.9e8,
                    high: 4.1e8,
                })
                .collect();
            c.subjects.insert(
                crate::fleet::merge::subject_key(&t),
                SubjectAcc {
                    template: t,
                    figs,
                    samples: 20,
                },
            );
        }
        c.capabilities = Some(openssh_caps());
        c
    }

    fn directive<'a>(lines: &'a [String], key: &str) -> Option<(usize, Vec<&'a str>)> {
        let at = lines.iter().position(|l| l.trim().starts_with(&format!("{key} ")))?;
        Some((at, lines[at].trim()[key.len() + 1..].split(',').collect()))
    }

    /// A class with a host whose sshd's defaults were not read: no sshd list for
    /// that class nor fleet-wide (one could go beyond that host's defaults), and
    /// the comment gives the cause its export recorded; the class that has them
    /// keeps its lines, with host keys left out as per host.
    #[test]
    fn a_host_without_sshd_defaults_gets_no_sshd_list_and_its_cause() {
        let k = Knowledge::builtin().unwrap();
        let p = Policy::builtin("intermediate").unwrap();
        let why = "`sshd -T` refused (it said: Missing privilege separation directory: /run/sshd)";
        let mut unread = ssh_class("unread", 0, &["hmac-sha2-256-etm@openssh.com"]);
        let caps = unread.capabilities.as_mut().unwrap();
        caps.sshd_defaults = None;
        caps.sshd_defaults_unread = Some(why.into());
        let merged = Merged {
            hosts: (0..4).map(|h| format!("h{h}")).collect(),
            classes: vec![unread, ssh_class("read", 2, &["hmac-sha2-256-etm@openssh.com"])],
            problems: vec![],
            class_of: vec![0, 0, 1, 1],
            findings: Default::default(),
            runs: Default::default(),
        };
        let d = decide(&merged, &k, &p, &["sshd".to_string()]);
        let sshd_of = |c: &ClassReport| c.lines.iter().find(|l| l.target == "sshd").unwrap().lines.clone();
        let c = d.classes.iter().find(|c| c.label.contains("unread")).unwrap();
        for lines in [sshd_of(c), d.fleet.lines.iter().find(|l| l.target == "sshd").unwrap().lines.clone()] {
            assert!(lines.iter().all(|l| l.starts_with('#')), "{lines:#?}");
            assert!(lines.iter().any(|l| l.contains(why)), "{lines:#?}");
        }
        let read = sshd_of(d.classes.iter().find(|c| !c.label.contains("unread")).unwrap());
        assert!(directive(&read, "Ciphers").is_some(), "{read:#?}");
        assert!(
            read.iter()
                .any(|l| l.starts_with("# HostKeyAlgorithms left out") && l.contains(crate::fleet::caps::PER_HOST_KEYS)),
            "{read:#?}"
        );
    }

    #[test]
    fn a_class_that_measured_no_mac_still_gets_the_policys_macs_and_says_so() {
        let k = Knowledge::builtin().unwrap();
        let p = Policy::builtin("intermediate").unwrap();
        let merged = Merged {
            hosts: (0..4).map(|h| format!("h{h}")).collect(),
            classes: vec![ssh_class("no-mac", 0, &[]), ssh_class("mac", 2, &["hmac-sha2-256-etm@openssh.com"])],
            problems: vec![],
            class_of: vec![0, 0, 1, 1],
            findings: Default::default(),
            runs: Default::default(),
        };
        let d = decide(&merged, &k, &p, &["sshd".to_string(), "ssh".to_string()]);
        let c = d.classes.iter().find(|c| c.label.contains("no-mac")).unwrap();
        assert_eq!(c.unmeasured, ["ssh_macs", "ssh_kex", "ssh_hostkeys"], "{:?}", c.rankings);
        let sshd = &c.lines.iter().find(|l| l.target == "sshd").expect("sshd lines").lines;
        let (at, macs) = directive(sshd, "MACs").unwrap_or_else(|| panic!("no MACs line: {sshd:#?}"));
        assert_eq!(sshd[at - 1], "# MACs: not measured in this run; ordered by the policy");
        // Every MAC the hosts offer that the policy accepts, in the policy's order:
        // none of sshd's refused defaults (umac-64, hmac-sha1).
        let offered = openssh_caps().openssh.unwrap().macs;
        let allowed: Vec<&str> = offered
            .iter()
            .map(String::as_str)
            .filter(|m| p.allows(&k.judge(crate::judge::Domain::SshMac, m)).allowed)
            .collect();
        assert!(allowed.len() >= 4 && allowed.len() < 10, "{allowed:?}");
        let mut sorted = macs.clone();
        sorted.sort();
        let mut want = allowed.clone();
        want.sort();
        assert_eq!(sorted, want, "{sshd:#?}");
        for m in &macs {
            assert!(p.allows(&k.judge(crate::judge::Domain::SshMac, m)).allowed, "{m}");
        }
        // The measured cipher list is the measured one, not called unmeasured.
        let (at, ciphers) = directive(sshd, "Ciphers").unwrap();
        assert_eq!(ciphers, ["chacha20-poly1305@openssh.com"]);
        assert!(at == 0 || !sshd[at - 1].contains("not measured"), "{sshd:#?}");
        // The client's block too.
        let ssh = &c.lines.iter().find(|l| l.target == "ssh").expect("ssh lines").lines;
        let (at, client_macs) = directive(ssh, "MACs").unwrap_or_else(|| panic!("{ssh:#?}"));
        assert_eq!(ssh[at - 1].trim(), "# MACs: not measured in this run; ordered by the policy");
        assert_eq!(client_macs, macs);
        // The class that measured its MAC keeps only it, with no note.
        let other = d.classes.iter().find(|c| !c.label.contains("no-mac")).unwrap();
        assert!(!other.unmeasured.contains(&"ssh_macs".to_string()), "{:?}", other.unmeasured);
        let sshd2 = &other.lines.iter().find(|l| l.target == "sshd").unwrap().lines;
        assert_eq!(directive(sshd2, "MACs").unwrap().1, ["hmac-sha2-256-etm@openssh.com"]);
        // Fleet-wide: not every class measured MACs, so the policy orders them,
        // and the line says so.
        assert!(d.fleet.unmeasured.contains(&"ssh_macs".to_string()), "{:?}", d.fleet.notes);
        let fleet = &d.fleet.lines.iter().find(|l| l.target == "sshd").unwrap().lines;
        let (at, fm) = directive(fleet, "MACs").unwrap_or_else(|| panic!("{fleet:#?}"));
        assert_eq!(fleet[at - 1], "# MACs: not measured in this run; ordered by the policy");
        assert_eq!(fm, macs);
        assert!(
            d.fleet.notes.iter().any(|n| n.contains("ordered by the policy")),
            "{:?}",
            d.fleet.notes
        );
    }
}
