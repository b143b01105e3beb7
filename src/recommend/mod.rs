//! Recommend: for each protocol a run measured, the options the policy accepts,
//! ranked by measured speed (ties kept as ties), the fastest refused option beside
//! them, and config lines for each target software.
//!
//! Where the figures come from, per protocol:
//! - **TLS 1.3 / TLS ≤1.2 suites:** `tls-bulk` results for the suite when the run has
//!   them; otherwise the suite's Enc and Mac primitives (`primitive`, or `file`
//!   results), at the TLS record size (16 KiB) when measured. A CBC suite costs its
//!   cipher and its HMAC one after the other.
//! - **TLS groups:** `tls-handshake` results per group; otherwise the policy's order.
//! - **SSH ciphers and MACs:** `ssh-bulk` results (each cipher with its fastest
//!   accepted MAC, each MAC with its fastest accepted cipher).
//! - **SSH kex and host keys:** `ssh-handshake` results, lower CPU per login (both
//!   ends, `handshake_cpu`) first; wall time for documents without it. Kex are
//!   compared under one host key and host keys under one kex.
//!
//! Order follows [`rank::RULE`]: post-quantum hybrids first, speed only where it is
//! measurable, else grade then the policy's order, options an auditor fails last,
//! and every allowed option kept (the unmeasured after the measured).

pub mod emit;
pub mod rank;

use crate::judge::{Domain, Group, GroupKind, Knowledge, Level, Policy, TlsSuite, Verdict};
use crate::model::Summary;
use crate::model::{Document, Kind, Metric, ResultRecord, Status};
use crate::model::{RankedRecord, RankingRecord, RecommendationRecord, RefusedRecord, VerdictRecord};
use emit::{Choice, GroupNames, SshChoice, SuiteNames, TlsChoice};
use rank::{rank, serial, Candidate, Measured, Ranking, Tier};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// TLS records carry at most 16 KiB, so that is the size primitives are read at.
const TLS_RECORD: u64 = 16384;

/// One entry of the document's `recommendations[]`: a protocol family for one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recommendation {
    /// `tls` or `ssh`.
    pub protocol: String,
    /// `--for` name of the target software.
    pub target: String,
    /// Where the lines go.
    pub location: String,
    pub policy: String,
    /// What is configured, per list (`tls13_suites`, `ssh_ciphers` ...), best first.
    pub choice: BTreeMap<String, Vec<String>>,
    pub lines: Vec<String>,
    /// The rankings the choice comes from.
    pub rankings: Vec<Ranking>,
}

/// What `recommend` produced for a document.
pub struct Outcome {
    /// Per protocol family: its rankings and its choice.
    pub protocols: Vec<(String, Vec<Ranking>, Choice)>,
    pub recommendations: Vec<Recommendation>,
    /// Verdicts of every option that was ranked or refused.
    pub verdicts: Vec<Verdict>,
}

/// Keeps an outcome in a document's `recommendations[]` and `verdicts[]` (verdicts
/// already there are not repeated).
pub fn attach(outcome: &Outcome, recommendations: &mut Vec<RecommendationRecord>, verdicts: &mut Vec<VerdictRecord>) {
    *recommendations = outcome.recommendations.iter().map(Recommendation::record).collect();
    for v in outcome.verdicts.iter().map(Verdict::record) {
        if !verdicts.contains(&v) {
            verdicts.push(v);
        }
    }
}

impl Recommendation {
    /// This recommendation as the document's `recommendations[]` holds it (the same JSON).
    pub fn record(&self) -> RecommendationRecord {
        RecommendationRecord {
            protocol: self.protocol.clone(),
            target: self.target.clone(),
            location: self.location.clone(),
            policy: self.policy.clone(),
            choice: self.choice.clone(),
            lines: self.lines.clone(),
            rankings: self.rankings.iter().map(ranking_record).collect(),
            ..Default::default()
        }
    }
}

fn ranking_record(r: &Ranking) -> RankingRecord {
    let refused = |x: &rank::Refused| RefusedRecord {
        name: x.name.clone(),
        level: x.level.as_str().to_string(),
        median: x.median,
        ci95_low: x.ci95_low,
        ci95_high: x.ci95_high,
        tied_with_best: x.tied_with_best,
        basis: x.basis.clone(),
        refusals: x.refusals.clone(),
    };
    RankingRecord {
        list: r.list.clone(),
        metric: r.metric.clone(),
        higher_is_better: r.higher_is_better,
        ranked: r
            .ranked
            .iter()
            .map(|x| RankedRecord {
                name: x.name.clone(),
                rank: x.rank,
                tied: x.tied,
                level: x.level.as_str().to_string(),
                median: x.median,
                ci95_low: x.ci95_low,
                ci95_high: x.ci95_high,
                basis: x.basis.clone(),
                warnings: x.warnings.clone(),
            })
            .collect(),
        unmeasured: r.unmeasured.clone(),
        order: r.order.clone(),
        notes: r.notes.clone(),
        fastest_refused: r.fastest_refused.as_ref().map(refused),
        safety_cost: r.safety_cost,
        fastest_insecure: r.fastest_insecure.as_ref().map(refused),
        insecure_cost: r.insecure_cost,
    }
}

