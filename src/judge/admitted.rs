//! What the policy allows, handed down to measuring as plain names in the
//! policy's order (`plan::Admitted`): measure may not import judge, and every
//! command measures first what the policy allows. A judgement, so it lives
//! here; the commands in app/ only pass it on.

use super::{Domain, Knowledge, Policy};
use crate::plan::Admitted;

/// The names of `names` that `policy` allows in `domain`, in the policy's order:
/// its `only` list first (it encodes the source's order), then the knowledge
/// base's order, then the order given.
pub fn allowed(policy: &Policy, knowledge: &Knowledge, domain: Domain, names: &[String]) -> Vec<String> {
    let only = policy.rules(domain).only.clone().unwrap_or_default();
    let kb: Vec<String> = knowledge.entries(domain).iter().map(|e| e.name().to_string()).collect();
    let pos = |n: &str, list: &[String]| list.iter().position(|o| o.eq_ignore_ascii_case(n)).unwrap_or(usize::MAX);
    let mut v: Vec<(usize, usize, usize, &String)> = names
        .iter()
        .enumerate()
        .filter(|(_, n)| policy.allows(&knowledge.judge(domain, n)).allowed)
        .map(|(i, n)| (pos(n, &only), pos(n, &kb), i, n))
        .collect();
    v.sort();
    v.into_iter().map(|x| x.3.clone()).collect()
}

/// What `policy` allows of this OpenSSH's ciphers, MACs and key exchanges.
/// `named`: the user named the algorithms (every refused one named is then
/// measured, after the allowed ones); otherwise one refused option per list, for
/// the "fastest refused, for comparison" line.
pub fn ssh(policy: &Policy, knowledge: &Knowledge, o: &crate::discover::openssh::OpenSsh, named: bool) -> Admitted {
    Admitted {
        ssh_ciphers: allowed(policy, knowledge, Domain::SshCipher, &o.ciphers),
        ssh_macs: allowed(policy, knowledge, Domain::SshMac, &o.macs),
        ssh_kex: allowed(policy, knowledge, Domain::SshKex, &o.kex),
        refused_cap: if named { None } else { Some(1) },
        ..Admitted::default()
    }
}

/// What `policy` allows of the suites, groups and certificate types a TLS plan
/// uses (`LoopbackPlan::names`; `named`: as for [`ssh`]).
pub fn tls(
    policy: &Policy,
    knowledge: &Knowledge,
    (suites, groups, certs): (Vec<String>, Vec<String>, Vec<String>),
    named: bool,
) -> Admitted {
    Admitted {
        tls_suites: allowed(policy, knowledge, Domain::Tls13Suite, &suites),
        groups: allowed(policy, knowledge, Domain::Group, &groups),
        certs: allowed(policy, knowledge, Domain::Cert, &certs),
        refused_cap: if named { None } else { Some(1) },
        ..Admitted::default()
    }
}
