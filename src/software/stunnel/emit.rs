//! stunnel service section.

use crate::discover::installed::TlsConfig;
use crate::recommend::choice::{Choice, Emitter};

pub struct Stunnel;

impl Emitter for Stunnel {
    fn target(&self) -> &'static str {
        "stunnel"
    }
    fn location(&self) -> &'static str {
        "stunnel.conf, [service] section"
    }
    fn emit(&self, choice: &Choice) -> Option<Vec<String>> {
        let Choice::Tls(t) = choice else { return None };
        let mut out = Vec::new();
        if let Some(min) = t.min_protocol() {
            out.push(format!("sslVersionMin = {}", crate::recommend::choice::server_protocol_name(min)));
        }
        // A file that caps the version (`sslVersionMax = TLSv1.2`) would keep TLS 1.3 off.
        if let Some(max) = t.protocols.last() {
            out.push(format!("sslVersionMax = {}", crate::recommend::choice::server_protocol_name(max)));
        }
        if !t.tls12.is_empty() {
            out.push(format!("ciphers = {}", t.openssl_tls12()));
        }
        if t.has("TLSv1.3") {
            out.push(format!("ciphersuites = {}", t.openssl_tls13()));
        }
        // Always written: without it stunnel sets its own list (X25519:P-256:X448:
        // P-521:P-384 in 5.74), not OpenSSL's default, so a note would leave the
        // service without the hybrid group (Debian 13: X25519, not X25519MLKEM768).
        if !t.groups.is_empty() {
            out.push(format!("curves = {}", t.openssl_groups()));
        }
        out.push("options = CIPHER_SERVER_PREFERENCE".into());
        Some(out)
    }
}

/// The installed configuration's TLS values (as `read.rs` read them) in stunnel's
/// own syntax, for a private instance of it: the order the server keeps included.
pub fn installed_lines(t: &TlsConfig) -> Vec<String> {
    let protocols = t.protocols.as_deref().filter(|p| !p.is_empty());
    let mut out = Vec::new();
    if let Some(p) = protocols {
        out.push(format!("sslVersionMin = {}", p[0]));
        out.push(format!("sslVersionMax = {}", p[p.len() - 1]));
    }
    out.extend(t.cipher_string.as_ref().map(|c| format!("ciphers = {c}")));
    out.extend(t.ciphersuites.as_ref().map(|c| format!("ciphersuites = {c}")));
    out.extend(t.groups.as_ref().map(|g| format!("curves = {g}")));
    if t.server_order {
        out.push("options = CIPHER_SERVER_PREFERENCE".to_string());
    }
    out
}
