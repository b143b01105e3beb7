//! What a class's hosts can be configured with: the capabilities each export
//! stored (`run.capabilities`), reduced to what every host of the class has, so
//! that a class's answer keeps what its hosts offer (a Debian 13 class's
//! post-quantum groups) whatever machine merges the exports, and never names what
//! one of its hosts lacks.

use crate::model::{Capabilities, OpenSshCapabilities, OpenSslCapabilities, SshLists};

fn both(a: &[String], b: &[String]) -> Vec<String> {
    a.iter().filter(|x| b.contains(x)).cloned().collect()
}

/// Either side's `None` (not known for a host) makes the part not known.
fn part<T>(a: &Option<T>, b: &Option<T>, f: impl Fn(&T, &T) -> T) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(f(a, b)),
        _ => None,
    }
}

fn lists(a: &SshLists, b: &SshLists) -> SshLists {
    SshLists {
        ciphers: both(&a.ciphers, &b.ciphers),
        macs: both(&a.macs, &b.macs),
        kex: both(&a.kex, &b.kex),
        hostkeys: both(&a.hostkeys, &b.hostkeys),
    }
}

/// What both `a` and `b` have, in `a`'s order. Host keys stay per host: a class
/// has none in common to configure (sshd keeps its own list).
pub fn common(a: &Capabilities, b: &Capabilities) -> Capabilities {
    Capabilities {
        openssl: part(&a.openssl, &b.openssl, |x, y| OpenSslCapabilities {
            suites: part(&x.suites, &y.suites, |s, t| {
                s.iter().filter(|n| t.iter().any(|m| m.iana == n.iana)).cloned().collect()
            }),
            groups: both(&x.groups, &y.groups),
            tiers: x.tiers && y.tiers,
            default_groups: x.default_groups.clone().filter(|_| x.default_groups == y.default_groups),
        }),
        openssh: part(&a.openssh, &b.openssh, |x, y| OpenSshCapabilities {
            version: if x.version == y.version { x.version.clone() } else { String::new() },
            ciphers: both(&x.ciphers, &y.ciphers),
            macs: both(&x.macs, &y.macs),
            kex: both(&x.kex, &y.kex),
            hostkey_algorithms: both(&x.hostkey_algorithms, &y.hostkey_algorithms),
        }),
        sshd_hostkeys: None,
        sshd_hostkeys_unread: Some(PER_HOST_KEYS.to_string()),
        sshd_defaults: part(&a.sshd_defaults, &b.sshd_defaults, lists),
        sshd_defaults_unread: a.sshd_defaults_unread.clone().or_else(|| b.sshd_defaults_unread.clone()),
        gnutls_groups: part(&a.gnutls_groups, &b.gnutls_groups, |x, y| both(x, y)),
    }
}

/// Why a class has no sshd host keys.
pub const PER_HOST_KEYS: &str = "host keys are per host, and a class has none in common";

/// The class so far (`None`: its first host) with one more host's capabilities.
pub fn fold(class: Option<Capabilities>, host: Capabilities) -> Capabilities {
    match class {
        None => Capabilities {
            sshd_hostkeys: None,
            sshd_hostkeys_unread: Some(PER_HOST_KEYS.to_string()),
            ..host
        },
        Some(c) => common(&c, &host),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(groups: &[&str], tiers: bool, kex: Option<&[&str]>) -> Capabilities {
        let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Capabilities {
            openssl: Some(OpenSslCapabilities {
                suites: None,
                groups: v(groups),
                tiers,
                default_groups: None,
            }),
            sshd_defaults: kex.map(|k| SshLists {
                kex: v(k),
                ..Default::default()
            }),
            sshd_hostkeys: Some(v(&["ssh-ed25519"])),
            ..Default::default()
        }
    }

    #[test]
    fn a_class_keeps_what_every_host_has() {
        let d13 = caps(
            &["X25519MLKEM768", "x25519"],
            true,
            Some(&["mlkem768x25519-sha256", "curve25519-sha256"]),
        );
        let c = fold(None, d13.clone());
        assert_eq!(c.sshd_hostkeys, None);
        let c = fold(Some(c), d13.clone());
        assert_eq!(c.openssl.as_ref().unwrap().groups, ["X25519MLKEM768", "x25519"]);
        assert!(c.openssl.as_ref().unwrap().tiers);
        // A host without the hybrid, on a flat-list OpenSSL, and an unknown sshd.
        let d12 = caps(&["x25519"], false, None);
        let c = fold(Some(c), d12);
        assert_eq!(c.openssl.as_ref().unwrap().groups, ["x25519"]);
        assert!(!c.openssl.as_ref().unwrap().tiers);
        assert_eq!(c.sshd_defaults, None);
    }
}
