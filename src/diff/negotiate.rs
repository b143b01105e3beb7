//! What a configuration negotiates with its usual peer.
//!
//! - **SSH** (RFC 4253 §7.1): for each list, the first algorithm of the *client's*
//!   list that the server also has. The usual peer of this machine's sshd is a
//!   default client (this machine's ssh with no configuration, `ssh -F /dev/null`);
//!   that of this machine's ssh client is this machine's sshd.
//! - **TLS**: the highest protocol both ends enable, then the first suite (and
//!   group) in the *server's* order when it enforces its order, else in the client's.
//!   The usual peer of a server is a default OpenSSL client (the system defaults of
//!   `openssl.cnf`, as curl and most programs here use them); the usual peer of a
//!   client setting (system defaults, GnuTLS, NZBGet) is a default OpenSSL server.
//!
//! Both ends' lists come from the libraries' own parsers (`openssl ciphers`,
//! `gnutls-cli -l`), never from a re-implementation of cipher-string syntax.

use crate::discover::installed::{Config, LinkedLibrary, SshConfig, TlsConfig};
use crate::judge::Knowledge;
use crate::software::gnutls::read as gnutls;
use crate::software::openssl::read::{self as inst_openssl, OfferedSuite};
use anyhow::Result;
use serde::Serialize;

/// OpenSSL 3's default groups, in its order.
pub const OPENSSL_DEFAULT_GROUPS: &[&str] = &["x25519", "secp256r1", "x448", "secp521r1", "secp384r1"];

/// OpenSSL 3.5's default group list (`DEFAULT_GROUP_LIST` of its ssl/t1_lib.c:
/// `?*X25519MLKEM768 / ?*X25519:?secp256r1 / ?X448:?secp384r1:?secp521r1 /
/// ?ffdhe2048:?ffdhe3072`): its tiers, for a libssl that takes tiers. Its first
/// ClientHello carries the key shares marked `*`.
const OPENSSL35_DEFAULT_TIERS: &[&[&str]] = &[
    &["X25519MLKEM768"],
    &["x25519", "secp256r1"],
    &["x448", "secp384r1", "secp521r1"],
    &["ffdhe2048", "ffdhe3072"],
];
const OPENSSL35_DEFAULT_KEY_SHARES: &[&str] = &["X25519MLKEM768", "x25519"];

/// This machine's libssl's default groups as tiers (canonical names) and the key
/// shares of its first ClientHello: OpenSSL 3.5's tiered default where libssl
/// takes tiers (asked of libssl, with only the groups it has), else OpenSSL 3's
/// flat one with one key share.
fn local_default_groups() -> (Vec<Vec<String>>, Vec<String>) {
    if !crate::discover::openssl::takes_tiers() {
        let flat: Vec<String> = OPENSSL_DEFAULT_GROUPS.iter().map(|s| s.to_string()).collect();
        return (vec![flat.clone()], flat[..1].to_vec());
    }
    let has = crate::discover::openssl::tls_groups();
    let have = |g: &&&str| has.iter().any(|h| h.eq_ignore_ascii_case(g));
    let tiers: Vec<Vec<String>> = OPENSSL35_DEFAULT_TIERS
        .iter()
        .map(|t| t.iter().filter(have).map(|g| group_name(g)).collect::<Vec<_>>())
        .filter(|t| !t.is_empty())
        .collect();
    let shares = OPENSSL35_DEFAULT_KEY_SHARES.iter().filter(have).map(|g| group_name(g)).collect();
    (tiers, shares)
}

/// The tiers the emitted lines give `groups` (recommend's emitters): where this
/// machine's libssl takes tiers, the post-quantum hybrids first and the others
/// second; else none (one flat list).
pub fn emitted_tiers(k: &Knowledge, groups: &[String]) -> Vec<Vec<String>> {
    if !crate::discover::openssl::takes_tiers() {
        return Vec::new();
    }
    let pq = |g: &&String| k.group(g).is_some_and(|x| x.kind == crate::judge::GroupKind::HybridPq);
    let first: Vec<String> = groups.iter().filter(pq).cloned().collect();
    let rest: Vec<String> = groups.iter().filter(|g| !pq(g)).cloned().collect();
    [first, rest].into_iter().filter(|t| !t.is_empty()).collect()
}

