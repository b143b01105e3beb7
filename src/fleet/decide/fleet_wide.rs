//! The fleet-wide choice: each list keeps the options every class ranked
//! (measured, and accepted by the policy). Bulk lists are ordered to maximise the
//! worst class's throughput relative to its own best; handshake lists (groups,
//! kex, host keys) keep the ranking's order, which follows the grade and
//! post-quantum rules. A list some class measured nothing of holds every option
//! all classes offer and the policy accepts, in the policy's order, and says so.

use super::class::measured_choice;
use super::lines::{common_protocols, emit_lines, host_facts};
use super::{ClassReport, FleetWide, GiveUp};
use crate::judge::Knowledge;
use crate::recommend::rank::Ranking;
use crate::recommend::{self, Outcome};

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
pub(super) fn fleet_wide(classes: &[ClassReport], outcomes: &[Outcome], k: &Knowledge, targets: &[String]) -> FleetWide {
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

#[cfg(test)]
mod tests {
    use super::super::{decide, ClassReport};
    use crate::fleet::decide::tests::class;
    use crate::fleet::merge::Merged;
    use crate::judge::{Knowledge, Policy};

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
}
