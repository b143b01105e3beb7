//! Config lines from per-list choices (a class's or the fleet's), through the
//! same emitters as a single run, with what the emitters need to know of the
//! hosts besides the lists ([`HostFacts`]: common to every class's choice).

use super::Lines;
use crate::judge::Knowledge;
use crate::recommend::choice::{self, Choice, SshChoice, TlsChoice};
use crate::recommend::{self, Outcome};
use std::collections::BTreeMap;

/// TLS protocols every class's choice has.
pub(super) fn common_protocols(outcomes: &[Outcome]) -> Vec<String> {
    let mut protocols: Option<Vec<String>> = None;
    for o in outcomes {
        for (_, _, c) in &o.protocols {
            if let Choice::Tls(t) = c {
                protocols = Some(match protocols {
                    None => t.protocols.clone(),
                    Some(p) => p.into_iter().filter(|x| t.protocols.contains(x)).collect(),
                });
            }
        }
    }
    protocols.unwrap_or_default()
}

/// What the emitters need about the hosts besides the lists, common to every
/// class's choice: tiered groups only where every OpenSSL takes them, GnuTLS
/// groups and sshd defaults every host has (not known when one class's are not).
#[derive(Default)]
pub(super) struct HostFacts {
    tiers: bool,
    gnutls_groups: Option<Vec<String>>,
    sshd_defaults: Option<choice::SshLists>,
    /// Why `sshd_defaults` is `None`: a host whose sshd's defaults were not read.
    sshd_defaults_unread: Option<String>,
    beyond_defaults: bool,
}

pub(super) fn host_facts(outcomes: &[Outcome]) -> HostFacts {
    let both = |a: Vec<String>, b: &[String]| -> Vec<String> { a.into_iter().filter(|x| b.contains(x)).collect() };
    let (mut tls, mut ssh) = (Vec::new(), Vec::new());
    for (_, _, c) in outcomes.iter().flat_map(|o| o.protocols.iter()) {
        match c {
            Choice::Tls(t) => tls.push(t),
            Choice::Ssh(s) => ssh.push(s),
        }
    }
    let gnutls_groups = tls
        .iter()
        .try_fold(None, |acc: Option<Vec<String>>, t| {
            let g = t.gnutls_groups.clone()?;
            Some(Some(match acc {
                None => g,
                Some(a) => both(a, &g),
            }))
        })
        .flatten();
    let sshd_defaults = ssh
        .iter()
        .try_fold(None, |acc: Option<choice::SshLists>, s| {
            let d = s.server_defaults.clone()?;
            Some(Some(match acc {
                None => d,
                Some(a) => choice::SshLists {
                    ciphers: both(a.ciphers, &d.ciphers),
                    macs: both(a.macs, &d.macs),
                    kex: both(a.kex, &d.kex),
                    hostkeys: both(a.hostkeys, &d.hostkeys),
                },
            }))
        })
        .flatten();
    let sshd_defaults_unread = sshd_defaults.is_none().then(|| {
        let one = ssh.iter().find(|s| s.server_defaults.is_none());
        let why = one
            .and_then(|s| s.server_defaults_unread.clone())
            .unwrap_or_else(|| "its run did not record why".into());
        format!("not read on every host: {why}")
    });
    HostFacts {
        tiers: !tls.is_empty() && tls.iter().all(|t| t.tiers),
        gnutls_groups,
        sshd_defaults,
        sshd_defaults_unread,
        beyond_defaults: ssh.iter().any(|s| s.beyond_defaults),
    }
}