/// Ranks what `doc` measured under `policy` and emits config lines for `targets`
/// (every target when empty).
pub fn recommend(doc: &Document, knowledge: &Knowledge, policy: &Policy, targets: &[String]) -> Outcome {
    let mut protocols = Vec::new();
    let mut verdicts: Vec<Verdict> = Vec::new();
    let mut keep = |cands: &[Candidate]| {
        for c in cands.iter().filter(|c| c.measured.is_some()) {
            if !verdicts.iter().any(|v| v.subject == c.verdict.subject) {
                verdicts.push(c.verdict.clone());
            }
        }
    };
    if let Some((rankings, choice, cands)) = tls(&openssl_tls(doc), knowledge, policy) {
        keep(&cands);
        protocols.push(("tls".to_string(), rankings, Choice::Tls(choice)));
    }
    if let Some((rankings, choice, cands)) = ssh(doc, knowledge, policy) {
        keep(&cands);
        protocols.push(("ssh".to_string(), rankings, Choice::Ssh(choice)));
    }
    for (_, rankings, _) in protocols.iter_mut() {
        for r in rankings.iter_mut() {
            r.notes = security_notes(knowledge, policy, r);
        }
    }
    let mut recommendations = Vec::new();
    for (protocol, rankings, choice) in &protocols {
        let lists: BTreeMap<String, Vec<String>> = match choice {
            Choice::Tls(t) => BTreeMap::from([
                ("protocols".to_string(), t.protocols.clone()),
                ("tls13_suites".to_string(), t.tls13.iter().map(|s| s.iana.clone()).collect()),
                ("tls12_suites".to_string(), t.tls12.iter().map(|s| s.iana.clone()).collect()),
                ("groups".to_string(), t.groups.iter().map(|g| g.name.clone()).collect()),
            ]),
            Choice::Ssh(s) => {
                let mut m = BTreeMap::from([
                    ("ssh_ciphers".to_string(), s.ciphers.clone()),
                    ("ssh_macs".to_string(), s.macs.clone()),
                    ("ssh_kex".to_string(), s.kex.clone()),
                    ("ssh_hostkeys".to_string(), s.hostkeys.clone()),
                ]);
                if let Some(h) = &s.server_hostkeys {
                    // What sshd's HostKeyAlgorithms lists: the server's own keys only.
                    m.insert("ssh_server_hostkeys".to_string(), h.clone());
                }
                m
            }
        };
        for e in emit::all() {
            if !targets.is_empty() && !targets.iter().any(|t| t.eq_ignore_ascii_case(e.target())) {
                continue;
            }
            if let Some(lines) = e.emit(choice) {
                recommendations.push(Recommendation {
                    protocol: protocol.clone(),
                    target: e.target().to_string(),
                    location: e.location().to_string(),
                    policy: policy.name.clone(),
                    choice: lists.clone(),
                    lines,
                    rankings: rankings.clone(),
                });
            }
        }
    }
    Outcome {
        protocols,
        recommendations,
        verdicts,
    }
}

/// The document with TLS figures from OpenSSL on both ends only, when it has any:
/// GnuTLS and mixed-library pairs (`tls --lib openssl,gnutls`) stay in the report
/// but do not rank suites and groups for config lines (most servers link OpenSSL).
/// A GnuTLS-only run keeps its figures.
fn openssl_tls(doc: &Document) -> std::borrow::Cow<'_, Document> {
    let tls = |r: &ResultRecord| matches!(r.kind, Kind::TlsBulk | Kind::TlsHandshake);
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

/// A TLS suite under every name the emitters need.
pub fn suite_names(s: &TlsSuite) -> SuiteNames {
    SuiteNames {
        iana: s.iana.clone(),
        openssl: s.openssl.clone(),
        gnutls: s.gnutls.clone(),
        kx: s.kx.clone(),
        au: s.au.clone(),
        enc: s.enc.clone(),
        enc_bits: s.enc_bits,
        mac: s.mac.clone(),
    }
}

/// A group with the spelling the local OpenSSL accepts and the GnuTLS one.
pub fn group_names(g: &Group) -> GroupNames {
    let names = std::iter::once(g.name.as_str()).chain(g.aliases.iter().map(String::as_str));
    GroupNames {
        name: g.name.clone(),
        openssl: crate::discover::openssl::supported_group(names),
        gnutls: g.aliases.iter().find(|a| a.starts_with("GROUP-")).cloned(),
    }
}

/// The primitives a suite's bytes go through: its cipher (or AEAD) and, when not
/// AEAD, its HMAC. `None` when the catalogue cannot measure them.
pub fn suite_primitives(s: &TlsSuite) -> Option<(String, Option<String>)> {
    let bits = s.enc_bits;
    let cipher = match s.enc.as_str() {
        "AESGCM" => format!("aes-{bits}-gcm"),
        "AESCCM" | "AESCCM8" => format!("aes-{bits}-ccm"),
        "ARIAGCM" => format!("aria-{bits}-gcm"),
        "CHACHA20/POLY1305" => "chacha20-poly1305".to_string(),
        "AES" => format!("aes-{bits}-cbc"),
        "Camellia" => format!("camellia-{bits}-cbc"),
        "3DES" => "des-ede3-cbc".to_string(),
        "DES" => "des-cbc".to_string(),
        "RC4" => "rc4".to_string(),
        "RC2" => "rc2-cbc".to_string(),
        "IDEA" => "idea-cbc".to_string(),
        "SEED" => "seed-cbc".to_string(),
        _ => return None,
    };
    let mac = match s.mac.as_str() {
        "AEAD" => None,
        "SHA1" => Some("hmac-sha1".to_string()),
        "SHA256" => Some("hmac-sha256".to_string()),
        "MD5" => Some("hmac-md5".to_string()),
        _ => return None,
    };
    Some((cipher, mac))
}

/// The throughput of one primitive in `doc`: `primitive` results (encrypt, or the
/// MAC/digest op) at the TLS record size when measured, else the largest size below
/// it, else the largest; failing that, `file` encryption.
fn primitive_rate(doc: &Document, name: &str) -> Option<Measured> {
    let ok = |r: &&ResultRecord| r.status == Status::Ok && r.subject.algorithm.as_deref().is_some_and(|a| a.eq_ignore_ascii_case(name));
    let single = |r: &&ResultRecord| r.subject.threads.unwrap_or(1) == 1;
    let op = |r: &&ResultRecord| matches!(r.subject.op.as_deref(), Some("encrypt" | "mac" | "digest") | None);
    let mut prims: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::Primitive && r.metric == Metric::BytesPerSec)
        .filter(ok)
        .filter(single)
        .filter(op)
        .collect();
    // The servers configured here use OpenSSL: its figures win over another library's.
    if prims.iter().any(|r| r.subject.library.as_deref().is_none_or(|l| l == "openssl")) {
        prims.retain(|r| r.subject.library.as_deref().is_none_or(|l| l == "openssl"));
    }
    let size = |r: &ResultRecord| r.subject.bytes.unwrap_or(0);
    let pick = prims
        .iter()
        .filter(|r| size(r) <= TLS_RECORD)
        .max_by_key(|r| size(r))
        .or_else(|| prims.iter().max_by_key(|r| size(r)));
    if let Some(r) = pick {
        return Some(Measured {
            summary: r.summary()?,
            basis: format!("{name} {} at {} B", r.subject.op.as_deref().unwrap_or(""), size(r)),
        });
    }
    // `file` results: seconds for a file of `bytes`, turned into a rate.
    let f = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::File && r.subject.op.as_deref() == Some("encrypt"))
        .filter(ok)
        .filter(|r| r.metric == Metric::Seconds && r.subject.bytes.unwrap_or(0) > 0)
        .max_by_key(|r| r.subject.bytes)?;
    let s = f.summary()?;
    let b = f.subject.bytes? as f64;
    let rate = |x: f64| if x > 0.0 { b / x } else { 0.0 };
    Some(Measured {
        summary: Summary {
            median: rate(s.median),
            mean: rate(s.mean),
            min: rate(s.max),
            max: rate(s.min),
            ci95_low: rate(s.ci95_high),
            ci95_high: rate(s.ci95_low),
            samples: s.samples,
            cv: s.cv,
        },
        basis: format!("file {name} encrypt, {} B", f.subject.bytes?),
    })
}