/// An OpenSSL group list (`*X25519MLKEM768/*x25519:secp256r1`, `?`, `*` and `/` of
/// OpenSSL 3.5 included) as tiers of canonical names, and the groups marked `*`.
pub fn parse_group_list(list: &str) -> (Vec<Vec<String>>, Vec<String>) {
    let mut shares = Vec::new();
    let tiers = list
        .split('/')
        .map(|tier| {
            tier.split([':', ','])
                .map(str::trim)
                .filter(|g| !g.is_empty() && !g.starts_with('-'))
                .map(|g| {
                    let share = g.trim_start_matches('?').starts_with('*');
                    let name = group_name(g.trim_start_matches(['?', '*']));
                    if share {
                        shares.push(name.clone());
                    }
                    name
                })
                .collect::<Vec<_>>()
        })
        .filter(|t| !t.is_empty())
        .collect();
    (tiers, shares)
}

/// One end of TLS, resolved to lists.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TlsOffer {
    pub protocols: Vec<String>,
    pub suites: Vec<OfferedSuite>,
    /// Knowledge-base group names, in order.
    pub groups: Vec<String>,
    pub server_order: bool,
    /// A server's groups as OpenSSL 3.5 preference tiers (empty: `groups` is one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub group_tiers: Vec<Vec<String>>,
    /// A client's key shares in its first ClientHello (empty: its first group).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub key_shares: Vec<String>,
}

/// What is negotiated.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(tag = "protocol", rename_all = "lowercase")]
pub enum Negotiated {
    Tls {
        version: String,
        suite: String,
        openssl_name: String,
        group: Option<String>,
    },
    Ssh {
        cipher: String,
        /// `None` for AEAD ciphers (MAC implicit).
        mac: Option<String>,
        kex: String,
        hostkey: String,
    },
}

impl Negotiated {
    /// One line for the terminal.
    pub fn label(&self) -> String {
        match self {
            Negotiated::Tls { version, suite, group, .. } => format!(
                "{version} {suite}{}",
                group.as_ref().map(|g| format!(" over {g}")).unwrap_or_default()
            ),
            Negotiated::Ssh { cipher, mac, kex, hostkey } => {
                format!("{cipher} {} · {kex} · {hostkey}", mac.as_deref().unwrap_or("(implicit MAC)"))
            }
        }
    }
}

/// The knowledge base's name of a group ([`crate::aliases::group_name`], by any of
/// its names); any other name in lower case.
fn group_name(name: &str) -> String {
    crate::aliases::group_name(name).map_or_else(|| name.to_ascii_lowercase(), str::to_string)
}

/// A TLS configuration resolved with its library's own parser.
pub fn tls_offer(c: &TlsConfig, k: &Knowledge) -> Result<TlsOffer> {
    let all: Vec<String> = crate::discover::installed::TLS_VERSIONS[1..]
        .iter()
        .map(|s| s.to_string())
        .collect();
    match c.library {
        LinkedLibrary::Openssl => {
            let suites = inst_openssl::resolve(c.cipher_string.as_deref(), c.ciphersuites.as_deref())?;
            let protocols = c.protocols.clone().unwrap_or(all);
            let (group_tiers, key_shares) = match &c.groups {
                Some(g) => parse_group_list(g),
                None => local_default_groups(),
            };
            Ok(TlsOffer {
                suites: suites.into_iter().filter(|s| usable(s, &protocols)).collect(),
                protocols,
                groups: group_tiers.concat(),
                server_order: c.server_order,
                group_tiers,
                key_shares,
            })
        }
        LinkedLibrary::Gnutls => {
            let r = gnutls::resolve(c.cipher_string.as_deref().unwrap_or("NORMAL"), &|code| k.suite_names_by_code(code))?;
            Ok(TlsOffer {
                suites: r.suites.into_iter().filter(|s| usable(s, &r.protocols)).collect(),
                protocols: r.protocols,
                groups: r.groups.iter().map(|g| group_name(g)).collect(),
                server_order: c.server_order,
                group_tiers: Vec::new(),
                key_shares: Vec::new(),
            })
        }
    }
}

