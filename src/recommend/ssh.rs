//! SSH: ciphers and MACs ranked by `ssh-bulk` throughput, kex and host keys by CPU
//! per login (`ssh-handshake`), among the algorithms the document's host has.

use super::choice::SshChoice;
use super::figures::{best, handshake_figure, ssh_physics, HandshakeMetric};
use super::host::{is_remote, server_hostkeys, ssh_client_list};
use super::order::{ssh_ordered, tier};
use super::rank::{rank_with, Candidate, Measured, Planned};
use crate::judge::{Domain, Knowledge, Policy};
use crate::model::{Document, Kind, Metric, ResultRecord, Status};

/// The four lists, in the order of [`SshChoice`]'s fields.
const LISTS: [(Domain, &str); 4] = [
    (Domain::SshCipher, "ssh_ciphers"),
    (Domain::SshMac, "ssh_macs"),
    (Domain::SshKex, "ssh_kex"),
    (Domain::SshHostkey, "ssh_hostkeys"),
];

/// The SSH rankings and choice, `None` when the run did not get as far as SSH.
pub(super) fn ssh(doc: &Document, k: &Knowledge, policy: &Policy) -> Option<Planned<SshChoice>> {
    let bulk: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::SshBulk && r.metric == Metric::BytesPerSec && r.status == Status::Ok)
        .collect();
    let hand: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::SshHandshake && r.status == Status::Ok && r.metric == Metric::Seconds)
        .collect();
    // The policy's filter needs no figure: when the run's host had OpenSSH (its
    // lists are stored with the run) or the run got as far as the feature check,
    // every allowed option is configured, in the policy's order, even with no
    // figure at all (a small or loaded budget that skipped SSH). No line would
    // leave the software's defaults, and with them what the policy refuses
    // (OpenSSH's umac-64 and hmac-sha1).
    let checked_any = doc.results.iter().any(|r| r.kind == Kind::SshAccept && r.status == Status::Ok);
    if bulk.is_empty() && hand.is_empty() && !checked_any && doc.run.capabilities.openssh.is_none() {
        return None;
    }
    let by = HandshakeMetric::of(&hand);
    let settled = super::figures::settled(doc);
    let mut rankings = Vec::new();
    let mut all = Vec::new();
    for (domain, list) in LISTS {
        let bulk_list = matches!(domain, Domain::SshCipher | Domain::SshMac);
        let records = if bulk_list { &bulk } else { &hand };
        let cands = list_candidates(doc, k, policy, domain, &candidates(doc, k, policy, domain), records, by);
        let (metric, higher) = if bulk_list { ("bytes_per_sec", true) } else { (by.name(), false) };
        let kind = if bulk_list { Kind::SshBulk } else { Kind::SshHandshake };
        let noise = crate::model::stored_noise(&doc.run.settings, kind).unwrap_or(0.0);
        let mut ranking = rank_with(list, metric, higher, &cands, policy, noise, &settled);
        ranking.follow_twins(|n| k.twin(domain, n));
        ranking.one_row_per_alias(|a, b| shown_first(doc, k, domain, a, b));
        rankings.push(ranking);
        all.extend(cands);
    }
    let caps = &doc.run.capabilities;
    let hostkeys = server_hostkeys(doc, &rankings[3].choice());
    let choice = SshChoice {
        ciphers: rankings[0].choice(),
        macs: rankings[1].choice(),
        kex: rankings[2].choice(),
        hostkeys: rankings[3].choice(),
        server_hostkeys_unread: hostkeys.is_none().then(|| unread_hostkeys(doc)).flatten(),
        server_hostkeys: hostkeys,
        server_defaults: caps.sshd_defaults.clone(),
        server_defaults_unread: caps.sshd_defaults.is_none().then(|| unread_defaults(doc)).flatten(),
        beyond_defaults: policy.min_level < crate::judge::Level::Secure,
        unmeasured: rankings
            .iter()
            .zip(["Ciphers", "MACs", "KexAlgorithms", "HostKeyAlgorithms"])
            .filter(|(r, _)| r.ranked.is_empty() && !r.choice().is_empty())
            .map(|(_, d)| d.to_string())
            .collect(),
    };
    Some((rankings, choice, all))
}