/// The best ok result among `records` (highest, or lowest when `lower`).
fn best<'a>(records: impl Iterator<Item = &'a ResultRecord>, lower: bool) -> Option<&'a ResultRecord> {
    records.filter(|r| r.status == Status::Ok && r.median.is_some()).max_by(|a, b| {
        let o = a.median.partial_cmp(&b.median).unwrap_or(std::cmp::Ordering::Equal);
        if lower {
            o.reverse()
        } else {
            o
        }
    })
}

/// The figure for a TLS suite: its own `tls-bulk` result; else, when the run
/// measured TLS bulk at all, the suite of the same protocol with the same Enc and
/// Mac (bulk cost does not depend on Kx/Au, which loopback fixes), so that one
/// ranking never mixes wire figures with bare primitive figures; else its
/// primitives.
fn suite_rate_with(doc: &Document, k: &Knowledge, s: &TlsSuite) -> Option<Measured> {
    if let Some(m) = suite_rate(doc, s) {
        if m.basis.starts_with("tls-bulk") {
            return Some(m);
        }
    }
    let same_bulk =
        doc.results.iter().filter(|r| ranked_bulk(r)).filter(|r| {
            r.subject.suite.as_deref().and_then(|n| k.tls_suite(n)).is_some_and(|t| {
                t.is_tls13() == s.is_tls13() && suite_primitives(t).is_some() && suite_primitives(t) == suite_primitives(s)
            })
        });
    if let Some(r) = best(same_bulk, false) {
        return Some(Measured {
            summary: r.summary()?,
            basis: format!("tls-bulk {} (same Enc and Mac)", crate::model::subject_label(r)),
        });
    }
    let any_bulk = doc.results.iter().any(ranked_bulk);
    if any_bulk {
        // TLS was measured, but not this Enc+Mac: leave it unmeasured rather than
        // rank a bare primitive figure against figures over the wire.
        return None;
    }
    suite_rate(doc, s)
}

/// A TLS bulk throughput record the ranking may use: not one measured through a
/// private nginx (`model::THROUGH_NGINX`), which is a whole web server's figure for
/// the diff, not a suite's record throughput.
fn ranked_bulk(r: &ResultRecord) -> bool {
    r.kind == Kind::TlsBulk && r.metric == Metric::BytesPerSec && r.subject.mode.as_deref() != Some(crate::model::THROUGH_NGINX)
}

/// The figure for a TLS suite: its own `tls-bulk` result, else its primitives.
fn suite_rate(doc: &Document, s: &TlsSuite) -> Option<Measured> {
    let named = |r: &&ResultRecord| {
        [&r.subject.suite, &r.subject.openssl_name]
            .into_iter()
            .flatten()
            .any(|n| n.eq_ignore_ascii_case(&s.iana) || s.openssl.as_deref().is_some_and(|o| o.eq_ignore_ascii_case(n)))
    };
    let bulk = doc.results.iter().filter(|r| ranked_bulk(r));
    if let Some(r) = best(bulk.filter(named), false) {
        return Some(Measured {
            summary: r.summary()?,
            basis: format!("tls-bulk {}", crate::model::subject_label(r)),
        });
    }
    let (cipher, mac) = suite_primitives(s)?;
    let c = primitive_rate(doc, &cipher)?;
    match mac {
        None => Some(c),
        Some(m) => {
            // A measured CBC+HMAC record primitive (aes-128-cbc-hmac-sha1) is the suite's
            // real record cost; otherwise the cipher and the HMAC one after the other.
            if let Some(stitched) = primitive_rate(doc, &format!("{cipher}-{m}")) {
                return Some(stitched);
            }
            let m = primitive_rate(doc, &m)?;
            Some(Measured {
                summary: serial(&c.summary, &m.summary),
                basis: format!("{} then {}", c.basis, m.basis),
            })
        }
    }
}

/// Candidates in preference order: the policy's `only` list first (it encodes the
/// source's own order), then the rest in knowledge-base order.
fn ordered<'a, T>(items: Vec<&'a T>, policy: &Policy, domain: Domain, names: impl Fn(&T) -> Vec<&str>) -> Vec<&'a T> {
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

type Planned<C> = (Vec<Ranking>, C, Vec<Candidate>);

