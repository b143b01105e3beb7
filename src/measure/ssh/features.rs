//! What both sides accept: one quick connection per algorithm (`ssh-accept`).

use super::*;
use crate::backend::openssh::client::{Algorithms, Client, SshError};
use crate::measure::sink::Measurements;
use crate::model::{Kind, Metric, ResultRecord, Status, Subject};
use anyhow::{bail, Result};

/// Which single algorithms both sides accept.
#[derive(Debug, Default, Clone)]
pub(super) struct Accepted {
    pub(super) accepted: Vec<Subject>,
    pub(super) refused: Vec<(Subject, String)>,
}

impl Accepted {
    /// Whether the single-algorithm subject `s` was checked already (either way).
    pub(super) fn knows(&self, s: &Subject) -> bool {
        self.accepted.contains(s) || self.refused.iter().any(|(r, _)| r == s)
    }
    /// The reason a combination cannot run, if one of its algorithms was refused.
    pub(super) fn refusal(&self, s: &Subject) -> Option<String> {
        self.refused
            .iter()
            .find(|(r, _)| {
                (r.cipher.is_some() && r.cipher == s.cipher)
                    || (r.mac.is_some() && r.mac == s.mac)
                    || (r.kex.is_some() && r.kex == s.kex)
                    || (r.hostkey.is_some() && r.hostkey == s.hostkey)
            })
            .map(|(_, why)| why.clone())
    }
}

/// Runs `checks` (a few connections at a time), records them as `ssh-accept`, and
/// notes refusals in `acc`. Fatal errors (unreachable, authentication) end the run.
/// Batches stop once `clock` runs out: algorithms left unchecked then are neither
/// accepted nor refused (their subjects are skipped for want of time anyway).
pub(super) fn run_checks(
    checks: Vec<(Subject, Algorithms)>,
    client: &Client,
    session: &mut Measurements,
    acc: &mut Accepted,
    clock: &Clock,
) -> Result<()> {
    // What an earlier sweep against this target checked is not checked again.
    let checks: Vec<_> = checks.into_iter().filter(|(s, _)| !acc.knows(s)).collect();
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).clamp(1, 4);
    let mut outcomes: Vec<Option<Result<(), SshError>>> = vec![None; checks.len()];
    for batch in (0..checks.len()).collect::<Vec<_>>().chunks(workers) {
        if crate::interrupt::requested() || clock.left() <= 0.0 {
            break;
        }
        std::thread::scope(|scope| {
            let hs: Vec<_> = batch
                .iter()
                .map(|&i| {
                    let (client, algs) = (client, &checks[i].1);
                    (i, scope.spawn(move || client.run(algs, "true")))
                })
                .collect();
            for (i, h) in hs {
                outcomes[i] = h.join().ok();
            }
        });
    }
    for ((subject, _), outcome) in checks.into_iter().zip(outcomes) {
        let Some(outcome) = outcome else { continue };
        let rec = match outcome {
            Ok(()) => {
                acc.accepted.push(subject.clone());
                ResultRecord::accepted(Kind::SshAccept, subject, true, None)
            }
            // The run's deadline stopped the check: neither accepted nor refused
            // (its subjects are recorded as skipped for want of time).
            Err(SshError::Deadline(_)) => continue,
            Err(e) if e.is_fatal() => bail!("{e}"),
            Err(SshError::Refused(why)) => {
                acc.refused.push((subject.clone(), why.clone()));
                ResultRecord::accepted(Kind::SshAccept, subject, false, Some(why))
            }
            Err(e) => {
                acc.refused.push((subject.clone(), e.to_string()));
                ResultRecord::not_ok(Kind::SshAccept, subject, Metric::Accepted, Status::Failed, e.to_string())
            }
        };
        session.record(rec)?;
    }
    Ok(())
}