/// Whether a suite can be used under one of `protocols`.
fn usable(s: &OfferedSuite, protocols: &[String]) -> bool {
    if s.tls13() {
        protocols.iter().any(|p| p == "TLSv1.3")
    } else {
        let pos = |v: &str| crate::discover::installed::TLS_VERSIONS.iter().position(|x| *x == v);
        protocols.iter().any(|p| p != "TLSv1.3" && pos(p) >= pos(&s.min_protocol))
    }
}

/// The usual peer of a TLS end: a default OpenSSL client or server of this
/// machine's libssl (OpenSSL 3.5's: X25519MLKEM768 and X25519 key shares).
pub fn default_openssl_peer(server_order: bool) -> Result<TlsOffer> {
    let (group_tiers, key_shares) = local_default_groups();
    let suites = inst_openssl::resolve(None, None)?;
    let system = crate::software::openssl::read::read(None)?
        .and_then(|i| match i.config {
            Config::Tls(t) => t.protocols,
            _ => None,
        })
        .unwrap_or_else(|| {
            crate::discover::installed::TLS_VERSIONS[1..]
                .iter()
                .map(|s| s.to_string())
                .collect()
        });
    Ok(TlsOffer {
        suites: suites.into_iter().filter(|s| usable(s, &system)).collect(),
        protocols: system,
        groups: group_tiers.concat(),
        server_order,
        group_tiers,
        key_shares,
    })
}

/// How long `check` waits for a running server's handshake.
const LIVE: std::time::Duration = std::time::Duration::from_secs(5);

/// What the installed libssl's default client really negotiates with a running
/// server at `endpoint` (its own defaults, nothing configured), in the terms of
/// [`Negotiated`] (knowledge-base group names); the error says why not.
pub fn live(endpoint: &crate::discover::installed::Endpoint) -> Result<Negotiated, String> {
    let h = crate::discover::installed::libssl::default_client_handshake(&endpoint.address, endpoint.server_name.as_deref(), LIVE)?;
    Ok(Negotiated::Tls {
        version: h.version,
        suite: h.suite,
        openssl_name: h.openssl_name,
        group: h.group.map(|g| group_name(&g)),
    })
}

/// A TLS server's "now": a live handshake by the default client when the server
/// is reachable at its configured address, else the model of that client against
/// `offer` ([`tls`]), said so in the peer's words.
pub fn server_now(
    offer: &TlsOffer,
    endpoint: Option<&crate::discover::installed::Endpoint>,
    client: &TlsOffer,
) -> (String, Result<Negotiated, String>) {
    let peer = "a default OpenSSL client (system defaults)";
    let Some(e) = endpoint else {
        return (format!("{peer}, modelled (no address in the configuration)"), tls(offer, client));
    };
    match live(e) {
        Ok(n) => (format!("{peer}: a real handshake with {}", shown(&e.address)), Ok(n)),
        Err(why) => (
            format!("{peer}, modelled ({} not reachable: {})", shown(&e.address), shown(&why)),
            tls(offer, client),
        ),
    }
}

fn shown(s: &str) -> String {
    crate::untrusted::shown(s).into_owned()
}