fn tls(doc: &Document, k: &Knowledge, policy: &Policy) -> Option<Planned<TlsChoice>> {
    let local = crate::discover::openssl::tls_suites().ok();
    let offered = |s: &TlsSuite| match &local {
        Some(l) => l.iter().any(|x| x.iana == s.iana),
        None => s.openssl.is_some(),
    };
    let suites: Vec<&TlsSuite> = k.tls_suites().iter().filter(|s| offered(s)).collect();
    let mut rankings = Vec::new();
    let mut all = Vec::new();
    let mut per_domain = |domain: Domain, list: &str| {
        let items = suites
            .iter()
            .copied()
            .filter(|s| s.is_tls13() == (domain == Domain::Tls13Suite))
            .collect();
        let items = ordered(items, policy, domain, |s: &TlsSuite| vec![s.iana.as_str()]);
        let cands: Vec<Candidate> = items
            .iter()
            .map(|s| {
                let verdict = k.judge(domain, &s.iana);
                Candidate {
                    tier: tier(k, &verdict),
                    verdict,
                    measured: suite_rate_with(doc, k, s),
                }
            })
            .collect();
        let r = rank(list, "bytes_per_sec", true, &cands, policy);
        all.extend(cands);
        r
    };
    let r13 = per_domain(Domain::Tls13Suite, "tls13_suites");
    let r12 = per_domain(Domain::Tls12Suite, "tls12_suites");
    if all.iter().all(|c| c.measured.is_none()) {
        return None;
    }
    let names = |r: &Ranking| -> Vec<SuiteNames> { r.choice().iter().filter_map(|n| k.tls_suite(n)).map(suite_names).collect() };
    let tls13 = names(&r13);
    // The certificate decides which key exchange and authentication a server can use,
    // so the ≤1.2 list is grouped by them (in order of first appearance), each group
    // in speed order. GnuTLS orders its suites the same way.
    let mut tls12 = names(&r12);
    let mut kinds: Vec<(String, String)> = Vec::new();
    for s in &tls12 {
        if !kinds.contains(&(s.kx.clone(), s.au.clone())) {
            kinds.push((s.kx.clone(), s.au.clone()));
        }
    }
    tls12.sort_by_key(|s| kinds.iter().position(|k| *k == (s.kx.clone(), s.au.clone())));

    // Groups: measured handshakes when the run has them, else the policy's order.
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
    let local_groups: Vec<(&Group, GroupNames)> = groups
        .into_iter()
        .map(|g| (g, group_names(g)))
        .filter(|(_, n)| n.openssl.is_some())
        .collect();
    let gcands: Vec<Candidate> = local_groups
        .iter()
        .map(|(g, _)| Candidate {
            tier: tier(k, &k.judge(Domain::Group, &g.name)),
            verdict: k.judge(Domain::Group, &g.name),
            measured: best(
                doc.results
                    .iter()
                    .filter(|r| r.kind == Kind::TlsHandshake && r.metric == Metric::HandshakesPerSec)
                    // Resumed handshakes skip the key exchange: only full ones rank groups.
                    .filter(|r| r.subject.op.as_deref() != Some("resumed"))
                    .filter(|r| {
                        r.subject
                            .group
                            .as_deref()
                            .is_some_and(|n| k.group(n).is_some_and(|x| x.name == g.name))
                    }),
                false,
            )
            .and_then(|r| {
                Some(Measured {
                    summary: r.summary()?,
                    basis: format!("tls-handshake {}", crate::model::subject_label(r)),
                })
            }),
        })
        .collect();
    let rg = rank("groups", "handshakes_per_sec", true, &gcands, policy);
    let group_choice: Vec<GroupNames> = rg
        .choice()
        .iter()
        .filter_map(|n| local_groups.iter().find(|(g, _)| &g.name == n).map(|(_, names)| names.clone()))
        .collect();
    all.extend(gcands);

    let mut protocols = Vec::new();
    for p in k.protocols() {
        if !p.name.starts_with("TLSv") || !policy.allows(&k.judge(Domain::Protocol, &p.name)).allowed {
            continue;
        }
        let usable = if p.name == "TLSv1.3" {
            !tls13.is_empty()
        } else {
            !tls12.is_empty()
        };
        if usable {
            protocols.push(p.name.clone());
        }
    }
    protocols.sort();
    let choice = TlsChoice {
        protocols,
        tls13,
        tls12,
        groups: group_choice,
    };
    rankings.push(r13);
    rankings.push(r12);
    rankings.push(rg);
    Some((rankings, choice, all))
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

/// The figure of one `ssh-handshake` record as the ranking sees it: CPU per login
/// (both ends when the server was observable, else the client's), else wall time.
fn handshake_figure(r: &ResultRecord, by: HandshakeMetric) -> Option<Measured> {
    let wall = r.summary()?;
    let label = crate::model::subject_label(r);
    let ms = |x: f64| format!("{:.2}", x * 1e3);
    let fig = |f: &crate::model::CpuFigure| {
        if f.samples < 2 {
            format!("{} ms (one login, no interval)", ms(f.mean))
        } else {
            format!("{} ms [{}–{}]", ms(f.mean), ms(f.ci95_low), ms(f.ci95_high))
        }
    };
    let cpu = r.handshake_cpu.as_ref();
    let pick = match by {
        HandshakeMetric::Total => cpu.and_then(|c| c.total),
        HandshakeMetric::Client => cpu.and_then(|c| c.client),
        HandshakeMetric::Wall => None,
    };
    let Some(f) = pick else {
        return (by == HandshakeMetric::Wall).then(|| Measured {
            summary: wall,
            basis: format!("ssh-handshake {label}, wall time per login"),
        });
    };
    let mut parts = Vec::new();
    if let Some(c) = cpu.and_then(|c| c.client.as_ref()) {
        parts.push(format!("client {}", fig(c)));
    }
    if let Some(sv) = cpu.and_then(|c| c.server.as_ref()) {
        parts.push(format!("server {}", fig(sv)));
    }
    parts.push(format!("wall {:.1} ms", wall.median * 1e3));
    Some(Measured {
        summary: Summary {
            median: f.mean,
            mean: f.mean,
            min: f.ci95_low,
            max: f.ci95_high,
            ci95_low: f.ci95_low,
            ci95_high: f.ci95_high,
            samples: f.samples,
            cv: 0.0,
        },
        basis: format!("ssh-handshake {label}: CPU per login {}", parts.join(", ")),
    })
}

/// What SSH kex and host keys are ranked by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HandshakeMetric {
    /// Client + server CPU per login (the private sshd).
    Total,
    /// The client's CPU per login (a remote server).
    Client,
    /// Wall time per login (documents from before CPU was recorded).
    Wall,
}

impl HandshakeMetric {
    fn of(records: &[&ResultRecord]) -> HandshakeMetric {
        let all = |f: fn(&crate::model::HandshakeCpu) -> bool| {
            !records.is_empty() && records.iter().all(|r| r.handshake_cpu.as_ref().is_some_and(f))
        };
        if all(|c| c.total.is_some()) {
            HandshakeMetric::Total
        } else if all(|c| c.client.is_some()) {
            HandshakeMetric::Client
        } else {
            HandshakeMetric::Wall
        }
    }
    fn name(self) -> &'static str {
        match self {
            HandshakeMetric::Total => "cpu_seconds",
            HandshakeMetric::Client => "client_cpu_seconds",
            HandshakeMetric::Wall => "seconds",
        }
    }
}