/// The feature check: one connection per algorithm. Key exchanges and host keys
/// first (nothing else forced), then ciphers over an accepted kex and host key,
/// then MACs with an accepted non-AEAD cipher (AEAD ciphers negotiate no MAC).
/// Returns the refusals and the plan with its fixed bulk kex and host key moved to
/// accepted ones when the preferred ones were refused. Algorithms `known` from an
/// earlier sweep against the same target are not checked (nor recorded) again.
pub(super) fn feature_check(
    plan: &SshPlan,
    client: &Client,
    session: &mut Measurements,
    clock: &Clock,
    known: Accepted,
) -> Result<(Accepted, SshPlan)> {
    session.progress_message("ssh: which algorithms both sides accept");
    let mut acc = known;
    // The private sshd offers everything the client has: its handshakes check
    // their own key exchanges and host keys (a refusal is recorded as one), so
    // the feature check spends connections only on what bulk needs first.
    let private = matches!(client.target, crate::backend::openssh::client::Destination::Private { .. }) && plan.admitted.is_some();
    let kex: Vec<&String> = match private {
        true => plan.kex.iter().filter(|k| **k == plan.bulk_kex).collect(),
        false => plan.kex.iter().collect(),
    };
    let hostkeys: Vec<&String> = match private {
        true => plan.bulk_hostkey.iter().collect(),
        false => plan.hostkeys.iter().flatten().collect(),
    };
    let mut checks: Vec<(Subject, Algorithms)> = kex.iter().map(|k| only_kex(k, Algorithms::default())).collect();
    checks.extend(hostkeys.iter().map(|h| only_hostkey(h)));
    run_checks(checks, client, session, &mut acc, clock)?;
    let plan = with_accepted_bulk(plan, &acc);
    let base = Algorithms {
        kex: Some(plan.bulk_kex.clone()),
        hostkey: plan.bulk_hostkey.clone(),
        ..Default::default()
    };
    let checks = plan.ciphers.iter().map(|c| only_cipher(c, &base)).collect();
    run_checks(checks, client, session, &mut acc, clock)?;
    let fixed = plan
        .ciphers
        .iter()
        .find(|c| !plan.is_aead(c) && acc.accepted.contains(&only_cipher(c, &base).0));
    if let Some(fc) = fixed {
        let with_cipher = Algorithms {
            cipher: Some(fc.clone()),
            ..base.clone()
        };
        let checks = plan.macs.iter().map(|m| only_mac(m, &with_cipher)).collect();
        run_checks(checks, client, session, &mut acc, clock)?;
    }
    Ok((acc, plan))
}

/// The plan with its bulk key exchange and host key moved to accepted ones when
/// the preferred ones were refused (or not checked).
fn with_accepted_bulk(plan: &SshPlan, acc: &Accepted) -> SshPlan {
    let mut plan = plan.clone();
    let ok = |s: (Subject, Algorithms)| acc.accepted.contains(&s.0);
    if !ok(only_kex(&plan.bulk_kex, Algorithms::default())) {
        if let Some(k) = plan.kex.iter().find(|k| ok(only_kex(k, Algorithms::default()))) {
            plan.bulk_kex = k.clone();
        }
    }
    if let Some(h) = plan.bulk_hostkey.clone() {
        if !ok(only_hostkey(&h)) {
            if let Some(h) = plan.hostkeys.iter().flatten().find(|h| ok(only_hostkey(h))) {
                plan.bulk_hostkey = Some(h.clone());
            }
        }
    }
    plan
}

/// The subject of one key exchange, and `base` with it forced.
fn only_kex(k: &str, base: Algorithms) -> (Subject, Algorithms) {
    let s = Subject {
        kex: Some(k.to_string()),
        ..Default::default()
    };
    (
        s,
        Algorithms {
            kex: Some(k.to_string()),
            ..base
        },
    )
}

/// The subject of one host key, and the algorithms forcing only it.
fn only_hostkey(h: &str) -> (Subject, Algorithms) {
    let s = Subject {
        hostkey: Some(h.to_string()),
        ..Default::default()
    };
    let a = Algorithms {
        hostkey: Some(h.to_string()),
        ..Default::default()
    };
    (s, a)
}

/// The subject of one cipher, and `base` with it forced.
fn only_cipher(c: &str, base: &Algorithms) -> (Subject, Algorithms) {
    let s = Subject {
        cipher: Some(c.to_string()),
        ..Default::default()
    };
    let a = Algorithms {
        cipher: Some(c.to_string()),
        ..base.clone()
    };
    (s, a)
}

/// The subject of one MAC, and `base` (with its fixed cipher) with it forced.
fn only_mac(m: &str, base: &Algorithms) -> (Subject, Algorithms) {
    let s = Subject {
        mac: Some(m.to_string()),
        ..Default::default()
    };
    let a = Algorithms {
        mac: Some(m.to_string()),
        ..base.clone()
    };
    (s, a)
}
