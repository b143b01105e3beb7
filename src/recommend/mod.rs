//! Recommend: for each protocol a run measured (or whose host's OpenSSL or OpenSSH it
//! stored: the policy needs no figure), the options the policy accepts,
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

mod candidate;
pub mod choice;
pub mod evidence;
mod figures;
mod host;
mod order;
pub mod paired;
pub mod pool;
pub mod rank;
mod ssh;
mod tls;

pub use host::{group_names, suite_names};
pub use order::{disputed_by, tier};

use crate::judge::{Domain, Knowledge, Policy, Verdict};
use crate::model::Document;
use crate::model::{RankedRecord, RankingRecord, RecommendationRecord, RefusedRecord, VerdictRecord};
use choice::{Choice, Emitter};
use rank::{Candidate, Ranking, Tier};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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

/// Ranks what `doc` measured under `policy` and writes config lines with each of
/// `emitters`, in their order (the caller picks them: `software::emitters`).
pub fn recommend(doc: &Document, knowledge: &Knowledge, policy: &Policy, emitters: &[&dyn Emitter]) -> Outcome {
    let mut protocols = Vec::new();
    let mut verdicts: Vec<Verdict> = Vec::new();
    let mut keep = |cands: &[Candidate]| {
        for c in cands.iter().filter(|c| c.measured.is_some()) {
            if !verdicts.iter().any(|v| v.subject == c.verdict.subject) {
                verdicts.push(c.verdict.clone());
            }
        }
    };
    if let Some((rankings, choice, cands)) = tls::tls(&tls::openssl_tls(doc), knowledge, policy) {
        keep(&cands);
        protocols.push(("tls".to_string(), rankings, Choice::Tls(choice)));
    }
    if let Some((rankings, choice, cands)) = ssh::ssh(doc, knowledge, policy) {
        keep(&cands);
        protocols.push(("ssh".to_string(), rankings, Choice::Ssh(choice)));
    }
    for (_, rankings, _) in protocols.iter_mut() {
        for r in rankings.iter_mut() {
            let mut notes = std::mem::take(&mut r.notes);
            notes.extend(security_notes(
                knowledge,
                policy,
                r,
                doc.run.libraries.get("openssl").map(String::as_str),
            ));
            notes.extend(host::unknown_note(doc, &r.list));
            r.notes = pool::said(doc, notes, !r.ranked.is_empty());
        }
    }
    let mut recommendations = Vec::new();
    for (protocol, rankings, choice) in &protocols {
        let lists = choice_lists(choice);
        for e in choice::lines(choice, emitters) {
            recommendations.push(Recommendation {
                protocol: protocol.clone(),
                target: e.target.to_string(),
                location: e.location.to_string(),
                policy: policy.name.clone(),
                choice: lists.clone(),
                lines: e.lines,
                rankings: rankings.clone(),
            });
        }
    }
    Outcome {
        protocols,
        recommendations,
        verdicts,
    }
}

/// The choice's lists as a recommendation names them (`tls13_suites`, `ssh_kex` ...);
/// for sshd, `ssh_server_*` where its lines list less (within sshd's defaults).
pub fn choice_lists(choice: &Choice) -> BTreeMap<String, Vec<String>> {
    match choice {
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
            // What sshd's lines list where it differs: within sshd's defaults.
            let sl = s.server_lists();
            if s.server_hostkeys.is_some() {
                // What sshd's HostKeyAlgorithms lists: the server's own keys only.
                m.insert("ssh_server_hostkeys".to_string(), sl.hostkeys.clone());
            }
            for (key, v, all) in [
                ("ciphers", sl.ciphers, &s.ciphers),
                ("macs", sl.macs, &s.macs),
                ("kex", sl.kex, &s.kex),
            ] {
                if v != *all {
                    m.insert(format!("ssh_server_{key}"), v);
                }
            }
            m
        }
    }
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