/// SSH candidates in the policy's order: its `only` list, then the knowledge
/// base's order (best first), then the client's own.
fn ssh_ordered(k: &Knowledge, policy: &Policy, domain: Domain, names: Vec<String>) -> Vec<String> {
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

fn ssh(doc: &Document, k: &Knowledge, policy: &Policy) -> Option<Planned<SshChoice>> {
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
    // SSH was in the run when it got as far as the feature check: then even with no
    // figure at all (a small budget), every allowed option is configured, in the
    // policy's order, rather than no line at all.
    let checked_any = doc.results.iter().any(|r| r.kind == Kind::SshAccept && r.status == Status::Ok);
    if bulk.is_empty() && hand.is_empty() && !checked_any {
        return None;
    }
    let local = crate::discover::openssh::discover().ok();
    let allowed = |d: Domain, n: &str| policy.allows(&k.judge(d, n)).allowed;
    // Candidates: what the local client lists, else the knowledge base (no markers).
    let names = |d: Domain, local: Option<&Vec<String>>| -> Vec<String> {
        let v = match local {
            Some(l) => l.clone(),
            None => k
                .entries(d)
                .iter()
                .filter(|e| !(d == Domain::SshKex && k.ssh_kex(e.name()).is_some_and(|x| x.method == crate::judge::KexMethod::Marker)))
                .map(|e| e.name().to_string())
                .collect(),
        };
        ssh_ordered(k, policy, d, v)
    };
    let o = local.as_ref();
    // A remote server (`ssh --host`) may lack what the client here has: its lists keep
    // only what its feature check accepted (where the run checked that list at all),
    // so that no line names an algorithm that server's sshd would refuse.
    let checked = |d: Domain| -> Option<Vec<String>> {
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
    };
    let names = |d: Domain, local: Option<&Vec<String>>| -> Vec<String> {
        let mut v = names(d, local);
        if let Some(ok) = checked(d) {
            v.retain(|n| ok.contains(n));
        }
        v
    };
    let lists = [
        (Domain::SshCipher, "ssh_ciphers", names(Domain::SshCipher, o.map(|o| &o.ciphers))),
        (Domain::SshMac, "ssh_macs", names(Domain::SshMac, o.map(|o| &o.macs))),
        (Domain::SshKex, "ssh_kex", names(Domain::SshKex, o.map(|o| &o.kex))),
        (
            Domain::SshHostkey,
            "ssh_hostkeys",
            names(Domain::SshHostkey, o.map(|o| &o.hostkey_algorithms)),
        ),
    ];
    let by = HandshakeMetric::of(&hand);
    let mut rankings = Vec::new();
    let mut all = Vec::new();
    for (domain, list, items) in lists {
        let subjects = |r: &ResultRecord| -> (Option<String>, Option<String>) {
            match domain {
                Domain::SshCipher => (r.subject.cipher.clone(), r.subject.mac.clone()),
                Domain::SshMac => (r.subject.mac.clone(), r.subject.cipher.clone()),
                Domain::SshKex => (r.subject.kex.clone(), r.subject.hostkey.clone()),
                _ => (r.subject.hostkey.clone(), r.subject.kex.clone()),
            }
        };
        let partner = match domain {
            Domain::SshCipher => Domain::SshMac,
            Domain::SshMac => Domain::SshCipher,
            Domain::SshKex => Domain::SshHostkey,
            _ => Domain::SshKex,
        };
        let bulk_list = matches!(domain, Domain::SshCipher | Domain::SshMac);
        let records = if bulk_list { &bulk } else { &hand };
        // The allowed partner most of this list's handshakes were measured with.
        let reference: Option<String> = {
            let mut counts: Vec<(String, usize)> = Vec::new();
            for r in records.iter() {
                if let Some(p) = subjects(r).1.filter(|p| allowed(partner, p)) {
                    match counts.iter_mut().find(|(n, _)| *n == p) {
                        Some(c) => c.1 += 1,
                        None => counts.push((p, 1)),
                    }
                }
            }
            // Most records; among equals, the first seen.
            counts.iter().rev().max_by_key(|(_, n)| *n).map(|(p, _)| p.clone())
        };
        let cands: Vec<Candidate> = items
            .iter()
            .map(|name| {
                let verdict = k.judge(domain, name);
                let own_ok = policy.allows(&verdict).allowed;
                // An accepted option is measured with accepted partners only (an AEAD
                // cipher has none); a refused one with any partner.
                let mine = records.iter().copied().filter(|r| {
                    let (me, other) = subjects(r);
                    me.as_deref() == Some(name.as_str()) && (!own_ok || other.as_deref().is_none_or(|p| allowed(partner, p)))
                });
                let measured = if bulk_list {
                    best(mine, false).and_then(|r| {
                        Some(Measured {
                            summary: r.summary()?,
                            basis: format!("ssh-bulk {}", crate::model::subject_label(r)),
                        })
                    })
                } else {
                    // Paired with the reference partner, so that kex are compared under
                    // one host key and host keys under one kex; else its cheapest pairing.
                    let mine: Vec<&ResultRecord> = mine.collect();
                    let with_ref = mine.iter().find(|r| subjects(r).1.is_some() && subjects(r).1 == reference);
                    with_ref.and_then(|r| handshake_figure(r, by)).or_else(|| {
                        mine.iter()
                            .filter_map(|r| handshake_figure(r, by))
                            .min_by(|a, b| a.summary.median.partial_cmp(&b.summary.median).unwrap_or(std::cmp::Ordering::Equal))
                    })
                };
                Candidate {
                    tier: tier(k, &verdict),
                    verdict,
                    measured,
                }
            })
            .collect();
        let (metric, higher) = if bulk_list { ("bytes_per_sec", true) } else { (by.name(), false) };
        let mut ranking = rank(list, metric, higher, &cands, policy);
        ranking.follow_twins(|n| k.twin(domain, n));
        rankings.push(ranking);
        all.extend(cands);
    }
    let choice = SshChoice {
        ciphers: rankings[0].choice(),
        macs: rankings[1].choice(),
        kex: rankings[2].choice(),
        hostkeys: rankings[3].choice(),
        server_hostkeys: server_hostkeys(doc, &rankings[3].choice()),
    };
    Some((rankings, choice, all))
}

/// Whether `doc` measured a remote server (`ssh --host`), not the private sshd.
fn is_remote(doc: &Document) -> bool {
    doc.run
        .settings
        .get("target")
        .and_then(|t| t.as_str())
        .is_some_and(|t| !t.starts_with("private sshd"))
}

/// The host-key algorithms an sshd line may list: those of `allowed` (best first)
/// that the server can serve. For a remote run (`ssh --host`), what the server
/// offered in the feature check; otherwise the keys this machine's sshd has
/// (`sshd -T` and its HostKey files). `None` when they cannot be known: the line
/// is then left out, and sshd keeps its own default.
fn server_hostkeys(doc: &Document, allowed: &[String]) -> Option<Vec<String>> {
    let offered: Vec<String> = if is_remote(doc) {
        doc.results
            .iter()
            .filter(|r| r.kind == Kind::SshAccept && r.status == Status::Ok && r.median == Some(1.0))
            .filter(|r| r.subject.cipher.is_none() && r.subject.mac.is_none() && r.subject.kex.is_none())
            .filter_map(|r| r.subject.hostkey.clone())
            .collect()
    } else {
        crate::discover::openssh::server_hostkey_algorithms()?
    };
    if offered.is_empty() {
        return None;
    }
    Some(allowed.iter().filter(|a| offered.contains(a)).cloned().collect())
}

/// A figure in the ranking's unit.
pub fn figure(metric: &str, v: f64) -> String {
    match metric {
        "bytes_per_sec" => crate::units::BytesPerSec(v).to_string(),
        "seconds" => format!("{:.1} ms", v * 1e3),
        "cpu_seconds" | "client_cpu_seconds" => format!("{:.2} ms CPU", v * 1e3),
        _ => format!("{v:.1}/s"),
    }
}

/// Short label of a ranking list.
pub fn list_title(list: &str) -> &str {
    match list {
        "tls13_suites" => "TLS 1.3 suites",
        "tls12_suites" => "TLS 1.2 suites",
        "groups" => "TLS groups",
        "ssh_ciphers" => "SSH ciphers (bulk)",
        "ssh_macs" => "SSH MACs (bulk)",
        "ssh_kex" => "SSH key exchange (handshake)",
        "ssh_hostkeys" => "SSH host keys (handshake)",
        other => other,
    }
}

/// The domain a ranking list holds.
pub fn list_domain(list: &str) -> Option<Domain> {
    Some(match list {
        "tls13_suites" => Domain::Tls13Suite,
        "tls12_suites" => Domain::Tls12Suite,
        "groups" => Domain::Group,
        "ssh_ciphers" => Domain::SshCipher,
        "ssh_macs" => Domain::SshMac,
        "ssh_kex" => Domain::SshKex,
        "ssh_hostkeys" => Domain::SshHostkey,
        _ => return None,
    })
}

/// What post-quantum key exchange costs here, which hybrid the policy allows but
/// the software lacks, and where the policy keeps what an auditor fails.
pub fn security_notes(k: &Knowledge, policy: &Policy, r: &Ranking) -> Vec<String> {
    let Some(domain) = list_domain(&r.list) else { return Vec::new() };
    let mut out = Vec::new();
    let tier_of = |n: &str| tier(k, &k.judge(domain, n));
    if matches!(domain, Domain::SshKex | Domain::Group) {
        let pq = r.ranked.iter().find(|x| tier_of(&x.name) == Tier::PostQuantum);
        let classic = r.ranked.iter().find(|x| tier_of(&x.name) == Tier::Normal);
        if let (Some(p), Some(c)) = (pq, classic) {
            let per = if r.higher_is_better {
                // handshakes per second: the time per handshake is what it costs.
                let t = |v: f64| if v > 0.0 { 1.0 / v } else { 0.0 };
                format!("{:.2} ms per handshake", (t(p.median) - t(c.median)) * 1e3)
            } else {
                format!(
                    "{:.2} ms {}per login",
                    (p.median - c.median) * 1e3,
                    if r.metric.contains("cpu") { "of CPU " } else { "" }
                )
            };
            out.push(format!(
                "post-quantum costs {per} here ({} {} against {} {}); it stays first: its cost is shown, never traded away.",
                p.name,
                figure(&r.metric, p.median),
                c.name,
                figure(&r.metric, c.median)
            ));
        }
        // Hybrids the policy names but the software here lacks.
        let listed = r
            .ranked
            .iter()
            .map(|x| x.name.clone())
            .chain(r.unmeasured.iter().cloned())
            .collect::<Vec<_>>();
        for name in policy.rules(domain).only.clone().unwrap_or_default() {
            let v = k.judge(domain, &name);
            let known =
                |n: &str| listed.iter().any(|l| l.eq_ignore_ascii_case(n)) || v.subject.aliases.iter().any(|a| a.eq_ignore_ascii_case(n));
            if tier(k, &v) == Tier::PostQuantum
                && !known(&name)
                && !listed.iter().any(|l| k.judge(domain, l).subject.name == v.subject.name)
            {
                let what = if domain == Domain::Group {
                    format!(
                        "the installed OpenSSL ({}) does not have it",
                        crate::backend::openssl::runtime_version()
                    )
                } else {
                    "the installed OpenSSH does not have it".to_string()
                };
                out.push(format!("{name}: allowed by policy {}, left out: {what}.", policy.name));
            }
        }
    }
    let disputed: Vec<String> = r
        .choice()
        .into_iter()
        .filter(|n| tier_of(n) == Tier::Disputed)
        .map(|n| format!("{n} ({})", disputed_by(&k.judge(domain, &n)).join(", ")))
        .collect();
    if !disputed.is_empty() {
        out.push(format!(
            "disagreement: policy {} keeps {} for old peers, which a current auditor fails; they come after every other option. Use --policy modern to leave them out.",
            policy.name,
            disputed.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(results: serde_json::Value) -> Document {
        serde_json::from_value(serde_json::json!({
            "schema": "cipherbench/1",
            "run": {"id": "t", "started_at": "2026-01-01T00:00:00Z", "status": "complete", "command": "speed",
                    "host": {"cpu_model": "x", "cores": 1, "cpu_flags": [], "kernel": "k", "arch": "x86_64", "hostname": "h"},
                    "libraries": {}, "settings": {}},
            "results": results,
        }))
        .unwrap()
    }

    /// `ssh --host`: every list keeps what the remote server accepted, sshd's
    /// HostKeyAlgorithms follows what it offered
    /// in the feature check (here RSA only: both RSA signature algorithms stay), and
    /// kex are ranked by CPU with post-quantum first even though it costs more.
    #[test]
    fn remote_ssh_host_keys_follow_the_servers_offer_and_post_quantum_leads() {
        let k = Knowledge::builtin().unwrap();
        let accept = |hostkey: &str, ok: bool| {
            serde_json::json!({"kind": "ssh-accept", "subject": {"hostkey": hostkey}, "metric": "accepted", "status": "ok",
                "median": if ok { 1.0 } else { 0.0 }, "mean": 0.0, "min": 0.0, "max": 0.0, "ci95_low": 0.0, "ci95_high": 0.0, "samples": 1})
        };
        let hand = |kex: &str, client_ms: f64| {
            let f = |m: f64| serde_json::json!({"mean": m / 1e3, "ci95_low": m * 0.98 / 1e3, "ci95_high": m * 1.02 / 1e3, "samples": 8});
            serde_json::json!({"kind": "ssh-handshake", "subject": {"kex": kex, "hostkey": "rsa-sha2-512"}, "metric": "seconds",
                "status": "ok", "median": 0.3, "mean": 0.3, "min": 0.29, "max": 0.31, "ci95_low": 0.29, "ci95_high": 0.31,
                "samples": 8, "handshake_cpu": {"client": f(client_ms), "method": "test"}})
        };
        let mut d = doc(serde_json::json!([
            accept("rsa-sha2-512", true),
            accept("rsa-sha2-256", true),
            accept("ssh-ed25519", false),
            serde_json::json!({"kind": "ssh-accept", "subject": {"cipher": "aes128-ctr"}, "metric": "accepted", "status": "ok",
                "median": 1.0, "mean": 1.0, "min": 1.0, "max": 1.0, "ci95_low": 1.0, "ci95_high": 1.0, "samples": 1}),
            serde_json::json!({"kind": "ssh-accept", "subject": {"cipher": "aes256-gcm@openssh.com"}, "metric": "accepted",
                "status": "ok", "reason": "no matching cipher", "median": 0.0, "mean": 0.0, "min": 0.0, "max": 0.0,
                "ci95_low": 0.0, "ci95_high": 0.0, "samples": 1}),
            hand("curve25519-sha256", 10.0),
            hand("sntrup761x25519-sha512", 60.0),
        ]));
        d.run.settings = serde_json::json!({"target": "me@server"});
        let p = Policy::builtin("modern").unwrap();
        let out = recommend(&d, &k, &p, &["sshd".to_string()]);
        let r = &out.recommendations[0];
        assert_eq!(r.choice["ssh_server_hostkeys"], ["rsa-sha2-512", "rsa-sha2-256"]);
        // Only what that server accepted: its refused (or unchecked) ciphers stay out.
        assert_eq!(r.choice["ssh_ciphers"], ["aes128-ctr"]);
        assert_eq!(r.choice["ssh_hostkeys"], ["rsa-sha2-512", "rsa-sha2-256"]);
        assert!(
            r.lines.contains(&"HostKeyAlgorithms rsa-sha2-512,rsa-sha2-256".to_string()),
            "{:?}",
            r.lines
        );
        let kex = &r.choice["ssh_kex"];
        assert!(
            kex[0].starts_with("sntrup761x25519") || kex[0].starts_with("mlkem768x25519"),
            "{kex:?}"
        );
        let rk = r.rankings.iter().find(|x| x.list == "ssh_kex").unwrap();
        assert_eq!(rk.metric, "client_cpu_seconds");
        let notes = security_notes(&k, &p, rk);
        assert!(
            notes.iter().any(|n| n.starts_with("post-quantum costs 50.00 ms of CPU per login")),
            "{notes:?}"
        );
    }

    /// A run whose budget ran out after the SSH feature check but before any figure
    /// still gets every allowed option, in the policy's order, post-quantum first.
    #[test]
    fn ssh_lines_without_any_figure_follow_the_policy() {
        let k = Knowledge::builtin().unwrap();
        let d = doc(serde_json::json!([
            {"kind": "ssh-accept", "subject": {"kex": "curve25519-sha256"}, "metric": "accepted", "status": "ok",
             "median": 1.0, "mean": 1.0, "min": 1.0, "max": 1.0, "ci95_low": 1.0, "ci95_high": 1.0, "samples": 1}
        ]));
        let p = Policy::builtin("strict").unwrap();
        let out = recommend(&d, &k, &p, &["sshd".to_string()]);
        let r = out.recommendations.first().expect("sshd lines without figures");
        let kex = &r.choice["ssh_kex"];
        assert!(kex[0].contains("x25519-sha"), "{kex:?}");
        assert!(kex.contains(&"curve25519-sha256".to_string()), "{kex:?}");
        assert!(r.rankings.iter().all(|x| x.ranked.is_empty()));
        // Without any SSH result at all, no SSH recommendation.
        assert!(recommend(&doc(serde_json::json!([])), &k, &p, &["sshd".to_string()])
            .recommendations
            .is_empty());
    }

    fn prim(alg: &str, op: &str, bytes: u64, median: f64) -> serde_json::Value {
        serde_json::json!({"kind": "primitive", "subject": {"algorithm": alg, "op": op, "bytes": bytes, "library": "openssl"},
            "metric": "bytes_per_sec", "status": "ok", "median": median, "mean": median, "min": median * 0.99,
            "max": median * 1.01, "ci95_low": median * 0.995, "ci95_high": median * 1.005, "samples": 20, "cv": 0.01})
    }

    /// Once TLS bulk was measured, suites use wire figures only: a suite with the
    /// same Enc+Mac stands in (loopback fixes Kx/Au), and a bare primitive never
    /// ranks against figures over the wire.
    #[test]
    fn tls_bulk_figures_are_not_mixed_with_primitive_figures() {
        let k = Knowledge::builtin().unwrap();
        let mut wire = prim("aes-128-gcm", "encrypt", 16384, 1.0e9);
        wire["kind"] = "tls-bulk".into();
        wire["subject"] = serde_json::json!({"protocol": "TLSv1.2", "suite": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "bytes": 16384});
        let d = doc(serde_json::json!([wire, prim("aes-256-gcm", "encrypt", 16384, 4.0e9)]));
        let ecdsa = suite_rate_with(&d, &k, k.tls_suite("ECDHE-ECDSA-AES128-GCM-SHA256").unwrap()).unwrap();
        assert_eq!(ecdsa.summary.median, 1.0e9);
        assert!(ecdsa.basis.contains("same Enc and Mac"), "{}", ecdsa.basis);
        assert!(suite_rate_with(&d, &k, k.tls_suite("ECDHE-RSA-AES256-GCM-SHA384").unwrap()).is_none());
        // Without any TLS bulk result, primitives are the figure.
        let p = doc(serde_json::json!([prim("aes-256-gcm", "encrypt", 16384, 4.0e9)]));
        assert!(suite_rate_with(&p, &k, k.tls_suite("ECDHE-RSA-AES256-GCM-SHA384").unwrap()).is_some());
    }

    /// A figure measured through a private nginx is a web server's, for the diff:
    /// it never stands for a suite in the ranking, neither its own nor a twin's.
    #[test]
    fn figures_through_nginx_stay_out_of_the_ranking() {
        let k = Knowledge::builtin().unwrap();
        let bulk = |suite: &str, mode: Option<&str>, median: f64| {
            let mut r = prim("aes-128-gcm", "encrypt", 16384, median);
            r["kind"] = "tls-bulk".into();
            r["subject"] = serde_json::json!({"protocol": "TLSv1.2", "suite": suite, "bytes": 16384, "mode": mode});
            r
        };
        let d = doc(serde_json::json!([
            bulk("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", None, 1.0e9),
            bulk("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", Some(crate::model::THROUGH_NGINX), 3.0e9),
            bulk("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", Some(crate::model::THROUGH_NGINX), 2.0e9)
        ]));
        let own = suite_rate_with(&d, &k, k.tls_suite("ECDHE-RSA-AES128-GCM-SHA256").unwrap()).unwrap();
        assert_eq!(own.summary.median, 1.0e9, "{}", own.basis);
        // Measured only through nginx: unmeasured for the ranking.
        assert!(suite_rate_with(&d, &k, k.tls_suite("ECDHE-RSA-AES256-GCM-SHA384").unwrap()).is_none());
        // Only through-nginx figures: no wire figure, so primitives would stand in.
        let only = doc(serde_json::json!([bulk(
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            Some(crate::model::THROUGH_NGINX),
            3.0e9
        )]));
        assert!(suite_rate_with(&only, &k, k.tls_suite("ECDHE-RSA-AES128-GCM-SHA256").unwrap()).is_none_or(|m| m.summary.median != 3.0e9));
    }

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

    #[test]
    fn suites_are_measured_at_the_record_size_and_cbc_pays_cipher_then_mac() {
        let k = Knowledge::builtin().unwrap();
        let d = doc(serde_json::json!([
            prim("aes-128-gcm", "encrypt", 1024, 1.0e9),
            prim("aes-128-gcm", "encrypt", 16384, 4.0e9),
            prim("aes-128-gcm", "encrypt", 65536, 9.0e9),
            prim("aes-128-gcm", "decrypt", 16384, 8.0e9),
            prim("aes-128-cbc", "encrypt", 16384, 1.0e9),
            prim("hmac-sha1", "mac", 16384, 1.0e9),
        ]));
        let gcm = suite_rate(&d, k.tls_suite("TLS_AES_128_GCM_SHA256").unwrap()).unwrap();
        assert_eq!(gcm.summary.median, 4.0e9, "{}", gcm.basis);
        let cbc = suite_rate(&d, k.tls_suite("ECDHE-RSA-AES128-SHA").unwrap()).unwrap();
        assert!((cbc.summary.median - 0.5e9).abs() < 1.0, "{}", cbc.summary.median);
        assert!(suite_rate(&d, k.tls_suite("TLS_CHACHA20_POLY1305_SHA256").unwrap()).is_none());
        let p = Policy::builtin("intermediate").unwrap();
        let out = recommend(&d, &k, &p, &["openssl".to_string()]);
        assert_eq!(out.recommendations.len(), 1, "only TLS was measured, for one target");
        let r = &out.recommendations[0];
        // The measured suite first; the others the policy allows follow, unmeasured,
        // in the policy's order (never dropped for lack of measurement).
        assert_eq!(
            r.choice["tls13_suites"],
            ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"]
        );
        // The CBC suite is refused by intermediate and slower anyway.
        let r12 = r.rankings.iter().find(|x| x.list == "tls12_suites").unwrap();
        assert!(r12.ranked.iter().all(|x| x.name.contains("AES_128_GCM")), "{:?}", r12.ranked);
    }

    #[test]
    fn the_documents_records_are_the_same_json_as_the_ranking() {
        let k = Knowledge::builtin().unwrap();
        let d = doc(serde_json::json!([
            prim("aes-128-gcm", "encrypt", 16384, 4.0e9),
            prim("aes-128-cbc", "encrypt", 16384, 9.0e9),
            prim("hmac-sha1", "mac", 16384, 9.0e9),
        ]));
        let out = recommend(&d, &k, &Policy::builtin("intermediate").unwrap(), &[]);
        assert!(out
            .recommendations
            .iter()
            .any(|r| r.rankings.iter().any(|x| x.fastest_refused.is_some())));
        for r in &out.recommendations {
            assert_eq!(serde_json::to_value(r.record()).unwrap(), serde_json::to_value(r).unwrap());
        }
        let (mut recs, mut verdicts) = (Vec::new(), vec![out.verdicts[0].record()]);
        attach(&out, &mut recs, &mut verdicts);
        assert_eq!((recs.len(), verdicts.len()), (out.recommendations.len(), out.verdicts.len()));
    }
}