/// What `server` and `client` negotiate, or why nothing.
pub fn tls(server: &TlsOffer, client: &TlsOffer) -> Result<Negotiated, String> {
    let version = crate::discover::installed::TLS_VERSIONS
        .iter()
        .rev()
        .find(|v| server.protocols.iter().any(|p| p == *v) && client.protocols.iter().any(|p| p == *v))
        .ok_or_else(|| {
            format!(
                "no protocol in common (server {:?}, client {:?})",
                server.protocols, client.protocols
            )
        })?;
    let fits = |s: &&OfferedSuite| (s.tls13()) == (*version == "TLSv1.3");
    let (first, second) = if server.server_order { (server, client) } else { (client, server) };
    let suite = first
        .suites
        .iter()
        .filter(fits)
        .find(|s| second.suites.iter().any(|o| o.iana == s.iana))
        .ok_or_else(|| format!("no {version} suite in common"))?;
    let needs_group = suite.tls13() || suite.openssl.starts_with("ECDHE") || suite.iana.contains("_ECDHE_");
    let group = if *version == "TLSv1.3" {
        tls13_group(server, client)
    } else {
        // TLS 1.2's ECDHE takes elliptic curves only: never an ML-KEM group (OpenSSL
        // 3.5's default list starts with X25519MLKEM768) nor a finite-field one.
        let ec = |g: &&String| !g.to_ascii_uppercase().contains("MLKEM") && !g.starts_with("ffdhe");
        needs_group
            .then(|| first.groups.iter().filter(ec).find(|g| second.groups.contains(g)).cloned())
            .flatten()
    };
    Ok(Negotiated::Tls {
        version: version.to_string(),
        suite: suite.iana.clone(),
        openssl_name: suite.openssl.clone(),
        group,
    })
}

/// The TLS 1.3 group: the server's first tier the client has any group of; in
/// it, the first (server's order) the client sent a key share for, else the first
/// the client has (a HelloRetryRequest). OpenSSL 3.5's rule; with one tier and
/// one key share it is also OpenSSL 3.0's outcome.
fn tls13_group(server: &TlsOffer, client: &TlsOffer) -> Option<String> {
    let one = [server.groups.clone()];
    let tiers: &[Vec<String>] = if server.group_tiers.is_empty() { &one } else { &server.group_tiers };
    let shares: &[String] = if client.key_shares.is_empty() {
        &client.groups[..client.groups.len().min(1)]
    } else {
        &client.key_shares
    };
    tiers.iter().find_map(|t| {
        let both: Vec<&String> = t.iter().filter(|g| client.groups.contains(g)).collect();
        both.iter().find(|g| shares.contains(g)).or(both.first()).map(|g| g.to_string())
    })
}

/// One SSH list of a recommendation's choice: for sshd, what its lines list
/// (`ssh_server_*`, within its defaults, where that differs).
pub fn server_list(choice: &std::collections::BTreeMap<String, Vec<String>>, server: bool, list: &str) -> Vec<String> {
    let get = |n: String| choice.get(&n).cloned();
    let server_side = if server { get(format!("ssh_server_{list}")) } else { None };
    server_side.or_else(|| get(format!("ssh_{list}"))).unwrap_or_default()
}