/// Why the server's host keys are not known: the cause its run recorded, or for
/// a remote server that its feature check accepted none.
fn unread_hostkeys(doc: &Document) -> Option<String> {
    if is_remote(doc) {
        Some("the remote server's feature check accepted none of them".to_string())
    } else {
        doc.run.capabilities.sshd_hostkeys_unread.clone()
    }
}

/// Why sshd's defaults are not known: the cause the run recorded; for a remote
/// server (whose own defaults `ssh --host` cannot read, the lines keep to this
/// machine's sshd's), that too.
fn unread_defaults(doc: &Document) -> Option<String> {
    let why = doc.run.capabilities.sshd_defaults_unread.clone();
    if is_remote(doc) {
        let why = why.unwrap_or_else(|| "the run did not record why".into());
        Some(format!(
            "`ssh --host` cannot read a remote sshd's defaults, and this machine's sshd's could not be read: {why}"
        ))
    } else {
        why
    }
}

/// Of two names of one algorithm, whether `a` is the one to show: the one the
/// host's sshd lists first by default, else its client, else the name without
/// a vendor suffix (`@openssh.com`, `@libssh.org`).
fn shown_first(doc: &Document, k: &Knowledge, d: Domain, a: &str, b: &str) -> bool {
    let defaults = doc.run.capabilities.sshd_defaults.as_ref().map(|s| match d {
        Domain::SshCipher => s.ciphers.clone(),
        Domain::SshMac => s.macs.clone(),
        Domain::SshKex => s.kex.clone(),
        _ => s.hostkeys.clone(),
    });
    for list in defaults.into_iter().chain(std::iter::once(ssh_client_list(doc, k, d))) {
        let at = |n: &str| list.iter().position(|x| x == n);
        match (at(a), at(b)) {
            (Some(x), Some(y)) => return x <= y,
            (Some(_), None) => return true,
            (None, Some(_)) => return false,
            (None, None) => {}
        }
    }
    !a.contains('@') || b.contains('@')
}

/// The names one list may configure: what the host's client had, in the policy's
/// order; for a remote server, only what its feature check accepted.
fn candidates(doc: &Document, k: &Knowledge, policy: &Policy, d: Domain) -> Vec<String> {
    let mut v = ssh_ordered(k, policy, d, ssh_client_list(doc, k, d));
    if let Some(ok) = remote_accepted(doc, d) {
        v.retain(|n| ok.contains(n));
    }
    v
}

/// A remote server (`ssh --host`) may lack what the client has: its lists keep
/// only what its feature check accepted (where the run checked that list at all),
/// so that no line names an algorithm that server's sshd would refuse. `None`
/// for the private sshd, or a list the run did not check.
fn remote_accepted(doc: &Document, d: Domain) -> Option<Vec<String>> {
    if !is_remote(doc) {
        return None;
    }
    let single = doc.results.iter().filter(|r| r.kind == Kind::SshAccept).filter_map(|r| {
        let s = &r.subject;
        let name = match d {
            Domain::SshCipher if s.mac.is_none() && s.kex.is_none() && s.hostkey.is_none() => s.cipher.clone(),
            Domain::SshMac if s.cipher.is_none() && s.kex.is_none() && s.hostkey.is_none() => s.mac.clone(),
            Domain::SshKex if s.cipher.is_none() && s.mac.is_none() && s.hostkey.is_none() => s.kex.clone(),
            Domain::SshHostkey if s.cipher.is_none() && s.mac.is_none() && s.kex.is_none() => s.hostkey.clone(),
            _ => None,
        }?;
        Some((name, r.status == Status::Ok && r.median == Some(1.0)))
    });
    let single: Vec<(String, bool)> = single.collect();
    (!single.is_empty()).then(|| single.into_iter().filter(|x| x.1).map(|x| x.0).collect())
}

/// A record's subject in `domain`'s list and its partner (the MAC of a cipher,
/// the host key of a kex ...).
fn subjects(domain: Domain, r: &ResultRecord) -> (Option<String>, Option<String>) {
    match domain {
        Domain::SshCipher => (r.subject.cipher.clone(), r.subject.mac.clone()),
        Domain::SshMac => (r.subject.mac.clone(), r.subject.cipher.clone()),
        Domain::SshKex => (r.subject.kex.clone(), r.subject.hostkey.clone()),
        _ => (r.subject.hostkey.clone(), r.subject.kex.clone()),
    }
}

