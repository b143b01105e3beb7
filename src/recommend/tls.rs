//! TLS: suites ranked by record throughput, groups by full handshakes, and the
//! protocol versions that still have suites, for the document's host.

use super::choice::{GroupNames, SuiteNames, TlsChoice};
use super::figures::{best, suite_physics, suite_rate_with, suite_rounds};
use super::host::{has_group, host_group_names, offers_suite, suite_names};
use super::order::{ordered, tier};
use super::rank::{rank_with, Candidate, Measured, Planned, Ranking};
use crate::judge::{Domain, Group, GroupKind, Knowledge, Policy, TlsSuite};
use crate::model::{Document, Kind, Metric, ResultRecord};

/// The document with TLS figures from OpenSSL on both ends only, when it has any:
/// GnuTLS and mixed-library pairs (`tls --lib openssl,gnutls`) stay in the report
/// but do not rank suites and groups for config lines (most servers link OpenSSL).
/// A GnuTLS-only run keeps its figures.
pub(super) fn openssl_tls(doc: &Document) -> std::borrow::Cow<'_, Document> {
    let tls = |r: &ResultRecord| r.kind.is_tls() && r.kind.is_speed();
    let openssl = |r: &ResultRecord| {
        let lib = |l: &Option<String>| l.as_deref().is_none_or(|l| l == "openssl");
        lib(&r.subject.library) && lib(&r.subject.server_library)
    };
    let results = &doc.results;
    if !results.iter().any(|r| tls(r) && !openssl(r)) || !results.iter().any(|r| tls(r) && openssl(r)) {
        return std::borrow::Cow::Borrowed(doc);
    }
    let mut d = doc.clone();
    d.results.retain(|r| !tls(r) || openssl(r));
    std::borrow::Cow::Owned(d)
}

/// The TLS rankings and choice; `None` only when the run measured nothing for TLS
/// and its host's OpenSSL is not known (a document from before capabilities were
/// stored). With the host's OpenSSL known, the policy's filter needs no figure:
/// every allowed suite and group is configured, in the policy's order.
pub(super) fn tls(doc: &Document, k: &Knowledge, policy: &Policy) -> Option<Planned<TlsChoice>> {
    let mut all = Vec::new();
    let r13 = suite_ranking(doc, k, policy, Domain::Tls13Suite, &mut all);
    let r12 = suite_ranking(doc, k, policy, Domain::Tls12Suite, &mut all);
    if all.iter().all(|c| c.measured.is_none()) && doc.run.capabilities.openssl.is_none() {
        return None;
    }
    let names = |r: &Ranking| -> Vec<SuiteNames> { r.choice().iter().filter_map(|n| k.tls_suite(n)).map(suite_names).collect() };
    let tls13 = names(&r13);
    let tls12 = by_key_exchange(names(&r12));
    let (rg, groups) = group_ranking(doc, k, policy, &mut all);
    let choice = TlsChoice {
        protocols: protocols(k, policy, !tls13.is_empty(), !tls12.is_empty()),
        tls13,
        tls12,
        groups,
        tiers: doc.run.capabilities.openssl.as_ref().is_some_and(|o| o.tiers),
        gnutls_groups: doc.run.capabilities.gnutls_groups.clone(),
        default_groups: super::choice::auto_groups(&doc.run.capabilities, k, policy),
    };
    Some((vec![r13, r12, rg], choice, all))
}

/// One suite list (TLS 1.3 or ≤1.2): the suites the host's OpenSSL offers, in the
/// policy's order, ranked by throughput. Its candidates go to `all`.
fn suite_ranking(doc: &Document, k: &Knowledge, policy: &Policy, domain: Domain, all: &mut Vec<Candidate>) -> Ranking {
    let list = if domain == Domain::Tls13Suite {
        "tls13_suites"
    } else {
        "tls12_suites"
    };
    let items: Vec<&TlsSuite> = k
        .tls_suites()
        .iter()
        .filter(|s| offers_suite(&doc.run.capabilities, s))
        .filter(|s| s.is_tls13() == (domain == Domain::Tls13Suite))
        .collect();
    let items = ordered(items, policy, domain, |s: &TlsSuite| vec![s.iana.as_str()]);
    let cands: Vec<Candidate> = items
        .iter()
        .map(|s| {
            let verdict = k.judge(domain, &s.iana);
            let measured = suite_rate_with(doc, k, s);
            Candidate {
                tier: tier(k, &verdict),
                verdict,
                physics: suite_physics(doc, s, measured.as_ref()),
                rounds: suite_rounds(doc, k, s),
                measured,
            }
        })
        .collect();
    // Wire figures when the run has any, else primitives: that kind's noise.
    let wire = cands
        .iter()
        .any(|c| c.physics.is_some() || c.measured.as_ref().is_some_and(|m| m.basis.starts_with(Kind::TlsBulk.name())));
    let kind = if wire { Kind::TlsBulk } else { Kind::Primitive };
    let noise = crate::model::stored_noise(&doc.run.settings, kind).unwrap_or(0.0);
    let r = rank_with(list, "bytes_per_sec", true, &cands, policy, noise, &super::figures::settled(doc));
    all.extend(cands);
    r
}

