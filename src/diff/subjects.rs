//! The installed choice as a subject of the run: which subjects make "now" and
//! what the policy allows measurable side by side (the negotiated choices, the
//! candidates `check` compares them with, what is still undecided). They are
//! measured by the measure stage, `measure::named`, with the same probes as
//! everything else (TLS on loopback with the system libssl, SSH through the
//! private sshd), so that "now" and "recommended" come from one run under the
//! same conditions.

use super::negotiate::Negotiated;
use super::{Current, Offer};
use crate::judge::{Domain, Knowledge, Policy};
use crate::measure::named::NamedSubjects;
use crate::model::{Kind, Metric, Status};

/// What to measure for a set of installed configurations: the measure stage's own
/// input (`measure::named`), built here from what is installed and negotiated.
pub type Subjects = NamedSubjects;

fn push(v: &mut Vec<String>, s: &str) {
    if !s.is_empty() && !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

/// The negotiated choices only (what the main job adds to its own subjects).
pub fn negotiated(currents: &[Current]) -> Subjects {
    of(currents.iter().filter_map(|c| c.negotiated.as_ref().ok()))
}

/// The subjects behind some negotiated choices.
pub fn of<'a>(choices: impl IntoIterator<Item = &'a Negotiated>) -> Subjects {
    let mut s = Subjects::default();
    for n in choices {
        match n {
            Negotiated::Tls { suite, group, .. } => {
                push(&mut s.tls_suites, suite);
                if let Some(g) = group {
                    push(&mut s.tls_groups, g);
                }
            }
            Negotiated::Ssh { cipher, mac, kex, .. } => {
                push(&mut s.ssh_ciphers, cipher);
                if let Some(m) = mac {
                    push(&mut s.ssh_macs, m);
                }
                push(&mut s.ssh_kex, kex);
            }
        }
    }
    s
}

/// What `check` measures again: for each diff whose throughput change is not
/// yet measurable (the two intervals overlap, yet the choices differ), the
/// choice now and the recommended one, bulk only. Their new samples are pooled
/// with the first pass's (`Measurements::fold_in`), so the time left goes to the
/// one comparison the answer is about.
pub fn undecided(diffs: &[super::SoftwareDiff]) -> Subjects {
    // Not one measured through a private server: loopback samples would not
    // narrow it (see `super::through`).
    let open = |d: &&super::SoftwareDiff| {
        d.changes.iter().any(|c| {
            c.metric == "throughput" && !c.measurable && c.gain.is_some_and(|g| g != 0.0) && c.gain_low.is_some() && c.how.is_none()
        })
    };
    let mut s = of(diffs.iter().filter(open).flat_map(|d| d.now.iter().chain(d.recommended.iter())));
    s.tls_groups.clear();
    s.ssh_kex.clear();
    s.bulk_only = true;
    s
}

/// The negotiated choices and every option the policy allows that this machine
/// has (TLS ≤ 1.2 suites for the certificate type in use): what `check` measures.
pub fn with_candidates(currents: &[Current], k: &Knowledge, policy: &Policy) -> Subjects {
    let mut s = negotiated(currents);
    let allowed = |d: Domain, n: &str| policy.allows(&k.judge(d, n)).allowed;
    if currents.iter().any(|c| matches!(c.offer, Offer::Tls(_))) {
        let local = crate::discover::openssl::tls_suites().unwrap_or_default();
        // The certificate type the installed server uses, judged by its negotiated suite.
        let au = currents
            .iter()
            .find_map(|c| match &c.negotiated {
                Ok(Negotiated::Tls { suite, .. }) if suite.contains("_ECDSA_") => Some("ECDSA"),
                Ok(Negotiated::Tls { .. }) => Some("RSA"),
                _ => None,
            })
            .unwrap_or("RSA");
        // Few subjects, so each gets enough samples for a tight interval: the
        // TLS 1.3 suites and the AEAD ECDHE suites for that certificate.
        for l in &local {
            let tls13 = l.min_protocol == "TLSv1.3";
            let d = if tls13 { Domain::Tls13Suite } else { Domain::Tls12Suite };
            let aead12 = l.kx == "ECDH" && l.au == au && (l.enc.contains("GCM") || l.enc.contains("CHACHA"));
            if allowed(d, &l.iana) && (tls13 || aead12) && !l.enc.contains("CCM") {
                push(&mut s.tls_suites, &l.iana);
            }
        }
        for g in ["x25519", "secp256r1"] {
            if allowed(Domain::Group, g) {
                push(&mut s.tls_groups, g);
            }
        }
    }
    if currents.iter().any(|c| matches!(c.offer, Offer::Ssh(_))) {
        // Kept small (each SSH sample is a whole session): the AEAD ciphers and
        // two CTR ones, two encrypt-then-MAC MACs, and the first four key
        // exchanges the client would pick, each when the policy allows it.
        if let Ok(o) = crate::discover::openssh::discover() {
            for c in o
                .ciphers
                .iter()
                .filter(|c| o.is_aead(c) || *c == "aes128-ctr" || *c == "aes256-ctr")
            {
                if allowed(Domain::SshCipher, c) {
                    push(&mut s.ssh_ciphers, c);
                }
            }
            for m in ["umac-128-etm@openssh.com", "hmac-sha2-256-etm@openssh.com"] {
                if o.macs.iter().any(|x| x == m) && allowed(Domain::SshMac, m) {
                    push(&mut s.ssh_macs, m);
                }
            }
            // sshd's peer is a default client (see `super::current`), the
            // ssh client's own diff this machine's configured one.
            let sshd = currents.iter().any(|c| matches!(&c.offer, Offer::Ssh(s) if s.server));
            let client = match sshd {
                true => crate::software::ssh::read::read_default().ok(),
                false => crate::software::read_installed("ssh", None).ok().flatten(),
            };
            let order: Vec<String> = match client.map(|c| c.config) {
                Some(crate::discover::installed::Config::Ssh(c)) => c.kex,
                _ => o.kex.clone(),
            };
            for x in order.iter().filter(|x| o.kex.contains(x) && allowed(Domain::SshKex, x)).take(4) {
                push(&mut s.ssh_kex, x);
            }
        }
    }
    s
}

