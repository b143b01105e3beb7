//! Named subjects: a few TLS suites and groups and SSH ciphers, MACs and key
//! exchanges, given by name, measured with the main job's own stages (TLS on
//! loopback with the system libssl, `tls::loopback`; SSH through a private sshd,
//! `ssh::sweep`). The installed choice is measured this way beside what the policy
//! allows (`check`'s passes, the main job's "now"), so that "now" and
//! "recommended" come from one run under the same conditions. Which subjects
//! those are is the caller's business (`diff::subjects`); this stage only
//! measures them.

use crate::backend::openssl::tls::Protocol;
use crate::measure::sink::Measurements;
use crate::measure::{ssh, tls};
use crate::options::TlsOptions;
use crate::units::Seconds;
use anyhow::Result;

/// What to measure, by name. An empty list measures nothing of its kind (a
/// bulk or handshake sweep that needs a fixed partner takes one default).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct NamedSubjects {
    /// TLS suites (IANA) for bulk, and groups for handshakes.
    pub tls_suites: Vec<String>,
    pub tls_groups: Vec<String>,
    pub ssh_ciphers: Vec<String>,
    pub ssh_macs: Vec<String>,
    pub ssh_kex: Vec<String>,
    /// Bulk only, no handshakes.
    pub bulk_only: bool,
}

impl NamedSubjects {
    /// Nothing to measure (the MACs alone need a cipher to go with).
    pub fn is_empty(&self) -> bool {
        self.tls_suites.is_empty() && self.tls_groups.is_empty() && self.ssh_ciphers.is_empty() && self.ssh_kex.is_empty()
    }
}

/// Measures `s` into `session` within `budget`: TLS first, then SSH (each half the
/// budget when both are needed).
pub fn measure(s: &NamedSubjects, session: &mut Measurements, budget: Seconds) -> Result<()> {
    let with_tls = !s.tls_suites.is_empty() || !s.tls_groups.is_empty();
    let with_ssh = !s.ssh_ciphers.is_empty() || !s.ssh_kex.is_empty();
    let share = if with_tls && with_ssh { 0.5 } else { 1.0 };
    let t0 = std::time::Instant::now();
    if with_tls {
        tls::loopback(&tls_plan(s, Seconds(budget.0 * share))?, session)?;
    }
    if with_ssh && !crate::interrupt::requested() {
        let left = (budget.0 - t0.elapsed().as_secs_f64()).max(budget.0 * 0.25);
        measure_ssh(s, session, Seconds(left))?;
    }
    Ok(())
}

/// The loopback plan of `s`'s TLS subjects: every suite for bulk; one full
/// handshake per protocol and group, enough to show what a group change costs.
fn tls_plan(s: &NamedSubjects, budget: Seconds) -> Result<tls::LoopbackPlan> {
    // One certificate type, the one the suites need, so that handshakes compare
    // key exchanges and not certificates.
    let cert = if s.tls_suites.iter().any(|x| x.contains("_ECDSA_")) && !s.tls_suites.iter().any(|x| x.contains("_RSA_")) {
        "ecdsa-p256"
    } else {
        "rsa-2048"
    };
    let suites = if s.tls_suites.is_empty() {
        vec!["TLS_AES_128_GCM_SHA256".to_string()]
    } else {
        s.tls_suites.clone()
    };
    let groups: Vec<String> = s
        .tls_groups
        .iter()
        .filter_map(|g| crate::aliases::group_spelling(g))
        .map(String::from)
        .collect();
    let options = TlsOptions {
        suites,
        groups,
        certs: vec![cert.to_string()],
        protocols: vec!["1.2".to_string(), "1.3".to_string()],
        no_bulk: s.tls_suites.is_empty(),
        no_handshakes: s.bulk_only,
        ..TlsOptions::default()
    };
    let mut plan = tls::LoopbackPlan::new(&options, budget)?;
    let mut seen: Vec<(Protocol, Option<&str>)> = Vec::new();
    plan.items.retain(|it| match it.work {
        tls::Work::Handshake { resumed: true } => false,
        tls::Work::Handshake { .. } => {
            let key = (it.protocol, it.group);
            if seen.contains(&key) || it.suite.kx == "RSA" || it.suite.kx == "DH" {
                false
            } else {
                seen.push(key);
                true
            }
        }
        tls::Work::Bulk(_) => true,
    });
    Ok(plan)
}