fn partner(domain: Domain) -> Domain {
    match domain {
        Domain::SshCipher => Domain::SshMac,
        Domain::SshMac => Domain::SshCipher,
        Domain::SshKex => Domain::SshHostkey,
        _ => Domain::SshKex,
    }
}

/// The allowed partner most of this list's records were measured with (among
/// equals, the first seen).
fn reference(domain: Domain, records: &[&ResultRecord], allowed: impl Fn(Domain, &str) -> bool) -> Option<String> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for r in records {
        if let Some(p) = subjects(domain, r).1.filter(|p| allowed(partner(domain), p)) {
            match counts.iter_mut().find(|(n, _)| *n == p) {
                Some(c) => c.1 += 1,
                None => counts.push((p, 1)),
            }
        }
    }
    counts.iter().rev().max_by_key(|(_, n)| *n).map(|(p, _)| p.clone())
}

/// Each name of one list with its verdict and figure.
fn list_candidates(
    doc: &Document,
    k: &Knowledge,
    policy: &Policy,
    domain: Domain,
    items: &[String],
    records: &[&ResultRecord],
    by: HandshakeMetric,
) -> Vec<Candidate> {
    let allowed = |d: Domain, n: &str| policy.allows(&k.judge(d, n)).allowed;
    let bulk_list = matches!(domain, Domain::SshCipher | Domain::SshMac);
    let reference = reference(domain, records, allowed);
    let record_physics = |r: &ResultRecord| ssh_physics(doc, r.subject.cipher.as_deref()?, r.subject.mac.as_deref());
    // Where the best session's partner has no primitive (a CTR cipher whose best
    // session ran with UMAC), the cheapest pairing of its sessions that has one:
    // the option's cost per byte as the fixed partner of its axis gives it.
    let cheapest_physics = |mine: &[&ResultRecord]| {
        mine.iter()
            .filter_map(|r| record_physics(r))
            .max_by(|a, b| a.summary.median.partial_cmp(&b.summary.median).unwrap_or(std::cmp::Ordering::Equal))
    };
    items
        .iter()
        .map(|name| {
            let verdict = k.judge(domain, name);
            let own_ok = policy.allows(&verdict).allowed;
            // An accepted option is measured with accepted partners only (an AEAD
            // cipher has none); a refused one with any partner.
            let mine: Vec<&ResultRecord> = records
                .iter()
                .copied()
                .filter(|r| {
                    let (me, other) = subjects(domain, r);
                    // One algorithm under two names is one subject (`crate::aliases`).
                    me.as_deref().is_some_and(|m| crate::aliases::same(m, name))
                        && (!own_ok || other.as_deref().is_none_or(|p| allowed(partner(domain), p)))
                })
                .collect();
            let (measured, physics, rounds) = if bulk_list {
                let r = best(mine.iter().copied(), false);
                let measured = r.and_then(|r| {
                    Some(Measured {
                        summary: r.summary()?,
                        basis: r.basis(),
                    })
                });
                let physics = r.and_then(record_physics).or_else(|| cheapest_physics(&mine));
                (measured, physics, r.map(|r| r.rounds.clone()).unwrap_or_default())
            } else {
                (login_figure(domain, mine, reference.as_deref(), by), None, Vec::new())
            };
            Candidate {
                tier: tier(k, &verdict),
                verdict,
                measured,
                physics,
                rounds,
            }
        })
        .collect()
}

/// A kex or host key's figure: paired with the reference partner, so that kex are
/// compared under one host key and host keys under one kex; else its cheapest
/// pairing.
fn login_figure(domain: Domain, mine: Vec<&ResultRecord>, reference: Option<&str>, by: HandshakeMetric) -> Option<Measured> {
    let with_ref = mine
        .iter()
        .find(|r| reference.is_some() && subjects(domain, r).1.as_deref() == reference);
    with_ref.and_then(|r| handshake_figure(r, by)).or_else(|| {
        mine.iter()
            .filter_map(|r| handshake_figure(r, by))
            .min_by(|a, b| a.summary.median.partial_cmp(&b.summary.median).unwrap_or(std::cmp::Ordering::Equal))
    })
}