/// `subjects` less what the run already measured (`r`, for the main job).
pub fn not_in(subjects: &Subjects, r: &[crate::model::ResultRecord]) -> Subjects {
    let ok = |kind: Kind, f: &dyn Fn(&crate::model::Subject) -> bool| {
        r.iter()
            .any(|x| x.kind == kind && x.status == Status::Ok && x.metric != Metric::Accepted && f(&x.subject))
    };
    Subjects {
        tls_suites: subjects
            .tls_suites
            .iter()
            .filter(|s| !ok(Kind::TlsBulk, &|x| x.suite.as_deref().is_some_and(|m| super::same_alg(m, s))))
            .cloned()
            .collect(),
        tls_groups: subjects
            .tls_groups
            .iter()
            .filter(|g| {
                let canon = crate::aliases::group_spelling(g);
                !ok(Kind::TlsHandshake, &|x| {
                    x.group.as_deref().and_then(crate::aliases::group_spelling) == canon
                })
            })
            .cloned()
            .collect(),
        ssh_ciphers: subjects
            .ssh_ciphers
            .iter()
            .filter(|c| !ok(Kind::SshBulk, &|x| x.cipher.as_deref() == Some(c.as_str())))
            .cloned()
            .collect(),
        ssh_macs: subjects
            .ssh_macs
            .iter()
            .filter(|m| !ok(Kind::SshBulk, &|x| x.mac.as_deref() == Some(m.as_str())))
            .cloned()
            .collect(),
        ssh_kex: subjects
            .ssh_kex
            .iter()
            .filter(|k| !ok(Kind::SshHandshake, &|x| x.kex.as_deref().is_some_and(|m| super::same_alg(m, k))))
            .cloned()
            .collect(),
        bulk_only: subjects.bulk_only,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{Change, Figure, SoftwareDiff};

    fn tls(suite: &str) -> Negotiated {
        Negotiated::Tls {
            version: "TLSv1.2".into(),
            suite: suite.into(),
            openssl_name: String::new(),
            group: Some("x25519".into()),
        }
    }
    fn ssh(cipher: &str, mac: Option<&str>) -> Negotiated {
        Negotiated::Ssh {
            cipher: cipher.into(),
            mac: mac.map(String::from),
            kex: "curve25519-sha256".into(),
            hostkey: "ssh-ed25519".into(),
        }
    }
    fn diff(now: Negotiated, rec: Negotiated, n: (f64, f64, f64), r: (f64, f64, f64)) -> SoftwareDiff {
        let f = |(median, ci95_low, ci95_high): (f64, f64, f64)| {
            Some(Figure {
                median,
                ci95_low,
                ci95_high,
            })
        };
        SoftwareDiff {
            changes: vec![Change::new("throughput", "bytes_per_sec", true, f(n), f(r), now == rec)],
            now: Some(now),
            recommended: Some(rec),
            ..SoftwareDiff::blank("x")
        }
    }

    /// Only comparisons the first pass could not call are measured again, bulk
    /// only: not a measurable one, not an unchanged one.
    #[test]
    fn the_second_pass_takes_only_the_open_comparisons() {
        let open = diff(
            tls("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"),
            tls("TLS_AES_128_GCM_SHA256"),
            (400.0, 200.0, 900.0),
            (1200.0, 500.0, 2500.0),
        );
        let called = diff(
            ssh("aes128-cbc", Some("hmac-sha1")),
            ssh("aes128-gcm@openssh.com", None),
            (300.0, 290.0, 310.0),
            (900.0, 880.0, 920.0),
        );
        let same = diff(
            ssh("aes256-ctr", Some("hmac-sha2-256")),
            ssh("aes256-ctr", Some("hmac-sha2-256")),
            (1.0, 0.5, 2.0),
            (1.0, 0.5, 2.0),
        );
        // Open, but measured through a private server: loopback samples would not
        // narrow it, so the second pass leaves it out.
        let mut through = diff(
            tls("TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA"),
            tls("TLS_CHACHA20_POLY1305_SHA256"),
            (400.0, 200.0, 900.0),
            (1200.0, 500.0, 2500.0),
        );
        through.changes[0].how = Some(crate::measure::tls::through::HOW.into());
        let s = undecided(&[open, called, same, through]);
        assert_eq!(s.tls_suites, ["TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "TLS_AES_128_GCM_SHA256"]);
        assert!(s.ssh_ciphers.is_empty() && s.ssh_macs.is_empty(), "{s:?}");
        assert!(s.tls_groups.is_empty() && s.ssh_kex.is_empty() && s.bulk_only, "{s:?}");
        // Nothing open: nothing to measure again.
        assert!(undecided(&[]).is_empty());
    }
}
