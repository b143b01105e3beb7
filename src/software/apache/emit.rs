//! Apache httpd mod_ssl.

use crate::discover::installed::TlsConfig;
use crate::recommend::choice::{server_protocol_name, Choice, Emitter};

pub struct Apache;

impl Emitter for Apache {
    fn target(&self) -> &'static str {
        "apache"
    }
    fn location(&self) -> &'static str {
        "httpd.conf / ssl.conf (server config or <VirtualHost>)"
    }
    fn emit(&self, choice: &Choice) -> Option<Vec<String>> {
        let Choice::Tls(t) = choice else { return None };
        let protocols: Vec<String> = t.protocols.iter().map(|p| format!("+{}", server_protocol_name(p))).collect();
        let mut out = vec![format!("SSLProtocol -all {}", protocols.join(" "))];
        if !t.tls12.is_empty() {
            out.push(format!("SSLCipherSuite {}", t.openssl_tls12()));
        }
        if t.has("TLSv1.3") {
            out.push(format!("SSLCipherSuite TLSv1.3 {}", t.openssl_tls13()));
        }
        out.extend(t.groups_line("SSLOpenSSLConfCmd Curves", " ", "", ""));
        out.push("SSLHonorCipherOrder on".into());
        Some(out)
    }
}

/// The installed configuration's TLS values (as `read.rs` read them) in Apache's
/// own syntax, for a private instance of it: the order the server keeps included.
pub fn installed_lines(t: &TlsConfig) -> Vec<String> {
    let protocols = t.protocols.as_deref().filter(|p| !p.is_empty());
    let mut out = Vec::new();
    if let Some(p) = protocols {
        out.push(format!(
            "SSLProtocol -all {}",
            p.iter().map(|v| format!("+{v}")).collect::<Vec<_>>().join(" ")
        ));
    }
    out.extend(t.cipher_string.as_ref().map(|c| format!("SSLCipherSuite {c}")));
    out.extend(t.ciphersuites.as_ref().map(|c| format!("SSLCipherSuite TLSv1.3 {c}")));
    out.extend(t.groups.as_ref().map(|g| format!("SSLOpenSSLConfCmd Curves {g}")));
    out.push(format!("SSLHonorCipherOrder {}", if t.server_order { "on" } else { "off" }));
    out
}
