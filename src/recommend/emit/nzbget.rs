//! NZBGet `ServerX.Cipher`. Since v25 NZBGet passes the same string to OpenSSL's
//! TLS 1.3 API (`SSL_CTX_set_ciphersuites`) and to its TLS ≤1.2 API
//! (`SSL_CTX_set_cipher_list`). Each API skips the names it does not know, so the
//! value lists the TLS 1.3 suites (IANA names) and then the ≤1.2 ones (OpenSSL
//! names): each API keeps exactly its own part, in order.

use super::{Choice, Emitter};

pub struct Nzbget;

impl Emitter for Nzbget {
    fn target(&self) -> &'static str {
        "nzbget"
    }
    fn location(&self) -> &'static str {
        "nzbget.conf, per news server (Server1.Cipher, Server2.Cipher ...)"
    }
    fn emit(&self, choice: &Choice) -> Option<Vec<String>> {
        let Choice::Tls(t) = choice else { return None };
        let mut parts = Vec::new();
        if t.has("TLSv1.3") && !t.tls13.is_empty() {
            parts.push(t.openssl_tls13());
        }
        if !t.tls12.is_empty() {
            parts.push(t.openssl_tls12());
        }
        Some(vec![format!("Server1.Cipher={}", parts.join(":"))])
    }
}
