//! The policy's order of candidates, and where the ordering rule puts an option
//! before speed (post-quantum first, what an auditor fails last).

use super::rank::Tier;
use crate::judge::{Domain, GroupKind, Knowledge, Level, Policy, Verdict};

/// Candidates in preference order: the policy's `only` list first (it encodes the
/// source's own order), then the rest in knowledge-base order.
pub(super) fn ordered<'a, T>(items: Vec<&'a T>, policy: &Policy, domain: Domain, names: impl Fn(&T) -> Vec<&str>) -> Vec<&'a T> {
    let only = policy.rules(domain).only.clone().unwrap_or_default();
    let pos = |t: &T| {
        only.iter()
            .position(|o| names(t).iter().any(|n| n.eq_ignore_ascii_case(o)))
            .unwrap_or(usize::MAX)
    };
    let mut v: Vec<(usize, usize, &T)> = items.into_iter().enumerate().map(|(i, t)| (pos(t), i, t)).collect();
    v.sort_by_key(|(p, i, _)| (*p, *i));
    v.into_iter().map(|(_, _, t)| t).collect()
}

/// Where the ordering rule puts an option before speed: hybrid post-quantum key
/// exchange first, options a current auditor fails (while our level and the
/// policy allow them) last.
pub fn tier(k: &Knowledge, v: &Verdict) -> Tier {
    let name = v.subject.name.as_str();
    let pq = match v.subject.domain {
        Domain::SshKex => k.ssh_kex(name).is_some_and(|x| x.method == crate::judge::KexMethod::HybridPq),
        Domain::Group => k.group(name).is_some_and(|g| g.kind == GroupKind::HybridPq),
        _ => false,
    };
    if pq {
        Tier::PostQuantum
    } else if v.level >= Level::Secure && v.opinions.iter().any(|o| o.level <= Level::Insecure) {
        Tier::Disputed
    } else {
        Tier::Normal
    }
}

/// The auditors that fail an option our policy keeps, e.g. `ssh-audit`.
pub fn disputed_by(v: &Verdict) -> Vec<String> {
    v.opinions
        .iter()
        .filter(|o| o.level <= Level::Insecure)
        .map(|o| o.source.id.clone())
        .collect()
}

/// SSH candidates in the policy's order: its `only` list, then the knowledge
/// base's order (best first), then the client's own.
pub(super) fn ssh_ordered(k: &Knowledge, policy: &Policy, domain: Domain, names: Vec<String>) -> Vec<String> {
    let only = policy.rules(domain).only.clone().unwrap_or_default();
    let kb: Vec<String> = k.entries(domain).iter().map(|e| e.name().to_string()).collect();
    let pos = |n: &String, list: &[String]| list.iter().position(|o| o.eq_ignore_ascii_case(n)).unwrap_or(usize::MAX);
    let mut v: Vec<(usize, usize, usize, String)> = names
        .into_iter()
        .enumerate()
        .map(|(i, n)| (pos(&n, &only), pos(&n, &kb), i, n))
        .collect();
    v.sort();
    v.into_iter().map(|x| x.3).collect()
}
