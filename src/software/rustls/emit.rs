//! rustls 0.23 with its default aws-lc-rs provider: a short Rust snippet that
//! builds the provider with the answer's cipher suites and key-exchange groups
//! in the answer's order (rustls offers and prefers them in the order of these
//! vectors). Only what the provider has is named; the rest is said in a comment.

use crate::recommend::choice::{Choice, Emitter};

pub struct Rustls;

/// rustls's constants for the suites it implements (`aws_lc_rs::cipher_suite::…`),
/// by IANA name: its TLS 1.3 suites and the ECDHE AEAD suites of TLS 1.2.
pub const SUITES: &[(&str, &str)] = &[
    ("TLS_AES_128_GCM_SHA256", "TLS13_AES_128_GCM_SHA256"),
    ("TLS_AES_256_GCM_SHA384", "TLS13_AES_256_GCM_SHA384"),
    ("TLS_CHACHA20_POLY1305_SHA256", "TLS13_CHACHA20_POLY1305_SHA256"),
    ("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"),
    ("TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"),
    (
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    ),
    ("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
    ("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"),
    (
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    ),
];

/// rustls's constants for key-exchange groups (`aws_lc_rs::kx_group::…`), by
/// the knowledge's name (IANA's, compared in any case) and the canonical one.
pub const GROUPS: &[(&str, &str, &str)] = &[
    ("x25519mlkem768", "X25519MLKEM768", "X25519MLKEM768"),
    ("secp256r1mlkem768", "SecP256r1MLKEM768", "SECP256R1MLKEM768"),
    ("mlkem768", "MLKEM768", "MLKEM768"),
    ("x25519", "X25519", "X25519"),
    ("secp256r1", "P-256", "SECP256R1"),
    ("secp384r1", "P-384", "SECP384R1"),
];

/// rustls's constant for a suite, by IANA name.
pub fn suite_constant(iana: &str) -> Option<&'static str> {
    SUITES.iter().find(|(i, _)| *i == iana).map(|(_, c)| *c)
}

/// rustls's constant for a group, by the knowledge's name.
pub fn group_constant(name: &str) -> Option<&'static str> {
    GROUPS.iter().find(|(n, _, _)| n.eq_ignore_ascii_case(name)).map(|(_, _, c)| *c)
}

impl Emitter for Rustls {
    fn target(&self) -> &'static str {
        "rustls"
    }
    fn location(&self) -> &'static str {
        "Rust code that builds the rustls ClientConfig or ServerConfig (rustls 0.23, aws-lc-rs provider)"
    }
    fn emit(&self, choice: &Choice) -> Option<Vec<String>> {
        let Choice::Tls(t) = choice else { return None };
        let mut left_out = Vec::new();
        let mut suites = Vec::new();
        // TLS 1.3 suites first: with both versions enabled rustls negotiates 1.3.
        for s in t.tls13.iter().chain(&t.tls12) {
            match suite_constant(&s.iana) {
                Some(c) => suites.push(format!("cipher_suite::{c}")),
                None => left_out.push(s.iana.clone()),
            }
        }
        let mut groups = Vec::new();
        for g in &t.groups {
            match group_constant(&g.name) {
                Some(c) => groups.push(format!("kx_group::{c}")),
                None => left_out.push(g.name.clone()),
            }
        }
        let mut versions = Vec::new();
        if t.has("TLSv1.3") {
            versions.push("&rustls::version::TLS13");
        }
        if t.has("TLSv1.2") {
            versions.push("&rustls::version::TLS12");
        }
        let mut lines = vec!["use rustls::crypto::aws_lc_rs::{self as provider, cipher_suite, kx_group};".to_string()];
        if !left_out.is_empty() {
            lines.push(format!("// Not in rustls's provider, left out: {}", left_out.join(", ")));
        }
        lines.push("let provider = std::sync::Arc::new(rustls::crypto::CryptoProvider {".into());
        if !suites.is_empty() {
            lines.push(format!("    cipher_suites: vec![{}],", suites.join(", ")));
        }
        if !groups.is_empty() {
            lines.push(format!("    kx_groups: vec![{}],", groups.join(", ")));
        }
        lines.push("    ..provider::default_provider()".into());
        lines.push("});".into());
        lines.push(format!(
            "let versions: &[&rustls::SupportedProtocolVersion] = &[{}];",
            versions.join(", ")
        ));
        lines.push(
            "// rustls::ClientConfig::builder_with_provider(provider.clone()).with_protocol_versions(versions)? (or ServerConfig)".into(),
        );
        Some(lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recommend::choice::testdata;

    /// The answer's order, TLS 1.3 first, in rustls's own constant names; a
    /// suite rustls lacks is named in a comment, never emitted.
    #[test]
    fn the_snippet_keeps_the_answers_order_in_rustls_names() {
        let t = testdata::tls();
        let lines = Rustls.emit(&Choice::Tls(t.clone())).unwrap();
        let text = lines.join("\n");
        let suites = lines.iter().find(|l| l.trim_start().starts_with("cipher_suites:")).unwrap();
        let want: Vec<String> = t
            .tls13
            .iter()
            .chain(&t.tls12)
            .filter_map(|s| suite_constant(&s.iana))
            .map(|c| format!("cipher_suite::{c}"))
            .collect();
        assert_eq!(*suites, format!("    cipher_suites: vec![{}],", want.join(", ")));
        assert!(
            suites.starts_with("    cipher_suites: vec![cipher_suite::TLS13_CHACHA20_POLY1305_SHA256"),
            "{text}"
        );
        assert!(text.contains("kx_groups: vec![kx_group::X25519"), "{text}");
        let mut odd = t.clone();
        odd.tls12.push(crate::recommend::choice::SuiteNames {
            iana: "TLS_RSA_WITH_AES_128_CBC_SHA".into(),
            ..t.tls12[0].clone()
        });
        let text = Rustls.emit(&Choice::Tls(odd)).unwrap().join("\n");
        assert!(
            text.contains("// Not in rustls's provider, left out: TLS_RSA_WITH_AES_128_CBC_SHA"),
            "{text}"
        );
        assert!(!text.contains("cipher_suite::TLS_RSA_WITH"), "{text}");
        assert!(Rustls.emit(&Choice::Ssh(Default::default())).is_none());
    }
}