/// What an ssh client and an sshd negotiate (the client's first that the server has).
pub fn ssh(server: &SshConfig, client: &SshConfig, aead: &[String]) -> Result<Negotiated, String> {
    let pick = |what: &str, c: &[String], s: &[String]| -> Result<String, String> {
        c.iter()
            .find(|x| s.contains(x))
            .cloned()
            .ok_or_else(|| format!("no {what} in common"))
    };
    let cipher = pick("cipher", &client.ciphers, &server.ciphers)?;
    let mac = if aead.contains(&cipher) {
        None
    } else {
        Some(pick("MAC", &client.macs, &server.macs)?)
    };
    // Host keys: the client's order among what the server offers (and has keys for).
    // Certificate and security-key algorithms need a HostCertificate or a token that
    // a server rarely has: they are not what it can actually sign with.
    let plain: Vec<String> = server
        .hostkeys
        .iter()
        .filter(|h| !h.contains("-cert-v01@") && !h.starts_with("sk-"))
        .cloned()
        .collect();
    let hostkey = pick("host-key algorithm", &client.hostkeys, &plain)?;
    Ok(Negotiated::Ssh {
        cipher,
        mac,
        kex: pick("key exchange", &client.kex, &server.kex)?,
        hostkey,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The group names the offers and the negotiated group are written in: the
    /// knowledge base's own name of every group by any of its names (in any case),
    /// and any other name in lower case.
    #[test]
    fn group_names_are_the_knowledge_bases() {
        let k = Knowledge::builtin().unwrap();
        for g in k.groups() {
            for n in std::iter::once(&g.name).chain(&g.aliases) {
                assert_eq!(group_name(n), g.name, "{n}");
                assert_eq!(group_name(&n.to_ascii_uppercase()), g.name, "{n}");
            }
        }
        assert_eq!(group_name("P-256"), "secp256r1");
        assert_eq!(group_name("X25519"), "x25519");
        assert_eq!(group_name("x25519mlkem768"), "X25519MLKEM768");
        assert_eq!(group_name("X448MLKEM1024"), "x448mlkem1024");
        assert_eq!(group_name("secp256k1"), "secp256k1");
    }

    fn s(iana: &str, openssl: &str, min: &str) -> OfferedSuite {
        OfferedSuite {
            iana: iana.into(),
            openssl: openssl.into(),
            min_protocol: min.into(),
        }
    }

    #[test]
    fn tls_server_order_decides_when_enforced() {
        let cbc = s("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA", "TLSv1");
        let gcm = s("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "TLSv1.2");
        let t13 = s("TLS_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384", "TLSv1.3");
        let mut server = TlsOffer {
            protocols: vec!["TLSv1.2".into()],
            suites: vec![cbc.clone(), gcm.clone()],
            groups: vec!["secp256r1".into(), "x25519".into()],
            server_order: true,
            group_tiers: Vec::new(),
            key_shares: Vec::new(),
        };
        let client = TlsOffer {
            protocols: vec!["TLSv1.2".into(), "TLSv1.3".into()],
            suites: vec![t13.clone(), gcm.clone(), cbc.clone()],
            groups: vec!["x25519".into(), "secp256r1".into()],
            server_order: false,
            group_tiers: Vec::new(),
            key_shares: Vec::new(),
        };
        let n = tls(&server, &client).unwrap();
        assert_eq!(
            n,
            Negotiated::Tls {
                version: "TLSv1.2".into(),
                suite: cbc.iana.clone(),
                openssl_name: cbc.openssl.clone(),
                group: Some("secp256r1".into())
            }
        );
        server.server_order = false;
        let Negotiated::Tls { suite, group, .. } = tls(&server, &client).unwrap() else {
            panic!()
        };
        assert_eq!(suite, gcm.iana);
        assert_eq!(group.as_deref(), Some("x25519"));
        server.protocols.push("TLSv1.3".into());
        server.suites.push(t13.clone());
        let Negotiated::Tls { version, suite, .. } = tls(&server, &client).unwrap() else {
            panic!()
        };
        assert_eq!((version.as_str(), suite.as_str()), ("TLSv1.3", "TLS_AES_256_GCM_SHA384"));
        server.protocols = vec!["TLSv1".into()];
        let client12 = TlsOffer {
            protocols: vec!["TLSv1.2".into()],
            ..client
        };
        assert!(tls(&server, &client12).unwrap_err().contains("no protocol"));
    }

    #[test]
    fn ssh_client_order_decides() {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let server = SshConfig {
            server: true,
            ciphers: v(&["aes128-cbc", "aes128-ctr", "chacha20-poly1305@openssh.com"]),
            macs: v(&["hmac-sha1", "hmac-sha2-256"]),
            kex: v(&["diffie-hellman-group14-sha1", "curve25519-sha256"]),
            hostkeys: v(&["rsa-sha2-512", "ssh-ed25519"]),
        };
        let client = SshConfig {
            server: false,
            ciphers: v(&["chacha20-poly1305@openssh.com", "aes128-ctr", "aes128-cbc"]),
            macs: v(&["hmac-sha2-256", "hmac-sha1"]),
            kex: v(&["curve25519-sha256", "diffie-hellman-group14-sha1"]),
            hostkeys: v(&["ssh-ed25519", "rsa-sha2-512"]),
        };
        let aead = v(&["chacha20-poly1305@openssh.com"]);
        assert_eq!(
            ssh(&server, &client, &aead).unwrap(),
            Negotiated::Ssh {
                cipher: "chacha20-poly1305@openssh.com".into(),
                mac: None,
                kex: "curve25519-sha256".into(),
                hostkey: "ssh-ed25519".into()
            }
        );
        let only_cbc = SshConfig {
            ciphers: v(&["aes128-cbc"]),
            ..server.clone()
        };
        let Negotiated::Ssh { cipher, mac, .. } = ssh(&only_cbc, &client, &aead).unwrap() else {
            panic!()
        };
        assert_eq!((cipher.as_str(), mac.as_deref()), ("aes128-cbc", Some("hmac-sha2-256")));
        let none = SshConfig {
            ciphers: v(&["3des-cbc"]),
            ..server
        };
        assert!(ssh(&none, &client, &aead).unwrap_err().contains("cipher"));
    }

    /// The real `openssl ciphers`: a legacy nginx-style list against the default client.
    #[test]
    fn real_openssl_legacy_server_negotiates_cbc() {
        let k = Knowledge::builtin().unwrap();
        let c = TlsConfig {
            server: true,
            protocols: Some(vec!["TLSv1.2".into()]),
            cipher_string: Some("ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256".into()),
            server_order: true,
            ..Default::default()
        };
        let server = tls_offer(&c, &k).unwrap();
        assert_eq!(server.suites.len(), 2, "{server:?}");
        let client = default_openssl_peer(false).unwrap();
        let Negotiated::Tls { suite, group, .. } = tls(&server, &client).unwrap() else {
            panic!()
        };
        assert_eq!(suite, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA");
        assert_eq!(group.as_deref(), Some("x25519"));
    }

    fn t13(groups: &str, server: bool) -> TlsOffer {
        let (group_tiers, key_shares) = parse_group_list(groups);
        TlsOffer {
            protocols: vec!["TLSv1.3".into()],
            suites: vec![s("TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256", "TLSv1.3")],
            groups: group_tiers.concat(),
            server_order: server,
            group_tiers: if server { group_tiers } else { Vec::new() },
            key_shares,
        }
    }

    fn group(server: &TlsOffer, client: &TlsOffer) -> String {
        match tls(server, client).unwrap() {
            Negotiated::Tls { group, .. } => group.unwrap(),
            n => panic!("{n:?}"),
        }
    }

    /// OpenSSL 3.5's tiers: a client whose first key share is X25519 but that has
    /// X25519MLKEM768 lands on the hybrid with the tiered list (a HelloRetryRequest),
    /// on X25519 with the flat one; a default 3.5 client (both key shares) on the
    /// hybrid with either.
    #[test]
    fn tls13_groups_follow_tiers_and_key_shares() {
        let pq = group_name("X25519MLKEM768");
        let x = group_name("x25519");
        let tiered = t13("*X25519MLKEM768/*x25519:secp256r1:secp384r1", true);
        let flat = t13("X25519MLKEM768:x25519:secp256r1:secp384r1", true);
        assert_eq!(tiered.group_tiers.len(), 2);
        let x25519_first = t13("*x25519:X25519MLKEM768", false);
        assert_eq!(group(&tiered, &x25519_first), pq);
        assert_eq!(group(&flat, &x25519_first), x);
        let default35 = t13("?*X25519MLKEM768/?*x25519:?secp256r1/?x448:?secp384r1:?secp521r1", false);
        assert_eq!(default35.key_shares, [pq.clone(), x.clone()]);
        assert_eq!(group(&tiered, &default35), pq);
        assert_eq!(group(&flat, &default35), pq);
        // A server without the hybrid: X25519, from the client's key share.
        assert_eq!(group(&t13("secp256r1:x25519", true), &default35), x);
    }
}