/// Config lines from per-list choices, through the same emitters as a single run.
/// A list that is empty is left out of the lines (the software keeps its default);
/// a TLS protocol without suites is left out too. The SSH lines of the lists in
/// `unmeasured` (list ids, `ssh_macs`) say they were not measured and follow the
/// policy's order ([`choice::unmeasured_note`]).
pub(super) fn emit_lines(
    lists: &BTreeMap<String, Vec<String>>,
    unmeasured: &[String],
    protocols: &[String],
    facts: &HostFacts,
    k: &Knowledge,
    targets: &[String],
) -> Vec<Lines> {
    let get = |l: &str| lists.get(l).cloned().unwrap_or_default();
    let mut choices = Vec::new();
    let tls13 = get("tls13_suites");
    let tls12 = get("tls12_suites");
    if !tls13.is_empty() || !tls12.is_empty() {
        let names =
            |v: &[String]| -> Vec<choice::SuiteNames> { v.iter().filter_map(|n| k.tls_suite(n)).map(recommend::suite_names).collect() };
        let mut t12 = names(&tls12);
        // As a single run does: ≤1.2 suites grouped by Kx/Au, each group in order.
        let mut kinds: Vec<(String, String)> = Vec::new();
        for s in &t12 {
            if !kinds.contains(&(s.kx.clone(), s.au.clone())) {
                kinds.push((s.kx.clone(), s.au.clone()));
            }
        }
        t12.sort_by_key(|s| kinds.iter().position(|x| *x == (s.kx.clone(), s.au.clone())));
        let mut protocols = protocols.to_vec();
        protocols.retain(|p| if p == "TLSv1.3" { !tls13.is_empty() } else { !t12.is_empty() });
        let groups = get("groups")
            .iter()
            .filter_map(|n| k.group(n))
            .map(recommend::group_names)
            .collect();
        choices.push(Choice::Tls(TlsChoice {
            protocols,
            tls13: names(&tls13),
            tls12: t12,
            groups,
            tiers: facts.tiers,
            gnutls_groups: facts.gnutls_groups.clone(),
            // Not merged: the class's line is always written out.
            default_groups: None,
        }));
    }
    let ssh = SshChoice {
        ciphers: get("ssh_ciphers"),
        macs: get("ssh_macs"),
        kex: get("ssh_kex"),
        hostkeys: get("ssh_hostkeys"),
        // The hosts' own keys are not in the merge: sshd keeps its default host-key
        // list (every key it has), and apply.yml checks any such line per host.
        server_hostkeys: None,
        server_hostkeys_unread: Some(crate::fleet::caps::PER_HOST_KEYS.to_string()),
        server_defaults: facts.sshd_defaults.clone(),
        server_defaults_unread: facts.sshd_defaults_unread.clone(),
        beyond_defaults: facts.beyond_defaults,
        unmeasured: [
            ("ssh_ciphers", "Ciphers"),
            ("ssh_macs", "MACs"),
            ("ssh_kex", "KexAlgorithms"),
            ("ssh_hostkeys", "HostKeyAlgorithms"),
        ]
        .into_iter()
        .filter(|(l, _)| unmeasured.iter().any(|u| u == l))
        .map(|(_, d)| d.to_string())
        .collect(),
    };
    // Every list empty (no host of the class stored its OpenSSH lists and none
    // measured SSH: nothing is known to offer): no SSH lines.
    if [&ssh.ciphers, &ssh.macs, &ssh.kex, &ssh.hostkeys].iter().any(|l| !l.is_empty()) {
        choices.push(Choice::Ssh(ssh));
    }
    let mut out = Vec::new();
    for choice in &choices {
        for e in crate::software::lines(choice, targets) {
            out.push(Lines {
                target: e.target.into(),
                location: e.location.into(),
                lines: e.lines,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{decide, ClassReport};
    use crate::fleet::decide::tests::class;
    use crate::fleet::merge::{ClassAcc, Fig, Merged, SubjectAcc};
    use crate::judge::{Knowledge, Policy};
    use crate::model::{Kind, Metric, ResultRecord, Subject, Summary};

    /// OpenSSH 9.2's client lists and sshd defaults (Debian 12), as an export stores them.
    fn openssh_caps() -> crate::model::Capabilities {
        let v = |l: &str| l.split(',').map(str::to_string).collect::<Vec<_>>();
        let ciphers = v("chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-gcm@openssh.com");
        let macs = v("umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-sha1-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,hmac-sha2-256,hmac-sha2-512,hmac-sha1");
        let kex = v("sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-group14-sha256");
        let hostkeys = v("ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256");
        crate::model::Capabilities {
            openssh: Some(crate::model::OpenSshCapabilities {
                version: "OpenSSH_9.2p1".into(),
                ciphers: ciphers.clone(),
                macs: macs.clone(),
                kex: kex.clone(),
                hostkey_algorithms: hostkeys.clone(),
            }),
            sshd_defaults: Some(crate::model::SshLists {
                ciphers,
                macs,
                kex,
                hostkeys,
            }),
            ..Default::default()
        }
    }

    /// A class whose hosts measured SSH sessions of AEAD ciphers only (no MAC), and
    /// whose exports stored their OpenSSH lists.
    fn ssh_class(name: &str, first: u32, macs: &[&str]) -> ClassAcc {
        let mut c = class(name, 2, first, &[], |_, _| 0.0);
        let s = Summary {
            median: 4.0e8,
            mean: 4.0e8,
            min: 3.9e8,
            max: 4.1e8,
            ci95_low: 3.9e8,
            ci95_high: 4.1e8,
            samples: 10,
            cv: 0.01,
        };
        let sessions = [("chacha20-poly1305@openssh.com", None)]
            .into_iter()
            .chain(macs.iter().map(|m| ("aes128-ctr", Some(*m))));
        for (cipher, mac) in sessions {
            let subject = Subject {
                cipher: Some(cipher.into()),
                mac: mac.map(str::to_string),
                ..Default::default()
            };
            let t = ResultRecord::ok(Kind::SshBulk, subject, Metric::BytesPerSec, &s, None);
            let figs = (first..first + 2)
                .map(|h| Fig {
                    host: h,
                    median: 4.0e8,
                    low: 3.9e8,
                    high: 4.1e8,
                })
                .collect();
            c.subjects.insert(
                crate::fleet::merge::subject_key(&t),
                SubjectAcc {
                    template: t,
                    figs,
                    samples: 20,
                },
            );
        }
        c.capabilities = Some(openssh_caps());
        c
    }

    fn directive<'a>(lines: &'a [String], key: &str) -> Option<(usize, Vec<&'a str>)> {
        let at = lines.iter().position(|l| l.trim().starts_with(&format!("{key} ")))?;
        Some((at, lines[at].trim()[key.len() + 1..].split(',').collect()))
    }

    /// A class with a host whose sshd's defaults were not read: no sshd list for
    /// that class nor fleet-wide (one could go beyond that host's defaults), and
    /// the comment gives the cause its export recorded; the class that has them
    /// keeps its lines, with host keys left out as per host.
    #[test]
    fn a_host_without_sshd_defaults_gets_no_sshd_list_and_its_cause() {
        let k = Knowledge::builtin().unwrap();
        let p = Policy::builtin("intermediate").unwrap();
        let why = "`sshd -T` refused (it said: Missing privilege separation directory: /run/sshd)";
        let mut unread = ssh_class("unread", 0, &["hmac-sha2-256-etm@openssh.com"]);
        let caps = unread.capabilities.as_mut().unwrap();
        caps.sshd_defaults = None;
        caps.sshd_defaults_unread = Some(why.into());
        let merged = Merged {
            hosts: (0..4).map(|h| format!("h{h}")).collect(),
            classes: vec![unread, ssh_class("read", 2, &["hmac-sha2-256-etm@openssh.com"])],
            problems: vec![],
            class_of: vec![0, 0, 1, 1],
            findings: Default::default(),
            runs: Default::default(),
        };
        let d = decide(&merged, &k, &p, &["sshd".to_string()]);
        let sshd_of = |c: &ClassReport| c.lines.iter().find(|l| l.target == "sshd").unwrap().lines.clone();
        let c = d.classes.iter().find(|c| c.label.contains("unread")).unwrap();
        for lines in [sshd_of(c), d.fleet.lines.iter().find(|l| l.target == "sshd").unwrap().lines.clone()] {
            assert!(lines.iter().all(|l| l.starts_with('#')), "{lines:#?}");
            assert!(lines.iter().any(|l| l.contains(why)), "{lines:#?}");
        }
        let read = sshd_of(d.classes.iter().find(|c| !c.label.contains("unread")).unwrap());
        assert!(directive(&read, "Ciphers").is_some(), "{read:#?}");
        assert!(
            read.iter()
                .any(|l| l.starts_with("# HostKeyAlgorithms left out") && l.contains(crate::fleet::caps::PER_HOST_KEYS)),
            "{read:#?}"
        );
    }

    #[test]
    fn a_class_that_measured_no_mac_still_gets_the_policys_macs_and_says_so() {
        let k = Knowledge::builtin().unwrap();
        let p = Policy::builtin("intermediate").unwrap();
        let merged = Merged {
            hosts: (0..4).map(|h| format!("h{h}")).collect(),
            classes: vec![ssh_class("no-mac", 0, &[]), ssh_class("mac", 2, &["hmac-sha2-256-etm@openssh.com"])],
            problems: vec![],
            class_of: vec![0, 0, 1, 1],
            findings: Default::default(),
            runs: Default::default(),
        };
        let d = decide(&merged, &k, &p, &["sshd".to_string(), "ssh".to_string()]);
        let c = d.classes.iter().find(|c| c.label.contains("no-mac")).unwrap();
        assert_eq!(c.unmeasured, ["ssh_macs", "ssh_kex", "ssh_hostkeys"], "{:?}", c.rankings);
        let sshd = &c.lines.iter().find(|l| l.target == "sshd").expect("sshd lines").lines;
        let (at, macs) = directive(sshd, "MACs").unwrap_or_else(|| panic!("no MACs line: {sshd:#?}"));
        assert_eq!(sshd[at - 1], "# MACs: not measured in this run; ordered by the policy");
        // Every MAC the hosts offer that the policy accepts, in the policy's order:
        // none of sshd's refused defaults (umac-64, hmac-sha1).
        let offered = openssh_caps().openssh.unwrap().macs;
        let allowed: Vec<&str> = offered
            .iter()
            .map(String::as_str)
            .filter(|m| p.allows(&k.judge(crate::judge::Domain::SshMac, m)).allowed)
            .collect();
        assert!(allowed.len() >= 4 && allowed.len() < 10, "{allowed:?}");
        let mut sorted = macs.clone();
        sorted.sort();
        let mut want = allowed.clone();
        want.sort();
        assert_eq!(sorted, want, "{sshd:#?}");
        for m in &macs {
            assert!(p.allows(&k.judge(crate::judge::Domain::SshMac, m)).allowed, "{m}");
        }
        // The measured cipher list is the measured one, not called unmeasured.
        let (at, ciphers) = directive(sshd, "Ciphers").unwrap();
        assert_eq!(ciphers, ["chacha20-poly1305@openssh.com"]);
        assert!(at == 0 || !sshd[at - 1].contains("not measured"), "{sshd:#?}");
        // The client's block too.
        let ssh = &c.lines.iter().find(|l| l.target == "ssh").expect("ssh lines").lines;
        let (at, client_macs) = directive(ssh, "MACs").unwrap_or_else(|| panic!("{ssh:#?}"));
        assert_eq!(ssh[at - 1].trim(), "# MACs: not measured in this run; ordered by the policy");
        assert_eq!(client_macs, macs);
        // The class that measured its MAC keeps only it, with no note.
        let other = d.classes.iter().find(|c| !c.label.contains("no-mac")).unwrap();
        assert!(!other.unmeasured.contains(&"ssh_macs".to_string()), "{:?}", other.unmeasured);
        let sshd2 = &other.lines.iter().find(|l| l.target == "sshd").unwrap().lines;
        assert_eq!(directive(sshd2, "MACs").unwrap().1, ["hmac-sha2-256-etm@openssh.com"]);
        // Fleet-wide: not every class measured MACs, so the policy orders them,
        // and the line says so.
        assert!(d.fleet.unmeasured.contains(&"ssh_macs".to_string()), "{:?}", d.fleet.notes);
        let fleet = &d.fleet.lines.iter().find(|l| l.target == "sshd").unwrap().lines;
        let (at, fm) = directive(fleet, "MACs").unwrap_or_else(|| panic!("{fleet:#?}"));
        assert_eq!(fleet[at - 1], "# MACs: not measured in this run; ordered by the policy");
        assert_eq!(fm, macs);
        assert!(
            d.fleet.notes.iter().any(|n| n.contains("ordered by the policy")),
            "{:?}",
            d.fleet.notes
        );
    }
}