/// The note on what post-quantum costs: `delta` ms `unit` over the classic
/// exchange. A cost that rounds to nothing or less is no cost: a negative one
/// reads as faster, never as "costs -0.15 ms".
pub fn pq_cost_note(delta: f64, unit: &str, against: &str) -> String {
    if delta >= 0.005 {
        format!("post-quantum costs {delta:.2} ms {unit} here ({against}); it stays first: its cost is shown, never traded away.")
    } else if delta <= -0.005 {
        format!(
            "post-quantum has no measurable cost here: it is {:.2} ms {unit} faster ({against}); it stays first.",
            -delta
        )
    } else {
        format!("post-quantum has no measurable cost here ({against}); it stays first.")
    }
}

/// What post-quantum key exchange costs here, which hybrid the policy allows but
/// the software lacks, and where the policy keeps what an auditor fails.
pub fn security_notes(k: &Knowledge, policy: &Policy, r: &Ranking, openssl: Option<&str>) -> Vec<String> {
    let Some(domain) = list_domain(&r.list) else { return Vec::new() };
    let mut out = Vec::new();
    let tier_of = |n: &str| tier(k, &k.judge(domain, n));
    if matches!(domain, Domain::SshKex | Domain::Group) {
        let pq = r.ranked.iter().find(|x| tier_of(&x.name) == Tier::PostQuantum);
        let classic = r.ranked.iter().find(|x| tier_of(&x.name) == Tier::Normal);
        if let (Some(p), Some(c)) = (pq, classic) {
            // What post-quantum adds per handshake or login, in ms (negative: it is faster).
            let (delta, unit) = if r.higher_is_better {
                // handshakes per second: the time per handshake is what it costs.
                let t = |v: f64| if v > 0.0 { 1.0 / v } else { 0.0 };
                ((t(p.median) - t(c.median)) * 1e3, "per handshake".to_string())
            } else {
                let cpu = if r.metric.contains("cpu") { "of CPU " } else { "" };
                ((p.median - c.median) * 1e3, format!("{cpu}per login"))
            };
            let against = format!(
                "{} {} against {} {}",
                p.name,
                figure(&r.metric, p.median),
                c.name,
                figure(&r.metric, c.median)
            );
            out.push(pq_cost_note(delta, &unit, &against));
        }
        // Hybrids the policy names but the software here lacks.
        let listed = r
            .ranked
            .iter()
            .map(|x| x.name.clone())
            .chain(r.unmeasured.iter().cloned())
            // and a second name configured beside its measured twin (one row per alias)
            .chain(r.order.iter().cloned())
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
                        openssl.unwrap_or("version not known")
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
    /// Issue 38: a negative post-quantum cost reads as none, or as faster.
    #[test]
    fn a_negative_post_quantum_cost_reads_as_faster() {
        let n = super::pq_cost_note(-0.15, "per handshake", "X25519MLKEM768 a against X25519 b");
        assert!(!n.contains("costs") && !n.contains("-0.15"), "{n}");
        assert!(
            n.starts_with("post-quantum has no measurable cost here: it is 0.15 ms per handshake faster"),
            "{n}"
        );
        let z = super::pq_cost_note(-0.001, "per login", "a against b");
        assert!(
            z.starts_with("post-quantum has no measurable cost here (a against b)") && !z.contains("-0.00"),
            "{z}"
        );
        let c = super::pq_cost_note(0.4, "per login", "a against b");
        assert!(c.starts_with("post-quantum costs 0.40 ms per login here"), "{c}");
    }

    use super::*;

    pub(super) use crate::testing::doc;

    /// OpenSSH 9.2's sshd defaults (`sshd -T -f /dev/null` on Debian 12).
    fn openssh92() -> crate::model::SshLists {
        let l = |s: &str| s.split(',').map(str::to_string).collect::<Vec<_>>();
        crate::model::SshLists {
            ciphers: l("chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-gcm@openssh.com"),
            macs: l("umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-sha1-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,hmac-sha2-256,hmac-sha2-512,hmac-sha1"),
            kex: l("sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-group14-sha256"),
            hostkeys: l("ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,sk-ssh-ed25519-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com,rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,sk-ssh-ed25519@openssh.com,sk-ecdsa-sha2-nistp256@openssh.com,rsa-sha2-512,rsa-sha2-256"),
        }
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
        // The run's machine had an sshd whose defaults were read.
        d.run.capabilities.sshd_defaults = Some(openssh92());
        let p = Policy::builtin("modern").unwrap();
        let out = recommend(&d, &k, &p, &crate::software::emitters(&["sshd".to_string()]));
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
        let notes = security_notes(&k, &p, rk, None);
        assert!(
            notes.iter().any(|n| n.starts_with("post-quantum costs 50.00 ms of CPU per login")),
            "{notes:?}"
        );
        // Without this machine's sshd defaults (the remote server's are never
        // read): no sshd list, and the comment says both.
        d.run.capabilities.sshd_defaults = None;
        d.run.capabilities.sshd_defaults_unread = Some("no sshd is installed (openssh-server)".into());
        let r = &recommend(&d, &k, &p, &crate::software::emitters(&["sshd".to_string()])).recommendations[0];
        assert!(r.lines.iter().all(|l| l.starts_with('#')), "{:?}", r.lines);
        assert!(
            r.lines
                .iter()
                .any(|l| l.contains("`ssh --host` cannot read a remote sshd's defaults") && l.contains("openssh-server")),
            "{:?}",
            r.lines
        );
    }

    /// The Debian 13 run that ranked sntrup761x25519 first: the budget reached
    /// sntrup761x25519-sha512@openssh.com and curve25519 but not mlkem768x25519. The
    /// unmeasured hybrid is not put after the measured one (OpenSSH 10's and the
    /// policy's order: mlkem768x25519 first), and the name configured beside its
    /// measured alias is not called "left out".
    #[test]
    fn an_unmeasured_hybrid_keeps_its_place_before_a_measured_one() {
        let k = Knowledge::builtin().unwrap();
        let hand = |kex: &str, ms: f64| {
            let f = |m: f64| serde_json::json!({"mean": m / 1e3, "ci95_low": m * 0.98 / 1e3, "ci95_high": m * 1.02 / 1e3, "samples": 8});
            serde_json::json!({"kind": "ssh-handshake", "subject": {"kex": kex, "hostkey": "ssh-ed25519"}, "metric": "seconds",
                "status": "ok", "median": 0.3, "mean": 0.3, "min": 0.29, "max": 0.31, "ci95_low": 0.29, "ci95_high": 0.31,
                "samples": 8, "handshake_cpu": {"client": f(ms), "method": "test"}})
        };
        let mut d = doc(serde_json::json!([
            hand("sntrup761x25519-sha512@openssh.com", 68.0),
            hand("curve25519-sha256", 13.0)
        ]));
        let kex = [
            "mlkem768x25519-sha256",
            "sntrup761x25519-sha512",
            "sntrup761x25519-sha512@openssh.com",
            "curve25519-sha256",
        ];
        d.run.capabilities.openssh = Some(crate::model::OpenSshCapabilities {
            version: "OpenSSH_10.0p2".into(),
            ciphers: vec!["aes128-gcm@openssh.com".into()],
            macs: vec!["hmac-sha2-256-etm@openssh.com".into()],
            kex: kex.iter().map(|x| x.to_string()).collect(),
            hostkey_algorithms: vec!["ssh-ed25519".into()],
        });
        let p = Policy::builtin("modern").unwrap();
        let out = recommend(&d, &k, &p, &crate::software::emitters(&["sshd".to_string()]));
        let r = &out.recommendations[0];
        assert_eq!(r.choice["ssh_kex"][..3], kex[..3], "{:?}", r.choice);
        let rk = r.rankings.iter().find(|x| x.list == "ssh_kex").unwrap();
        let notes = security_notes(&k, &p, rk, None);
        assert!(!notes.iter().any(|n| n.contains("left out")), "{notes:?}");
    }

    /// A run whose budget ran out after the SSH feature check but before any figure
    /// still gets every allowed option, in the policy's order, post-quantum first.
    #[test]
    fn ssh_lines_without_any_figure_follow_the_policy() {
        let k = Knowledge::builtin().unwrap();
        let mut d = doc(serde_json::json!([
            {"kind": "ssh-accept", "subject": {"kex": "curve25519-sha256"}, "metric": "accepted", "status": "ok",
             "median": 1.0, "mean": 1.0, "min": 1.0, "max": 1.0, "ci95_low": 1.0, "ci95_high": 1.0, "samples": 1}
        ]));
        let p = Policy::builtin("strict").unwrap();
        // Without the host's client lists (an older document), only what the run
        // checked, and a note that says so.
        let out = recommend(&d, &k, &p, &crate::software::emitters(&["sshd".to_string()]));
        let r = out.recommendations.first().expect("sshd lines without figures or lists");
        assert_eq!(r.choice["ssh_kex"], ["curve25519-sha256"]);
        assert!(r.choice["ssh_ciphers"].is_empty(), "{:?}", r.choice);
        let rk = r.rankings.iter().find(|x| x.list == "ssh_kex").unwrap();
        assert!(rk.notes.iter().any(|n| n.contains("not known for that host")), "{:?}", rk.notes);
        d.run.capabilities.openssh = Some(crate::model::OpenSshCapabilities {
            version: "OpenSSH_9.2p1".into(),
            ciphers: vec!["aes128-ctr".into(), "chacha20-poly1305@openssh.com".into()],
            macs: vec!["hmac-sha2-256-etm@openssh.com".into()],
            kex: vec![
                "curve25519-sha256".into(),
                "sntrup761x25519-sha512".into(),
                "ecdh-sha2-nistp256".into(),
            ],
            hostkey_algorithms: vec!["ssh-ed25519".into()],
        });
        let out = recommend(&d, &k, &p, &crate::software::emitters(&["sshd".to_string()]));
        let r = out.recommendations.first().expect("sshd lines without figures");
        let kex = &r.choice["ssh_kex"];
        assert!(kex[0].contains("x25519-sha"), "{kex:?}");
        assert!(kex.contains(&"curve25519-sha256".to_string()), "{kex:?}");
        assert!(r.rankings.iter().all(|x| x.ranked.is_empty()));
        assert!(r.rankings.iter().all(|x| x.notes.iter().all(|n| !n.contains("not known"))));
        // Without any SSH result at all, no SSH recommendation.
        assert!(recommend(
            &doc(serde_json::json!([])),
            &k,
            &p,
            &crate::software::emitters(&["sshd".to_string()])
        )
        .recommendations
        .is_empty());
    }

    /// A run that measured nothing (a loaded main job's budget spent before SSH and
    /// TLS): with the host's OpenSSH and OpenSSL known, every list the policy
    /// constrains is still configured, in the policy's order, nothing it refuses in
    /// it, and the SSH lines say they were not measured (issue 37, defect 11).
    #[test]
    fn a_run_without_figures_still_keeps_every_list_to_the_policy() {
        let k = Knowledge::builtin().unwrap();
        let p = Policy::builtin("intermediate").unwrap();
        let mut d = doc(serde_json::json!([]));
        assert!(
            recommend(&d, &k, &p, &crate::software::emitters(&[])).recommendations.is_empty(),
            "nothing known, nothing said"
        );
        let l = |s: &str| s.split(',').map(str::to_string).collect::<Vec<_>>();
        d.run.capabilities.openssh = Some(crate::model::OpenSshCapabilities {
            version: "OpenSSH_9.2p1".into(),
            ciphers: l("aes128-cbc,aes128-ctr,aes256-ctr,aes128-gcm@openssh.com,chacha20-poly1305@openssh.com"),
            macs: l("hmac-sha1,hmac-sha2-256,umac-64@openssh.com,umac-64-etm@openssh.com,hmac-sha1-etm@openssh.com,hmac-sha2-256-etm@openssh.com,umac-128-etm@openssh.com"),
            kex: l("diffie-hellman-group14-sha1,curve25519-sha256,sntrup761x25519-sha512"),
            hostkey_algorithms: l("ssh-ed25519,rsa-sha2-512"),
        });
        d.run.capabilities.openssl = Some(crate::model::OpenSslCapabilities {
            groups: l("x25519,secp256r1,secp384r1,ffdhe2048"),
            ..Default::default()
        });
        d.run.capabilities.sshd_defaults = Some(openssh92());
        let out = recommend(&d, &k, &p, &crate::software::emitters(&["sshd".to_string(), "nginx".to_string()]));
        let sshd = out
            .recommendations
            .iter()
            .find(|r| r.target == "sshd")
            .expect("sshd lines without figures");
        let macs = sshd.lines.iter().position(|x| x.starts_with("MACs ")).expect("a MACs line");
        assert_eq!(sshd.lines[macs - 1], "# MACs: not measured in this run; ordered by the policy");
        let allowed = |d: Domain, n: &str| p.allows(&k.judge(d, n)).allowed;
        let host = d.run.capabilities.openssh.clone().unwrap();
        for (list, dom) in [
            ("ssh_ciphers", Domain::SshCipher),
            ("ssh_macs", Domain::SshMac),
            ("ssh_kex", Domain::SshKex),
        ] {
            let v = &sshd.choice[list];
            assert!(!v.is_empty() && v.iter().all(|n| allowed(dom, n)), "{list}: {v:?}");
            let r = sshd.rankings.iter().find(|r| r.list == list).unwrap();
            assert!(r.ranked.is_empty());
            // The policy's order: what `ssh_ordered` gives the host's list, refused left out.
            let names = match dom {
                Domain::SshCipher => host.ciphers.clone(),
                Domain::SshMac => host.macs.clone(),
                _ => host.kex.clone(),
            };
            let want: Vec<String> = order::ssh_ordered(&k, &p, dom, names)
                .into_iter()
                .filter(|n| allowed(dom, n))
                .collect();
            assert_eq!(*v, want, "{list}");
        }
        assert_eq!(
            sshd.choice["ssh_macs"],
            ["hmac-sha2-256-etm@openssh.com", "umac-128-etm@openssh.com", "hmac-sha2-256"]
        );
        let nginx = out
            .recommendations
            .iter()
            .find(|r| r.target == "nginx")
            .expect("nginx lines without figures");
        for list in ["tls13_suites", "tls12_suites", "groups"] {
            let v = &nginx.choice[list];
            let d = list_domain(list).unwrap();
            assert!(!v.is_empty() && v.iter().all(|n| allowed(d, n)), "{list}: {v:?}");
        }
        assert!(nginx.lines.iter().any(|x| x.starts_with("ssl_ciphers ")), "{:?}", nginx.lines);
        // Without sshd's own defaults (and the cause its run recorded): the same
        // choice, but no sshd list, and the comment names the cause.
        d.run.capabilities.sshd_defaults = None;
        d.run.capabilities.sshd_defaults_unread = Some("no sshd is installed (openssh-server)".into());
        let out = recommend(&d, &k, &p, &crate::software::emitters(&["sshd".to_string()]));
        let sshd = &out.recommendations[0];
        assert!(!sshd.choice["ssh_kex"].is_empty());
        assert!(sshd.lines.iter().all(|x| x.starts_with('#')), "{:?}", sshd.lines);
        assert!(
            sshd.lines.iter().any(|x| x.contains("(no sshd is installed (openssh-server))")),
            "{:?}",
            sshd.lines
        );
    }

    pub(super) fn prim(alg: &str, op: &str, bytes: u64, median: f64) -> serde_json::Value {
        serde_json::json!({"kind": "primitive", "subject": {"algorithm": alg, "op": op, "bytes": bytes, "library": "openssl"},
            "metric": "bytes_per_sec", "status": "ok", "median": median, "mean": median, "min": median * 0.99,
            "max": median * 1.01, "ci95_low": median * 0.995, "ci95_high": median * 1.005, "samples": 20, "cv": 0.01})
    }

    #[test]
    fn the_documents_records_are_the_same_json_as_the_ranking() {
        let k = Knowledge::builtin().unwrap();
        let d = doc(serde_json::json!([
            prim("aes-128-gcm", "encrypt", 16384, 4.0e9),
            prim("aes-128-cbc", "encrypt", 16384, 9.0e9),
            prim("hmac-sha1", "mac", 16384, 9.0e9),
        ]));
        let out = recommend(&d, &k, &Policy::builtin("intermediate").unwrap(), &crate::software::emitters(&[]));
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