/// `s`'s SSH subjects through a private sshd, the main job's own sweep: each
/// list kept to what this OpenSSH has, an empty one filled with one option.
fn measure_ssh(s: &NamedSubjects, session: &mut Measurements, budget: Seconds) -> Result<()> {
    let o = crate::discover::openssh::discover()?;
    let sshd = crate::discover::openssh::find_sshd()?;
    let servable = o.private_hostkeys();
    let keep = |v: &[String], have: &[String]| -> Vec<String> { v.iter().filter(|x| have.contains(x)).cloned().collect() };
    // An empty list means "all" to the plan: fill the gaps with one option each.
    let or_one = |v: Vec<String>, one: Option<&String>| if v.is_empty() { one.into_iter().cloned().collect() } else { v };
    let ciphers = or_one(keep(&s.ssh_ciphers, &o.ciphers), o.aead.first());
    let macs = or_one(keep(&s.ssh_macs, &o.macs), o.macs.first());
    let measured_kex = keep(&s.ssh_kex, &o.kex);
    let handshakes = !measured_kex.is_empty();
    let kex = or_one(measured_kex, Some(&o.default_kex()));
    let hostkeys = vec!["ssh-ed25519".to_string()];
    let t0 = std::time::Instant::now();
    let plan = ssh::SshPlan::new(
        &o,
        &ciphers,
        &macs,
        &kex,
        &hostkeys,
        Some(&servable),
        false,
        None,
        false,
        handshakes,
        budget,
    )?;
    let daemon = crate::backend::openssh::PrivateSshd::start(&sshd, &o)?;
    let plan = ssh::SshPlan {
        budget: Seconds((budget.0 - t0.elapsed().as_secs_f64()).max(1.0)),
        ..plan
    };
    let client = daemon.client(&o.ssh);
    let r = ssh::sweep(&plan, &client, session);
    drop(daemon);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bulk for every suite, and one full handshake per protocol and group,
    /// none resumed and none by RSA or DH key transport; bulk only leaves the
    /// handshakes out, and no suite leaves bulk out.
    #[test]
    fn the_tls_plan_is_every_suite_and_one_full_handshake_per_protocol_and_group() {
        let s = NamedSubjects {
            tls_suites: vec!["TLS_AES_128_GCM_SHA256".into(), "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".into()],
            tls_groups: vec!["x25519".into(), "secp256r1".into()],
            ..NamedSubjects::default()
        };
        let plan = tls_plan(&s, Seconds(4.0)).unwrap();
        let mut handshakes = Vec::new();
        let mut bulk = Vec::new();
        for it in &plan.items {
            match it.work {
                tls::Work::Handshake { resumed } => {
                    assert!(!resumed && it.suite.kx != "RSA" && it.suite.kx != "DH", "{it:?}");
                    let key = (it.protocol, it.group);
                    assert!(!handshakes.contains(&key), "two handshakes for {key:?}");
                    handshakes.push(key);
                }
                tls::Work::Bulk(_) => bulk.push(it.suite.iana.clone()),
            }
        }
        for iana in &s.tls_suites {
            assert!(bulk.contains(iana), "{iana} not measured: {bulk:?}");
        }
        assert!(!handshakes.is_empty());
        assert!(plan.items.iter().all(|it| it.cert.name() == "rsa-2048"), "{:?}", plan.items);
        let bulk_only = tls_plan(
            &NamedSubjects {
                bulk_only: true,
                ..s.clone()
            },
            Seconds(4.0),
        )
        .unwrap();
        assert!(bulk_only.items.iter().all(|it| matches!(it.work, tls::Work::Bulk(_))));
        let groups_only = tls_plan(
            &NamedSubjects {
                tls_suites: Vec::new(),
                ..s
            },
            Seconds(4.0),
        )
        .unwrap();
        assert!(groups_only.items.iter().all(|it| !matches!(it.work, tls::Work::Bulk(_))));
    }
}