/// The certificate decides which key exchange and authentication a server can use,
/// so the ≤1.2 list is grouped by them (in order of first appearance), each group
/// in speed order. GnuTLS orders its suites the same way.
fn by_key_exchange(mut tls12: Vec<SuiteNames>) -> Vec<SuiteNames> {
    let mut kinds: Vec<(String, String)> = Vec::new();
    for s in &tls12 {
        if !kinds.contains(&(s.kx.clone(), s.au.clone())) {
            kinds.push((s.kx.clone(), s.au.clone()));
        }
    }
    tls12.sort_by_key(|s| kinds.iter().position(|k| *k == (s.kx.clone(), s.au.clone())));
    tls12
}

/// Groups: measured full handshakes when the run has them, else the policy's
/// order; only groups the host's OpenSSL accepts. Its candidates go to `all`.
fn group_ranking(doc: &Document, k: &Knowledge, policy: &Policy, all: &mut Vec<Candidate>) -> (Ranking, Vec<GroupNames>) {
    let groups: Vec<&Group> = k
        .groups()
        .iter()
        .filter(|g| matches!(g.kind, GroupKind::Ecdhe | GroupKind::HybridPq))
        .collect();
    let groups = ordered(groups, policy, Domain::Group, |g: &Group| {
        std::iter::once(g.name.as_str())
            .chain(g.aliases.iter().map(String::as_str))
            .collect()
    });
    let host_groups: Vec<(&Group, GroupNames)> = groups
        .into_iter()
        .map(|g| (g, host_group_names(g, &doc.run.capabilities)))
        .filter(|(g, n)| has_group(doc, k, g, n))
        .collect();
    let gcands: Vec<Candidate> = host_groups
        .iter()
        .map(|(g, _)| {
            let (measured, rounds) = group_figure(doc, k, g).unzip();
            Candidate {
                tier: tier(k, &k.judge(Domain::Group, &g.name)),
                verdict: k.judge(Domain::Group, &g.name),
                measured,
                physics: None,
                rounds: rounds.unwrap_or_default(),
            }
        })
        .collect();
    let noise = crate::model::stored_noise(&doc.run.settings, Kind::TlsHandshake).unwrap_or(0.0);
    let rg = rank_with("groups", "handshakes_per_sec", true, &gcands, policy, noise, &Default::default());
    let choice: Vec<GroupNames> = rg
        .choice()
        .iter()
        .filter_map(|n| host_groups.iter().find(|(g, _)| &g.name == n).map(|(_, names)| names.clone()))
        .collect();
    all.extend(gcands);
    (rg, choice)
}

/// A full handshake's rate record (resumed handshakes skip the key exchange).
fn full_handshake(r: &ResultRecord) -> bool {
    r.kind == Kind::TlsHandshake && r.metric == Metric::HandshakesPerSec && !matches!(r.subject.op.as_deref(), Some("resumed" | "hrr"))
}

/// The protocol and certificate that the most groups' full handshakes were
/// measured with (among equals TLS 1.3, then the certificate with the fastest
/// handshakes, where the groups' own cost shows most): groups are compared
/// there, as a group's other handshakes also pay for another certificate.
fn reference(doc: &Document) -> Option<(Option<&str>, Option<&str>)> {
    type Pair<'a> = (Option<&'a str>, Option<&'a str>);
    let mut by: std::collections::BTreeMap<Pair, (std::collections::BTreeSet<&str>, f64)> = Default::default();
    for r in doc
        .results
        .iter()
        .filter(|r| full_handshake(r) && r.status == crate::model::Status::Ok)
    {
        if let (Some(g), Some(m)) = (r.subject.group.as_deref(), r.median) {
            let e = by.entry((r.subject.protocol.as_deref(), r.subject.cert.as_deref())).or_default();
            e.0.insert(g);
            e.1 = e.1.max(m);
        }
    }
    // Rates are positive: their bits order as they do.
    by.into_iter()
        .max_by_key(|((p, _), (groups, fastest))| (groups.len(), *p == Some("TLSv1.3"), fastest.max(0.0).to_bits()))
        .map(|(k, _)| k)
}

