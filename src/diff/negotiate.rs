//! What a configuration negotiates with its usual peer.
//!
//! - **SSH** (RFC 4253 §7.1): for each list, the first algorithm of the *client's*
//!   list that the server also has. The usual peer of this machine's sshd is this
//!   machine's ssh client, and the other way round.
//! - **TLS**: the highest protocol both ends enable, then the first suite (and
//!   group) in the *server's* order when it enforces its order, else in the client's.
//!   The usual peer of a server is a default OpenSSL client (the system defaults of
//!   `openssl.cnf`, as curl and most programs here use them); the usual peer of a
//!   client setting (system defaults, GnuTLS, NZBGet) is a default OpenSSL server.
//!
//! Both ends' lists come from the libraries' own parsers (`openssl ciphers`,
//! `gnutls-cli -l`), never from a re-implementation of cipher-string syntax.

use crate::discover::installed::openssl::{self as inst_openssl, OfferedSuite};
use crate::discover::installed::{gnutls, Config, SshConfig, TlsConfig, TlsLibrary};
use crate::judge::Knowledge;
use anyhow::Result;
use serde::Serialize;

/// OpenSSL 3's default groups, in its order.
pub const OPENSSL_DEFAULT_GROUPS: &[&str] = &["x25519", "secp256r1", "x448", "secp521r1", "secp384r1"];

/// One end of TLS, resolved to lists.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TlsOffer {
    pub protocols: Vec<String>,
    pub suites: Vec<OfferedSuite>,
    /// Knowledge-base group names, in order.
    pub groups: Vec<String>,
    pub server_order: bool,
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

fn canonical_group(k: &Knowledge, name: &str) -> String {
    k.group(name).map(|g| g.name.clone()).unwrap_or_else(|| name.to_ascii_lowercase())
}

/// A TLS configuration resolved with its library's own parser.
pub fn tls_offer(c: &TlsConfig, k: &Knowledge) -> Result<TlsOffer> {
    let all: Vec<String> = crate::discover::installed::TLS_VERSIONS[1..]
        .iter()
        .map(|s| s.to_string())
        .collect();
    match c.library {
        TlsLibrary::Openssl => {
            let suites = inst_openssl::resolve(c.cipher_string.as_deref(), c.ciphersuites.as_deref())?;
            let protocols = c.protocols.clone().unwrap_or(all);
            let groups = match &c.groups {
                Some(g) => g.split([':', ',']).map(|x| canonical_group(k, x.trim())).collect(),
                None => OPENSSL_DEFAULT_GROUPS.iter().map(|s| s.to_string()).collect(),
            };
            Ok(TlsOffer {
                suites: suites.into_iter().filter(|s| usable(s, &protocols)).collect(),
                protocols,
                groups,
                server_order: c.server_order,
            })
        }
        TlsLibrary::Gnutls => {
            let r = gnutls::resolve(c.cipher_string.as_deref().unwrap_or("NORMAL"), &|code| k.suite_names_by_code(code))?;
            Ok(TlsOffer {
                suites: r.suites.into_iter().filter(|s| usable(s, &r.protocols)).collect(),
                protocols: r.protocols,
                groups: r.groups.iter().map(|g| canonical_group(k, g)).collect(),
                server_order: c.server_order,
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

/// The usual peer of a TLS end: a default OpenSSL client or server.
pub fn default_openssl_peer(server_order: bool) -> Result<TlsOffer> {
    let suites = inst_openssl::resolve(None, None)?;
    let system = crate::discover::installed::openssl::read(None)?
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
        groups: OPENSSL_DEFAULT_GROUPS.iter().map(|s| s.to_string()).collect(),
        server_order,
    })
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
    let group = needs_group
        .then(|| first.groups.iter().find(|g| second.groups.contains(g)).cloned())
        .flatten();
    Ok(Negotiated::Tls {
        version: version.to_string(),
        suite: suite.iana.clone(),
        openssl_name: suite.openssl.clone(),
        group,
    })
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
        };
        let client = TlsOffer {
            protocols: vec!["TLSv1.2".into(), "TLSv1.3".into()],
            suites: vec![t13.clone(), gcm.clone(), cbc.clone()],
            groups: vec!["x25519".into(), "secp256r1".into()],
            server_order: false,
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
}
