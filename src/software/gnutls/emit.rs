//! GnuTLS: one priority string. GnuTLS builds its suite list as protocols × key
//! exchanges × ciphers × MACs, key exchange first, so the string names each of those
//! once, in the order of first appearance in the choice.

use crate::recommend::choice::{Choice, Emitter, SuiteNames};

pub struct GnuTls;

/// GnuTLS cipher name for OpenSSL's Enc label and key size.
fn cipher(s: &SuiteNames) -> Option<String> {
    let bits = s.enc_bits;
    Some(match s.enc.as_str() {
        "AESGCM" => format!("AES-{bits}-GCM"),
        "AESCCM" => format!("AES-{bits}-CCM"),
        "AESCCM8" => format!("AES-{bits}-CCM-8"),
        "CHACHA20/POLY1305" => "CHACHA20-POLY1305".to_string(),
        "AES" => format!("AES-{bits}-CBC"),
        "Camellia" => format!("CAMELLIA-{bits}-CBC"),
        "CamelliaGCM" => format!("CAMELLIA-{bits}-GCM"),
        "3DES" => "3DES-CBC".to_string(),
        "RC4" => format!("ARCFOUR-{bits}"),
        "None" => "NULL".to_string(),
        _ => return None,
    })
}

fn mac(s: &SuiteNames) -> Option<&'static str> {
    Some(match s.mac.as_str() {
        "AEAD" => "AEAD",
        "SHA1" => "SHA1",
        "SHA256" => "SHA256",
        "SHA384" => "SHA384",
        "MD5" => "MD5",
        _ => return None,
    })
}

fn kx(s: &SuiteNames) -> Option<&'static str> {
    Some(match (s.kx.as_str(), s.au.as_str()) {
        ("ECDH", "ECDSA") => "ECDHE-ECDSA",
        ("ECDH", "RSA") => "ECDHE-RSA",
        ("DH", "RSA") => "DHE-RSA",
        ("DH", "DSS") => "DHE-DSS",
        ("RSA", "RSA") => "RSA",
        ("ECDHEPSK", _) => "ECDHE-PSK",
        ("DHEPSK", _) => "DHE-PSK",
        ("PSK", _) => "PSK",
        _ => return None,
    })
}

fn push(v: &mut Vec<String>, item: String) {
    if !v.contains(&item) {
        v.push(item);
    }
}

/// The priority string for a TLS choice.
pub fn priority(t: &crate::recommend::choice::TlsChoice) -> String {
    let (mut ciphers, mut macs, mut kxs) = (Vec::new(), Vec::new(), Vec::new());
    for s in t.tls13.iter().chain(t.tls12.iter()) {
        if let Some(c) = cipher(s) {
            push(&mut ciphers, c);
        }
        if let Some(m) = mac(s) {
            push(&mut macs, m.to_string());
        }
    }
    for s in &t.tls12 {
        if let Some(k) = kx(s) {
            push(&mut kxs, k.to_string());
        }
    }
    let mut parts = vec!["NONE".to_string()];
    // Newest first: TLSv1.3 -> VERS-TLS1.3, SSLv3 -> VERS-SSL3.0.
    for p in t.protocols.iter().rev() {
        parts.push(match p.strip_prefix("TLSv") {
            Some(v) => format!("+VERS-TLS{v}"),
            None => format!("+VERS-{}.0", p.replace('v', "")),
        });
    }
    parts.extend(ciphers.into_iter().map(|c| format!("+{c}")));
    parts.extend(macs.into_iter().map(|m| format!("+{m}")));
    parts.extend(kxs.into_iter().map(|k| format!("+{k}")));
    parts.extend(t.gnutls_groups().into_iter().map(|g| format!("+{g}")));
    parts.push("+SIGN-ALL".into());
    parts.push("+COMP-NULL".into());
    parts.push("+CTYPE-X509".into());
    parts.join(":")
}

impl Emitter for GnuTls {
    fn target(&self) -> &'static str {
        "gnutls"
    }
    fn location(&self) -> &'static str {
        "gnutls_priority_init / --priority (e.g. gnutls-serv, gnutls-cli, GnuTLS builds of NZBGet)"
    }
    fn emit(&self, choice: &Choice) -> Option<Vec<String>> {
        let Choice::Tls(t) = choice else { return None };
        Some(vec![priority(t)])
    }
}