/// A group's best full handshake rate, at the [`reference`] protocol and
/// certificate when it was measured there, and that record's rounds
/// (`ResultRecord::rounds`: handshakes measured in rounds pair with the other
/// groups of the same rounds).
fn group_figure(doc: &Document, k: &Knowledge, g: &Group) -> Option<(Measured, Vec<crate::model::RoundValue>)> {
    let of_group = |r: &&ResultRecord| {
        full_handshake(r)
            && r.subject
                .group
                .as_deref()
                .is_some_and(|n| k.group(n).is_some_and(|x| x.name == g.name))
    };
    let at = reference(doc);
    let there = |r: &&ResultRecord| at == Some((r.subject.protocol.as_deref(), r.subject.cert.as_deref()));
    let r = best(doc.results.iter().filter(of_group).filter(there), false).or_else(|| best(doc.results.iter().filter(of_group), false))?;
    let measured = Measured {
        summary: r.summary()?,
        basis: r.basis(),
    };
    Some((measured, r.rounds.clone()))
}

/// The TLS versions the policy allows that still have suites, oldest first.
fn protocols(k: &Knowledge, policy: &Policy, tls13: bool, tls12: bool) -> Vec<String> {
    let mut protocols = Vec::new();
    for p in k.protocols() {
        if !p.name.starts_with("TLSv") || !policy.allows(&k.judge(Domain::Protocol, &p.name)).allowed {
            continue;
        }
        if (p.name == "TLSv1.3" && tls13) || (p.name != "TLSv1.3" && tls12) {
            protocols.push(p.name.clone());
        }
    }
    protocols.sort();
    protocols
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recommend::figures::suite_rate_with;
    use crate::recommend::tests::{doc, prim};

    /// GnuTLS and mixed-pair figures stay out of the ranking when OpenSSL-to-OpenSSL
    /// figures exist (the config lines are for OpenSSL servers).
    #[test]
    fn tls_rankings_use_openssl_figures_when_there_are_some() {
        let k = Knowledge::builtin().unwrap();
        let bulk = |client: &str, server: &str, median: f64| {
            let mut r = prim("aes-128-gcm", "encrypt", 16384, median);
            r["kind"] = "tls-bulk".into();
            r["subject"] = serde_json::json!({"protocol": "TLSv1.3", "suite": "TLS_AES_128_GCM_SHA256", "bytes": 16384,
                "library": client, "server_library": server});
            r
        };
        let d = doc(serde_json::json!([
            bulk("openssl", "openssl", 1.0e9),
            bulk("gnutls", "gnutls", 3.0e9),
            bulk("openssl", "gnutls", 2.0e9)
        ]));
        let view = openssl_tls(&d);
        assert_eq!(view.results.len(), 1);
        let s = suite_rate_with(&view, &k, k.tls_suite("TLS_AES_128_GCM_SHA256").unwrap()).unwrap();
        assert_eq!(s.summary.median, 1.0e9);
        // A GnuTLS-only run keeps its own figures.
        let g = doc(serde_json::json!([bulk("gnutls", "gnutls", 3.0e9)]));
        assert_eq!(openssl_tls(&g).results.len(), 1);
    }

    fn suites(names: &[&str]) -> Vec<crate::model::SuiteName> {
        names
            .iter()
            .map(|n| crate::model::SuiteName {
                iana: n.to_string(),
                openssl: n.to_string(),
            })
            .collect()
    }

    /// The host's stored capabilities decide, not the machine that ranks: a group
    /// and a suite this machine may lack (X25519MLKEM768 before OpenSSL 3.5, RC4
    /// in OpenSSL 3) are kept when the host had them, and ones every OpenSSL has
    /// (secp256r1, TLS_AES_128_GCM_SHA256) are dropped when the host had not.
    #[test]
    fn the_documents_capabilities_decide_not_this_machine() {
        let k = Knowledge::builtin().unwrap();
        let mut d = doc(serde_json::json!([prim("aes-256-gcm", "encrypt", 16384, 4.0e9)]));
        d.run.capabilities.openssl = Some(crate::model::OpenSslCapabilities {
            suites: Some(suites(&[
                "TLS_AES_256_GCM_SHA384",
                "TLS_CHACHA20_POLY1305_SHA256",
                "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
                "TLS_RSA_WITH_RC4_128_SHA",
            ])),
            groups: vec!["X25519MLKEM768".into(), "x25519".into()],
            tiers: false,
            default_groups: None,
        });
        let out = crate::recommend::recommend(
            &d,
            &k,
            &Policy::builtin("modern").unwrap(),
            &crate::software::emitters(&["nginx".to_string()]),
        );
        let r = &out.recommendations[0];
        assert_eq!(r.choice["tls13_suites"], ["TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"]);
        assert_eq!(r.choice["groups"], ["X25519MLKEM768", "x25519"]);
        assert!(r.lines.iter().any(|l| l.contains("X25519MLKEM768:x25519")), "{:?}", r.lines);
        assert!(r.rankings.iter().all(|x| x.notes.iter().all(|n| !n.contains("not known"))));
        // Under the policy that refuses nothing, the host's RC4 suite is a candidate.
        let out = crate::recommend::recommend(
            &d,
            &k,
            &Policy::builtin("none").unwrap(),
            &crate::software::emitters(&["openssl".to_string()]),
        );
        let r12 = &out.recommendations[0].choice["tls12_suites"];
        assert_eq!(r12.len(), 2, "{r12:?}");
        assert!(r12.contains(&"TLS_RSA_WITH_RC4_128_SHA".to_string()), "{r12:?}");
    }

    /// A document from before capabilities were stored: every suite OpenSSL names
    /// is a candidate, groups are the classic ones and those the run measured
    /// (never a hybrid the host may lack), and the rankings say so.
    #[test]
    fn without_capabilities_nothing_is_asked_of_this_machine() {
        let k = Knowledge::builtin().unwrap();
        let hand = |group: &str, rate: f64| {
            let mut r = prim("aes-128-gcm", "encrypt", 16384, rate);
            r["kind"] = "tls-handshake".into();
            r["metric"] = "handshakes_per_sec".into();
            r["subject"] = serde_json::json!({"protocol": "TLSv1.3", "group": group});
            r
        };
        let p = Policy::builtin("modern").unwrap();
        let aes = prim("aes-128-gcm", "encrypt", 16384, 4.0e9);
        let d = doc(serde_json::json!([aes, hand("x25519", 1000.0)]));
        let out = crate::recommend::recommend(&d, &k, &p, &crate::software::emitters(&["nginx".to_string()]));
        let r = &out.recommendations[0];
        assert_eq!(r.choice["groups"], ["x25519", "secp256r1", "secp384r1"]);
        let rg = r.rankings.iter().find(|x| x.list == "groups").unwrap();
        assert!(rg.notes.iter().any(|n| n.contains("not known for that host")), "{:?}", rg.notes);
        // A hybrid the run measured is the host's.
        let d = doc(serde_json::json!([aes, hand("x25519", 1000.0), hand("X25519MLKEM768", 900.0)]));
        let out = crate::recommend::recommend(&d, &k, &p, &crate::software::emitters(&["nginx".to_string()]));
        assert_eq!(out.recommendations[0].choice["groups"][0], "X25519MLKEM768");
    }

    /// Groups measured in the same handshake rounds are ordered by their
    /// paired ratio even when their own intervals overlap, and at the
    /// certificate both were measured with: X25519's faster handshakes with
    /// another certificate (ed25519) do not put it first.
    #[test]
    fn groups_are_ordered_by_their_paired_rounds_at_one_certificate() {
        let k = Knowledge::builtin().unwrap();
        let base = [1000.0, 800.0, 1200.0, 900.0, 1100.0, 950.0, 1050.0, 1000.0];
        let hand = |group: &str, cert: &str, scale: f64| {
            let rounds: Vec<serde_json::Value> = base
                .iter()
                .enumerate()
                .map(|(i, v)| serde_json::json!({"round": format!("tls-handshake-1#{}", i + 1), "value": v * scale}))
                .collect();
            let m = 1000.0 * scale;
            serde_json::json!({"kind": "tls-handshake", "metric": "handshakes_per_sec", "status": "ok",
                "subject": {"protocol": "TLSv1.3", "group": group, "cert": cert, "op": "full"},
                "median": m, "mean": m, "min": m * 0.8, "max": m * 1.2, "ci95_low": m * 0.75, "ci95_high": m * 1.25,
                "samples": 8, "cv": 0.12, "rounds": rounds})
        };
        let aes = prim("aes-128-gcm", "encrypt", 16384, 4.0e9);
        let p = Policy::builtin("intermediate").unwrap();
        let groups = |d: &Document| {
            let out = crate::recommend::recommend(d, &k, &p, &crate::software::emitters(&["nginx".to_string()]));
            let r = &out.recommendations[0];
            let notes = r.rankings.iter().find(|x| x.list == "groups").unwrap().notes.clone();
            (r.choice["groups"].clone(), notes)
        };
        // P-256 1.2x X25519 in every round: first, by the paired rounds.
        let d = doc(serde_json::json!([
            aes,
            hand("X25519", "ecdsa-p256", 1.0),
            hand("P-256", "ecdsa-p256", 1.2),
            hand("X25519", "ed25519", 3.0)
        ]));
        let (choice, notes) = groups(&d);
        assert_eq!(choice[0], "secp256r1", "{choice:?} {notes:?}");
        assert!(notes.iter().any(|n| n.contains(crate::recommend::paired::PAIRED)), "{notes:?}");
        // The same figures without rounds tie (their intervals overlap): policy order.
        let mut d2 = d.clone();
        for r in &mut d2.results {
            r.rounds.clear();
        }
        let (choice, _) = groups(&d2);
        assert_ne!(choice[0], "secp256r1", "{choice:?}");
    }
}
