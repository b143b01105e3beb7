//! OpenSSL: the TLS ≤1.2 cipher string and the TLS 1.3 ciphersuites, as passed to
//! `SSL_CTX_set_cipher_list` / `SSL_CTX_set_ciphersuites` or `openssl s_server`.

use crate::recommend::choice::{Choice, Emitter};

pub struct OpenSsl;

impl Emitter for OpenSsl {
    fn target(&self) -> &'static str {
        "openssl"
    }
    fn location(&self) -> &'static str {
        "SSL_CTX_set_cipher_list / SSL_CTX_set_ciphersuites (or -cipher / -ciphersuites)"
    }
    fn emit(&self, choice: &Choice) -> Option<Vec<String>> {
        let Choice::Tls(t) = choice else { return None };
        let mut out = Vec::new();
        if t.has("TLSv1.3") {
            out.push(format!("ciphersuites: {}", t.openssl_tls13()));
        }
        if !t.tls12.is_empty() {
            out.push(format!("cipher list:  {}", t.openssl_tls12()));
        }
        if !t.groups.is_empty() {
            out.push(format!("groups:       {}", t.openssl_groups()));
        }
        Some(out)
    }
}
